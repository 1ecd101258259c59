"""Real-time scheduling for the thread that runs a rate loop: SCHED_FIFO, CPU affinity, timer slack.

Where it sits: :mod:`jointbus.runtime`, used by :mod:`jointbus.runtime.rate_loop` when a node asks
for real-time settings. It only touches the operating system (``os`` and libc ``prctl``); it knows
nothing about the bus or messages.

Why each knob:

- **SCHED_FIFO** lets the loop thread pre-empt every normal (CFS) task the moment its sleep ends,
  instead of waiting for a time slice. It needs ``CAP_SYS_NICE`` or an ``rtprio`` limit; it is
  granted to root on our development VMs and refused on most user accounts, so a refusal is a
  :class:`RealtimeWarning` and the loop runs on the normal scheduler.
- **CPU affinity** keeps the thread on one core (warm caches, no migrations); pair it with
  SCHED_FIFO or ``isolcpus`` / a cpuset on a robot. Alone, on a loaded machine, it made lateness
  *worse* on our 2-vCPU VM (the pinned thread cannot escape to the less busy core and the normal
  scheduler pre-empts its spin), so the rate loop never pins by default. A CPU that does not
  exist or is not allowed is a warning too.
- **Timer slack** (``prctl(PR_SET_TIMERSLACK)``) is how much the kernel may delay a sleeping
  thread's wake-up to batch timers, 50 µs by default. Setting it to 1 ns roughly halved plain
  ``time.sleep`` lateness on our VMs. It is unprivileged.

Linux applies all three per *thread* when the target is ``0`` (the calling thread), so
:func:`apply_realtime` must be called on the thread that will run the loop, and it leaves the other
threads of the process (the bus, logging) on the normal scheduler. :func:`read_realtime_state`
captures the thread's settings first so :func:`restore_realtime` can put them back.

A SCHED_FIFO thread that never sleeps starves everything else on its CPU (the kernel's RT
throttling, 95 % by default, is the only brake), which is one more reason the rate loop sleeps for
most of each period and spins only for the last few hundred microseconds.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

__all__ = [
    "LAYOUT_PROCESS",
    "RealtimeConfig",
    "RealtimeConfigError",
    "RealtimeHolder",
    "RealtimeState",
    "RealtimeWarning",
    "apply_realtime",
    "estranged_beside",
    "foreign_processes",
    "parent_of",
    "raise_normal_threads",
    "read_realtime_state",
    "realtime_holders",
    "realtime_of",
    "restore_realtime",
    "session_processes",
    "started_beside",
]

PR_SET_TIMERSLACK: Final = 29
PR_GET_TIMERSLACK: Final = 30

#: SCHED_FIFO priorities Linux accepts (``sched_get_priority_min/max(SCHED_FIFO)``).
FIFO_PRIORITY_MIN: Final = 1
FIFO_PRIORITY_MAX: Final = 99


class RealtimeWarning(RuntimeWarning):
    """A real-time setting was refused by the operating system; the loop runs without it."""


class RealtimeConfigError(ValueError):
    """A :class:`RealtimeConfig` field has a value no operating system would accept."""

    def __init__(self, field: str, value: object, expected: str) -> None:
        self.field = field
        self.value = value
        self.expected = expected
        super().__init__(f"RealtimeConfig.{field} = {value!r} is invalid: expected {expected}")


@dataclass(frozen=True, slots=True)
class RealtimeConfig:
    """Real-time settings for a loop thread; ``None`` leaves that setting as it is.

    ``priority`` is the SCHED_FIFO priority (1–99; 50 leaves room above for IRQ threads on a
    PREEMPT_RT kernel), ``cpu`` the single CPU index to pin the thread to, and ``timerslack_ns``
    the timer slack in nanoseconds (1 is the smallest the kernel accepts; 0 means "default").
    """

    priority: int | None = None
    cpu: int | None = None
    timerslack_ns: int | None = None

    def __post_init__(self) -> None:
        if self.priority is not None and (
            isinstance(self.priority, bool)
            or not isinstance(self.priority, int)
            or not FIFO_PRIORITY_MIN <= self.priority <= FIFO_PRIORITY_MAX
        ):
            raise RealtimeConfigError(
                "priority",
                self.priority,
                f"an int SCHED_FIFO priority in [{FIFO_PRIORITY_MIN}, {FIFO_PRIORITY_MAX}] or None",
            )
        if self.cpu is not None and (
            isinstance(self.cpu, bool) or not isinstance(self.cpu, int) or self.cpu < 0
        ):
            raise RealtimeConfigError("cpu", self.cpu, "a CPU index int >= 0 or None")
        if self.timerslack_ns is not None and (
            isinstance(self.timerslack_ns, bool)
            or not isinstance(self.timerslack_ns, int)
            or self.timerslack_ns < 1
        ):
            raise RealtimeConfigError(
                "timerslack_ns", self.timerslack_ns, "an int number of nanoseconds >= 1 or None"
            )


@dataclass(frozen=True, slots=True)
class RealtimeState:
    """A thread's scheduling settings as read before changing them; ``None`` = could not be read."""

    policy: int | None
    priority: int | None
    cpus: frozenset[int] | None
    timerslack_ns: int | None


