"""The chaos campaign: the walking robot in its process layout, faults at random, invariants.

Where it sits: beside :mod:`jointbus.soak` at the top of the package (it runs a
:class:`~jointbus.stack.Stack`, which the tools layer may not import); ``jointbus chaos`` and
``make chaos`` run it. The parts that know no process — the velocity script, the fault schedule,
the invariant checker and the report — are in :mod:`jointbus.tools.chaos`.

**What runs** (all on loopback, one free hub port): this process's own bus first (so it is the
Zenoh hub every other process joins, and it outlives a restarted stack), the hb50 in its bundled
layout — the simulator and the bridge in one process, the control node in another (``respawn``:
a killed control node is started again by the layout) — and beside it, each a process of its own,
the velocity publisher (:mod:`jointbus.tools.chaos.velocity_publisher`, the seeded script at
20 Hz), a recorder (``jointbus record`` of the 10 Hz state and the status topic), a monitor
(``jointbus monitor --plain``) and a ``bus://hb50`` client reading the joints. Once the robot
stands the campaign clock starts, and the seeded
:class:`~jointbus.tools.chaos.fault_schedule.FaultSchedule` is injected at its times.

**What it watches**, in this process: the simulator's ground truth (``/hb50/sim/ground_truth``,
500 Hz), the measured joints (``/hb50/bridge_data``, 500 Hz), the control node's commands
(``/hb50/joint_command``), the bridge's 10 Hz state, the control node's 10 Hz state and every
``/hb50/status`` report, fed to the :class:`~jointbus.tools.chaos.invariants.InvariantChecker`
with their arrival time on the campaign clock.

**Faults and what must be reported** (bounds: docs/SAFETY.md, plus headroom for the 10 Hz state,
the status topic's 1 s rate limit per problem and a loaded host):

- SIGSTOP of the control node for ≥ 0.3 s: the bridge's ``watchdog`` (or ``fallback``) WARN within
  :data:`WATCHDOG_REPORT_S`; SIGKILL: STALE about ``control_node`` from ``bridge_node`` within
  :data:`STALE_REPORT_S`, and the layout starts it again;
- the velocity publisher (a node with heartbeats): SIGKILL → STALE within :data:`STALE_REPORT_S`,
  SIGSTOP ≥ :data:`STALE_STOP_S` → STALE within it; it is started again 2 s after a kill (past
  its STALE bound);
- the recorder, the monitor and the ``bus://`` client (:mod:`jointbus.tools.chaos.bus_client`,
  reading the joints through ``bus://hb50``): no report (they command nothing); started again
  after a kill;
- SIGKILL of the bridge process: the control node's STALE about ``bridge_node`` within
  :data:`STALE_REPORT_S`; the stack is then stopped and started again (the campaign clock stops
  meanwhile), and the robot must stand again within ``stand_timeout_s``;
- bad joint commands: the bridge's ERROR naming the source within :data:`REJECT_REPORT_S`;
- velocity flips, CPU hogs: nothing to report; the robot must stay upright;
- a duplicate ``control_node``: the namesake must be refused (its process exits
  :data:`~jointbus.tools.chaos.bad_input.REFUSED`).

At the end (every fault over) the robot must stand, or sit after a reported fallback, with the
bridge and the control node OK, within ``final_timeout_s``. Every process the campaign started
is stopped whatever happens (Ctrl-C too); the processes it starts die with it (``PDEATHSIG``, set
by util-linux's ``setpriv`` before their exec: :data:`_CHILD_PREFIX`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gc
import heapq
import math
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import zenoh

from jointbus.bus import (
    MAB_RT,
    RELIABLE,
    Bus,
    MessagesLostEvent,
    QosEvent,
    Subscriber,
    ZenohConfig,
)
from jointbus.bus.zenoh_transport import ZenohTransport
from jointbus.messages.nav_msgs import Odometry
from jointbus.messages.status import Level
from jointbus.model.yaml_loader import load_robot
from jointbus.robots.hb50.messages import (
    BridgeData,
    BridgeState,
    BridgeStatus,
    JointCommand,
    MotionMode,
    RobotState,
    Status,
)
from jointbus.runtime.diagnostics import LoopDiagnostics
from jointbus.runtime.launch import LaunchDescription
from jointbus.runtime.realtime import RealtimeConfig, RealtimeWarning, apply_realtime
from jointbus.stack import (
    BRIDGE_GONE,
    BRIDGE_LATE,
    BRIDGE_LOST,
    MODE_UNKNOWN,
    Stack,
    bundled_layout,
)
from jointbus.tools.chaos.bad_input import REFUSED
from jointbus.tools.chaos.fault_schedule import Fault, FaultKind, FaultSchedule, window_shift
from jointbus.tools.chaos.invariants import FaultRecord, InvariantChecker, ReportRule, tilt_of
from jointbus.tools.chaos.report import CampaignReport
from jointbus.tools.chaos.velocity_publisher import NODE_NAME as VELOCITY_NODE

__all__ = [
    "REJECT_REPORT_S",
    "STALE_REPORT_S",
    "STALE_STOP_S",
    "WATCHDOG_REPORT_S",
    "CampaignConfig",
    "CampaignConfigError",
    "loop_gap_note",
    "run_campaign",
]

#: A burst's or a duplicate's process that has not done its work this long (s) after it was
#: started is stopped (on a starved host Python alone may take that long to start).
START_EXPIRY_S: Final = 30.0
#: SCHED_FIFO priority of the campaign's own threads (the observer): above every normal process
#: (the hogs), below the robot's (its loops at 49-50, their bus threads at 39-40).
OBSERVER_PRIORITY: Final = 20
#: ``-v`` says when the bridge's 10 Hz state came this long (s) after the one before (a bridge
#: or a link that stalled), and when its commands' age p99 over 1 s is above this (cycles): what
#: a missed watchdog report needs to be explained.
_STATE_GAP_S: Final = 0.3
_OLD_COMMANDS_CYCLES: Final = 10
#: ``-v`` says what the bridge's loop did between two of its 1 Hz diagnostics when their stamps
#: (the bridge's clock) are more than this far apart (s), or its loop dropped more than
#: :data:`_LOOP_DROPPED_SLOTS` grid slots between them: whether a gap in the bridge's state was its
#: loop stalling (slots dropped) or only its publications (cycles run at the rate, stamps far
#: apart). Two full seed-11 hours missed the report of the same SIGSTOP (#585) in a 4 s gap of
#: the bridge's state, and the ``-v`` log could not tell which.
_DIAGNOSTICS_GAP_S: Final = 1.5
_LOOP_DROPPED_SLOTS: Final = 10
#: A fault injected this long (s) after its time is counted (a note) and, with ``-v``, said.
LATE_INJECTION_S: Final = 0.2
#: ``-v`` says when one pass of the campaign's loop took longer than this (campaign s, so a
#: restart with the clock paused is not counted), or one full garbage collection of its
#: interpreter longer than ``_GC_PAUSE_S``: what made the campaign late.
_BUSY_S: Final = 0.5
_GC_PAUSE_S: Final = 0.2
#: Watchdog 0.25 s + the status topic's 1 s rate limit per problem + 0.1 s publish + headroom.
WATCHDOG_REPORT_S: Final = 1.5
#: The liveliness timeout 1.5 s (a SIGKILL is seen in ≈ 0.15 s by its tokens) + headroom.
STALE_REPORT_S: Final = 1.8
#: A SIGSTOP this long (s) is past the 1.5 s heartbeat rule whatever the heartbeat's phase.
STALE_STOP_S: Final = 1.9
#: A rejection's ERROR: published within 0.1 s, repeats folded into one a second + headroom.
REJECT_REPORT_S: Final = 1.5
#: The launcher sees a process of its layout die within its 50 ms watch period + headroom.
LAUNCHER_REPORT_S: Final = 0.5
#: How long after a bridge kill the campaign waits for the control node's report (s).
BRIDGE_DEATH_WATCH_S: Final = 2.5
#: How long the tools get after the velocity publisher is up, before the campaign clock starts
#: (s): the recorder and the monitor join, the bridge knows the publisher's node.
TOOLS_START_S: Final = 3.0
#: A duplicate control node is injected only this long (s) after the last control node kill:
#: while the control node restarts, a namesake is a legitimate successor, not a duplicate.
DUPLICATE_AFTER_KILL_S: Final = 10.0
#: ... and this long after a SIGSTOP of it ended: a node silent for 2 s may be replaced (the
#: namesake rule of docs/SAFETY.md), so a duplicate is only a duplicate of a running node.
DUPLICATE_AFTER_STOP_S: Final = 3.0
#: How long a killed tool stays dead before it is started again (s).
TOOL_RESTART_S: Final = 2.0
#: When a duplicate node's process is checked (s after it is up): the 2 s watch for a namesake
#: and its error, with headroom for a loaded host.
DUPLICATE_CHECK_S: Final = 8.0
#: Every process the campaign starts runs through util-linux's ``setpriv`` (SIGKILL when the
#: campaign dies: no process left behind) and ``chrt`` (the normal scheduler: a hog or a tool
#: must not inherit the campaign's SCHED_FIFO). Both used to be a ``preexec_fn``, which makes
#: ``subprocess`` fork() this whole process — its threads, the Zenoh session's memory — instead
#: of vfork(), and run Python in the child before exec. That fork froze every thread of the
#: campaign (its loop and its reception) for 2.5–5.6 s when it came during a CPU hog: found by
#: sampling the campaign (py-spy) while seed 11's hour ran, the loop inside ``Popen`` and the
#: process unreadable for 4.3 s (2026-12-05); faults due meanwhile were injected late.
_CHILD_PREFIX: Final = ("setpriv", "--pdeathsig", "KILL", "--", "chrt", "--other", "0")
#: ``jointbus ...`` with this interpreter (the console script need not be on the PATH).
_JOINTBUS_MAIN: Final = "import sys; from jointbus.cli.main import main; sys.exit(main())"
_BRIDGE: Final = "bridge_node"
#: The reporting node of the launcher's own reports (:meth:`Stack.take_reports`).
_LAUNCHER: Final = "launcher"
#: Motion modes of a robot on its feet (walking at zero speed is standing).
_UPRIGHT_MODES: Final = (MotionMode.STAND.name, MotionMode.LOCOMOTION.name)
_CONTROL: Final = "control_node"
#: The campaign's best-effort 500 Hz subscriptions: their gaps are drops by design, not news.
_MAB_RT_TOPICS: Final = ("/hb50/sim/ground_truth", "/hb50/bridge_data", "/hb50/joint_command")


class CampaignConfigError(ValueError):
    """A campaign argument is out of range: ``field``, ``value`` and what was ``expected``."""

    def __init__(self, field: str, value: object, expected: str) -> None:
        self.field = field
        self.value = value
        self.expected = expected
        super().__init__(f"chaos {field} = {value!r} is invalid: expected {expected}")


@dataclass(frozen=True, slots=True)
class CampaignConfig:
    """``seed``; ``duration_s`` of campaign (the robot's run, restarts excluded);
    ``faults_per_minute``; ``hub_port`` (``None``: a free one); ``kinds`` to inject;
    ``stand_timeout_s`` for each (re)start; ``final_timeout_s`` for the end state; ``window``
    (campaign s, ``None``: all): replay only the faults of the ``duration_s`` schedule that start
    in it, in a short run (:meth:`~.fault_schedule.FaultSchedule.window`)."""

    seed: int = 1
    duration_s: float = 600.0
    faults_per_minute: float = 30.0
    hub_port: int | None = None
    kinds: tuple[FaultKind, ...] = tuple(FaultKind)
    stand_timeout_s: float = 60.0
    final_timeout_s: float = 30.0
    verbose: bool = False
    window: tuple[float, float] | None = None

    def schedule(self) -> FaultSchedule:
        """The faults to inject: the seed's, or those of :attr:`window`, moved."""
        full = FaultSchedule.from_seed(
            self.seed,
            self.duration_s,
            faults_per_minute=self.faults_per_minute,
            kinds=self.kinds,
        )
        return full if self.window is None else full.window(*self.window)


def run_campaign(
    config: CampaignConfig, *, progress: Callable[[str], None] | None = None
) -> CampaignReport:
    """Run the campaign of ``config`` (see the module docstring) and return its report."""
    if isinstance(config.seed, bool) or not isinstance(config.seed, int):
        raise CampaignConfigError("seed", config.seed, "an int")
    if not (math.isfinite(config.duration_s) and config.duration_s >= 10.0):
        raise CampaignConfigError("duration_s", config.duration_s, "finite seconds ≥ 10")
    schedule = config.schedule()  # FaultScheduleError for the rest, before anything runs
    campaign = _Campaign(config, schedule, progress or (lambda _line: None))
    return campaign.run()


def loop_gap_note(before: LoopDiagnostics, after: LoopDiagnostics) -> str | None:
    """What the bridge's rate loop did between two of its diagnostics messages (``-v``), or
    ``None`` when that was ordinary: stamps at most :data:`_DIAGNOSTICS_GAP_S` apart and at most
    :data:`_LOOP_DROPPED_SLOTS` slots dropped, or a restarted loop (its counts start again)."""
    if after.cycles < before.cycles or after.skipped < before.skipped:
        return None
    span_s = (after.header.stamp.to_ns() - before.header.stamp.to_ns()) / 1e9
    ran = after.cycles - before.cycles
    dropped = after.skipped - before.skipped
    if span_s <= _DIAGNOSTICS_GAP_S and dropped <= _LOOP_DROPPED_SLOTS:
        return None
    rate = f", {ran / span_s:.0f} Hz" if span_s > 0.0 else ""
    return (
        f"bridge loop: {ran} cycles run{rate}, {dropped} slots dropped, in the {span_s:.2f} s "
        "between its diagnostics (the bridge's stamps)"
    )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _load() -> float:
    with contextlib.suppress(OSError):
        return os.getloadavg()[0]
    return math.nan


class _Campaign:
    def __init__(
        self, config: CampaignConfig, schedule: FaultSchedule, say: Callable[[str], None]
    ) -> None:
        self.config = config
        self.schedule = schedule
        self.say = say
        self.port = config.hub_port if config.hub_port is not None else _free_port()
        self.zenoh = ZenohConfig(hub_port=self.port)
        model = load_robot("hb50")
        names = tuple(j.name for j in model.actuated_joints())
        self.checker = InvariantChecker(names, model.limits_for(names))
        self.checker.pause(-math.inf)  # nothing counts before the campaign clock starts
        self.lock = threading.RLock()
        self.origin = math.inf  # monotonic time of campaign t = 0 (set once the robot stands)
        self.wall_minus_monotonic_ns = time.time_ns() - time.monotonic_ns()
        self.paused_total = 0.0
        self.paused_at: float | None = None
        self.stack: Stack | None = None
        self.tools: dict[str, subprocess.Popen[bytes]] = {}
        self.transient: list[subprocess.Popen[bytes]] = []
        self.events: list[tuple[float, int, Callable[[], None]]] = []
        self._seq = 0
        self.notes: list[str] = []
        self.skipped: dict[str, int] = {}
        self.aborted = False
        #: campaign time (s) at which Ctrl-C or SIGTERM stopped the run, or None
        self.stopped_at: float | None = None
        self._said_violations = 0
        self.control_killed_pid: int | None = None
        self.control_killed_at = -math.inf
        self.control_stopped_until = -math.inf
        self.last_height = math.nan
        self.last_tilt = math.nan
        self.mode = ""
        self.bridge_mode = ""
        self.bridge_owner = ""
        self.bridge_state_t = -math.inf  # campaign time (s) the bridge's state last came
        self._said_age: int | None = None  # the command age -v said last (cycles)
        self._bridge_loops: dict[str, LoopDiagnostics] = {}  # last diagnostics per loop (-v)
        self.late_injections: list[float] = []  # how late (s) each late fault was injected
        self._tried: set[int] = set()  # faults whose injection was tried (their index)
        self._gc_started = 0.0  # perf_counter of the garbage collection under way (-v)
        self.tmp = tempfile.TemporaryDirectory(prefix="jointbus-chaos-")
        self.wall_start = time.monotonic()

    # ---- the campaign clock --------------------------------------------------------------
    def now(self) -> float:
        """Campaign time (s): wall clock since the robot first stood, restarts left out."""
        at = self.paused_at if self.paused_at is not None else time.monotonic()
        return at - self.origin - self.paused_total

    def when(self, t: float) -> str:
        """Campaign time ``t`` as ``-v`` prints it (``before t=0`` until the robot first stood)."""
        return f"t={t:7.2f} s" if math.isfinite(t) else "before t=0"

    @property
    def _origin_file(self) -> Path:
        return Path(self.tmp.name) / "origin"

    def _write_origin(self) -> None:
        """Tell the velocity publisher where the script's t = 0 is (monotonic s); none while
        the stack restarts (it publishes stop)."""
        path = self._origin_file
        if self.paused_at is not None:
            path.unlink(missing_ok=True)
            return
        temp = path.with_suffix(".new")
        temp.write_text(repr(self.origin + self.paused_total))
        temp.replace(path)  # atomic: never a half-written number

    def at_wall(self, stamp_ns: int) -> float:
        """Campaign time (s) of a wall-clock stamp (ns): when a report was *made*, not when this
        process got round to receiving it."""
        mono = (stamp_ns - self.wall_minus_monotonic_ns) / 1e9
        return mono - self.origin - self.paused_total

    def _at(self, t_s: float, action: Callable[[], None]) -> None:
        """Run ``action`` at campaign time ``t_s`` (any thread: a burst's starter adds some)."""
        with self.lock:
            self._seq += 1
            heapq.heappush(self.events, (t_s, self._seq, action))

    def _due(self, now: float) -> Callable[[], None] | None:
        """The next action due at ``now``, taken off the queue (``None``: nothing is due)."""
        with self.lock:
            if self.events and self.events[0][0] <= now:
                return heapq.heappop(self.events)[2]
            return None

    # ---- running ---------------------------------------------------------------------------
    def run(self) -> CampaignReport:
        # The observer must see the robot when it happens, also under the campaign's CPU hogs:
        # SCHED_FIFO below the robot's processes (their bus threads run at 39-40), inherited by
        # the bus threads made from here on; its children go back to the normal scheduler.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RealtimeWarning)
            apply_realtime(RealtimeConfig(priority=OBSERVER_PRIORITY))
        try:
            return self._run()
        finally:
            with contextlib.suppress(OSError):
                os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))

    def _run(self) -> CampaignReport:
        bus = Bus(name="chaos-campaign", zenoh=self.zenoh)  # first: the hub every process joins
        subs: list[Subscriber[Any]] = []
        unwatch: Callable[[], None] = lambda: None  # noqa: E731
        try:
            subs = self._subscribe(bus)
            unwatch = self._watch_transport(bus)
            self._start_stack()
            for name in ("velocity", "recorder", "monitor", "bus_client"):
                self._start_tool(name)
            velocity = self.tools["velocity"]
            assert velocity.stdout is not None
            velocity.stdout.readline()  # "ready"
            time.sleep(TOOLS_START_S)  # the tools' nodes are known before t = 0
            with self.lock:
                self.origin = time.monotonic()
                self.checker.resume(0.0)
            self._write_origin()
            for fault in self.schedule.faults:
                self._at(fault.at_s, functools.partial(self._inject, fault))
            self.say(
                f"chaos: seed {self.config.seed}, {len(self.schedule.faults)} faults over "
                f"{self.schedule.duration_s:g} s"
                + (
                    ""
                    if self.config.window is None
                    else f" (those starting in {self.config.window[0]:g}–"
                    f"{self.config.window[1]:g} s of the {self.config.duration_s:g} s schedule, "
                    f"moved by {window_shift(self.config.window[0]):+g} s)"
                )
                + f", hub port {self.port}"
            )
            try:
                self._loop()
            except KeyboardInterrupt:
                # Ctrl-C or SIGTERM: the report covers the campaign time run so far and says it
                # was cut short (a partial campaign never passes); what stopping does to the
                # robot is not judged
                with self.lock:
                    self.stopped_at = self.now()
                    self.checker.pause(self.stopped_at)
                self.say(f"chaos: stopped early (Ctrl-C or SIGTERM) at t={self.stopped_at:.1f} s")
            if not self.aborted and self.stopped_at is None:
                self._finish()
        finally:
            with self.lock:
                self.checker.pause(self.now())  # stopping the robot breaks no rule
            self._cleanup()
            for sub in subs:
                sub.close()
            unwatch()
            bus.close()
            self.tmp.cleanup()
        for kind, n in self.skipped.items():
            self.notes.append(f"{n} {kind} fault(s) skipped: the process was not running then")
        if self.late_injections:
            self.notes.append(
                f"{len(self.late_injections)} fault(s) injected more than "
                f"{LATE_INJECTION_S:g} s after their time (the campaign's loop was busy; worst "
                f"{max(self.late_injections):.2f} s late), each for its full length"
            )
        for r in self.checker.records:
            if r.unwitnessed:
                self.notes.append(f"{r.fault.describe()}: its report not judged ({r.unwitnessed})")
        with self.lock:
            return CampaignReport.of(
                seed=self.config.seed,
                duration_s=self.schedule.duration_s,
                stopped_at_s=self.stopped_at,
                wall_s=time.monotonic() - self.wall_start,
                faults_per_minute=self.config.faults_per_minute,
                records=self.checker.records,
                violations=self.checker.violations,
                ground_truth_samples=self.checker.samples,
                load=_load(),
                notes=self.notes,
                schedule_s=self.config.duration_s,
                window=self.config.window,
            )

    def _loop(self) -> None:
        next_line = 30.0
        while True:
            now = self.now()
            if self.aborted or (not self.events and now >= self.schedule.duration_s):
                return
            began = now  # campaign time: a restart after a bridge kill (clock paused) is not busy
            ran: list[Callable[[], None]] = []
            while (action := self._due(now)) is not None:
                action()
                ran.append(action)
                now = self.now()
            self._watch_stack()
            self._reap()
            self._say_new_violations()
            busy = self.now() - began
            if busy > _BUSY_S and self.config.verbose:
                self.say(
                    f"  {self.when(self.now())} campaign: one pass of its loop took {busy:.2f} s "
                    f"({', '.join(map(_action_name, ran)) or 'no fault action'})"
                )
            if now >= next_line:
                with self.lock:
                    done = len(self.checker.records)
                    broken = len(self.checker.violations)
                self.say(
                    f"chaos t={now:6.1f} s  faults={done}  violations={broken}  "
                    f"mode={self.mode or '?'}  bridge={self.bridge_mode or '?'}  "
                    f"height={self.last_height:.3f} m  tilt={self.last_tilt:.3f} rad"
                )
                next_line += 30.0
            with self.lock:
                upcoming = self.events[0][0] if self.events else self.schedule.duration_s
            time.sleep(max(0.0, min(0.05, upcoming - self.now())))

    def _say_new_violations(self) -> None:
        """Print each violation as the checker finds it (the report at the end has them all; a
        run stopped early, or watched live, should not have to wait for it)."""
        with self.lock:
            new = self.checker.violations[self._said_violations :]
            self._said_violations += len(new)
        for violation in new:
            self.say(f"chaos: VIOLATION {violation.describe(self.config.seed)}")

    def _watch_stack(self) -> None:
        """Feed the launcher's reports (a process of the layout died) and a restarted control
        node (a new pid: a process that is up, its commands legitimate again) to the checker."""
        stack = self.stack
        if stack is None:
            return
        launcher = [r for r in stack.take_reports() if r.reporting_node == _LAUNCHER]
        group = stack.processes
        pid = group.pid("control") if group is not None else None
        with self.lock:
            t = self.now()
            for report in launcher:
                self.checker.status(
                    self.at_wall(report.header.stamp.to_ns()),
                    int(report.level),
                    report.reporting_node,
                    report.status,
                )
            killed = self.control_killed_pid
            if killed is not None and pid is not None and pid != killed:
                self.control_killed_pid = None
                self.checker.owner_back(t)
            self.checker.tick(t)

    # ---- the stack -------------------------------------------------------------------------
    def _start_stack(self) -> None:
        layout = LaunchDescription.load(bundled_layout("hb50"))
        processes = tuple(
            dataclasses.replace(p, respawn=True) if "control" in p.nodes else p
            for p in layout.processes
        )
        layout = dataclasses.replace(layout, processes=processes)
        stack = Stack(zenoh=self.zenoh, layout=layout, seed=self.config.seed)
        self.stack = stack
        stack.start()
        if stack.realtime_note is not None and stack.realtime_note not in self.notes:
            self.notes.append(stack.realtime_note)  # the table is of a robot without real time
        summary = stack.wait_for(
            lambda s: s.standing and s.bridge_mode == "run", self.config.stand_timeout_s
        )
        if not (summary.standing and summary.bridge_mode == "run"):
            raise RuntimeError(
                f"the robot did not stand up within {self.config.stand_timeout_s:g} s "
                f"({summary.line()})"
            )

    def _restart_stack(self, record: FaultRecord) -> None:
        """After a bridge kill: stop what is left of the stack, start it again (clock paused)."""
        with self.lock:
            self.paused_at = time.monotonic()
            self.checker.pause(self.now())
        self._write_origin()
        if self.stack is not None:
            self.stack.stop()
        try:
            self._start_stack()
            came_back = True
        except Exception as exc:  # the robot did not come back: a violation, and the end
            came_back = False
            why = str(exc)
        with self.lock:
            assert self.paused_at is not None
            self.paused_total += time.monotonic() - self.paused_at
            self.paused_at = None
            t = self.now()
            self.checker.resume(t)
            self.checker.ended(record, t)
            if not came_back:
                self.checker.violation(
                    t, "robot did not come back", f"after {record.fault.describe()}: {why}",
                    (record.fault.index,),
                )
                self.checker.pause(t)  # a robot that never stood again is judged by that alone
        self._write_origin()
        if not came_back:  # nothing left to inject into: the campaign ends here
            self.events.clear()
            self.aborted = True

    # ---- tools -------------------------------------------------------------------------------
    def _tool_argv(self, name: str) -> list[str]:
        port = str(self.port)
        if name == "velocity":
            return [
                sys.executable, "-m", "jointbus.tools.chaos.velocity_publisher",
                "--seed", str(self.config.seed), "--seconds", repr(self.schedule.duration_s),
                "--origin-file", str(self._origin_file), "--hub-port", port,
            ]
        if name == "bus_client":
            return [sys.executable, "-m", "jointbus.tools.chaos.bus_client", "--hub-port", port]
        jointbus = [sys.executable, "-c", _JOINTBUS_MAIN]
        if name == "recorder":
            path = Path(self.tmp.name) / f"chaos-{len(self.transient)}-{time.monotonic_ns()}.mcap"
            return [
                *jointbus, "record", str(path), "/hb50/status", "/hb50/bridge_state_10hz",
                "/hb50/robot_state_10hz", "--quiet", "--hub-port", port,
            ]
        return [*jointbus, "monitor", "--plain", "--hub-port", port]

    def _spawn(
        self, argv: list[str], *, ready_line: bool = False, stderr: Path | None = None
    ) -> subprocess.Popen[bytes]:
        with contextlib.ExitStack() as files:
            err = files.enter_context(stderr.open("wb")) if stderr is not None else None
            return subprocess.Popen(
                [*_CHILD_PREFIX, *argv],  # no preexec_fn: see _CHILD_PREFIX
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE if ready_line else subprocess.DEVNULL,
                stderr=err if err is not None else subprocess.DEVNULL,
            )

    def _start_tool(self, name: str) -> None:
        self.tools[name] = self._spawn(self._tool_argv(name), ready_line=name == "velocity")

    def _stop_tool(self, name: str) -> None:
        process = self.tools.pop(name, None)
        if process is not None:
            _end(process)

    def _reap(self) -> None:
        self.transient = [p for p in self.transient if p.poll() is None]

    # ---- faults ----------------------------------------------------------------------------
    def _target_pid(self, kind: FaultKind) -> int | None:
        tool = {
            FaultKind.STOP_VELOCITY: "velocity",
            FaultKind.KILL_VELOCITY: "velocity",
            FaultKind.STOP_RECORDER: "recorder",
            FaultKind.KILL_RECORDER: "recorder",
            FaultKind.STOP_MONITOR: "monitor",
            FaultKind.KILL_MONITOR: "monitor",
            FaultKind.STOP_BUS_CLIENT: "bus_client",
            FaultKind.KILL_BUS_CLIENT: "bus_client",
        }.get(kind)
        if tool is not None:
            process = self.tools.get(tool)
            return process.pid if process is not None and process.poll() is None else None
        group = self.stack.processes if self.stack is not None else None
        if group is None:
            return None
        if kind in (FaultKind.STOP_CONTROL, FaultKind.KILL_CONTROL):
            pid = group.pid("control")
            # killed already, and not yet seen gone by the layout (it polls every 50 ms): a
            # second kill of it is no new fault to report (#287 of seed 11, 0.22 s after #283,
            # both due in one late pass of the campaign's loop, was judged as one)
            return None if pid is not None and pid == self.control_killed_pid else pid
        return group.pid("bridge")

    def _inject(self, fault: Fault) -> None:
        late = self.now() - fault.at_s
        first = fault.index not in self._tried  # a duplicate node may be put off, on purpose
        self._tried.add(fault.index)
        if first and late > LATE_INJECTION_S:
            self.late_injections.append(late)
            if self.config.verbose:
                self.say(
                    f"  {self.when(self.now())} campaign: {fault.describe()} injected "
                    f"{late:.2f} s late (its loop was busy)"
                    + ("; it lasts its full length from now" if fault.duration_s > 0 else "")
                )
        kind = fault.kind
        if kind.is_stop or kind.is_kill:
            pid = self._target_pid(kind)
            if pid is None:
                self.skipped[kind.value] = self.skipped.get(kind.value, 0) + 1
                return
            if kind.is_stop:
                self._stop(fault, pid)
            else:
                self._kill(fault, pid)
        elif kind is FaultKind.CPU_HOG:
            hogs = [
                self._spawn([sys.executable, "-c", "while True: pass"])
                for _ in range(os.cpu_count() or 1)
            ]
            self.transient.extend(hogs)
            record = self._injected(fault, None)
            # its full length from when it started, also when the campaign was late to start it
            self._at(record.injected_s + fault.duration_s, lambda: self._end_hogs(hogs, record))
        elif kind in (FaultKind.BAD_JOINT_COMMANDS, FaultKind.VELOCITY_FLIP):
            what = "joint-commands" if kind is FaultKind.BAD_JOINT_COMMANDS else "velocity-flip"
            process = self._spawn([
                sys.executable, "-m", "jointbus.tools.chaos.bad_input", what,
                "--seconds", repr(fault.duration_s), "--hub-port", str(self.port),
            ], ready_line=True)
            self.transient.append(process)
            rule = (
                ReportRule(_BRIDGE, REJECT_REPORT_S, Level.ERROR, contains=("chaos_bad_input",))
                if kind is FaultKind.BAD_JOINT_COMMANDS
                else None
            )
            # the process needs ≈ 1-2 s to start: the burst and its report bound begin at "ready"
            record = self._injected(fault, None)
            self._await_ready(process, record, rule)
        else:  # DUPLICATE_NODE
            now = time.monotonic()
            if (
                now < self.control_killed_at + DUPLICATE_AFTER_KILL_S
                or now < self.control_stopped_until + DUPLICATE_AFTER_STOP_S
            ):
                self._at(self.now() + 1.0, functools.partial(self._inject, fault))
                return
            log = Path(self.tmp.name) / f"duplicate-{fault.index}.log"
            process = self._spawn([
                sys.executable, "-m", "jointbus.tools.chaos.bad_input", "duplicate-node",
                "--hub-port", str(self.port),
            ], ready_line=True, stderr=log)
            self.transient.append(process)
            record = self._injected(fault, None)
            self._await_ready(
                process, record, None, then=lambda: self._check_duplicate(process, record, log)
            )

    def _bridge_killed(self, t: float) -> None:
        """The bridge dies at campaign time ``t``: the reports it owed are not judged, nor those
        of bursts under way (their rule is set once their process is up), each noted."""
        self.checker.witness_lost(_BRIDGE, t)
        for r in self.checker.records:
            burst = r.fault.kind is FaultKind.BAD_JOINT_COMMANDS
            starting = r.expected is None and math.isnan(r.detected_s)  # not yet "ready"
            if burst and starting and not r.unwitnessed and not (
                r.ended_s < t  # NaN (under way) compares false
            ):
                r.expected = None
                r.unwitnessed = f"{_BRIDGE} killed at t={t:.2f} s, during the burst"

    def _injected(self, fault: Fault, rule: ReportRule | None) -> FaultRecord:
        with self.lock:
            return self.checker.injected(fault, self.now(), rule)

    def _ended(self, record: FaultRecord) -> None:
        with self.lock:
            self.checker.ended(record, self.now())

    def _end_hogs(self, hogs: list[subprocess.Popen[bytes]], record: FaultRecord) -> None:
        for process in hogs:
            _end(process)
        self._ended(record)

    def _await_ready(
        self,
        process: subprocess.Popen[bytes],
        record: FaultRecord,
        rule: ReportRule | None,
        *,
        then: Callable[[], None] | None = None,
    ) -> None:
        """The burst starts when its process is up (≈ 1–2 s; longer on a loaded host): the bound
        counts from there. ``then`` runs :data:`DUPLICATE_CHECK_S` after that (default: the
        fault ends after its burst)."""

        def wait() -> None:
            assert process.stdout is not None
            process.stdout.readline()  # "ready" (or b"" if it died)
            with self.lock:
                if not math.isnan(record.ended_s):
                    return  # expired before it ran (see _expire)
                t = self.now()
                record.injected_s = t
                # expected from "ready" on: the first refusal is reported within milliseconds,
                # before this thread reads the line that says when the first command went out
                # (not if the bridge was killed since the burst was due: see _bridge_killed)
                record.expected = None if record.unwitnessed else rule
            if rule is not None:  # judged from the first command it sent (it says when)
                words = process.stdout.readline().split()
                if len(words) == 2 and words[0] == b"first":
                    with self.lock:
                        record.injected_s = self.at_wall(int(words[1]))
                        # seen before this line was read: not earlier than the first command
                        # (max keeps NaN, not yet seen, as NaN)
                        record.detected_s = max(record.detected_s, record.injected_s)
            if then is not None:
                self._at(t + DUPLICATE_CHECK_S, then)
            else:
                self._at(t + record.fault.duration_s + 0.5, lambda: self._ended(record))

        threading.Thread(target=wait, name="chaos-burst-start", daemon=True).start()
        self._at(record.injected_s + START_EXPIRY_S, lambda: self._expire(process, record))

    def _expire(self, process: subprocess.Popen[bytes], record: FaultRecord) -> None:
        """A burst or duplicate whose process did not even start (a starved host) within
        :data:`START_EXPIRY_S`: stopped, its fault ended, and said so in the notes."""
        if not math.isnan(record.ended_s):
            return
        _end(process)
        self._ended(record)
        self.notes.append(
            f"{record.fault.describe()}: its process did not run within {START_EXPIRY_S:g} s; "
            "stopped"
        )

    def _check_duplicate(
        self, process: subprocess.Popen[bytes], record: FaultRecord, log: Path
    ) -> None:
        if not math.isnan(record.ended_s):
            return  # expired before it ran (see _expire)
        code = process.poll()
        if code is None:
            _end(process)
        said = log.read_text(errors="replace").strip().splitlines()[-1:] if log.exists() else []
        with self.lock:
            t = self.now()
            self.checker.ended(record, t)
            if code != REFUSED:
                self.checker.violation(
                    t,
                    "duplicate node not refused",
                    f"{record.fault.describe()}: a second control_node "
                    + ("still ran" if code is None else f"exited with code {code}")
                    + f" {DUPLICATE_CHECK_S:g} s later (refused: exit {REFUSED})"
                    + (f"; it said: {said[0][:200]}" if said else ""),
                    (record.fault.index,),
                )

    def _stop(self, fault: Fault, pid: int) -> None:
        kind = fault.kind
        rule: ReportRule | None = None
        with self.lock:
            # the bridge sees a stall only of a controller whose commands it runs: a control
            # process still starting (respawned after a kill) or one already held off by the
            # fallback of an earlier fault gives it nothing new to report
            commanding = self.bridge_mode == "run" and self.control_killed_pid is None
            context = self._bridge_context()
        if kind is FaultKind.STOP_CONTROL and fault.duration_s >= 0.3 and commanding:
            rule = ReportRule(
                _BRIDGE, WATCHDOG_REPORT_S, Level.WARN, contains=("watchdog", "fallback")
            )
        elif kind is FaultKind.STOP_VELOCITY and fault.duration_s >= STALE_STOP_S:
            rule = ReportRule(
                _BRIDGE, STALE_REPORT_S, Level.STALE, data=VELOCITY_NODE.encode()
            )
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGSTOP)
        with self.lock:
            record = self.checker.injected(fault, self.now(), rule, context)
            if kind is FaultKind.STOP_CONTROL:
                self.checker.owner_silent(self.now())
                self.control_stopped_until = max(
                    self.control_stopped_until, time.monotonic() + fault.duration_s
                )

        def resume() -> None:
            with self.lock:  # first: its commands are legitimate from the moment it runs
                self.checker.ended(record, self.now())
                if kind is FaultKind.STOP_CONTROL:
                    self.checker.owner_back(self.now())
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)

        # the stop lasts its full length from the SIGSTOP: a stop started late and resumed at its
        # planned end was a stop of a few ms, judged as one of its planned length (#585 and
        # #1446 of seed 11, injected 3.0 and 1.8 s late: no watchdog, rightly, and a violation)
        self._at(record.injected_s + fault.duration_s, resume)

    def _bridge_context(self) -> str:
        """What the campaign knows of the bridge now (under the lock), for a fault's record."""
        age = self.now() - self.bridge_state_t
        return (
            f"bridge mode {self.bridge_mode or '?'}, owner {self.bridge_owner or '?'} "
            f"(its state {age:.2f} s old)"
            + (f", control pid {self.control_killed_pid} killed" if self.control_killed_pid else "")
        )

    def _kill(self, fault: Fault, pid: int) -> None:
        kind = fault.kind
        rule: ReportRule | None = None
        if kind is FaultKind.KILL_CONTROL:
            rule = ReportRule(_BRIDGE, STALE_REPORT_S, Level.STALE, data=_CONTROL.encode())
        elif kind is FaultKind.KILL_VELOCITY:
            rule = ReportRule(_BRIDGE, STALE_REPORT_S, Level.STALE, data=VELOCITY_NODE.encode())
        elif kind is FaultKind.KILL_BRIDGE:
            rule = ReportRule(_LAUNCHER, LAUNCHER_REPORT_S, Level.ERROR, contains=("'bridge'",))
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        with self.lock:
            t = self.now()
            if kind is FaultKind.KILL_BRIDGE:
                self._bridge_killed(t)
            record = self.checker.injected(fault, t, rule, self._bridge_context())
            if kind is FaultKind.KILL_CONTROL:
                self.checker.owner_silent(t)
                self.control_killed_pid = pid
                self.control_killed_at = time.monotonic()
        if kind is FaultKind.KILL_BRIDGE:
            # nothing else is injected meanwhile: with the bridge dead, no fault has a witness
            deadline = time.monotonic() + BRIDGE_DEATH_WATCH_S
            while time.monotonic() < deadline and math.isnan(record.detected_s):
                self._watch_stack()
                time.sleep(0.05)
            time.sleep(0.2)
            self._restart_stack(record)
            return
        tool = {
            FaultKind.KILL_VELOCITY: "velocity",
            FaultKind.KILL_RECORDER: "recorder",
            FaultKind.KILL_MONITOR: "monitor",
            FaultKind.KILL_BUS_CLIENT: "bus_client",
        }.get(kind)
        if tool is not None:
            self._at(record.injected_s + TOOL_RESTART_S, lambda: self._start_tool(tool))

    # ---- observing ---------------------------------------------------------------------------
    def _subscribe(self, bus: Bus) -> list[Subscriber[Any]]:
        checker = self.checker
        lock = self.lock

        def truth(msg: Odometry) -> None:
            q = msg.pose.pose.orientation
            height = float(msg.pose.pose.position.z)
            tilt = tilt_of(q.x, q.y, q.z, q.w)
            with lock:
                self.last_height, self.last_tilt = height, tilt
                checker.ground_truth(self.now(), height, tilt)

        def joints(msg: BridgeData) -> None:
            with lock:
                checker.joints(self.now(), msg.joint_position, msg.joint_velocity)

        def commands(msg: JointCommand) -> None:
            if msg.source_node != _CONTROL:
                return  # others' commands are the bridge's to refuse (bad input)
            # a target without its gain (kp = 0, kd = 0) commands nothing: not checked
            positions = [p if k > 0 else math.nan for p, k in zip(msg.t_pos, msg.kp, strict=False)]
            speeds = [v if d > 0 else math.nan for v, d in zip(msg.t_vel, msg.kd, strict=False)]
            with lock:
                checker.command(self.now(), positions, speeds)

        def bridge_state(msg: BridgeState) -> None:
            facts = BridgeStatus.of(msg)
            mode = facts.mode.value if facts.mode is not None else ""
            with lock:
                changed = (mode, facts.owner) != (self.bridge_mode, self.bridge_owner)
                gap = self.now() - self.bridge_state_t
                self.bridge_mode, self.bridge_owner = mode, facts.owner
                self.bridge_state_t = self.now()
                checker.bridge_state(self.bridge_state_t, mode, facts.owner)
            if not self.config.verbose:
                return
            when = self.when(self.bridge_state_t)
            age = facts.command_age_p99_cycles
            if changed:
                self.say(f"  {when} bridge: mode {mode or '?'}, owner {facts.owner or '?'}")
            if math.isfinite(gap) and gap > _STATE_GAP_S:
                self.say(f"  {when} bridge: its 10 Hz state came {gap:.2f} s after the last")
            if age is not None and age > _OLD_COMMANDS_CYCLES and age != self._said_age:
                self.say(f"  {when} bridge: command age p99 {age} cycles over its last 1 s")
            self._said_age = age  # the figure holds for 1 s: said once, not with every state

        def loop_diagnostics(msg: LoopDiagnostics) -> None:
            if msg.node != _BRIDGE:
                return
            before = self._bridge_loops.get(msg.loop)
            self._bridge_loops[msg.loop] = msg  # one message per loop of the node
            note = None if before is None else loop_gap_note(before, msg)
            if note is not None:
                self.say(f"  {self.when(self.now())} {note}")

        def robot_state(msg: RobotState) -> None:
            try:
                mode = MotionMode(msg.motion_mode).name
            except ValueError:
                mode = str(msg.motion_mode)
            with lock:
                self.mode = mode
                checker.motion_mode(self.now(), mode)

        def status(msg: Status) -> None:
            if self.config.verbose and msg.level >= Level.WARN:
                self.say(
                    f"  {self.when(self.now())} {Level(msg.level).name} {msg.reporting_node}: "
                    f"{msg.status} {bytes(msg.data)[:60]!r}"
                )
            with lock:
                checker.status(
                    self.at_wall(msg.header.stamp.to_ns()),
                    int(msg.level),
                    msg.reporting_node,
                    msg.status,
                    bytes(msg.data),
                )

        subs: list[Subscriber[Any]] = [
            bus.subscribe("/hb50/sim/ground_truth", Odometry, truth, MAB_RT, realtime=True),
            bus.subscribe("/hb50/bridge_data", BridgeData, joints, MAB_RT, realtime=True),
            bus.subscribe("/hb50/joint_command", JointCommand, commands, MAB_RT, realtime=True),
            bus.subscribe(
                "/hb50/bridge_state_10hz", BridgeState, bridge_state, RELIABLE, realtime=True
            ),
            bus.subscribe(
                "/hb50/robot_state_10hz", RobotState, robot_state, RELIABLE, realtime=True
            ),
            bus.subscribe(
                "/hb50/status", Status, status, RELIABLE.with_(depth=256), realtime=True
            ),
        ]
        if self.config.verbose:  # only -v prints what the bridge's loop did (loop_gap_note)
            subs.append(bus.subscribe(
                "/hb50/diagnostics", LoopDiagnostics, loop_diagnostics, RELIABLE, realtime=True
            ))
        return subs

    def _watch_transport(self, bus: Bus) -> Callable[[], None]:
        """``-v`` only: say when a Zenoh link of this process (the hub) opens or closes, naming
        the nodes of the session at its other end; when one of the campaign's reliable
        subscriptions lost messages (a gap in a publisher's sequence numbers); and when a full
        garbage collection held this interpreter (every thread's Python) over 0.2 s. A link
        closes when a publisher gives up on a reader whose queue stayed full (the bus's 50 ms
        ``wait_before_close``) or a process dies; a collection stalls the campaign's own
        reception: each explains a gap in the bridge's state or a missed report that the bridge
        is not to blame for. Returns the undo."""
        if not self.config.verbose:
            return lambda: None

        def lost(event: QosEvent) -> None:
            if isinstance(event, MessagesLostEvent) and event.topic not in _MAB_RT_TOPICS:
                self.say(f"  {self.when(self.now())} campaign: {event.describe()}")

        def collected(phase: str, info: dict[str, int]) -> None:
            if phase == "start":
                self._gc_started = time.perf_counter()
            elif info["generation"] == 2 and time.perf_counter() - self._gc_started > _GC_PAUSE_S:
                self.say(
                    f"  {self.when(self.now())} campaign: a full garbage collection held its "
                    f"interpreter {time.perf_counter() - self._gc_started:.2f} s"
                )

        gc.callbacks.append(collected)
        removers: list[Callable[[], object]] = [
            bus.on_qos_event(lost),
            functools.partial(gc.callbacks.remove, collected),
        ]
        transport = bus.zenoh
        if transport is not None:
            listener = transport.session.info.declare_link_events_listener(
                lambda event: self._say_link(transport, event), history=False
            )
            removers.append(listener.undeclare)

        def undo() -> None:
            for remove in removers:
                with contextlib.suppress(Exception):  # a closed session undeclared it already
                    remove()

        return undo

    def _say_link(self, transport: ZenohTransport, event: zenoh.LinkEvent) -> None:
        """One line for a link event: ``zenoh link opened|closed to session <zid> (<nodes>)``.

        The nodes are those the session announced, which the transport keeps after they leave:
        a session's nodes go before its link does, and learning them from the graph at link
        events missed them when another link's event came late on a loaded host (make test,
        2026-12-07: ``closed to session … (nodes not yet known)``)."""
        zid = str(event.link.zid)
        change = "closed" if event.kind == zenoh.SampleKind.DELETE else "opened"
        nodes = ", ".join(transport.session_nodes(zid)) or "nodes not yet known"
        self.say(f"  {self.when(self.now())} zenoh link {change} to session {zid[:8]} ({nodes})")

    def _finish(self) -> None:
        """Wait (up to ``final_timeout_s``) for the robot to stand or sit safely, nodes OK."""
        self._stop_tool("velocity")  # it sends a stop as it goes
        deadline = time.monotonic() + self.config.final_timeout_s
        while True:
            with self.lock:
                exempt = self.checker.exempt
                height, tilt, mode = self.last_height, self.last_tilt, self.mode
            summary = self.stack.summary() if self.stack is not None else None
            nodes_ok = (
                summary is not None
                and summary.bridge_mode not in (None, BRIDGE_LOST, BRIDGE_LATE, BRIDGE_GONE)
                and summary.motion_mode not in (None, MODE_UNKNOWN, MotionMode.FALLEN.name)
                and summary.owner == _CONTROL
            )
            upright = tilt < self.checker.bounds.max_tilt_rad
            safe = upright and (
                (mode in _UPRIGHT_MODES and height > self.checker.bounds.min_height_m)
                or bool(exempt)
            )
            if (safe and nodes_ok) or time.monotonic() >= deadline:
                break
            time.sleep(0.1)
        detail = (
            f"mode {mode or '?'}, bridge {self.bridge_mode or '?'}, height {height:.3f} m, "
            f"tilt {tilt:.3f} rad, owner "
            + (summary.owner or "?" if summary is not None else "?")
            + (f", {exempt} under way" if exempt else "")
        )
        with self.lock:
            self.checker.finish(self.now(), safe=safe, nodes_ok=nodes_ok, detail=detail)
        self.notes.append(f"end state: {detail}")

    def _cleanup(self) -> None:
        for name in list(self.tools):
            self._stop_tool(name)
        for process in self.transient:
            _end(process)
        self.events.clear()
        if self.stack is not None:  # stopping its processes continues a stopped one first
            self.stack.stop()


def _action_name(action: Callable[[], None]) -> str:
    """What a queued action is, for ``-v``: the fault it injects, or its function's name."""
    if isinstance(action, functools.partial):
        fault = next((a for a in action.args if isinstance(a, Fault)), None)
        if fault is not None:
            return f"{action.func.__name__}: {fault.describe()}"
        action = action.func
    return getattr(action, "__qualname__", repr(action))


def _end(process: subprocess.Popen[bytes]) -> None:
    """Stop ``process`` (a stopped one is continued first), SIGKILL after 5 s; reap it."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGCONT)
            process.terminate()
        try:
            process.wait(5.0)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            process.wait()
