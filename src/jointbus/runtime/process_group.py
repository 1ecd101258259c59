"""The processes of one robot started, watched and stopped together, none left behind.

Where it sits: :mod:`jointbus.runtime`, beside :mod:`.launch` (the layout it starts); it knows
processes and signals, not robots or the bus. :class:`jointbus.stack.Stack` starts one child per
:class:`~jointbus.runtime.launch.ProcessSpec`; a child calls :func:`bind_to_parent` first and
prints :data:`READY` on its stdout once it runs.

What it promises, because a robot's processes must never outlive the program that started them:

- **No orphan.** Each child asks the kernel for ``SIGTERM`` when its parent dies
  (``prctl(PR_SET_PDEATHSIG)``, :func:`bind_to_parent`), so a launcher that is SIGKILLed takes
  its simulator and controllers with it. The kernel sends it when the *thread* that forked the
  child ends, not the process: every child is therefore started by one spawner thread that
  lives as long as the group (a respawn from the dead child's short-lived watcher thread was
  SIGTERMed as soon as that thread returned, and respawned, and stopped again).
- **Ordered stop.** :meth:`ProcessGroup.stop` stops the children in the reverse of their start
  order (the controller before the bridge, so the bridge sees its controller leave and damps the
  drives before it switches them off): ``SIGTERM``, then ``SIGKILL`` after ``stop_timeout_s``.
- **Own sessions.** Children run in sessions of their own, so a Ctrl-C in the terminal reaches the
  launcher only, which then stops them in order, rather than every process at once.
- **Deaths are news.** A watcher thread per child notices an exit at once (``poll`` every
  :data:`WATCH_PERIOD_S`) and calls ``on_exit(name, returncode)``; a child whose spec says
  ``respawn`` is started again.
- **Their CPU counts.** :meth:`ProcessGroup.cpu_seconds` adds the children's user + system CPU
  time (``/proc/<pid>/stat``, sampled by the watchers), so a stack's CPU use is that of all its
  processes, not of the launcher alone.

Each child's stderr is passed on, line by line, prefixed with its name (``[control] …``), so a
child's error reaches the user's terminal.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import IO, Final

__all__ = [
    "PARENT_PID_ENV",
    "READY",
    "WATCH_PERIOD_S",
    "ChildProcess",
    "ProcessGroup",
    "ProcessGroupError",
    "bind_to_parent",
    "child_argv",
    "cpu_seconds_of",
]

#: The line a child prints on stdout once it runs.
READY: Final = "ready"
#: Environment variable a child finds its launcher's pid in (for :func:`bind_to_parent`).
PARENT_PID_ENV: Final = "JOINTBUS_LAUNCHER_PID"
#: How often a watcher looks at its child (s): the delay before an exit is noticed.
WATCH_PERIOD_S: Final = 0.05
_PR_SET_PDEATHSIG: Final = 1
_CLOCK_TICKS: Final = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


class ProcessGroupError(RuntimeError):
    """A child could not be started, or did not become ready (names it and says why)."""


@dataclass(frozen=True, slots=True)
class ChildProcess:
    """A child to run: ``name``, its command line ``argv``, extra ``env`` entries, and whether to
    start it again when it dies (``respawn``)."""

    name: str
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()
    respawn: bool = False


@dataclass(slots=True)
class _Running:
    child: ChildProcess
    process: subprocess.Popen[str]
    started_at: float
    cpu_s: float = 0.0
    retired: bool = False  # its CPU moved to the exited total
    stopping: bool = False
    ready: threading.Event = field(default_factory=threading.Event)  # ready, or gone
    started: threading.Event = field(default_factory=threading.Event)  # printed READY
    returncode: int | None = None


def bind_to_parent() -> None:
    """In a child: ask for ``SIGTERM`` when the launcher dies, and exit now if it already has.

    The launcher's pid comes from :data:`PARENT_PID_ENV`; without it (a process started by hand)
    nothing is done. Linux only; elsewhere a no-op."""
    expected = os.environ.get(PARENT_PID_ENV)
    if expected is None or not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != int(expected):  # the launcher died before the request took effect
        os._exit(1)


def progress_of(pid: int) -> tuple[str, float] | None:
    """``pid``'s scheduling state (``/proc``'s letter: ``R`` running, ``S`` sleeping, ``T``
    stopped, ``Z`` exited, …) and its user + system CPU time (s); None if it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return fields[0], (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS
    except (OSError, IndexError, ValueError):
        return None


def cpu_seconds_of(pid: int) -> float | None:
    """User + system CPU time of ``pid`` (s), or None if it cannot be read."""
    progress = progress_of(pid)
    return None if progress is None else progress[1]


class ProcessGroup:
    """Children started together and stopped together (see the module docstring).

    ``on_exit(name, returncode)`` is called from a watcher thread when a child exits without
    having been asked to (a negative code is the signal that ended it); ``on_line(name, line)``
    receives each line of a child's stderr (default: written to this process's stderr as
    ``[name] line``). ``stop_timeout_s``: how long a child may take to stop after ``SIGTERM``.
    """

    def __init__(
        self,
        *,
        on_exit: Callable[[str, int], None] | None = None,
        on_line: Callable[[str, str], None] | None = None,
        stop_timeout_s: float = 5.0,
    ) -> None:
        self._on_exit = on_exit
        self._on_line = on_line or _to_stderr
        self._stop_timeout_s = stop_timeout_s
        self._running: dict[str, _Running] = {}
        self._order: list[str] = []
        self._exited_cpu_s = 0.0
        self._tails: dict[str, list[str]] = {}  # the last lines of each child's stderr
        self._lock = threading.Lock()
        self._closed = False
        #: Forks every child (see "No orphan" in the module docstring): its one worker thread
        #: lives until :meth:`stop` stops the whole group.
        self._spawner = ThreadPoolExecutor(1, thread_name_prefix="process-group-spawner")

    # ---- starting ------------------------------------------------------------------------------
    def start(self, child: ChildProcess, *, ready_timeout_s: float = 60.0) -> int:
        """Start ``child`` and wait until it printed :data:`READY`; its pid. A child that exits
        or stays silent for ``ready_timeout_s`` is stopped and :class:`ProcessGroupError` names it
        with the end of what it wrote on stderr."""
        (pid,) = self.start_all((child,), ready_timeout_s=ready_timeout_s)
        return pid

    def start_all(
        self, children: Sequence[ChildProcess], *, ready_timeout_s: float = 60.0
    ) -> tuple[int, ...]:
        """Start ``children`` at once (their start-up — imports, opening the actuators — runs in
        parallel) and wait until each is ready, in order; their pids. If one fails, every child
        started here is stopped and :class:`ProcessGroupError` names the one that failed."""
        with self._lock:
            if self._closed:
                raise ProcessGroupError("cannot start processes: the group is stopped")
            for child in children:
                if child.name in self._running:
                    raise ProcessGroupError(f"a process {child.name!r} is already running")
        started: list[_Running] = []
        try:
            for child in children:
                started.append(self._spawn(child))
            deadline = time.monotonic() + ready_timeout_s
            for running in started:
                ready = running.ready.wait(max(0.0, deadline - time.monotonic()))
                if not ready or running.process.poll() is not None:
                    raise ProcessGroupError(self._failure(running, ready_timeout_s))
        except BaseException:
            for running in reversed(started):
                self._stop_one(running)
            raise
        return tuple(running.process.pid for running in started)

    def _failure(self, running: _Running, timeout_s: float) -> str:
        """Why ``running`` did not become ready, with the end of its stderr."""
        name = running.child.name
        with contextlib.suppress(subprocess.TimeoutExpired):
            running.process.wait(0.5)  # its last words reach the stderr reader first
        lines = [line.removeprefix("error: ") for line in self._tails.get(name, [])[-5:]]
        tail = "; ".join(lines) or "nothing on stderr"
        code = running.process.returncode
        why = f"exited with code {code}" if code is not None else f"not ready after {timeout_s:g} s"
        return f"process {name!r} {why}: {tail}"

    def _spawn(self, child: ChildProcess) -> _Running:
        env = dict(os.environ)
        env.update(child.env)
        env[PARENT_PID_ENV] = str(os.getpid())
        try:
            process = self._spawner.submit(
                subprocess.Popen,
                list(child.argv),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
                start_new_session=True,
            ).result()
        except (OSError, RuntimeError) as exc:  # RuntimeError: the group stopped meanwhile
            raise ProcessGroupError(f"cannot start process {child.name!r}: {exc}") from exc
        running = _Running(child, process, time.monotonic())
        with self._lock:
            self._running[child.name] = running
            if child.name not in self._order:
                self._order.append(child.name)
        self._tails.setdefault(child.name, [])
        assert process.stdout is not None and process.stderr is not None
        readers = ((self._read_stdout, process.stdout), (self._read_stderr, process.stderr))
        for target, stream in readers:
            threading.Thread(
                target=target, args=(running, stream), name=f"child-{child.name}-io", daemon=True
            ).start()
        threading.Thread(
            target=self._watch, args=(running,), name=f"child-{child.name}-watch", daemon=True
        ).start()
        return running

    # ---- watching --------------------------------------------------------------------------------
    def _read_stdout(self, running: _Running, stream: IO[str]) -> None:
        for line in stream:
            if line.strip() == READY:
                running.started.set()
                running.ready.set()

    def _read_stderr(self, running: _Running, stream: IO[str]) -> None:
        """Pass the child's stderr on, once it is ready: what it writes while starting is kept
        for the error :meth:`start_all` raises if it fails (one message, not two)."""
        name = running.child.name
        early: list[str] = []
        for raw in stream:
            line = raw.rstrip("\n")
            tail = self._tails.setdefault(name, [])
            tail.append(line)
            del tail[:-20]
            if not running.started.is_set():
                early.append(line)
                continue
            for kept in early:  # started after all: what it said meanwhile, then the rest
                self._pass_on(name, kept)
            early.clear()
            self._pass_on(name, line)

    def _pass_on(self, name: str, line: str) -> None:
        with contextlib.suppress(Exception):  # a failing sink must not kill the reader
            self._on_line(name, line)

    def _watch(self, running: _Running) -> None:
        process = running.process
        while process.poll() is None:
            cpu = cpu_seconds_of(process.pid)
            if cpu is not None:
                running.cpu_s = cpu
            time.sleep(WATCH_PERIOD_S)
        running.returncode = process.returncode
        self._retire(running)
        with self._lock:
            closed = self._closed
        running.ready.set()  # wake a start() that waits for it
        if running.stopping or closed:
            return
        if self._on_exit is not None:
            with contextlib.suppress(Exception):
                self._on_exit(running.child.name, process.returncode)
        if running.child.respawn:
            with contextlib.suppress(ProcessGroupError):
                self.start(running.child)

    # ---- control -------------------------------------------------------------------------------
    def pid(self, name: str) -> int | None:
        """The pid of the running child ``name``, or None."""
        with self._lock:
            running = self._running.get(name)
        return None if running is None else running.process.pid

    @property
    def names(self) -> tuple[str, ...]:
        """The children running now, in start order."""
        with self._lock:
            return tuple(n for n in self._order if n in self._running)

    def signal(self, name: str, signum: int) -> None:
        """Send ``signum`` to child ``name`` (e.g. ``SIGSTOP`` / ``SIGCONT`` for a fault test)."""
        pid = self.pid(name)
        if pid is None:
            raise ProcessGroupError(f"no running process {name!r}")
        os.kill(pid, signum)

    def cpu_seconds(self) -> float:
        """User + system CPU time of every child since it started, exited ones included (s)."""
        with self._lock:
            live = list(self._running.values())
            total = self._exited_cpu_s
        for running in live:
            cpu = cpu_seconds_of(running.process.pid)
            total += running.cpu_s if cpu is None else cpu
        return total

    def stop(self, name: str | None = None) -> None:
        """Stop child ``name``, or every child in the reverse of the start order (``None``; the
        group then starts nothing more). Idempotent."""
        with self._lock:
            if name is None:
                self._closed = True
                targets = [self._running[n] for n in reversed(self._order) if n in self._running]
            else:
                targets = [self._running[name]] if name in self._running else []
        for running in targets:
            self._stop_one(running)
        if name is None:
            self._spawner.shutdown(wait=False)

    def _retire(self, running: _Running) -> None:
        """``running`` has ended: its last CPU sample joins the exited total (once)."""
        with self._lock:
            if not running.retired:
                running.retired = True
                self._exited_cpu_s += running.cpu_s
            if self._running.get(running.child.name) is running:
                del self._running[running.child.name]

    def _stop_one(self, running: _Running) -> None:
        running.stopping = True
        process = running.process
        cpu = cpu_seconds_of(process.pid)  # its last sample: /proc forgets it once it is reaped
        if cpu is not None:
            running.cpu_s = cpu
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGCONT)  # a stopped child cannot act on SIGTERM
                process.terminate()
            try:
                process.wait(self._stop_timeout_s)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                process.wait()
        self._retire(running)

    def __enter__(self) -> ProcessGroup:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()


def _to_stderr(name: str, line: str) -> None:
    sys.stderr.write(f"[{name}] {line}\n")
    sys.stderr.flush()


def child_argv(module: str, args: Sequence[str]) -> tuple[str, ...]:
    """The command line that runs ``python -m module args`` with this interpreter."""
    return (sys.executable, "-m", module, *args)