_libc: ctypes.CDLL | None = None


def _prctl(option: int, value: int) -> int:
    """Call libc ``prctl(option, value, 0, 0, 0)``; raise ``OSError`` on failure.

    Kept as one small function so tests can replace it to simulate a refusal.
    """
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        _libc.prctl.argtypes = [
            ctypes.c_int,
            ctypes.c_ulong,
            ctypes.c_ulong,
            ctypes.c_ulong,
            ctypes.c_ulong,
        ]
        _libc.prctl.restype = ctypes.c_int
    result: int = _libc.prctl(option, value, 0, 0, 0)
    if result == -1:
        errno = ctypes.get_errno()
        raise OSError(errno, f"prctl({option}): {os.strerror(errno)}")
    return result


def _warn(messages: list[str], message: str) -> None:
    messages.append(message)
    warnings.warn(RealtimeWarning(message), stacklevel=3)


def read_realtime_state() -> RealtimeState:
    """Read the calling thread's policy, priority, allowed CPUs and timer slack."""
    policy: int | None
    priority: int | None
    cpus: frozenset[int] | None
    slack: int | None
    try:
        policy = os.sched_getscheduler(0)
        priority = os.sched_getparam(0).sched_priority
    except (AttributeError, OSError):
        policy, priority = None, None
    try:
        cpus = frozenset(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = None
    try:
        slack = _prctl(PR_GET_TIMERSLACK, 0)
    except (AttributeError, OSError):
        slack = None
    return RealtimeState(policy=policy, priority=priority, cpus=cpus, timerslack_ns=slack)


def apply_realtime(config: RealtimeConfig) -> list[str]:
    """Apply ``config`` to the calling thread; return (and warn) what was refused.

    Each setting is tried independently, so a refused SCHED_FIFO still leaves the affinity and the
    timer slack in place. Every refusal emits a :class:`RealtimeWarning` and appends its message to
    the returned list (empty = everything applied), so a node can also publish it as a status.
    """
    refused: list[str] = []
    if config.priority is not None:
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(config.priority))
        except (AttributeError, OSError) as exc:
            _warn(
                refused,
                f"SCHED_FIFO priority {config.priority} refused ({type(exc).__name__}: {exc}); "
                "running on the normal scheduler. Grant CAP_SYS_NICE or an rtprio limit "
                "(/etc/security/limits.conf) to enable it.",
            )
    if config.cpu is not None:
        try:
            os.sched_setaffinity(0, {config.cpu})
        except (AttributeError, OSError) as exc:
            _warn(
                refused,
                f"CPU affinity to CPU {config.cpu} refused ({type(exc).__name__}: {exc}); "
                "the thread may run on any allowed CPU.",
            )
    if config.timerslack_ns is not None:
        try:
            _prctl(PR_SET_TIMERSLACK, config.timerslack_ns)
        except (AttributeError, OSError) as exc:
            _warn(
                refused,
                f"timer slack {config.timerslack_ns} ns refused ({type(exc).__name__}: {exc}); "
                "sleeps keep the default slack (50 µs on Linux).",
            )
    return refused


