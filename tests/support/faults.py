"""Shared helpers of the fault-injection tests: the bridge's mode log, child processes, clean-up.

Part of :mod:`support`; ``tests/faults/fault_node.py`` imports it in the child processes too.

- :class:`ModeLog` records every change of the bridge's ``owner`` / ``mode`` / ``estop`` from
  ``/hb50/bridge_state`` (published every cycle), stamped on the monotonic clock *in the bridge's
  cycle* when the bridge runs in the test process (a realtime subscription runs inside
  ``publish``). Each change also keeps the time of the cycle before it, so a test can say "the
  first cycle after the deadline" without trusting a sleep.
- :func:`spawn` starts :mod:`fault_node` (a router, a bridge, a control node or an observer) and
  waits for its ``ready`` line, which carries the child's ``time.monotonic_ns()`` (the same
  clock in every process on Linux: :func:`ready_ns`); :func:`end` ends it (stdin closed, else
  SIGKILL) and reaps it.
- :data:`FAST_RECONNECT`: the Zenoh ``connect/retry`` setting that :class:`ZenohConfig` applies
  by default, repeated here for the bare router process (not a jointbus bus). Zenoh's own default
  retries a lost link after 1 s, then 2 s, then every 4 s, so a peer or
  router that comes back after a few seconds is found up to 4 s later; the 2 s recovery bound
  needs a retry period of at most 0.5 s (measured: recovery ≤ 0.5 s after the restart with it,
  up to 3.9 s without).
- :func:`orphan_shm_files` / :func:`remove_orphan_shm`: a SIGKILLed process with Zenoh shared
  memory leaves ``*.zenoh`` files in ``/dev/shm``; remove the new ones no living process maps.
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final

from jointbus.bus import MAB_RT, Bus, ZenohConfig
from jointbus.robots.hb50.messages import BridgeState, BridgeStatus
from support.bus import free_port, wait_until

_HERE = Path(__file__).resolve().parent

SRC: Final = str(_HERE.parents[1] / "src")
NODE_SCRIPT: Final = _HERE.parent / "faults" / "fault_node.py"
#: Zenoh link retry (ms): first retry after 100 ms, then doubling up to 500 ms (see above).
FAST_RECONNECT: Final = (
    ("connect/retry", '{"period_init_ms": 100, "period_max_ms": 500, "period_increase_factor": 2}'),
)
_STDERR: dict[int, IO[str]] = {}
_READY_NS: dict[int, int] = {}
#: The bridge's period at 500 Hz (ns).
CYCLE_NS: Final = 2_000_000
#: How long a child may take to start (s): an interpreter, Zenoh and MuJoCo on a loaded VM.
START_TIMEOUT_S: Final = 60.0


def hub_config(port: int) -> ZenohConfig:
    """The default no-flags scheme on ``port`` (first process listens, later ones connect)."""
    return ZenohConfig(hub_port=port)  # jointbus sessions retry links fast by default


def router_config(port: int) -> ZenohConfig:
    """Client mode through the Zenoh router listening on ``tcp/127.0.0.1:port``."""
    return ZenohConfig.for_router(f"tcp/127.0.0.1:{port}")


@dataclass(frozen=True, slots=True)
class ModeChange:
    """The bridge's state changed at ``t_ns`` (monotonic) in its ``index``-th published cycle
    (counted from the log's creation); ``prev_ns`` is the cycle before."""

    t_ns: int
    prev_ns: int
    index: int
    owner: str
    mode: str
    estop: str | None
    drives_enabled: bool


class ModeLog:
    """Changes of the bridge's owner / mode / e-stop seen on ``/<ns>/bridge_state``."""

    def __init__(self, bus: Bus, namespace: str = "hb50") -> None:
        self.changes: list[ModeChange] = []
        self.count = 0
        self.last_ns = 0
        self._lock = threading.Lock()
        self._key: tuple[str, str, str | None, bool] | None = None
        self._sub = bus.subscribe(
            f"/{namespace}/bridge_state", BridgeState, self._on_state, MAB_RT, realtime=True
        )

    def _on_state(self, state: BridgeState) -> None:
        now = time.monotonic_ns()
        facts = BridgeStatus.of(state)
        key = (
            facts.owner,
            facts.mode.value if facts.mode is not None else "",
            facts.estop_reason,
            state.drives_enabled,
        )
        with self._lock:
            self.count += 1
            if key != self._key:
                self._key = key
                self.changes.append(ModeChange(now, self.last_ns, self.count, *key))
            self.last_ns = now

    @property
    def mode(self) -> str:
        with self._lock:
            return self.changes[-1].mode if self.changes else ""

    @property
    def owner(self) -> str:
        with self._lock:
            return self.changes[-1].owner if self.changes else ""

    def since(self, t_ns: int) -> list[ModeChange]:
        """Changes at or after ``t_ns`` (monotonic ns)."""
        with self._lock:
            return [c for c in self.changes if c.t_ns >= t_ns]

    def first(self, t_ns: int, predicate: Callable[[ModeChange], bool]) -> ModeChange | None:
        """The first change at or after ``t_ns`` that satisfies ``predicate``."""
        return next((c for c in self.since(t_ns) if predicate(c)), None)

    def close(self) -> None:
        self._sub.close()


class Arrivals:
    """Arrival times (monotonic ns) of a topic's messages, by a realtime callback."""

    def __init__(self) -> None:
        self.times: list[int] = []

    def __call__(self, _msg: object) -> None:
        self.times.append(time.monotonic_ns())

    def after(self, t_ns: int) -> list[int]:
        return [t for t in list(self.times) if t >= t_ns]

    def max_gap_s(self, start_ns: int, end_ns: int) -> float:
        """The longest silence (s) between ``start_ns`` and ``end_ns``, edges included."""
        inside = [t for t in list(self.times) if start_ns <= t <= end_ns]
        points = [start_ns, *inside, end_ns]
        return max(b - a for a, b in itertools.pairwise(points)) / 1e9


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([SRC, *filter(None, [env.get("PYTHONPATH")])])
    env.pop("JOINTBUS_HUB_PORT", None)
    env.pop("JOINTBUS_CONNECT", None)
    return env


def spawn(*args: str, ready: str = "ready") -> subprocess.Popen[str]:
    """Start ``fault_node.py ARGS`` and wait for its ``ready`` line (RuntimeError if it dies).

    Its stderr goes to a temporary file (a pipe nobody reads could fill and block the child);
    :func:`stderr_of` reads it."""
    err_file = tempfile.TemporaryFile(mode="w+", prefix="fault_node-")  # noqa: SIM115
    proc = subprocess.Popen(
        [sys.executable, "-u", str(NODE_SCRIPT), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=err_file,
        text=True,
        env=child_env(),
    )
    _STDERR[proc.pid] = err_file
    assert proc.stdout is not None
    line = ""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        line = proc.stdout.readline().strip()
        if line.split(" ")[0] == ready or (not line and proc.poll() is not None):
            break
    words = line.split(" ")
    if words[0] == ready:
        _READY_NS[proc.pid] = int(words[1]) if len(words) > 1 else time.monotonic_ns()
    else:
        proc.kill()
        proc.wait()
        raise RuntimeError(
            f"fault_node {' '.join(args)} did not start: {line!r}\n{stderr_of(proc)}"
        )
    return proc


def ready_ns(proc: subprocess.Popen[str]) -> int:
    """When a child started by :func:`spawn` was ready, on the system-wide monotonic clock (ns):
    the child stamps its ``ready`` line (``CLOCK_MONOTONIC`` is the same in every process)."""
    return _READY_NS[proc.pid]


def stderr_of(proc: subprocess.Popen[str]) -> str:
    """What a child started by :func:`spawn` wrote on stderr so far."""
    err_file = _STDERR.get(proc.pid)
    if err_file is None or err_file.closed:
        return ""
    err_file.flush()
    err_file.seek(0)
    return err_file.read()


def read_stamp(proc: subprocess.Popen[str], word: str, timeout: float) -> int | None:
    """Wait up to ``timeout`` s for the child's line ``WORD <monotonic ns>``; that stamp.

    The reader thread keeps reading the child's stdout after a timeout (until that line or the
    end of the stream), so call it at most once per line expected."""
    assert proc.stdout is not None
    result: list[int] = []

    def reader() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            words = line.split()
            if words and words[0] == word:
                result.append(int(words[1]))
                return

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    thread.join(timeout)
    return result[0] if result else None


def end(proc: subprocess.Popen[str], timeout: float = 15.0) -> int:
    """End a child: close its stdin (a clean stop), SIGKILL after ``timeout`` s; its exit code."""
    if proc.poll() is None and proc.stdin is not None:
        try:
            proc.stdin.close()
            proc.wait(timeout=timeout)
        except (subprocess.TimeoutExpired, OSError):
            pass
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()
    err_file = _STDERR.pop(proc.pid, None)
    if err_file is not None:
        err_file.close()
    return proc.returncode


def kill(proc: subprocess.Popen[str]) -> int:
    """SIGKILL (no goodbye, no farewell heartbeat, sockets closed by the kernel); monotonic ns."""
    proc.send_signal(signal.SIGKILL)
    at = time.monotonic_ns()
    proc.wait()
    return at


def orphan_shm_files() -> set[Path]:
    """Zenoh's shared-memory files in /dev/shm now."""
    shm = Path("/dev/shm")
    return set(shm.glob("*.zenoh")) if shm.is_dir() else set()


def _mapped(path: Path) -> bool:
    for maps in Path("/proc").glob("[0-9]*/maps"):
        try:
            if str(path) in maps.read_text():
                return True
        except OSError:
            continue
    return False


def remove_orphan_shm(before: set[Path]) -> None:
    """Remove the shared-memory files created since ``before`` that no living process maps."""
    for path in orphan_shm_files() - before:
        if not _mapped(path):
            path.unlink(missing_ok=True)


__all__ = [
    "CYCLE_NS",
    "FAST_RECONNECT",
    "Arrivals",
    "ModeChange",
    "ModeLog",
    "end",
    "free_port",
    "hub_config",
    "kill",
    "orphan_shm_files",
    "read_stamp",
    "ready_ns",
    "remove_orphan_shm",
    "router_config",
    "spawn",
    "stderr_of",
    "wait_until",
]
