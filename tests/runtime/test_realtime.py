"""Real-time settings: validation, typed fallback warnings, and apply/restore on a real thread."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import threading
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.runtime import realtime
from jointbus.runtime.realtime import (
    RealtimeConfig,
    RealtimeConfigError,
    RealtimeState,
    RealtimeWarning,
    apply_realtime,
    read_realtime_state,
    restore_realtime,
)
from support.realtime_holder import realtime_program

T = TypeVar("T")


def on_thread(fn: Callable[[], T]) -> T:
    """Run ``fn`` on a fresh thread (settings are per thread: keep pytest's thread untouched)."""
    result: list[T] = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            result.append(fn())
        except BaseException as exc:  # re-raised on the caller's thread below
            errors.append(exc)

    t = threading.Thread(target=target)
    t.start()
    t.join()
    if errors:
        raise errors[0]
    return result[0]


class Recorder:
    """A fake of the thread's OS scheduling state that records every change asked of it."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []
        self.policy, self.priority = os.SCHED_FIFO, 50
        self.cpus: set[int] = {1}
        self.slack = 1

    def setscheduler(self, pid: int, policy: int, param: os.sched_param) -> None:
        self.calls.append(("sched", (pid, policy, param.sched_priority)))
        self.policy, self.priority = policy, param.sched_priority

    def setaffinity(self, pid: int, cpus: Iterable[int]) -> None:
        self.calls.append(("affinity", (pid, set(cpus))))
        self.cpus = set(cpus)

    def prctl(self, option: int, value: int) -> int:
        if option == realtime.PR_GET_TIMERSLACK:
            return self.slack
        self.calls.append(("prctl", (option, value)))
        self.slack = value
        return 0


def refuse(exc: BaseException) -> Callable[..., object]:
    def call(*args: object) -> object:
        raise exc

    return call


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    rec = Recorder()
    monkeypatch.setattr(os, "sched_setscheduler", rec.setscheduler)
    monkeypatch.setattr(os, "sched_setaffinity", rec.setaffinity)
    monkeypatch.setattr(realtime, "_prctl", rec.prctl)
    monkeypatch.setattr(os, "sched_getscheduler", lambda pid: rec.policy)
    monkeypatch.setattr(os, "sched_getparam", lambda pid: os.sched_param(rec.priority))
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(rec.cpus))
    return rec


# -- validation -------------------------------------------------------------------------------


@given(st.one_of(st.integers(max_value=0), st.integers(min_value=100), st.just(True)))
def test_priority_outside_fifo_range_is_rejected(priority: int) -> None:
    with pytest.raises(RealtimeConfigError, match="priority") as info:
        RealtimeConfig(priority=priority)
    assert info.value.field == "priority" and info.value.value == priority


@given(st.integers(min_value=1, max_value=99))
def test_every_fifo_priority_is_accepted(priority: int) -> None:
    assert RealtimeConfig(priority=priority).priority == priority


@pytest.mark.parametrize(
    ("field", "value"),
    [("cpu", -1), ("cpu", 1.0), ("cpu", False), ("timerslack_ns", 0), ("timerslack_ns", -5)],
)
def test_bad_cpu_or_slack_is_rejected(field: str, value: object) -> None:
    with pytest.raises(RealtimeConfigError, match=field):
        RealtimeConfig(**{field: value})  # type: ignore[arg-type]


# -- apply with the OS calls replaced ------------------------------------------------------------


def test_apply_asks_the_os_for_each_setting_on_the_calling_thread(recorder: Recorder) -> None:
    assert apply_realtime(RealtimeConfig(priority=50, cpu=1, timerslack_ns=1)) == []
    assert recorder.calls == [
        ("sched", (0, os.SCHED_FIFO, 50)),
        ("affinity", (0, {1})),
        ("prctl", (realtime.PR_SET_TIMERSLACK, 1)),
    ]


def test_empty_config_changes_nothing(recorder: Recorder) -> None:
    assert apply_realtime(RealtimeConfig()) == []
    assert recorder.calls == []


def test_refused_fifo_warns_and_the_other_settings_still_apply(
    recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        os, "sched_setscheduler", refuse(PermissionError(errno.EPERM, "Operation not permitted"))
    )
    with pytest.warns(RealtimeWarning, match="SCHED_FIFO priority 50 refused"):
        refused = apply_realtime(RealtimeConfig(priority=50, cpu=0, timerslack_ns=1))
    assert len(refused) == 1 and "PermissionError" in refused[0]
    assert [name for name, _ in recorder.calls] == ["affinity", "prctl"]


def test_refused_affinity_warns(recorder: Recorder, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_setaffinity", refuse(OSError(errno.EINVAL, "Invalid argument")))
    with pytest.warns(RealtimeWarning, match="CPU 7"):
        refused = apply_realtime(RealtimeConfig(cpu=7))
    assert len(refused) == 1


def test_refused_timer_slack_warns(recorder: Recorder, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(realtime, "_prctl", refuse(OSError(errno.EPERM, "no")))
    with pytest.warns(RealtimeWarning, match="timer slack"):
        refused = apply_realtime(RealtimeConfig(timerslack_ns=1))
    assert len(refused) == 1


def test_platform_without_sched_calls_warns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(os, "sched_setscheduler")
    with pytest.warns(RealtimeWarning, match="AttributeError"):
        refused = apply_realtime(RealtimeConfig(priority=10))
    assert len(refused) == 1


def test_restore_puts_back_policy_affinity_and_slack(recorder: Recorder) -> None:
    state = RealtimeState(policy=os.SCHED_OTHER, priority=0, cpus=frozenset({0, 1}),
                          timerslack_ns=50_000)
    assert restore_realtime(state) == []
    assert recorder.calls == [
        ("sched", (0, os.SCHED_OTHER, 0)),
        ("affinity", (0, {0, 1})),
        ("prctl", (realtime.PR_SET_TIMERSLACK, 50_000)),
    ]


def test_restore_skips_what_could_not_be_read(recorder: Recorder) -> None:
    assert restore_realtime(RealtimeState(None, None, None, None)) == []
    assert recorder.calls == []


def test_restore_writes_nothing_when_already_in_that_state(recorder: Recorder) -> None:
    state = read_realtime_state()
    assert state == RealtimeState(os.SCHED_FIFO, 50, frozenset({1}), 1)
    assert restore_realtime(state) == []
    assert recorder.calls == []


def test_restore_after_refused_apply_does_not_warn_again(
    recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorder.policy, recorder.priority = os.SCHED_OTHER, 0
    before = read_realtime_state()
    monkeypatch.setattr(os, "sched_setscheduler", refuse(PermissionError(1, "no")))
    with pytest.warns(RealtimeWarning):
        apply_realtime(RealtimeConfig(priority=50))
    assert restore_realtime(before) == []


# -- the real OS, on a throw-away thread ---------------------------------------------------------


def test_timer_slack_and_affinity_apply_and_restore_on_a_real_thread() -> None:
    cpu = min(os.sched_getaffinity(0))

    def body() -> tuple[RealtimeState, RealtimeState, RealtimeState, list[str]]:
        before = read_realtime_state()
        refused = apply_realtime(RealtimeConfig(cpu=cpu, timerslack_ns=1))
        during = read_realtime_state()
        restore_realtime(before)
        return before, during, read_realtime_state(), refused

    before, during, after, refused = on_thread(body)
    assert refused == []
    assert during.timerslack_ns == 1
    assert during.cpus == frozenset({cpu})
    assert after == before
    # pytest's own thread was never touched.
    assert read_realtime_state().timerslack_ns == before.timerslack_ns


def test_fifo_is_either_applied_or_refused_with_a_warning_and_always_restored() -> None:
    def body() -> tuple[RealtimeState, int, list[str], RealtimeState]:
        before = read_realtime_state()
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            refused = apply_realtime(RealtimeConfig(priority=10))
        policy = os.sched_getscheduler(0)
        restore_realtime(before)
        assert [str(w.message) for w in record] == refused
        assert all(w.category is RealtimeWarning for w in record)
        return before, policy, refused, read_realtime_state()

    before, policy, refused, after = on_thread(body)
    if refused:  # an unprivileged account: typed fallback
        assert policy == before.policy
    else:  # root / CAP_SYS_NICE: really SCHED_FIFO
        assert policy == os.SCHED_FIFO
    assert after == before


def test_raising_a_process_puts_its_normal_threads_on_fifo_and_leaves_a_higher_loop() -> None:
    """In a child process (this one must stay on the normal scheduler): a sleeping helper thread
    and the main thread are raised to FIFO 10; a thread that raised itself to FIFO 30 stays 30.
    Where the OS refuses SCHED_FIFO (that thread's own raise fails) nothing is raised and the
    function says 0."""
    import json
    import subprocess
    import sys

    code = """
import json, os, threading, time
from jointbus.runtime.realtime import raise_normal_threads
ready = threading.Event()
allowed = []
def loop():
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(30))
        allowed.append(True)
    except OSError:
        pass
    ready.set()
    time.sleep(5)
threading.Thread(target=loop, daemon=True).start()
threading.Thread(target=lambda: time.sleep(5), daemon=True).start()
ready.wait()
raised = raise_normal_threads(10)
seen = sorted(
    (os.sched_getscheduler(int(t)), os.sched_getparam(int(t)).sched_priority)
    for t in os.listdir("/proc/self/task")
)
print(json.dumps({"allowed": bool(allowed), "raised": raised, "seen": seen}))
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    result = json.loads(out)
    seen = [tuple(t) for t in result["seen"]]
    fifo = os.SCHED_FIFO
    if not result["allowed"]:  # the OS refuses SCHED_FIFO here: nothing raised, nothing changed
        assert result["raised"] == 0 and all(policy != fifo for policy, _ in seen), seen
        return
    assert (fifo, 30) in seen  # the loop that raised itself higher keeps its priority
    assert all(policy == fifo for policy, _ in seen), seen
    assert sum(1 for t in seen if t == (fifo, 10)) == result["raised"] >= 2


def test_another_sessions_real_time_program_is_a_holder_this_process_and_kernel_threads_not(
    tmp_path: Path,
) -> None:
    assert all(h.pid != os.getpid() for h in realtime.realtime_holders())
    before = {h.pid for h in realtime.realtime_holders()}
    with realtime_program(tmp_path, priority=20) as pid:
        holders = {h.pid: h for h in realtime.realtime_holders()}
        assert pid in holders and pid not in before
        holder = holders[pid]
        assert holder.priority == 20 and holder.cpus == frozenset(os.sched_getaffinity(pid))
        assert "python" in holder.command and f"pid {pid} (" in holder.describe()
        # kernel threads run SCHED_FIFO 99 (migration/N) but have no command line
        assert all(h.command for h in holders.values())
    assert pid not in {h.pid for h in realtime.realtime_holders()}


def test_a_real_time_child_of_this_process_is_its_own_not_a_holder() -> None:
    code = "import os, time; os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(20)); " \
        "print(flush=True); time.sleep(30)"
    child = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, start_new_session=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == b"\n"
        if os.sched_getscheduler(child.pid) != os.SCHED_FIFO:
            pytest.skip("SCHED_FIFO refused on this account")
        assert child.pid not in {h.pid for h in realtime.realtime_holders()}
    finally:
        child.kill()
        child.wait()


def test_a_process_that_only_shares_an_ancestor_is_not_this_ones() -> None:
    """Another user's robot, started from another shell under the same sshd or tmux server (an
    ancestor of this process too, in another session), is somebody else's; this process's
    descendants and its session's processes are its own."""
    # 1 init; 100 sshd (session 100); 200 my shell (session 200) → 300 me;
    # 250 another shell (session 250) → 350 another robot; 310 my child in a new session;
    # 400 a process of my session started elsewhere (under init)
    parent = {100: 1, 200: 100, 300: 200, 250: 100, 350: 250, 310: 300, 400: 1}
    session = {100: 100, 200: 200, 300: 200, 250: 250, 350: 250, 310: 310, 400: 200}
    ours = realtime.own_processes(list(parent), parent, session, 300, 200)
    assert ours == {100, 200, 300, 310, 400}
    assert 350 not in ours and 250 not in ours


def test_a_process_of_this_session_started_elsewhere_is_beside_this_one_not_its_family() -> None:
    """A robot started earlier from the same terminal (``setsid … &``, its launcher gone) is
    "started beside" this one — named when it runs real time — while this process, its
    ancestors and its own children (a layout's processes) are not; nor is another session's."""
    parent = {100: 1, 200: 100, 300: 200, 250: 100, 350: 250, 310: 300, 400: 1, 410: 400}
    session = {100: 100, 200: 200, 300: 200, 250: 250, 350: 250, 310: 310, 400: 200, 410: 410}
    assert realtime.started_beside(list(parent), parent, session, 300, 200) == {400, 410}


def test_foreign_processes_lists_another_sessions_process_and_not_this_ones() -> None:
    """What a launcher looks through for other robots: a process of another session that is
    not this one's descendant (another user's, started from another terminal) is listed with its
    command line; a child of this process is not."""
    import subprocess
    import sys
    import time

    marker = f"foreign-{os.getpid()}-{time.monotonic_ns()}"
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", marker])
    detached = subprocess.run(  # sh exits at once: the sleeper is reparented, in its own session
        ["setsid", "sh", "-c", f'{sys.executable} -c "import time; time.sleep(30)" {marker}-x &'],
        check=True,
    )
    assert detached.returncode == 0
    try:
        time.sleep(0.3)
        found = [(pid, cmd) for pid, cmd in realtime.foreign_processes() if marker in cmd]
        assert [cmd.split()[-1] for _pid, cmd in found] == [f"{marker}-x"], found
    finally:
        child.kill()
        child.wait()
        subprocess.run(["pkill", "-f", f"{marker}-x"], check=False)


def test_a_robot_started_from_the_same_script_with_setsid_is_foreign_both_ways() -> None:
    """A script starts robot A, then robot B with ``setsid``: B's session is its own, so B counts
    A as another user's (it ran without real time beside it), while A counted B as its session's
    and said nothing (trial 2026-12-07). Foreign is mutual now — also when a wrapper of A's
    session (``timeout 75 setsid …``) started B. Robots started from one test run (no
    ``setsid``: the workers share the run's session) stay each other's, their layouts'
    processes (sessions of their own, judged as their launchers judge) with them."""
    # 50 the shell (session 50) → 100 the script → 200 robot A (its bridge 210, session 210)
    #                                            → 150 timeout → 300 robot B, setsid (bridge 310)
    parent = {100: 50, 200: 100, 210: 200, 150: 100, 300: 150, 310: 300}
    session = {50: 50, 100: 50, 200: 50, 210: 210, 150: 50, 300: 300, 310: 310}
    pids = list(parent)
    layout = {210, 310}.__contains__  # python -m jointbus.stack: judged as their launchers
    assert realtime.estranged_beside(pids, parent, session, 200, 50, defers=layout) == {300, 310}
    # B's own view already said so: A is not its own
    assert 200 not in realtime.own_processes(pids, parent, session, 300, 300)
    # a test run: 100 pytest (session 50) → workers 110 (robot A) and 120 (robot B), each
    # layout's processes in sessions of their own
    parent = {100: 50, 110: 100, 111: 110, 120: 100, 121: 120}
    session = {50: 50, 100: 50, 110: 50, 111: 111, 120: 50, 121: 121}
    pids = list(parent)
    layout = {111, 121}.__contains__
    assert realtime.started_beside(pids, parent, session, 110, 50) == {120, 121}
    assert realtime.estranged_beside(pids, parent, session, 110, 50, defers=layout) == set()
    assert realtime.LAYOUT_PROCESS.search("/x/python -m jointbus.stack --robot hb50 --process {}")
    assert not realtime.LAYOUT_PROCESS.search("/x/python -m jointbus.stacks")


def test_foreign_processes_list_a_robot_started_by_the_same_script_with_setsid() -> None:
    """The same on this machine's real process table: a script starts a sleeper, then another
    with ``timeout … setsid`` (a trial's script); the first counts the second as foreign, not as
    its session's."""
    import subprocess
    import sys
    import time

    marker = f"estranged-{os.getpid()}-{time.monotonic_ns()}"
    probe = (  # the sleepers only (timeout's own command line names its sleeper too)
        "import sys, time; from jointbus.runtime import realtime; time.sleep(0.5); "
        "mine = lambda found: sorted(c.split()[-1] for _p, c in found "
        "if sys.argv[1] in c and c.startswith(sys.executable)); "
        "print(mine(realtime.foreign_processes()), mine(realtime.session_processes()), "
        "flush=True)"
    )
    sleeper = f"{sys.executable} -c 'import time; time.sleep(30)'"
    script = (
        f"{sleeper} {marker}-a >/dev/null 2>&1 & a=$!; "
        f"timeout 30 setsid {sleeper} {marker}-b >/dev/null 2>&1 & b=$!; "
        f'{sys.executable} -c "$0" {marker}; kill $a $b'
    )
    done = subprocess.run(
        ["sh", "-c", script, probe], check=False, capture_output=True, text=True, timeout=30
    )
    try:
        assert done.returncode == 0, done.stderr
        foreign, session = done.stdout.strip().split("] [")
        # the probe is the script's child as robot A would be: the setsid one is foreign to it,
        # the plain one its session's
        assert f"{marker}-b" in foreign and f"{marker}-a" not in foreign, done.stdout
        assert f"{marker}-a" in session and f"{marker}-b" not in session, done.stdout
    finally:
        subprocess.run(["pkill", "-f", marker], check=False)