def raise_normal_threads(priority: int) -> int:
    """Put every thread of this process that is still on the normal scheduler on SCHED_FIFO at
    ``priority``; return how many were raised. Threads already on a real-time policy (a rate
    loop that raised itself higher) are left as they are.

    Why: a process of a robot's layout builds its nodes (a MuJoCo model, Zenoh sessions, the
    check that no namesake runs) on the normal scheduler and raises its threads only once that
    is done. Raised first, a second robot started by mistake did its seconds of start-up at the
    running robot's bus priority, on its core, before it found the namesake and refused: the
    running robot's bus threads waited and its bridge went safe. A thread that ends meanwhile,
    or a refusal (no CAP_SYS_NICE), is skipped: the loops report a refused priority themselves.
    """
    raised = 0
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return 0
    for tid in tids:
        try:
            if os.sched_getscheduler(int(tid)) != os.SCHED_OTHER:
                continue
            os.sched_setscheduler(int(tid), os.SCHED_FIFO, os.sched_param(priority))
        except (AttributeError, OSError, ValueError):
            continue
        raised += 1
    return raised


def restore_realtime(state: RealtimeState) -> list[str]:
    """Put the calling thread back to ``state`` (from :func:`read_realtime_state`).

    Only settings that differ from the thread's current ones are written (so a setting the OS
    refused at apply time is not "restored" by a second refused call); settings that could not be
    read are left alone. Failures warn like :func:`apply_realtime`;
    dropping back from SCHED_FIFO to a normal policy is always permitted, so in practice only an
    exotic sandbox refuses.
    """
    refused: list[str] = []
    current = read_realtime_state()
    if (
        state.policy is not None
        and state.priority is not None
        and (state.policy, state.priority) != (current.policy, current.priority)
    ):
        try:
            os.sched_setscheduler(0, state.policy, os.sched_param(state.priority))
        except (AttributeError, OSError) as exc:
            _warn(refused, f"restoring scheduling policy {state.policy} failed: {exc}")
    if state.cpus is not None and state.cpus != current.cpus:
        try:
            os.sched_setaffinity(0, state.cpus)
        except (AttributeError, OSError) as exc:
            _warn(refused, f"restoring CPU affinity {sorted(state.cpus)} failed: {exc}")
    if state.timerslack_ns is not None and state.timerslack_ns != current.timerslack_ns:
        try:
            _prctl(PR_SET_TIMERSLACK, state.timerslack_ns)
        except (AttributeError, OSError) as exc:
            _warn(refused, f"restoring timer slack {state.timerslack_ns} ns failed: {exc}")
    return refused


@dataclass(frozen=True, slots=True)
class RealtimeHolder:
    """A process of someone else with threads on a real-time policy (SCHED_FIFO / SCHED_RR):
    ``pid``, its ``command`` line (shortened), the highest real-time ``priority`` of its threads
    and the ``cpus`` those threads may run on."""

    pid: int
    command: str
    priority: int
    cpus: frozenset[int]

    def describe(self) -> str:
        cpus = ",".join(str(c) for c in sorted(self.cpus)) or "?"
        return f"pid {self.pid} ({self.command}) at priority {self.priority} on CPU {cpus}"


def _stat_fields(path: str) -> list[str] | None:
    """The fields of a ``/proc/.../stat`` file after the command name (field 3 onwards)."""
    try:
        with open(path, "rb") as f:
            text = f.read().decode(errors="replace")
    except OSError:
        return None
    end = text.rfind(")")
    return text[end + 2 :].split() if end >= 0 else None


def own_processes(
    pids: list[int], parent: dict[int, int], session: dict[int, int], me: int, my_session: int
) -> set[int]:
    """Which of ``pids`` are this process's own (see :func:`realtime_holders`): ``me``, its
    ancestors, and every process whose chain of parents reaches ``me`` or a process of
    ``my_session``. A process that merely shares an ancestor (the sshd, tmux server or init
    above another user's shell) is not: only the ancestors themselves are."""
    ancestors = {me}
    cursor = me
    while parent.get(cursor, 0) > 1 and parent[cursor] not in ancestors:
        cursor = parent[cursor]
        ancestors.add(cursor)
    ours = set(ancestors)
    for pid in pids:
        cursor = pid
        for _ in range(64):  # the process and its launchers, up to init
            if cursor == me or session.get(cursor) == my_session:
                ours.add(pid)
                break
            if parent.get(cursor, 0) <= 1:
                break
            cursor = parent[cursor]
    return ours


def _process_table() -> tuple[list[int], dict[int, int], dict[int, int], int] | None:
    """Every process's pid, its parent and session (``/proc``), and this process's session;
    ``None`` off Linux."""
    try:
        pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
        my_session = os.getsid(0)
    except OSError:
        return None
    parent: dict[int, int] = {}
    session: dict[int, int] = {}
    for pid in pids:
        fields = _stat_fields(f"/proc/{pid}/stat")
        # fields from 3 on (proc(5)): 4 ppid, 6 session
        if fields is not None and len(fields) > 3:
            parent[pid], session[pid] = int(fields[1]), int(fields[3])
    return pids, parent, session, my_session


def _command_lines(pids: list[int]) -> list[tuple[int, str]]:
    """``(pid, command line)`` of ``pids`` that have one (a kernel thread has none)."""
    found: list[tuple[int, str]] = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                command = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        if command:  # empty: a kernel thread
            found.append((pid, command))
    return found


def foreign_processes() -> list[tuple[int, str]]:
    """``(pid, command line)`` of the user-space processes that are not this process's own (as
    :func:`realtime_holders` counts them: not itself, its ancestors, or what its session started;
    kernel threads left out). Linux only: elsewhere, an empty list."""
    table = _process_table()
    if table is None:
        return []
    pids, parent, session, my_session = table
    me = os.getpid()
    ours = own_processes(pids, parent, session, me, my_session)
    estranged = estranged_beside(pids, parent, session, me, my_session)
    return _command_lines([pid for pid in pids if pid not in ours or pid in estranged])


def session_processes() -> list[tuple[int, str]]:
    """``(pid, command line)`` of the processes this process's session started (directly or
    through launchers that left it) that are neither this process, its ancestors nor its
    descendants: what :func:`foreign_processes` leaves out as "started side by side on purpose"
    — a robot started earlier from the same terminal, or by the same test run.

    Why: two real-time robots started from one terminal take the same cores at the same
    priorities as surely as two from two terminals; a launcher that takes real time beside one
    says so (a new user's trial, 2026-12-05, ran a second stack with real time beside a
    real-time one started from the same shell with ``setsid``, and neither said a word).
    Linux only: elsewhere, an empty list."""
    table = _process_table()
    if table is None:
        return []
    pids, parent, session, my_session = table
    me = os.getpid()
    beside = started_beside(pids, parent, session, me, my_session)
    beside -= estranged_beside(pids, parent, session, me, my_session)
    return _command_lines([pid for pid in pids if pid in beside])


def started_beside(
    pids: list[int], parent: dict[int, int], session: dict[int, int], me: int, my_session: int
) -> set[int]:
    """Which of ``pids`` ``my_session`` started beside ``me`` (see :func:`session_processes`):
    :func:`own_processes`, less ``me``, its ancestors and its descendants."""
    ours = own_processes(pids, parent, session, me, my_session)
    mine = own_processes(pids, parent, session, me, -1)  # no session is -1: me and my family
    return ours - mine


#: The command line of a layout's process (``python -m jointbus.stack …``, started by a
#: launcher that judged for it): :func:`estranged_beside` judges it as its launcher.
LAYOUT_PROCESS: Final = re.compile(r"(?:^| )-m jointbus\.stack(?: |$)")


def _layout_process(pid: int) -> bool:
    """Whether ``pid``'s command line is a layout process's (:data:`LAYOUT_PROCESS`)."""
    found = _command_lines([pid])
    return bool(found) and LAYOUT_PROCESS.search(found[0][1]) is not None


def estranged_beside(
    pids: list[int],
    parent: dict[int, int],
    session: dict[int, int],
    me: int,
    my_session: int,
    *,
    defers: Callable[[int], bool] | None = None,
) -> set[int]:
    """Which of :func:`started_beside` do not count ``me`` as theirs: a robot started from the
    same script with ``setsid`` has a session of its own, in which ``me`` is not, so it counts
    ``me`` as another user's (and ran without real time beside it), while ``me`` counted it as
    its session's and said nothing (a new user's trial, 2026-12-07). Foreign is mutual: such a
    process is listed by :func:`foreign_processes`, not :func:`session_processes`.

    Each is judged as it judges itself, but a layout's process (``defers``: by default its
    command line is ``… -m jointbus.stack …``, :data:`LAYOUT_PROCESS`), which gets a session of
    its own from its launcher, as its launcher judges: the launcher decides for it. (Judged by
    the topmost process beside ``me`` instead, a robot started as ``timeout 75 setsid jointbus
    demo`` was judged by ``timeout``, of ``me``'s session: a trial, 2026-12-07.)"""
    beside = started_beside(pids, parent, session, me, my_session)
    if defers is None:
        defers = _layout_process
    # ``me`` is the judge's own (own_processes, from the judge's side) when ``me``'s chain of
    # parents reaches the judge or a process of the judge's session (``me`` is no ancestor of
    # a process beside it): one walk of ``me``'s chain answers for every judge
    chain = [me]
    while parent.get(chain[-1], 0) > 1 and len(chain) < 64:
        chain.append(parent[chain[-1]])
    verdicts: dict[int, bool] = {}
    estranged: set[int] = set()
    for pid in beside:
        judge = pid
        for _ in range(64):  # a layout's process: its launcher (which may itself be one)
            if parent.get(judge, 0) <= 1 or not defers(judge):
                break
            judge = parent[judge]
        if judge not in verdicts:
            theirs = session.get(judge, -1)
            verdicts[judge] = not any(c == judge or session.get(c) == theirs for c in chain)
        if verdicts[judge]:
            estranged.add(pid)
    return estranged


def parent_of(pid: int) -> int | None:
    """The parent pid of process ``pid`` (``/proc``), or ``None`` when it is gone (or off
    Linux)."""
    fields = _stat_fields(f"/proc/{pid}/stat")
    # fields from 3 on (proc(5)): 4 ppid
    return int(fields[1]) if fields is not None and len(fields) > 1 else None


def realtime_of(pid: int, command: str) -> RealtimeHolder | None:
    """Process ``pid`` (command line ``command``) as a :class:`RealtimeHolder` when one of its
    threads runs on a real-time policy (SCHED_FIFO / SCHED_RR), else ``None`` (or gone)."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    best = 0
    cpus: set[int] = set()
    for tid in tids:
        fields = _stat_fields(f"/proc/{pid}/task/{tid}/stat")
        # field 40 rt_priority, 41 policy (proc(5)); the list starts at field 3
        if fields is None or len(fields) < 39:
            continue
        policy, priority = int(fields[38]), int(fields[37])
        if policy not in (os.SCHED_FIFO, os.SCHED_RR):
            continue
        best = max(best, priority)
        try:
            cpus |= os.sched_getaffinity(int(tid))
        except OSError:
            continue
    if not best:
        return None
    short = command if len(command) <= 60 else command[:57] + "..."
    return RealtimeHolder(pid, short, best, frozenset(cpus))


def realtime_holders() -> list[RealtimeHolder]:
    """Other user-space processes with a thread on a real-time policy — another robot's loops.

    Why: two real-time stacks on one host take the same cores at the same SCHED_FIFO priorities
    and hold each other back — and not only a little: in new-user trials on a 2-vCPU host, a
    second ``make demo`` beside a first one cut both robots' traffic for ≈ 27 s and their bridges
    sat them down. A launcher asks this before raising its robot's threads and runs without
    real-time scheduling when the answer is not empty (see :mod:`jointbus.stack`).

    Kernel threads (no command line: ``migration/N``, IRQ threads) are not counted, nor this
    process, its ancestors (a launcher that raised itself, e.g. the chaos campaign's observer),
    nor processes started — directly or through launchers — from this process's session (this
    terminal, this test run: its own robot restarted, or robots run side by side on purpose, as
    a parallel test suite does; a robot's processes get sessions of their own, so their
    launcher's counts; :func:`session_processes` lists those). Linux only: elsewhere, an empty
    list.
    """
    return [
        holder
        for pid, command in foreign_processes()
        if (holder := realtime_of(pid, command)) is not None
    ]
