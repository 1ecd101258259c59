"""The whole robot in one call: actuators (simulated or real), the bridge and the control node.

Where it sits: above :mod:`jointbus.nodes` (it assembles the bridge and control nodes on a
:class:`~jointbus.bus.Bus`), below :mod:`jointbus.cli`, whose ``demo``, ``bridge`` and ``control``
commands are thin views of a :class:`Stack`. Tests and benchmarks use it to run the robot as a
user does.

**Layout** (``layout``; DESIGN §4). ``Stack("hb50")`` runs the robot's bundled launch
description (``jointbus/robots/hb50/launch.yaml``, :mod:`jointbus.runtime.launch`): one process
per entry, started together by a :class:`~jointbus.runtime.process_group.ProcessGroup` as
``python -m jointbus.stack`` — the simulator and the bridge in one, its loop pinned to CPU 0 at
SCHED_FIFO 50, the control node in another, its step thread on CPU 1 at 49 (the processes' other
threads on any CPU, :func:`_loop_cpu` says why) — and joined over Zenoh on loopback (the
best-effort per-cycle streams between them by same-host links, :mod:`jointbus.bus.sibling_link`,
unless the file's ``same_host_link`` is false: the control process steps on the thread that
receives its frame, and the bridge's loop reads its commands off the links itself, right before it
takes them: one wake-up per frame in the control process, none per command in the bridge's),
while the
``Stack`` itself (this process: the demo's view, a test, a recorder) only watches them over the
bus. Why: in one interpreter the physics, the bridge, the control node and a recorder share one
lock, and on a 2-vCPU computer their per-cycle costs exceeded the 2 ms period (the walking robot
ran at 0.65× the wall clock, 1 kHz reached ≈ 600 Hz). Each process runs every one of its threads
— the bus's too — on SCHED_FIFO (its loop at the layout's priority, the rest 10 below), so a
CPU-bound process beside the robot cannot hold back a frame or a command. A process that dies is
reported (an ERROR among :meth:`Stack.take_reports`: ``process 'control' of the layout was killed
by SIGKILL``) and kept (:meth:`Stack.exits`, :attr:`StackSummary.exits`; a dead bridge process
also as :attr:`StackSummary.bridge_gone`, :meth:`Stack.bridge_gone_for_good`), and what the
robot does about it is the bridge's (watchdog, liveliness); the
processes stop in reverse order (the controller first), and a launcher that dies takes them
with it. ``layout="inproc"`` keeps every node in this process (the layout of ``--isolated``, of
``transport="zenoh"`` and of one-node stacks: ``jointbus bridge`` / ``jointbus control``, each a
process of its own); a path or a
:class:`~jointbus.runtime.launch.LaunchDescription` is a layout of the user's.

**What runs.** Each layout opens ``sim://hb50`` (the MuJoCo quadruped, lying folded with its
drives off), a :class:`~jointbus.robots.hb50.bridge.BridgeNode` at 500 Hz (``rate_hz``) that
owns it, and a :class:`~jointbus.robots.hb50.control.ControlNode`. Once the first feedback frame
reached the control node, the stack sends ``start_command`` (``stand_up`` by default) on
``/hb50/control_command`` — the same message ``jointbus mode stand_up`` sends — and the robot
stands up; ``start(hold_start_command=True)`` holds it back until
:meth:`Stack.release_start_command` (``demo --record`` starts its recorder in between, so the file
begins with the robot lying, before anything commanded it). ``nodes`` picks a
subset: ``jointbus bridge`` runs ``("bridge",)`` and ``jointbus control`` runs ``("control",)``,
each in its own process, meeting over Zenoh.

**Transports** (``transport``; DESIGN §4):

- ``"inproc"`` (default): one bus; bridge and control exchange message *objects*, never
  serialised. With ``zenoh`` set (the default :class:`~jointbus.bus.ZenohConfig`: the first
  jointbus process on the host listens on ``tcp/127.0.0.1:7447``) the same bus also offers every
  topic on Zenoh, so ``jointbus topic echo /hb50/bridge_data`` in another terminal works and a
  controller in another process can take over; a topic is encoded only while a remote subscriber
  matches, so an unobserved robot pays nothing for it. ``zenoh=None`` keeps everything inside
  the process (nothing opens a socket).
- ``"zenoh"``: the bridge and the control node each get their own bus and Zenoh session in this
  process, so every message between them is encoded, crosses loopback TCP and is decoded — the
  cross-process path without process management. For really separate processes run
  ``jointbus bridge`` and ``jointbus control``.

**The simulator in lock-step.** A ``sim://`` array opened in stepping mode (the default URL has
``realtime=false``) is advanced by one control period at the start of every bridge cycle, on the
bridge's own thread: the physics stands in for hardware that moves between two reads, the bridge
reads what the previous command did, and no third thread competes with the bridge for the
interpreter. Hardware does not wait for a late bridge, so the slots a late loop dropped pass for
the simulated robot too (up to 5 of them per cycle); only a longer stall of the host slows
simulated time down, and the bridge then reports it (``bridge falls behind real time: …`` with
its real-time factor on ``/hb50/status``, and ``pace:`` in ``BridgeState``) over its first 1 s
window. A loop whose own cycle costs more CPU than its period says so earlier, from the CPU time
of its first cycles (``… from the start``, :class:`_CycleCost`); one whose cost fits but whose
CPU other work takes can only be seen over that window.
CPU time spent in the physics is counted apart (:attr:`Stack.simulator_cpu_s`), since it is the
cost of the stand-in, not of jointbus. The bridge stamps ``bridge_data`` with *simulated*
time (on the wall-clock epoch of simulated time 0, as the ground truth is stamped), and the
control node's clock is those stamps: on a loaded host the simulated robot lives slower than the
wall clock, and a stand-up timed on the wall clock runs that many times faster than the robot
can follow (lock-step, bridge slowed 25×: the body tilted 0.97 rad, a hair under the fall limit,
and STAND began at 0.094 m; on simulated time 0.03 rad and 0.32 m). The bridge's watchdog keeps
the host's clock: the host's stalls are real. After each step of a MuJoCo simulator the stack
publishes its true base pose and twist on ``/<ns>/sim/ground_truth``
(:mod:`jointbus.nodes.ground_truth`, ``nav_msgs/msg/Odometry``, one per cycle, its cost counted
with the physics). A real-time ``sim://...?realtime=true`` or a hardware URL is not stepped.

**Rate.** ``rate_hz`` (default 500 Hz, ``jointbus demo --rate``) is the bridge loop's rate, and
so the rate of ``bridge_data`` / ``bridge_state`` and of the control node, which steps once per
frame and takes its ``dt`` from the frame stamps. A stepped simulator advances by one period per
cycle, so its physics runs in step with the loop: at 1000 Hz each cycle is one 1 ms control step
of two 0.5 ms MuJoCo steps; a rate whose period is not a whole number of physics steps (400 Hz)
is refused with a :class:`StackConfigError` — by :class:`Stack` itself for the default simulator
(:func:`rate_problem`), before any process starts, and by the bridge once it opened the simulator
of a URL given. ``jointbus demo --rate`` refuses such a rate as a usage error (exit code 2).
What is timed in seconds stays in seconds at any rate: the watchdog (0.25 s), the arbitration
windows, the 10 Hz mirrors, the 1 Hz heartbeat, the re-entry ramp (its step is one period) and
the walking controller's gait (its clock advances by the frames' ``dt``).

**Real time.** The bridge loop asks for ``realtime`` (SCHED_FIFO 50 and 1 ns timer slack by
default), collects garbage between cycles (``freeze_gc``) and spins before each deadline only as
long as its measured sleep wake-ups need (``adaptive_spin``). Where the OS refuses a setting the
rate loop runs without it and emits a :class:`~jointbus.runtime.RealtimeWarning`. The control
node's callback thread, where its step runs on each frame, gets SCHED_FIFO one priority below the
bridge's (:func:`control_realtime`), so the other processes of a loaded host cannot starve the
commands while the bridge's cycle still pre-empts it. While such a
stack runs, the interpreter's GIL switch interval is ``BRIDGE_SWITCH_INTERVAL_S`` (0.5 ms instead
of Python's 5 ms): a bridge thread woken at its deadline while another thread (the control node,
the recorder) holds the GIL waits up to one switch interval for it. Measured with
``python -m bench.bench_stack`` (6 alternating runs each, 2-vCPU VM at load 2.5-4): bridge
lateness p99 median 1.79 ms instead of 2.16 ms (lower in 5 of 6 pairs), overruns 21 instead of
31 per 5 s, process CPU unchanged within noise (47.8 % vs 49.7 % of a core). The previous value
is restored when the last such stack stops.

**The summary.** :meth:`Stack.summary` is a snapshot for a live view: joints (the newest
``bridge_data``), motion mode, bridge mode, command owner and e-stop (the 10 Hz mirrors
``robot_state_10hz`` and ``bridge_state_10hz``), base height (estimated, and the simulator's
ground truth when the simulator is in this process), message rates, the bridge loop's timing
(its own statistics, or ``/hb50/diagnostics`` when the bridge runs elsewhere) and the process's
CPU use. :meth:`Stack.take_reports` hands out the reports of ``/hb50/status`` received since the
last call (the demo prints the WARN / ERROR / STALE ones and the OK that follows one, so a rejected
command shows on its console, and so does its clearing). A stack that runs the control node without
the bridge watches the bridge's liveliness (a :class:`~jointbus.runtime.LivelinessMonitor` on the
control node, limited to ``bridge_node``,
which also publishes the STALE on ``/hb50/status``): when that says STALE, or the bridge's 10 Hz
state has not arrived for :data:`BRIDGE_STATE_TIMEOUT_S`, the summary's ``bridge_mode`` is
``lost`` (owner and drives unknown) instead of the last state a dead bridge sent — or ``late``
(:data:`BRIDGE_LATE`, owner and drives unknown too) when that bridge is a child process of this
stack that runs and uses CPU (``/proc``: not stopped, its CPU time moving): then the state is late
in *this* process, whose receiving is starved (a new-user trial, 2026-12-05: ``bridge=lost`` for
a bridge at 499 Hz, while the demo's own recorder received 3.8 s late). The other way
round, a stack that runs the bridge without the control node (``jointbus bridge``) judges the
control node by the bridge's own liveliness monitor and the age of its 10 Hz ``RobotState``: when
the monitor says STALE, or no ``robot_state_10hz`` arrived for :data:`ROBOT_STATE_TIMEOUT_S`, the
summary's ``motion_mode`` is ``UNKNOWN`` (:data:`MODE_UNKNOWN`) and the estimated base height
NaN, as the monitor shows ``robot: UNKNOWN`` — never the last mode and height a dead node sent
(a SIGKILLed control node's ``mode=STAND`` and "estimated 0.328 m" stayed for 29 s). Its
subscriptions are realtime callbacks that only keep the newest message, so
watching costs the bridge about a microsecond per cycle and no queue can overflow.

In the process layout the stack knows when a process of it dies (the launcher's ERROR). From
then on, the summary gives nothing of a dead bridge process or of the simulator it held as
current: ``bridge_mode`` is ``gone`` (:data:`BRIDGE_GONE`) and the joints, heights, rates, owner
and loop figures are unknown until a respawned bridge is heard; an unknown mode says why
(:attr:`StackSummary.control_why`: the control process died, or the control node has no frames
because the bridge did), and an owner whose node is not heard is marked
(:attr:`StackSummary.owner_note`). The run's real-time factor counts the robot's time only
while a bridge ran (:class:`_RunClock`), and a respawn is kept with when it happened.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import gc
import itertools
import json
import math
import os
import re
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Final, Literal

from jointbus.bus import MAB_RT, RELIABLE, Bus, Publisher, Subscriber, ZenohConfig
from jointbus.bus.sibling_link import InboundReader, SiblingGroup, SiblingLinks
from jointbus.drivers.actuator_array import ActuatorArray, ImuReading
from jointbus.drivers.errors import DriverError
from jointbus.messages.base import Message
from jointbus.messages.nav_msgs import Odometry
from jointbus.messages.status import Level
from jointbus.messages.std_msgs import String
from jointbus.model.robot import RobotModel
from jointbus.model.yaml_loader import load_robot
from jointbus.robots.hb50.bridge.node import BEHIND_RTF, BridgeConfig, BridgeNode
from jointbus.robots.hb50.control.node import CONTROL_NODE_NAME, ControlNode
from jointbus.robots.hb50.messages import (
    BridgeData,
    BridgeState,
    BridgeStatus,
    MotionMode,
    RobotState,
    Status,
)
from jointbus.runtime import (
    DEFAULT_NAMESPACE,
    DuplicateNodeError,
    LivelinessMonitor,
    LoopDiagnostics,
    LoopRun,
    RealtimeConfig,
    ensure_unique_node,
)
from jointbus.runtime.host_steal import read_steal_s
from jointbus.runtime.launch import LaunchDescription, LaunchDescriptionError, ProcessSpec
from jointbus.runtime.node import quiet_tools_bookkeeping
from jointbus.runtime.process_group import (
    READY,
    ChildProcess,
    ProcessGroup,
    ProcessGroupError,
    bind_to_parent,
    child_argv,
    progress_of,
)
from jointbus.runtime.rate_loop import CycleInfo
from jointbus.runtime.realtime import (
    FIFO_PRIORITY_MAX,
    FIFO_PRIORITY_MIN,
    apply_realtime,
    foreign_processes,
    parent_of,
    raise_normal_threads,
    realtime_holders,
    realtime_of,
    session_processes,
)

__all__ = [
    "BRIDGE_GONE",
    "BRIDGE_LATE",
    "BRIDGE_LOST",
    "BRIDGE_STATE_TIMEOUT_S",
    "BRIDGE_SWITCH_INTERVAL_S",
    "DEFAULT_RATE_HZ",
    "DEFAULT_REALTIME",
    "LAYOUTS",
    "MAX_RATE_HZ",
    "MIN_RATE_HZ",
    "MODE_UNKNOWN",
    "NODES",
    "ROBOT_STATE_TIMEOUT_S",
    "SIM_CONTROL_PERIOD_S",
    "SIM_TIMESTEP_S",
    "START_COMMANDS",
    "TRANSPORTS",
    "JointRow",
    "Placement",
    "ProcessExit",
    "Stack",
    "StackConfigError",
    "StackError",
    "StackSummary",
    "default_url",
    "layout_step_priority",
    "rate_problem",
]

Transport = Literal["inproc", "zenoh"]
#: Accepted ``transport`` values of the one-process layout (see the module docstring).
TRANSPORTS: Final = ("inproc", "zenoh")
#: Named ``layout`` values: the robot's bundled process layout, or everything in this process.
LAYOUTS: Final = ("processes", "inproc")
#: The transport a :class:`StackSummary` names for a stack whose nodes run in processes apart.
PROCESSES: Final = "processes"
#: The SCHED_FIFO priority of a layout process's other threads (the bus's), below its loop's.
_BUS_PRIORITY_BELOW_LOOP: Final = 10
#: Age (s) past which the bridge's loop diagnostics (published at 1 Hz) are too old to show: a
#: status line printed "loop=339Hz skipped=32.3%" for 100 s after the bridge's reports stopped.
_DIAGNOSTICS_STALE_S: Final = 3.0
#: Most dropped loop slots a stepped simulator catches up on in one cycle (each costs a
#: physics step): a longer stall of the host slows the simulated robot down instead.
_CATCH_UP_SLOTS: Final = 5
#: The bridge loop's first cycles, not timed (cold caches, first allocations), and the cycles
#: after them whose CPU time says at start whether it can hold its rate (:class:`_CycleCost`).
_COST_WARMUP_CYCLES: Final = 10
_COST_CYCLES: Final = 100
#: A layout process with a CPU has its loop on one core: no BLAS or OpenMP thread pool (its
#: threads would also start before the process takes SCHED_FIFO, and stay on the normal
#: scheduler).
_ONE_CORE_ENV: Final = (("OPENBLAS_NUM_THREADS", "1"), ("OMP_NUM_THREADS", "1"))
#: How long a process of the layout may take to start (s): Python, numpy, MuJoCo and Zenoh.
_CHILD_READY_TIMEOUT_S: Final = 60.0
#: Nodes a stack can run.
NODES: Final = ("bridge", "control")
#: ``start_command`` values: the control node's commands (``None``: send nothing).
START_COMMANDS: Final = ("stand_up", "stand", "sit_down", "idle")
#: The bridge's (and so the control node's) rate by default, Hz.
DEFAULT_RATE_HZ: Final = 500.0
#: Accepted :class:`Stack` ``rate_hz`` range, Hz (a stepped simulator further needs whole
#: physics steps per period: 250, 500, 1000 or 2000 Hz for the hb50).
MIN_RATE_HZ: Final = 50.0
MAX_RATE_HZ: Final = 2000.0
#: The default simulator's control step and MuJoCo step (s): ``SimArrayConfig.control_period``
#: and the timestep of its 2 kHz physics, spelled out so that checking a rate opens no simulator
#: (``tests/test_stack_layout.py`` compares them with the driver's).
SIM_CONTROL_PERIOD_S: Final = 0.002
SIM_TIMESTEP_S: Final = 0.0005
#: Real-time settings of the bridge loop by default: SCHED_FIFO 50 (leaves room above for IRQ
#: threads on PREEMPT_RT) and the smallest timer slack; refused settings are skipped with a warning.
DEFAULT_REALTIME: Final = RealtimeConfig(priority=50, timerslack_ns=1)
def control_realtime(
    bridge: RealtimeConfig | None,
    *,
    own_process: bool = False,
    step_priority: int | None = None,
) -> RealtimeConfig | None:
    """Real-time settings of the control node's callback thread, where its control step runs:
    SCHED_FIFO one priority below the bridge loop's (the bridge's cycle still pre-empts it), or
    ``step_priority`` when given (a layout process that runs the control node without the
    bridge: its own ``priority``), the same timer slack, no CPU pinning — or, with
    ``own_process`` (a layout process that runs the control node without the bridge: the
    settings given are its step thread's), the CPU of ``bridge`` too; ``None`` when the bridge's
    are ``None``, and no priority when theirs is none.

    Why: on a loaded host the normal scheduler shared the CPUs between the control step and every
    other process, and the commands fell to 339-494 Hz (4 CPU-bound processes beside a headless
    demo, 2 CPUs); the 250 ms command watchdog then tripped and a walking robot fell. At SCHED_FIFO
    49 the same run kept 475-501 Hz."""
    if bridge is None:
        return None
    priority = None
    if bridge.priority is not None:
        priority = (
            max(FIFO_PRIORITY_MIN, bridge.priority - 1) if step_priority is None else step_priority
        )
    return RealtimeConfig(
        priority=priority,
        timerslack_ns=bridge.timerslack_ns,
        cpu=bridge.cpu if own_process else None,
    )


#: GIL switch interval while a stack with a real-time bridge loop runs (s; see the module doc).
BRIDGE_SWITCH_INTERVAL_S: Final = 0.0005
#: Age (s) of the newest ``bridge_state_10hz`` after which a remote bridge counts as lost: five
#: periods of the 10 Hz mirror, so a late mirror or two on a loaded host does not flicker.
BRIDGE_STATE_TIMEOUT_S: Final = 0.5
#: :attr:`StackSummary.bridge_mode` while the bridge is lost (see the module docstring).
BRIDGE_LOST: Final = "lost"
#: :attr:`StackSummary.bridge_mode` while the bridge's 10 Hz state is overdue but its process, a
#: child of this stack, runs and uses CPU: this process hears it late (module docstring).
BRIDGE_LATE: Final = "late"
#: :attr:`StackSummary.bridge_mode` once the layout's bridge process has died (and, if it is
#: respawned, until the new one speaks): nothing of the bridge or its simulator is current.
BRIDGE_GONE: Final = "gone"
#: Readings of the stack's CPU time the summary tries for one taken within
#: :data:`_CPU_SAMPLE_SPREAD_S` of the wall clock (:meth:`Stack._cpu_sample`).
_CPU_SAMPLE_TRIES: Final = 3
_CPU_SAMPLE_SPREAD_S: Final = 0.002
#: How long (s) a respawned process may take to be running again before the stack counts it as
#: not coming back (its start failed: :class:`~jointbus.runtime.process_group.ProcessGroup`
#: gives up quietly).
_RESPAWN_GRACE_S: Final = 1.0
#: CPU time (s) the bridge's process must have used over :data:`_BRIDGE_RUNS_WINDOW_S` to count
#: as running (it uses 0.3–0.5 s a second; a stopped or dead one none).
_BRIDGE_RUNS_CPU_S: Final = 0.01
#: The window (s) over which the bridge's process CPU time is compared: at least this, at most
#: :data:`_BRIDGE_RUNS_MAX_S` (the status line samples it once a second).
_BRIDGE_RUNS_WINDOW_S: Final = 0.2
_BRIDGE_RUNS_MAX_S: Final = 2.0
#: ``/proc`` states of a process that does not run: stopped (SIGSTOP, a debugger), exited.
_NOT_RUNNING: Final = frozenset("TtZXx")
#: Age (s) of the newest ``robot_state_10hz`` after which a remote control node counts as lost:
#: five periods of the 10 Hz mirror, the monitor's rule.
ROBOT_STATE_TIMEOUT_S: Final = 0.5
#: :attr:`StackSummary.motion_mode` while a remote control node is lost (module docstring).
MODE_UNKNOWN: Final = "UNKNOWN"
#: Seconds between two looks of a real-time stack for robot stacks started beside it.
NEIGHBOUR_CHECK_S: Final = 10.0
#: Wall-clock seconds of frames before the summary gives the run's robot time (see
#: :attr:`StackSummary.run_robot_s`): over shorter runs a late arrival weighs too much.
_RUN_TIME_MIN_S: Final = 3.0
#: How much less late (ns) than the run's first frame a later one must have arrived to become the
#: run's start instead (:class:`_RunClock`): more than the transport's delay on a quiet host.
_RUN_SLACK_NS: Final = 20_000_000
#: The window (ns) over which the least late frame gives how far the stamps are behind the wall
#: clock (:meth:`_RunClock.behind`): many frames, so that one of them came without delay.
_BEHIND_WINDOW_NS: Final = 500_000_000
#: Status reports kept for :meth:`Stack.take_reports` between two calls (older ones are dropped).
_REPORTS_KEPT: Final = 256
#: How often the start-command thread looks for the first feedback frame (s).
_START_POLL_S: Final = 0.01
#: Node name of the stack's own endpoints (start command, summary): hidden, as in ROS 2.
_OBSERVER: Final = "_jointbus_stack"
#: The reporting node of what the stack itself reports (a process of its layout that died).
_LAUNCHER: Final = "launcher"
_NAN: Final = math.nan


class _SwitchInterval:
    """The process-wide GIL switch interval, shortened while at least one stack holds it.

    ``sys.setswitchinterval`` is global, so nested or concurrent stacks share one holder count:
    the first to acquire saves the previous value, the last to release restores it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holders = 0
        self._previous = 0.0

    def acquire(self, interval_s: float) -> None:
        with self._lock:
            if self._holders == 0:
                self._previous = sys.getswitchinterval()
                sys.setswitchinterval(interval_s)
            self._holders += 1

    def release(self) -> None:
        with self._lock:
            if self._holders == 0:
                return
            self._holders -= 1
            if self._holders == 0:
                sys.setswitchinterval(self._previous)


_SWITCH_INTERVAL: Final = _SwitchInterval()


def default_url(robot: str, *, seed: int = 0) -> str:
    """The simulator URL of ``robot``: stepping mode (the bridge advances it), seeded noise."""
    return f"sim://{robot}?realtime=false&seed={seed}"


#: Command lines of another robot's stack: a layout's process, or a one-process demo or bridge.
_STACK_COMMAND = re.compile(r"-m jointbus\.stack |\bjointbus (?:demo|bridge)\b")
#: What runs a stack's process (not a wrapper that names it: ``timeout``, ``setsid``, a shell).
_RUNNERS = ("python", "jointbus")


def _neighbour_stacks(
    processes: Callable[[], list[tuple[int, str]]] | None = None,
) -> list[tuple[int, str]]:
    """``(pid, command line)`` of the processes of other robots' stacks on this host, among
    ``processes()`` (default: :func:`~jointbus.runtime.realtime.foreign_processes`)."""
    return [
        (pid, cmd)
        for pid, cmd in (foreign_processes if processes is None else processes)()
        if _STACK_COMMAND.search(cmd) and os.path.basename(cmd.split()[0]).startswith(_RUNNERS)
    ]


def _stacks_by_launcher(stacks: list[tuple[int, str]]) -> dict[int, list[tuple[int, str]]]:
    """``stacks`` (:func:`_neighbour_stacks`) grouped by robot: a layout's process under its
    launcher's pid (its parent, when the parent is among them), any other under its own."""
    pids = {pid for pid, _ in stacks}
    grouped: dict[int, list[tuple[int, str]]] = {}
    for pid, command in stacks:
        parent = parent_of(pid)
        root = parent if parent in pids else pid
        grouped.setdefault(root, []).append((pid, command))
    return grouped


def _neighbour_note(
    others: list[tuple[int, str]] | None = None,
    *,
    since: bool = False,
    session: bool = False,
    now_real_time: bool = False,
    lowest: int = 1,
) -> str | None:
    """What to say when another robot's stack runs on this host beside one that takes real
    time: a new user's trial (2026-12-05) started a second robot with real time beside a first
    that had started without it (a third was real-time then) — the first fell to 238 Hz and
    16.6 % of its cycles skipped for as long as the second ran, and neither said why.
    ``others``: :func:`_neighbour_stacks` (looked up when ``None``); ``since``: the stack was
    started after this one (:meth:`Stack.take_reports` looks again); ``session``: ``others``
    were started from this stack's session (the same terminal: :func:`session_processes`);
    ``now_real_time``: a stack named before as running without real time whose processes now
    run it (its layout's processes start after its launcher); ``lowest``: the lowest
    SCHED_FIFO priority this stack's threads take (:meth:`Stack._lowest_priority`) — a
    neighbour whose real-time threads all run below it does not take "the same priorities" (a
    trial's stack at 30/31 was said to, beside one at 50/49 with bus threads at 40/39).

    Whether a neighbour runs with real time is read from its threads, not assumed: a later
    trial (2026-12-05 evening) had a real-time stack name a second one "without real-time
    scheduling" that ran SCHED_FIFO on the same cores (it had counted the first as its own)."""
    if others is None:
        others = _neighbour_stacks()
    if not others:
        return None
    # the launcher first (what a person stops), then a layout's processes
    pid, command = min(others, key=lambda other: "-m jointbus.stack " in other[1])
    short = command if len(command) <= 60 else command[:57] + "..."
    count = f"{len(others)} {'new ' if since else ''}process{'es' if len(others) > 1 else ''}"
    where = "started from this session (this terminal)" if session else "on this host"
    began = f"{where if session else 'started on this host'} since this one"
    holders = [h for p, c in others if (h := realtime_of(p, c)) is not None]
    if holders:
        verb = f"{began} runs" if since else f"{where} runs"
        if now_real_time:
            verb = "named before as running without real-time scheduling now runs"
        if all(h.priority < lowest for h in holders):
            return (
                f"another robot's stack {verb} with real-time scheduling below this one's "
                f"priorities ({lowest} and above: "
                + "; ".join(h.describe() for h in holders[:2])
                + f"; {count} of robot stacks in all); this one's threads come first on the "
                "same cores: that robot may skip cycles and fall back while this one runs. One "
                "robot per computer, or start this one with --no-realtime"
            )
        return (
            f"another robot's stack {verb} with real-time scheduling too ("
            + "; ".join(h.describe() for h in holders[:2])
            + f"; {count} of robot stacks in all): both robots' threads take the same cores at "
            "the same priorities and stall each other — cycles skipped, fallbacks. One robot "
            "per computer, or restart one of them with --no-realtime"
        )
    verb = f"{began}, and runs" if since else f"runs {where}"
    return (
        f"another robot's stack {verb} without real-time scheduling (pid {pid} "
        f"({short}); {count} of robot stacks in all); this one takes it, and its threads "
        "come first on the same cores: that robot may skip cycles and fall back while this one "
        "runs. One robot per computer, or start this one with --no-realtime"
    )


class StackError(RuntimeError):
    """The stack cannot run (a lifecycle misuse, or a part failed to start)."""


class StackConfigError(StackError, ValueError):
    """A :class:`Stack` argument is invalid: ``field``, ``value`` and what was ``expected``.

    ``message``, when given, is the whole text instead of ``Stack field = value is invalid:
    expected ...``: a layout file's error is the loader's own, which names the file, the process,
    the key, the value and what was expected (wrapped, it read ``Stack layout = 'x.yaml' is
    invalid: expected x.yaml: process ...``)."""

    def __init__(
        self, field: str, value: object, expected: str, *, message: str | None = None
    ) -> None:
        self.field = field
        self.value = value
        self.expected = expected
        super().__init__(
            message
            if message is not None
            else f"Stack {field} = {value!r} is invalid: expected {expected}"
        )


@dataclass(frozen=True, slots=True)
class ProcessExit:
    """A process of the layout that ended without being asked to: its ``name``, ``how`` it
    ended (``killed by SIGKILL``, ``exited with code 1``), when (``at_s`` after
    :meth:`Stack.start`), whether the layout starts it again (``respawn``) and, if it came back,
    when it was heard again (``back_s``; NaN: not yet, or never)."""

    name: str
    how: str
    at_s: float
    respawn: bool
    back_s: float = math.nan
    bridge: bool = False
    """The process ran the bridge (and so the simulator)."""

    @property
    def ended(self) -> str:
        """``was killed by SIGKILL`` / ``exited with code 1``."""
        return f"was {self.how}" if self.how.startswith("killed") else self.how

    def describe(self) -> str:
        """``process 'bridge' was killed by SIGKILL at +7.1 s (started again, heard from
        +9.3 s)``."""
        text = f"process {self.name!r} {self.ended} at +{self.at_s:.1f} s"
        if self.respawn:
            text += (
                f" (started again, heard from +{self.back_s:.1f} s)"
                if math.isfinite(self.back_s)
                else " (started again, not heard since)"
            )
        return text


class _RunClock:
    """The robot's time against the wall clock over the run, from the frames this process
    receives: their stamps (simulated time on the wall-clock epoch) and when the bridge sent
    them (``time.time_ns()``, the same clock; :meth:`Stack._frame_sent` — the "arrivals" below,
    which until 2026-12-06 they were, so a launcher starved of CPU stretched the run's wall time).

    Each life of the bridge (a respawn starts a new one: :meth:`split`) is a segment; the run
    starts at the frame of the first one that arrived least late against its stamp (by more than
    :data:`_RUN_SLACK_NS`), not the first frame received:
    a first frame received 0.55 s late (a starved launcher at start-up) made a run's wall time
    that much short, and its real-time factor 0.98 where every second said 0.94-0.96 (a new
    user's trial, 2026-12-06). The robot's time is the sum of the segments' stamp spans; the
    wall time runs from the first reference to the newest arrival, so the seconds without a
    bridge count as wall time without robot time (a respawn's ≈ 2 s no longer read as
    ``robot time 33.9 s in 33.9 s``)."""

    def __init__(self) -> None:
        # per segment: [reference stamp, reference arrival, newest stamp, newest arrival] (ns)
        # (each replaced whole, one assignment: span() on another thread reads whole ones)
        self._segments: list[tuple[int, int, int, int]] = []
        self._split = True
        # the least lateness (arrival - stamp, ns) of the frames of this and of the previous
        # :data:`_BEHIND_WINDOW_NS` window, and this window's first arrival
        self._recent: tuple[int, int, int] | None = None

    def add(self, stamp_ns: int, arrival_ns: int) -> None:
        """One frame (the subscription's thread; cheap, no lock: the publisher's thread)."""
        segments = self._segments
        late_ns = arrival_ns - stamp_ns
        recent = self._recent
        if self._split or not segments or stamp_ns < segments[-1][2]:
            # a new bridge, or a restarted simulator stamping from its own start again
            segments.append((stamp_ns, arrival_ns, stamp_ns, arrival_ns))
            self._split = False
            self._recent = (arrival_ns, late_ns, late_ns)
            return
        if recent is None or arrival_ns - recent[0] >= _BEHIND_WINDOW_NS:
            self._recent = (arrival_ns, late_ns, late_ns if recent is None else recent[1])
        elif late_ns < recent[1]:
            self._recent = (recent[0], late_ns, recent[2])
        ref_stamp, ref_arrival, _, _ = segments[-1]
        if len(segments) == 1 and arrival_ns - stamp_ns < ref_arrival - ref_stamp - _RUN_SLACK_NS:
            # less late by more than the transport's jitter: the better start of the run (later
            # lives count from their first frame); a few ms of jitter would only move the start
            # and shorten the span the figure covers
            ref_stamp, ref_arrival = stamp_ns, arrival_ns
        segments[-1] = (ref_stamp, ref_arrival, stamp_ns, arrival_ns)

    def split(self) -> None:
        """The bridge died: the next frame begins a new segment."""
        self._split = True

    def span(self) -> tuple[float, float, float, float]:
        """(robot time s, wall time s, wall-clock start in ns since the epoch, wall time s
        between the segments: without a bridge) over the run; NaNs until the frames span
        :data:`_RUN_TIME_MIN_S` of the wall clock."""
        segments = list(self._segments)
        if not segments:
            return _NAN, _NAN, _NAN, _NAN
        wall_s = (segments[-1][3] - segments[0][1]) / 1e9
        if not wall_s >= _RUN_TIME_MIN_S:
            return _NAN, _NAN, _NAN, _NAN
        robot_s = sum(max(0, s[2] - s[0]) for s in segments) / 1e9
        gap_s = sum(max(0, b[1] - a[3]) for a, b in itertools.pairwise(segments))
        return robot_s, wall_s, float(segments[0][1]), gap_s / 1e9

    def behind(self) -> float:
        """How far (s) the newest frames' stamps are behind the wall clock, against the run's
        start: the least lateness of the frames of the last 0.5–1 s less the reference frame's
        (the current bridge's). The least of many, so a transport's delay of a few ms is not
        counted; what a stalled simulator lost is. NaN before frames 3 s apart arrived.

        Why: the real-time factor of a long run rounds a lag away — ``robot time 762.3 s in
        762.3 s … 1.00`` while the frames' stamps were 41 ms behind the wall clock and a user
        computing feedback ages from them read 26–42 ms (a user's trial, 2026-12-06). While the
        lag grows (a simulator at 0.64 of real time: 0.36 s a second) the least late frame is
        the oldest of the window: the figure is then up to that window's growth short."""
        segments, recent = list(self._segments), self._recent
        if not segments or recent is None:
            return _NAN
        ref_stamp, ref_arrival, _, newest_arrival = segments[-1]
        if (newest_arrival - segments[0][1]) / 1e9 < _RUN_TIME_MIN_S:
            return _NAN
        return max(0, min(recent[1], recent[2]) - (ref_arrival - ref_stamp)) / 1e9


@dataclass(frozen=True, slots=True)
class JointRow:
    """One joint in the summary: ``position`` rad, ``velocity`` rad/s, ``effort`` N·m,
    ``temperature_c`` °C (0 when the actuator does not report one, as in ``BridgeData``)."""

    name: str
    position: float
    velocity: float
    effort: float
    temperature_c: float


@dataclass(frozen=True, slots=True)
class StackSummary:
    """A snapshot of a running stack (see the module docstring). ``None`` / NaN: not known yet
    (or not observable from this process).

    ``elapsed_s`` since :meth:`Stack.start`; ``motion_mode`` the control node's mode name
    (``STAND``), or ``UNKNOWN`` when a remote control node went silent or left
    (``robot_state_age_s`` then says how old its last ``RobotState`` is, s); ``bridge_mode``
    what the bridge writes (``run``, ``hold``, ``safe``, ``off``, ``estop``), or ``lost`` when a
    remote bridge went silent or left (see the module docstring); ``owner`` the command source
    in control; ``estop`` the latched e-stop's reason;
    ``base_height_m`` the estimated body height above the ground (m), ``true_base_height_m`` the
    simulator's ground truth (m). Rates in Hz, measured over the last summary interval: frames of
    ``bridge_data`` seen here, joint commands received by the bridge (or sent by the control node
    when only it runs here). ``loop_rate_hz``: the rate the bridge loop *achieved* over its
    statistics window (cycles run per second — not the median period, which stays at 2 ms while
    cycles are dropped), ``skipped_fraction`` the share of its due cycles it dropped (0–1),
    ``lateness_*`` per due cycle, dropped ones included (s; see
    :mod:`jointbus.runtime.loop_stats`), ``overruns`` cycles late by a period or more;
    ``loop_run`` the same window beside the loop's counts since it started (the run's shares of
    skipped and late cycles: what a run's last line says; from a bridge in another process, as
    of its last 1 Hz diagnostics), ``None`` until the loop reported.
    ``cpu_fraction``: CPU time of the stack — this process and every process of its layout —
    per wall-clock second over the last summary interval, in cores; ``cpu_mean_fraction`` the
    same since start (start-up included); ``simulator_cpu_fraction`` the part spent in a local
    simulator's physics (0 when the simulator runs in another process).
    """

    elapsed_s: float
    nodes: tuple[str, ...]
    transport: str
    joints: tuple[JointRow, ...]
    motion_mode: str | None
    bridge_mode: str | None
    owner: str | None
    estop: str | None
    drives_enabled: bool | None
    base_height_m: float
    true_base_height_m: float
    bridge_data_hz: float
    command_hz: float
    loop_rate_hz: float
    lateness_p50_s: float
    lateness_p99_s: float
    lateness_max_s: float
    overruns: int
    skipped_fraction: float
    cpu_fraction: float
    simulator_cpu_fraction: float
    cpu_mean_fraction: float = math.nan
    real_time_factor: float = math.nan
    """The robot's time per wall-clock second over the bridge's last 1 s window (its
    ``BridgeState`` ``pace:``): below 0.98 the line says ``BEHIND REAL TIME``."""
    robot_state_age_s: float = _NAN
    loop_run: LoopRun | None = None
    run_robot_s: float = _NAN
    """The robot's time (s) between the first and the newest ``bridge_data`` frame this process
    received (their stamps), over ``run_wall_s`` s of the wall clock between their sending:
    the run's real-time factor, which the final line gives (a user computed it from a recording:
    a run beside a CPU hog lost 3.1 s of 50 s, and the line said only the cycles skipped). NaN
    before frames 3 s apart arrived. Send times are the bridge's (its Zenoh attachment): a
    launcher starved of CPU does not stretch them (over arrivals one read 0.82 for a robot at
    0.954–0.960, a user's trial, 2026-12-06)."""
    run_wall_s: float = _NAN
    velocity_held: bool = False
    """The control node holds a velocity command that would walk (its WARN "velocity held: send
    zero first" until its OK "velocity released"): the line says ``mode=STAND(velocity held:
    send zero)``."""
    exits: tuple[ProcessExit, ...] = ()
    """The processes of the layout that ended without being asked to during the run (respawned
    ones too): a run with any is not a clean one (``jointbus demo`` exits 1)."""
    bridge_gone: ProcessExit | None = None
    """The death of the layout's bridge process while it is gone (not respawned, or not heard
    again yet): then ``bridge_mode`` is :data:`BRIDGE_GONE` and nothing of the bridge or the
    simulator (joints, height, rates, loop figures, owner) is given — a dead process's last
    figures are not the robot's."""
    control_why: str | None = None
    """Why no ``RobotState`` arrives while ``motion_mode`` is ``UNKNOWN``, when that is known: the
    control process died, or the bridge did (the control node steps on its frames)."""
    owner_note: str | None = None
    """``owner`` is the bridge's word; this says when the node it names is not heard
    (``silent``) or its process died."""
    run_since_s: float = _NAN
    """When (s after start) the span of ``run_robot_s`` / ``run_wall_s`` begins."""
    run_gap_s: float = _NAN
    """Seconds of ``run_wall_s`` without a bridge (between a dead one's last frame and its
    respawn's first): no robot time passed in them."""
    run_behind_s: float = _NAN
    """How far (s) the newest frames' stamps are behind the wall clock against the run's start
    (:meth:`_RunClock.behind`): the time a stalled simulator lost, which the stamps carry."""
    loop_since_s: float = _NAN
    """When (s after start) the bridge process that ``loop_run`` counts began to be heard, when
    it is a respawned one (NaN: the first, which counts the whole run)."""
    bridge_fallback: str | None = None
    """The phase of the bridge's fallback while it drives the robot (``step``, ``stance``,
    ``hold``, ``sit``, ``sat``, ``down``; its ``BridgeState`` status ``fallback:``), ``None``
    when none runs: the line says ``bridge=hold(fallback sit)``. A trial read ``bridge=hold``
    for the whole fallback while the robot sat down from 0.342 m to 0.130 m."""
    host_steal_fraction: float = _NAN
    """CPU time the VM's host took from this machine's CPUs while they had work, per second of
    the wall clock, summed over the CPUs like ``cpu_fraction`` (``steal`` of ``/proc/stat``,
    :mod:`jointbus.runtime.host_steal`), between the last two summaries: the line says
    ``steal=6%`` when it is not 0. NaN where it cannot be read."""
    host_steal_run_s: float = _NAN
    """The same since the stack started (s, all CPUs): the final line gives it when not 0."""

    @property
    def control_lost(self) -> bool:
        """True when the control node runs elsewhere and is lost (mode and estimate unknown)."""
        return self.motion_mode == MODE_UNKNOWN

    @property
    def standing(self) -> bool:
        """True when the control node reports STAND."""
        return self.motion_mode == MotionMode.STAND.name

    def line(self) -> str:
        """One compact line for plain (non-terminal) output: the robot, then what was measured
        over the last second (frames, commands, real-time factor, CPU), then the bridge loop's
        figures over its statistics window (seconds, stated: 10 s at 500 Hz once it ran that
        long). The two windows are named in the line because they differ — a trial read
        ``bridge_data=438Hz rtf=0.921`` beside ``loop=491Hz skipped=1.9%`` and could not tell
        why."""
        height = self.true_base_height_m
        if math.isnan(height):
            height = self.base_height_m
        mode = self.motion_mode or "?"
        if self.control_lost:
            why = f"; {self.control_why}" if self.control_why else ""
            mode += f"(no RobotState for {_fmt(self.robot_state_age_s, 1)}s{why})"
        elif self.velocity_held:
            mode += "(velocity held: send zero)"
        bridge = self.bridge_mode or "?"
        if self.bridge_fallback:
            bridge += f"(fallback {self.bridge_fallback})"
        gone = self.bridge_gone
        if gone is not None:
            again = "; respawning" if gone.respawn else ""
            bridge = f"{BRIDGE_GONE}({gone.how} {self.elapsed_s - gone.at_s:.1f}s ago{again})"
        owner = self.owner or "?"
        if self.owner_note:
            owner += f"({self.owner_note})"
        parts = [
            f"t={self.elapsed_s:5.1f}s",
            f"mode={mode}",
            f"bridge={bridge}",
            f"owner={owner}",
        ]
        if self.estop:
            parts.append(f"estop={self.estop!r}")
        parts += [
            f"height={_fmt(height, 3)}m",
            "| last 1s:",
            f"bridge_data={_fmt(self.bridge_data_hz, 0)}Hz",
            f"commands={_fmt(self.command_hz, 0)}Hz",
            f"rtf={_fmt(self.real_time_factor, 3)}",
            f"cpu={_fmt(self.cpu_fraction * 100, 0)}%",
        ]
        if self.host_steal_fraction > 0:  # NaN: not readable; 0: nothing to say
            parts.append(f"steal={self.host_steal_fraction * 100:.0f}%")
        if self.real_time_factor < BEHIND_RTF:
            parts.append("BEHIND REAL TIME")
        if gone is not None:
            parts.append("| bridge loop: none (its process is gone)")
            return " ".join(parts)
        if self.bridge_mode == BRIDGE_LOST:
            parts.append("| bridge loop: none (the bridge is silent)")
            return " ".join(parts)
        window = self.loop_run.window_s if self.loop_run is not None else _NAN
        parts += [
            f"| bridge loop, last {_fmt(window, 0)}s:",
            f"loop={_fmt(self.loop_rate_hz, 0)}Hz",
            f"skipped={_fmt(self.skipped_fraction * 100, 1)}%",
            f"late_p99={_fmt(self.lateness_p99_s * 1e6, 0)}us",
        ]
        return " ".join(parts)


def _fmt(value: float, digits: int) -> str:
    return "?" if math.isnan(value) else f"{value:.{digits}f}"


class _Latest:
    """The newest message of a subscription and a count, kept by a realtime callback (no queue:
    the publisher's thread pays one assignment)."""

    def __init__(self, keep: Callable[[Any], bool] | None = None) -> None:
        self.message: Any = None
        self.count = 0
        self.at = _NAN  # arrival of ``message`` (time.monotonic(), s)
        self.first: Any = None  # the first message kept, and its arrival (``first_at``)
        self.first_at = _NAN
        self.since = _NAN  # set by mark(): the arrival of the first message after it is kept
        self.first_since = _NAN
        self._keep = keep
        self.on_message: Callable[[Any, float], None] | None = None

    def mark(self, at: float) -> None:
        """From ``at`` (monotonic s) on, keep the arrival of the first message (``first_since``):
        when a process that died was heard again."""
        self.since = at
        self.first_since = _NAN

    def __call__(self, msg: Any) -> None:
        if self._keep is None or self._keep(msg):
            self.message = msg
            self.at = time.monotonic()
            if self.first is None:
                self.first, self.first_at = msg, self.at
            if self.since <= self.at and math.isnan(self.first_since):
                self.first_since = self.at
            if self.on_message is not None:
                self.on_message(msg, self.at)
        self.count += 1


def _steal_s() -> float:
    """The host's steal time summed over the CPUs since boot (s); NaN where not readable."""
    steal = read_steal_s()
    return math.fsum(steal) if steal else _NAN


class _Rate:
    """A counter's rate between two reads (Hz), or an amount's (CPU seconds per second)."""

    def __init__(self) -> None:
        self._last: tuple[float, float] | None = None
        self.hz = _NAN

    def update(self, count: float, now: float) -> float:
        last = self._last
        if last is not None and now - last[1] >= 0.2:
            self.hz = (count - last[0]) / (now - last[1])
            self._last = (count, now)
        elif last is None:
            self._last = (count, now)
        return self.hz


class Stack:
    """Actuators, bridge and control node on a bus (see the module docstring).

    Args:
        robot: bundled robot name (its model, and the default simulator URL).
        url: the actuator array to open (default :func:`default_url`: ``sim://<robot>`` stepped).
        transport: ``"inproc"`` or ``"zenoh"``.
        zenoh: the Zenoh settings; ``None`` keeps the stack inside this process (``inproc`` only).
        nodes: which nodes run here (a subset of :data:`NODES`).
        realtime: the bridge loop's real-time settings (``None``: leave the thread as it is).
        start_command: sent to the control node after its first frame (``None``: nothing).
        namespace: topic namespace (``/hb50/...``).
        seed: sensor-noise seed of the default simulator URL.
        rate_hz: the bridge's cycle rate (Hz, default :data:`DEFAULT_RATE_HZ`); the control node
            steps once per frame, so it runs at the same rate, and a stepped simulator advances
            its physics by one period per cycle (see "Rate" in the module docstring).
        layout: which node runs in which process (see "Layout" in the module docstring):
            ``"processes"`` (the robot's bundled layout), a launch description (a path or a
            :class:`~jointbus.runtime.launch.LaunchDescription`), or ``"inproc"`` (every node in
            this process, over ``transport``). ``None`` (default): ``"processes"`` for the whole
            robot on Zenoh with the default transport, else ``"inproc"``.
        estop_category: the bridge's e-stop category (0: drives off at once; 1: damp, then off).
        realtime_if_alone: take ``realtime`` only when no other program on the host runs
            real-time threads (:func:`~jointbus.runtime.realtime.realtime_holders`: another
            robot); else run without it and say why in :attr:`realtime_note`. ``False``: take it
            regardless (a user who knows the other program leaves room).
        control_priority: the SCHED_FIFO priority (1–99) of the control node's step thread
            while ``realtime`` has a priority; ``None`` (default): one below ``realtime``'s
            (:func:`control_realtime`). A layout process running the control node without the
            bridge gives its ``priority`` here, so that the step runs at the priority the layout
            names (it ran at 98 for a layout's 99: the bridge's was taken as one above it).
        observe: watch the robot's topics for :meth:`summary`, :meth:`wait_for` and
            :meth:`take_reports` (default). ``False`` in a layout's own process
            (``python -m jointbus.stack``), whose summary nobody reads: there the bridge's
            frames, 500 a second, were delivered to this watcher as well as to the control node
            (≈ 10 µs of a cycle on the bridge's loop, and of each frame in the control process),
            and its status reports and 10 Hz copies woke the process's Zenoh threads.
    """

    def __init__(
        self,
        robot: str = "hb50",
        *,
        url: str | None = None,
        transport: str = "inproc",
        zenoh: ZenohConfig | None = ZenohConfig(),  # noqa: B008 - frozen, immutable
        nodes: Sequence[str] = NODES,
        realtime: RealtimeConfig | None = DEFAULT_REALTIME,
        start_command: str | None = "stand_up",
        namespace: str = DEFAULT_NAMESPACE,
        seed: int = 0,
        rate_hz: float = DEFAULT_RATE_HZ,
        layout: str | Path | LaunchDescription | None = None,
        estop_category: int = 1,
        realtime_if_alone: bool = True,
        control_priority: int | None = None,
        siblings: SiblingGroup | None = None,
        observe: bool = True,
    ) -> None:
        # Before anything opens or starts: a rate the default simulator cannot step was refused
        # only in the bridge's process, once the layout's processes had started (a user's
        # `--rate 700`: "process 'bridge' exited with code 1: ...").
        rate_expected = rate_problem(rate_hz, stepped_sim=url is None)
        if rate_expected is not None:
            raise StackConfigError("rate_hz", rate_hz, rate_expected)
        if transport not in TRANSPORTS:
            raise StackConfigError("transport", transport, f"one of {TRANSPORTS}")
        if control_priority is not None and (
            isinstance(control_priority, bool)
            or not isinstance(control_priority, int)
            or not FIFO_PRIORITY_MIN <= control_priority <= FIFO_PRIORITY_MAX
        ):
            raise StackConfigError(
                "control_priority",
                control_priority,
                f"a SCHED_FIFO priority {FIFO_PRIORITY_MIN}–{FIFO_PRIORITY_MAX} or None",
            )
        self.control_priority = control_priority
        self.observe = observe
        self.siblings = siblings
        """A layout's process: its same-host links to the others (its bus joins them)."""
        self.sibling_links: SiblingLinks | None = None
        #: The bridge loop's reading of the same-host links (a layout's bridge process).
        self._inbound_reader: InboundReader | None = None
        if transport == "zenoh" and zenoh is None:
            raise StackConfigError(
                "zenoh", zenoh, "a ZenohConfig: transport 'zenoh' sends every message over it"
            )
        chosen = tuple(nodes)
        if not chosen or any(n not in NODES for n in chosen) or len(set(chosen)) != len(chosen):
            raise StackConfigError("nodes", nodes, f"a non-empty subset of {NODES}")
        if len(chosen) == 1 and zenoh is None:
            raise StackConfigError(
                "zenoh", zenoh, f"a ZenohConfig: {chosen[0]!r} alone needs Zenoh to meet its peer"
            )
        if start_command is not None and start_command not in START_COMMANDS:
            raise StackConfigError(
                "start_command", start_command, f"one of {START_COMMANDS} or None"
            )
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise StackConfigError("seed", seed, "an int")
        if isinstance(estop_category, bool) or estop_category not in (0, 1):
            raise StackConfigError(
                "estop_category",
                estop_category,
                "0 (STO: drives off at once) or 1 (damped stop, then drives off)",
            )
        self.estop_category = estop_category
        """The bridge's e-stop category (docs/SAFETY.md): 1 damps then switches the drives off,
        0 switches them off at once."""
        self.layout: LaunchDescription | None = _layout(
            robot, layout, whole=set(chosen) == set(NODES), transport=transport, zenoh=zenoh
        )
        """The process layout; ``None``: every node of :attr:`nodes` runs in this process."""
        if self.layout is not None:
            chosen = self.layout.nodes
        self.model: RobotModel = load_robot(robot)  # ModelError for an unknown robot, first
        self.robot = robot
        self.url = url if url is not None else default_url(robot, seed=seed)
        self._url_given = url is not None
        self.seed = seed
        self.transport: str = transport if self.layout is None else PROCESSES
        self.zenoh = zenoh
        self.nodes: tuple[str, ...] = tuple(n for n in NODES if n in chosen)
        self.realtime = realtime
        self.realtime_if_alone = realtime_if_alone
        self.realtime_note: str | None = None
        """Why the stack runs without the real-time scheduling it was given (another real-time
        program on the host, see :meth:`start`); ``None`` when it did not have to give it up."""
        self.neighbour_notes: tuple[str, ...] = ()
        """What this stack, taking real-time scheduling, says of other robots' stacks at start
        (see :meth:`start`): one started from this session that runs real time too (both stall
        each other), and one elsewhere on the normal scheduler (this one's threads come first on
        the same cores and can starve it); empty: none, or this stack runs without real time."""
        #: Robot stacks' pids this real-time stack has named (``None``: it does not look; see
        #: :meth:`_look_for_neighbours`), and when it last looked (monotonic s).
        self._neighbours_seen: set[int] | None = None
        self._neighbours_without_rt: set[int] = set()  # stacks named as running without it
        self._session_stacks_named: set[int] = set()  # this session's stacks named, by launcher
        self._neighbours_checked = 0.0
        self._fifo_refusals: dict[int, str | None] = {}
        self.start_command = start_command
        self.namespace = namespace
        self.rate_hz = float(rate_hz)
        """The bridge's cycle rate (Hz): also the control node's, frame by frame."""
        self.bridge: BridgeNode | None = None
        self.control: ControlNode | None = None
        self.bridge_liveliness: LivelinessMonitor | None = None
        """With the control node but no bridge here: the bridge's liveliness, seen by it."""
        self.buses: list[Bus] = []
        self.start_command_sent_s: float | None = None
        """Seconds after :meth:`start` at which ``start_command`` was sent (``None``: not yet)."""
        self._stepped: Any = None  # the stepping-mode simulator the bridge loop advances
        self._sim_cpu_ns = 0
        self._subscribers: list[Subscriber[Any]] = []
        self._data = _Latest()
        self._bridge_state = _Latest()
        self._robot_state = _Latest()
        self._diagnostics = _Latest(
            lambda d: d.node == BridgeConfig().node_name and d.loop == "bridge"
        )
        self._reports: deque[Status] = deque(maxlen=_REPORTS_KEPT)
        self._velocity_held = False  # the control node's last word on a held velocity command
        self._data_rate = _Rate()
        self._command_rate = _Rate()
        self._cpu_rate = _Rate()
        self._steal_rate = _Rate()
        self._steal_at_start = _NAN
        self._command_pub: Publisher[String] | None = None
        self._hardware_pub: Publisher[String] | None = None
        self._stop = threading.Event()
        self._start_released = threading.Event()
        self._start_released.set()
        self._starter: threading.Thread | None = None
        self._started_at = 0.0
        self._cpu_at_start = 0.0
        self._state: Literal["new", "running", "stopped"] = "new"
        self._lock = threading.Lock()
        self._holds_switch_interval = False
        self._group: ProcessGroup | None = None
        self._ground_truth = _Latest()
        # the layout's bridge process: its name, and its CPU time sampled (monotonic s, CPU s)
        self._bridge_process: str | None = None
        self._bridge_cpu: deque[tuple[float, float]] = deque(maxlen=16)
        self._bridge_cpu_pid: int | None = None
        self._bridge_cpu_lock = threading.Lock()  # summary() may run on several threads
        # processes of the layout that ended unasked: (record, monotonic time of the exit)
        self._exits: list[tuple[ProcessExit, float]] = []
        self._exits_lock = threading.Lock()
        self._run_clock = _RunClock()
        self._data_sub: Subscriber[Any] | None = None
        self._data.on_message = self._frame_sent
        self._started_wall_ns = 0

    # ---- lifecycle -------------------------------------------------------------------------
    def start(
        self,
        *,
        before_nodes: Callable[[Bus], object] | None = None,
        hold_start_command: bool = False,
    ) -> Stack:
        """Open the buses, the actuators and the nodes, and start them. Raises what failed
        (``BusError`` for Zenoh, ``DriverError`` for the URL, ...) after closing what was opened.

        ``before_nodes`` is called with the main bus once it is open and before any node or
        process of the layout starts: a recorder started there records the robot from its first
        message (the stand-up included). ``hold_start_command`` (one process only: a layout's
        control process sends its own): send ``start_command`` only after
        :meth:`release_start_command` (and the first frame)."""
        with self._lock:
            if self._state != "new":
                raise StackError(f"a stack is started once; this one is {self._state}")
            self._state = "running"
        if hold_start_command:
            self._start_released.clear()
        self._started_at = time.monotonic()
        self._started_wall_ns = time.time_ns()
        self._cpu_at_start = time.process_time()
        self._steal_at_start = _steal_s()
        if (
            self.realtime is not None
            and self.realtime_if_alone
            and (self.layout is not None or {"bridge", "control"} <= set(self.nodes))
        ):
            lowest = self._lowest_priority()
            holders = [h for h in realtime_holders() if h.priority >= lowest]
            if holders:
                self.realtime = None
                self.realtime_note = (
                    "real-time scheduling off: another real-time program runs on this host at "
                    f"the priorities this robot's threads take ({lowest} and above: "
                    + "; ".join(h.describe() for h in holders[:3])
                    + "); two real-time robots on one computer take the same cores at the same "
                    "priorities and stall each other for seconds. Stop it, or force real time "
                    "beside it with --realtime"
                )
            else:
                self._note_neighbours()
        try:
            if self.layout is None:
                self._open(before_nodes)
            else:
                self._open_processes(self.layout, before_nodes)
        except BaseException:
            self.stop()
            raise
        if (self.bridge is not None or self.control is not None) and self.realtime is not None:
            # The control step's thread, like the bridge's, must get the interpreter back within
            # half a millisecond of its wake-up, not Python's 5 ms.
            _SWITCH_INTERVAL.acquire(BRIDGE_SWITCH_INTERVAL_S)
            self._holds_switch_interval = True
        return self

    def _new_bus(self, name: str) -> Bus:
        bus = Bus(name=name, zenoh=self.zenoh)
        self.buses.append(bus)
        if self.siblings is not None and bus.zenoh is not None and self.sibling_links is None:
            self.sibling_links = bus.zenoh.join_siblings(self.siblings)
        # a launcher watches the robot's status with no node of its own: under access rules a
        # watch-only tool's heartbeat and status are no alarm here either, as at the nodes
        quiet_tools_bookkeeping(bus, self.namespace)
        return bus

    def _open(self, before_nodes: Callable[[Bus], object] | None = None) -> None:
        main = self._new_bus(f"jointbus-{'-'.join(self.nodes)}")
        bridge_bus = control_bus = main
        if self.transport == "zenoh" and len(self.nodes) == 2:
            control_bus = self._new_bus("jointbus-control")
        if self.observe:
            self._subscribe(main)
        if before_nodes is not None:
            before_nodes(main)
        if "control" in self.nodes:
            self.control = ControlNode(
                control_bus,
                self.model,
                namespace=self.namespace,
                rate_hz=self.rate_hz,
                callback_realtime=control_realtime(
                    self.realtime,
                    own_process="bridge" not in self.nodes,
                    step_priority=self.control_priority,
                ),
                # the step is this process's loop: run on the links' thread, a frame by link
                # costs one wake-up (jointbus.bus.dispatcher.HostedDispatcher)
                callbacks_on_sibling_links="bridge" not in self.nodes,
            )
            self._command_pub = control_bus.publisher(
                self._topic("control_command"), String, RELIABLE, node=_OBSERVER
            )
        if "bridge" in self.nodes:
            self.bridge = self._open_bridge(bridge_bus)
            self._hardware_pub = bridge_bus.publisher(
                self._topic("hardware_command"), String, RELIABLE, node=_OBSERVER
            )
        if self.control is not None and self.bridge is None:
            self.bridge_liveliness = LivelinessMonitor(
                self.control, watch={BridgeConfig().node_name}
            )
        if self.control is not None:
            self.control.start()
        if self.bridge is not None:
            self.bridge.start()
        if self.control is not None and self.start_command is not None:
            self._starter = threading.Thread(
                target=self._send_start_command, name="stack-start-command", daemon=True
            )
            self._starter.start()

    def _open_processes(
        self, layout: LaunchDescription, before_nodes: Callable[[Bus], object] | None = None
    ) -> None:
        """The observer bus here (the first process on the hub port listens on it), then one
        child process per entry of ``layout``, all starting at once."""
        main = self._new_bus("jointbus-launcher")
        if any("bridge" in spec.nodes for spec in layout.processes):
            # A robot already on this hub port is refused here, before any process starts: its
            # bridge process would refuse too, but only once it had imported and opened what it
            # needs — 18.5 s on a busy host in a user's trial (2026-12-06), while this process
            # recorded the other robot's traffic as its own.
            bridge = BridgeConfig.from_model(self.model, namespace=self.namespace).node_name
            try:
                ensure_unique_node(main, bridge, self.namespace)
            except DuplicateNodeError as exc:
                raise StackError(str(exc)) from None
        if self.observe:
            self._subscribe(main)
        if before_nodes is not None:
            before_nodes(main)
        self._group = ProcessGroup(on_exit=self._child_exited)
        self._bridge_process = next(
            (spec.name for spec in layout.processes if "bridge" in spec.nodes), None
        )
        groups: dict[str, SiblingGroup] = {}
        if layout.same_host_link and len(layout.processes) > 1:
            groups = {
                group.name: group
                for group in SiblingGroup.of_launch(spec.name for spec in layout.processes)
            }
        children = [
            ChildProcess(
                spec.name,
                child_argv("jointbus.stack", self._child_args(spec, groups.get(spec.name))),
                env=_ONE_CORE_ENV if spec.cpu is not None else (),
                respawn=spec.respawn,
            )
            for spec in layout.processes
        ]
        try:
            self._group.start_all(children, ready_timeout_s=_CHILD_READY_TIMEOUT_S)
        except ProcessGroupError as exc:
            raise StackError(str(exc)) from None

    def _child_args(self, spec: ProcessSpec, siblings: SiblingGroup | None = None) -> list[str]:
        """The command line of one process of the layout (:func:`_child_main` reads it)."""
        assert self.zenoh is not None
        args = [
            "--robot", self.robot,
            "--process", json.dumps(dataclasses.asdict(spec)),
            # the launcher holds explicit listen endpoints: its children listen beside them
            "--zenoh", self.zenoh.for_sibling().to_json(),
            "--rate", repr(self.rate_hz),
            "--seed", str(self.seed),
            "--namespace", self.namespace,
            "--estop-category", str(self.estop_category),
        ]
        if self._url_given:
            args += ["--url", self.url]
        if self.start_command is not None:
            args += ["--start-command", self.start_command]
        if self.realtime is None:
            args.append("--no-realtime")
        if siblings is not None:
            args += ["--siblings", siblings.to_arg()]
        return args

    def _child_exited(self, name: str, returncode: int) -> None:
        """A process of the layout ended without being asked: one ERROR among the reports."""
        if returncode < 0:
            try:
                how = f"killed by {signal.Signals(-returncode).name}"
            except ValueError:
                how = f"killed by signal {-returncode}"
        else:
            how = f"exited with code {returncode}"
        respawn = self.layout is not None and self.layout.process(name).respawn
        now = time.monotonic()
        keeper = self._voice(name)
        with self._exits_lock:
            for i, (earlier, at) in enumerate(self._exits):  # its previous death: back when?
                if earlier.name == name and math.isnan(earlier.back_s) and keeper is not None:
                    back = keeper.first_since
                    if back >= at:
                        self._exits[i] = (
                            dataclasses.replace(earlier, back_s=back - self._started_at),
                            at,
                        )
            if keeper is not None:
                keeper.mark(now)
            if name == self._bridge_process:
                self._run_clock.split()
            record = ProcessExit(
                name, how, now - self._started_at, respawn, bridge=name == self._bridge_process
            )
            self._exits.append((record, now))
        again = "; starting it again" if respawn else ""
        text = f"process {name!r} of the layout {record.ended}{again}"
        self._reports.append(Status.of(Level.ERROR, _LAUNCHER, text))

    def _voice(self, name: str) -> _Latest | None:
        """What a process of the layout is heard by: the bridge's 10 Hz state, the control
        node's 10 Hz RobotState; ``None`` for another process."""
        if name == self._bridge_process:
            return self._bridge_state
        if self.layout is not None and "control" in self.layout.process(name).nodes:
            return self._robot_state
        return None

    def exits(self) -> tuple[ProcessExit, ...]:
        """The processes of the layout that ended without being asked to, oldest first, each
        with when it was heard again if it was respawned (any thread)."""
        with self._exits_lock:
            records = list(self._exits)
        latest: dict[str, int] = {r.name: i for i, (r, _) in enumerate(records)}
        result = []
        for i, (record, at) in enumerate(records):
            keeper = self._voice(record.name)
            back = _NAN if keeper is None else keeper.first_since
            if latest[record.name] == i and math.isnan(record.back_s) and back >= at:
                result.append(dataclasses.replace(record, back_s=back - self._started_at))
            else:
                result.append(record)
        return tuple(result)

    def _gone(self, name: str | None, exits: tuple[ProcessExit, ...]) -> ProcessExit | None:
        """The death of process ``name`` if it has not been heard again since (or, for a
        process no topic tells of, has no pid); ``None``: it runs."""
        if name is None:
            return None
        last = next((e for e in reversed(exits) if e.name == name), None)
        if last is None or math.isfinite(last.back_s):
            return None
        if self._voice(name) is None and self._group is not None:
            return last if self._group.pid(name) is None else None
        return last

    def bridge_gone_for_good(self) -> ProcessExit | None:
        """The death of the layout's bridge process when it will not run again: the layout
        does not respawn it, or its respawn has not been running for :data:`_RESPAWN_GRACE_S`
        (its start failed); ``None`` while it runs or is being started again."""
        gone = self._gone(self._bridge_process, self.exits())
        if gone is None:
            return None
        if not gone.respawn:
            return gone
        group, name = self._group, self._bridge_process
        late = time.monotonic() - self._started_at - gone.at_s >= _RESPAWN_GRACE_S
        if late and (group is None or name is None or group.pid(name) is None):
            return gone
        return None

    @property
    def placements(self) -> tuple[Placement, ...]:
        """Where each process of :attr:`layout` runs its loop on this host, as it applies it:
        the layout's CPU where this host has it and lets the process use it (else not pinned:
        a layout's ``cpu`` applies "where the host has that CPU", so the bundled layout runs on
        a 1-CPU computer), its SCHED_FIFO priority where the stack runs real time and the OS
        grants it (else the normal scheduler), with why not (:class:`Placement`). The
        processes inherit this process's CPUs, user and limits: what they apply is read here,
        with the same calls, before they start. ``()`` when every node runs in this process.
        Before, the start-up line said ``bridge on CPU 7, SCHED_FIFO 50`` on a 2-CPU host while
        the loop ran on CPUs 0-1, and nothing said so."""
        if self.layout is None:
            return ()
        return _placements(self.layout, self.realtime is not None, self._fifo_refusal)

    def _fifo_refusal(self, priority: int) -> str | None:
        if priority not in self._fifo_refusals:  # asked once per priority
            self._fifo_refusals[priority] = _fifo_refused(priority)
        return self._fifo_refusals[priority]

    @property
    def processes(self) -> ProcessGroup | None:
        """The processes of the layout (pids, signals: fault tests), or ``None`` in one process."""
        return self._group

    def _topic(self, name: str) -> str:
        return f"/{self.namespace}/{name}" if self.namespace else f"/{name}"

    def _frame_sent(self, msg: BridgeData, _at: float) -> None:
        """A frame for the run's clock, dated when the bridge sent it (on the wall clock): a
        launcher starved of CPU receives late, and its real-time factor over arrivals read 0.82
        where the bridge's windows said 0.954–0.960 (a user's trial, 2026-12-06)."""
        now_ns = time.time_ns()
        sub = self._data_sub
        sent = None if sub is None else sub.latest_sent_ns
        if sent is not None:
            now_ns -= max(0, time.monotonic_ns() - sent)
        self._run_clock.add(msg.header.stamp.to_ns(), now_ns)

    def _subscribe(self, bus: Bus) -> None:
        def sub(name: str, msg_type: type[Message], keeper: _Latest, qos: Any) -> Subscriber[Any]:
            subscriber: Subscriber[Any] = bus.subscribe(
                self._topic(name), msg_type, keeper, qos, realtime=True, node=_OBSERVER
            )
            self._subscribers.append(subscriber)
            return subscriber

        if self.layout is None:
            self._data_sub = sub("bridge_data", BridgeData, self._data, MAB_RT)
        else:  # a launcher watching its processes reads the 10 Hz copy: no 500 Hz decoding
            self._data_sub = sub("bridge_data_10hz", BridgeData, self._data, RELIABLE)
        sub("bridge_state_10hz", BridgeState, self._bridge_state, RELIABLE)
        sub("robot_state_10hz", RobotState, self._robot_state, RELIABLE)
        self._subscribers.append(
            bus.subscribe(
                self._topic("status"),
                Status,
                self._on_report,
                RELIABLE.with_(depth=_REPORTS_KEPT),
                realtime=True,
                node=_OBSERVER,
            )
        )
        if "bridge" not in self.nodes or self.layout is not None:
            sub("diagnostics", LoopDiagnostics, self._diagnostics, RELIABLE)
        if self.layout is not None:  # the simulator runs in the bridge's process: its 10 Hz copy
            sub("sim/ground_truth_10hz", Odometry, self._ground_truth, RELIABLE)

    def _open_bridge(self, bus: Bus) -> BridgeNode:
        from jointbus import drivers
        from jointbus.drivers.sim.driver import SimActuatorArray
        from jointbus.drivers.sim.robots import MujocoSimArray
        from jointbus.nodes.ground_truth import GroundTruthPublisher

        config = BridgeConfig.from_model(
            self.model,
            namespace=self.namespace,
            rate_hz=self.rate_hz,
            estop_category=self.estop_category,
        )
        # A second bridge of this robot is refused before it opens (and, closing, touches) the
        # actuators the running one owns; BridgeNode would refuse only after the open.
        ensure_unique_node(bus, config.node_name, self.namespace)
        array = drivers.open(self.url)
        stepped = array if isinstance(array, SimActuatorArray) and not array.realtime else None
        # Wall-clock time (ns) of simulated time 0: frames and ground truth are stamped on it. Set
        # again by the loop's first cycle, after its first step: the bridge node, its loop and
        # (in the layout) the process's start take 0.08-0.4 s after this, and an epoch taken here
        # stamped every message that much behind the wall clock for the whole run (a new user's
        # trial, 2026-12-05: 0.40 s in the layout, 0.08 s in one process).
        epoch = [time.time_ns() - round(stepped.time * 1e9) if stepped is not None else 0]

        def sim_stamp_ns() -> int:
            assert stepped is not None
            return epoch[0] + round(stepped.time * 1e9)

        try:
            if isinstance(array, MujocoSimArray) and not array.realtime:
                _check_physics_period(1.0 / self.rate_hz, array, array.world.timestep)
            imu = array.imu() is not None
            bridge = BridgeNode(
                array,
                bus,
                config,
                owns_array=True,
                imu=_imu_source(array) if imu else None,
                run_loop=False,
                stamp_ns=sim_stamp_ns if stepped is not None else None,
            )
        except BaseException:
            array.close()
            raise
        ground_truth: GroundTruthPublisher | None = None
        if stepped is not None:
            self._stepped = stepped
            if isinstance(stepped, MujocoSimArray):
                ground_truth = GroundTruthPublisher(
                    bus,
                    stepped.world,
                    namespace=self.namespace,
                    epoch_ns=epoch[0],
                )
        period = 1.0 / bridge.config.rate_hz
        cost = _CycleCost(bridge.config.rate_hz, stepped=stepped is not None)
        # In a layout, the loop reads what its siblings send (the control node's commands) right
        # before it takes its commands: no thread is woken for them (jointbus.bus.sibling_link).
        links = self.sibling_links
        reader = self._inbound_reader = links.inbound_reader() if links is not None else None

        def body(cycle: CycleInfo) -> None:
            measured = cost.measures(cycle.index)
            began_ns = time.thread_time_ns() if measured else 0
            sim = self._stepped
            if sim is not None:
                entered_ns = time.time_ns() if cycle.index == 0 else 0
                t0 = time.thread_time_ns()
                # Hardware does not wait for a late bridge: the slots the loop dropped pass for
                # the simulated robot too (up to _CATCH_UP_SLOTS of them), so its time keeps
                # the wall clock's pace through a short stall.
                sim.step(period * (1 + min(cycle.skipped, _CATCH_UP_SLOTS)))
                if cycle.index == 0:
                    # The robot's time starts with this cycle: the state it stepped to is
                    # stamped with the cycle's due time, as hardware stamps a frame with the
                    # cycle that read it (not with when this step ended: a slow first step
                    # would stamp every frame ahead of the clock).
                    due_ns = entered_ns - cycle.lateness_ns
                    epoch[0] = due_ns - round(sim.time * 1e9)
                    if ground_truth is not None:
                        ground_truth.epoch_ns = epoch[0]
                if ground_truth is not None:
                    ground_truth.publish()
                self._sim_cpu_ns += time.thread_time_ns() - t0
            if reader is not None:
                reader.read()
            # due: its pace windows run between the cycles' deadlines, as the frames' robot time
            # does (the loop's and the node's clocks are both monotonic)
            bridge.cycle(bridge.clock(), cycle.deadline_ns)
            if measured:
                slots = 1 + min(cycle.skipped, _CATCH_UP_SLOTS) if sim is not None else 1
                note = cost.add(time.thread_time_ns() - began_ns, slots)
                if note is not None:
                    bridge.report(Level.WARN, note, key="rate-cost")

        try:
            bridge.create_rate_loop(
                bridge.config.rate_hz,
                body,
                name="bridge",
                realtime=self.realtime,
                freeze_gc=True,
                adaptive_spin=True,
            )
        except BaseException:
            bridge.shutdown()
            raise
        return bridge

    def release_start_command(self) -> None:
        """Let a start command held by ``start(hold_start_command=True)`` go (at the first frame,
        or now if one arrived). Idempotent."""
        self._start_released.set()

    def _send_start_command(self) -> None:
        control = self.control
        pub = self._command_pub
        command = self.start_command
        if control is None or pub is None or command is None:
            return
        while not self._stop.is_set():
            # stand_up needs joint feedback to start from
            if control.frames_used > 0 and self._start_released.is_set():
                pub.publish(String(command))
                self.start_command_sent_s = time.monotonic() - self._started_at
                return
            self._stop.wait(_START_POLL_S)

    def stop(self) -> None:
        """Stop the nodes (control first, so its last damping command reaches the bridge; the
        bridge then leaves the drives damped and switches them off), close the buses.
        Idempotent; safe after a failed :meth:`start`."""
        with self._lock:
            if self._state == "stopped":
                return
            self._state = "stopped"
        self._stop.set()
        if self._starter is not None:
            self._starter.join(1.0)
        if self._group is not None:
            self._group.stop()  # the controller first, then the bridge damps and powers off
        errors: list[BaseException] = []
        if self.bridge_liveliness is not None:
            self.bridge_liveliness.close()
        for node in (self.control, self.bridge):
            if node is not None:
                try:
                    node.shutdown()
                except Exception as exc:  # keep closing the rest
                    errors.append(exc)
        if self._inbound_reader is not None:
            self._inbound_reader.close()
        for sub in self._subscribers:
            sub.close()
        for pub in (self._command_pub, self._hardware_pub):
            if pub is not None:
                pub.close()
        for bus in reversed(self.buses):
            bus.close()
        if self._holds_switch_interval:
            self._holds_switch_interval = False
            _SWITCH_INTERVAL.release()
        if errors:
            raise errors[0]

    def __enter__(self) -> Stack:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        """True between :meth:`start` and :meth:`stop`."""
        return self._state == "running"

    @property
    def bus(self) -> Bus:
        """The stack's main bus (the bridge's; where the summary subscriptions live)."""
        if not self.buses:
            raise StackError("the stack has no bus: call start() first")
        return self.buses[0]

    @property
    def array(self) -> ActuatorArray | None:
        """The bridge's actuator array (``None`` when the bridge runs elsewhere)."""
        return self.bridge.array if self.bridge is not None else None

    @property
    def simulator_cpu_s(self) -> float:
        """CPU time spent advancing a stepped simulator's physics (s)."""
        return self._sim_cpu_ns / 1e9

    # ---- commands --------------------------------------------------------------------------
    def command(self, text: str) -> None:
        """Send ``text`` to the control node on ``/<ns>/control_command`` (``stand_up``, ...);
        refusals are reported by the control node on the status topic."""
        pub = self._command_pub or self._publisher("control_command", "_command_pub")
        pub.publish(String(text))

    def hardware_command(self, text: str) -> None:
        """Send ``text`` to the bridge on ``/<ns>/hardware_command`` (``estop [reason]``,
        ``reset``, ``power on``, ``power off``)."""
        pub = self._hardware_pub or self._publisher("hardware_command", "_hardware_pub")
        pub.publish(String(text))

    def _publisher(self, name: str, attribute: str) -> Publisher[String]:
        if not self.running:
            raise StackError("the stack is not running")
        pub = self.bus.publisher(self._topic(name), String, RELIABLE, node=_OBSERVER)
        setattr(self, attribute, pub)
        return pub

    # ---- observing -------------------------------------------------------------------------
    def wait_for(
        self, predicate: Callable[[StackSummary], bool], timeout: float, step: float = 0.05
    ) -> StackSummary:
        """Poll :meth:`summary` until ``predicate`` holds or ``timeout`` s pass; the last one."""
        deadline = time.monotonic() + timeout
        summary = self.summary()
        while not predicate(summary) and time.monotonic() < deadline:
            time.sleep(step)
            summary = self.summary()
        return summary

    def true_base_height(self) -> float:
        """The simulator's ground-truth base height (m): from the local MuJoCo simulator, or the
        newest ``sim/ground_truth`` of the layout's bridge process; NaN when neither is known."""
        truth: Odometry | None = self._ground_truth.message
        if truth is not None:
            return float(truth.pose.pose.position.z)
        array = self.array
        world = getattr(array, "world", None)
        if array is None or world is None or array.closed:
            return _NAN
        try:
            with array.locked():  # type: ignore[attr-defined]
                return float(world.base_pose().position[2])
        except DriverError:
            return _NAN

    def summary(self) -> StackSummary:
        """A snapshot for a live view (see :class:`StackSummary`); cheap, any thread."""
        now = time.monotonic()
        data: BridgeData | None = self._data.message
        joints: tuple[JointRow, ...] = ()
        if data is not None:
            temps = data.joint_temperature
            joints = tuple(
                JointRow(name, p, v, e, float(temps[i]) if i < len(temps) else _NAN)
                for i, (name, p, v, e) in enumerate(
                    zip(
                        data.joint_name,
                        data.joint_position,
                        data.joint_velocity,
                        data.joint_effort,
                        strict=False,
                    )
                )
            )
        exits = self.exits()
        bridge_gone = self._gone(self._bridge_process, exits)
        control_gone = self._gone(self._control_process(), exits)
        if bridge_gone is not None:
            joints = ()  # the simulator's last joints: the simulator died with the bridge
        state: BridgeState | None = self._bridge_state.message
        link = self._bridge_link(now)
        if bridge_gone is not None:
            link = BRIDGE_GONE
        if link is not None:
            state = None
        robot: RobotState | None = self._robot_state.message
        robot_age = now - self._robot_state.at  # NaN before the first
        # a control process known dead is lost at once, not once its mirror is 0.5 s old (a
        # user's trial read LOCOMOTION 0.34 s after the launcher had said it was killed)
        control_lost = control_gone is not None or self._control_lost(now)
        if control_lost:
            robot = None
        motion = None
        if control_lost:
            motion = MODE_UNKNOWN
            self._velocity_held = False  # a control node that comes back says so again
        elif robot is not None:
            try:
                motion = MotionMode(robot.motion_mode).name
            except ValueError:
                motion = str(robot.motion_mode)
        elif self.control is not None and self.control.frames_used:
            motion = self.control.motion.mode.name
        height = robot.pose.position.z if robot is not None else _NAN
        if bridge_gone is not None:
            height = _NAN  # the control node's estimate of a robot whose bridge is gone
        facts = BridgeStatus.of(state) if state is not None else BridgeStatus()
        if self.bridge is not None:
            command_hz = self._command_rate.update(
                self.bridge.command_subscription.stats().received, now
            )
        elif self.control is not None:
            command_hz = self._command_rate.update(
                self.control.joint_command_pub.stats().published, now
            )
        else:  # the bridge runs in another process: what it says it received
            command_hz = _NAN if facts.command_rate_hz is None else facts.command_rate_hz
        loop = self._loop_timing()
        if bridge_gone is not None or link == BRIDGE_LOST:
            # its last report is not the bridge of now: a dead one's, or one silent for 0.5 s or
            # more (a trial's SIGSTOPped bridge read "loop=500Hz skipped=0.0%" 1.3 s on)
            loop = (_NAN, _NAN, _NAN, _NAN, 0, _NAN, None)
        run = self._run_time()
        cpu_s, cpu_at = self._cpu_sample()
        elapsed = max(cpu_at - self._started_at, 1e-9)
        cpu = self._cpu_rate.update(cpu_s, cpu_at)
        steal_s = _steal_s()
        steal = self._steal_rate.update(steal_s, cpu_at) if math.isfinite(steal_s) else _NAN
        true_height = self.true_base_height()
        if bridge_gone is not None or link == BRIDGE_LOST:
            true_height = _NAN  # the simulator's last height, of no age: not the robot's now
        control_why = None
        if motion == MODE_UNKNOWN:
            if control_gone is not None:
                control_why = (
                    f"the control process {control_gone.ended} at +{control_gone.at_s:.1f} s"
                )
            elif bridge_gone is not None:
                control_why = "the control node has no frames to step on, the bridge is gone"
            elif link == BRIDGE_LOST:
                silent = now - self._bridge_state.at
                for_s = f" for {silent:.1f} s" if math.isfinite(silent) else ""
                control_why = (
                    "the control node has no frames to step on, the bridge is silent"
                    f"{for_s} (stopped, hung or unreachable)"
                )
            else:
                control_why = self._control_process_why()
        owner = facts.owner or None
        owner_note = None
        if owner == CONTROL_NODE_NAME and self.layout is not None and (
            "control" not in self.layout.nodes
        ):
            # the bridge's first owner, named before any command came: a layout of the bridge
            # alone read owner=control_node of a node that never ran (a trial, 2026-12-07)
            owner_note = "not in this layout"
        elif owner == CONTROL_NODE_NAME and motion == MODE_UNKNOWN:
            # the bridge's word, while the node it names is not heard
            owner_note = "process gone" if control_gone is not None else "silent"
        bridge_since = _NAN
        if self._bridge_process is not None:
            back = [e.back_s for e in exits if e.name == self._bridge_process]
            if back and math.isfinite(back[-1]):
                bridge_since = back[-1]
        return StackSummary(
            elapsed_s=now - self._started_at,
            nodes=self.nodes,
            transport=self.transport,
            joints=joints,
            motion_mode=motion,
            bridge_mode=link if link is not None else facts.mode.value if facts.mode else None,
            owner=owner,
            estop=facts.estop_reason,
            drives_enabled=state.drives_enabled if state is not None else None,
            base_height_m=height,
            true_base_height_m=true_height,
            bridge_data_hz=(
                self._data_rate.update(self._data.count, now)
                if self.layout is None
                else _NAN if facts.frame_rate_hz is None else facts.frame_rate_hz
            ),
            command_hz=command_hz,
            loop_rate_hz=loop[0],
            lateness_p50_s=loop[1],
            lateness_p99_s=loop[2],
            lateness_max_s=loop[3],
            overruns=int(loop[4]),
            skipped_fraction=loop[5],
            cpu_fraction=cpu,
            host_steal_fraction=steal,
            host_steal_run_s=steal_s - self._steal_at_start,
            simulator_cpu_fraction=self.simulator_cpu_s / elapsed,
            cpu_mean_fraction=cpu_s / elapsed,
            real_time_factor=_NAN if facts.real_time_factor is None else facts.real_time_factor,
            robot_state_age_s=robot_age,
            loop_run=loop[6],
            run_robot_s=run[0],
            run_wall_s=run[1],
            velocity_held=self._velocity_held and motion != MODE_UNKNOWN,
            exits=exits,
            bridge_gone=bridge_gone,
            control_why=control_why,
            owner_note=owner_note,
            run_since_s=run[2],
            run_gap_s=run[3],
            run_behind_s=self._run_clock.behind(),
            loop_since_s=bridge_since,
            bridge_fallback=facts.fallback if link is None else None,
        )

    def _control_process_why(self) -> str | None:
        """Why a layout's control node, whose process lives, sends no ``RobotState``: its process
        is stopped (``T``: SIGSTOP, a debugger) or runs and sends nothing (hung, starved, or
        unreachable); ``None`` without a layout's control process. A trial's 2 s SIGSTOP of it
        read ``mode=UNKNOWN(no RobotState for 1.2s)`` with no reason (2026-12-07)."""
        name, group = self._control_process(), self._group
        pid = None if group is None or name is None else group.pid(name)
        progress = None if pid is None else progress_of(pid)
        if progress is None:
            return None
        if progress[0] in _NOT_RUNNING:
            return "the control process is stopped (SIGSTOP or a debugger)"
        return "the control process runs but sends nothing (hung, starved of CPU or unreachable)"

    def _control_process(self) -> str | None:
        """The name of the layout's process that runs the control node (``None``: none)."""
        if self.layout is None:
            return None
        return next((p.name for p in self.layout.processes if "control" in p.nodes), None)

    def _cpu_sample(self) -> tuple[float, float]:
        """(CPU s of this process and every process of the layout since start, the monotonic
        time of that reading). Both are read together, and again if the reading took long: the
        time used to be read at the start of :meth:`summary` and the CPU after the rest of it,
        and a launcher starved by its real-time children between the two (``--rate 2000`` on 2
        CPUs) divided up to 0.2 s more CPU by the wall clock of another second: ``cpu=238%`` on
        a 2-CPU host (a new user's trial, 2026-12-06)."""
        best: tuple[float, float, float] | None = None
        for _ in range(_CPU_SAMPLE_TRIES):
            before = time.monotonic()
            cpu_s = time.process_time() - self._cpu_at_start
            if self._group is not None:
                cpu_s += self._group.cpu_seconds()
            after = time.monotonic()
            if best is None or after - before < best[2]:
                best = (cpu_s, (before + after) / 2, after - before)
            if after - before <= _CPU_SAMPLE_SPREAD_S:
                break
        assert best is not None
        return best[0], best[1]

    def _run_time(self) -> tuple[float, float, float, float]:
        """(robot time, wall time, their start after :meth:`start`, wall time without a bridge)
        in s over the frames received here (see :attr:`StackSummary.run_robot_s` and
        :class:`_RunClock`); NaNs until they span 3 s."""
        robot_s, wall_s, since_ns, gap_s = self._run_clock.span()
        return robot_s, wall_s, (since_ns - self._started_wall_ns) / 1e9, gap_s

    def _on_report(self, report: Status) -> None:
        """Keep a ``/hb50/status`` report for :meth:`take_reports` (the publisher's thread), and
        follow the control node's velocity hold: a user's trial (2026-12-05) saw one WARN "velocity
        held" scroll by and then only ``mode=STAND`` while a 0.5 m/s stream was ignored."""
        self._reports.append(report)
        if report.reporting_node == CONTROL_NODE_NAME:
            if report.status.startswith("velocity held"):
                self._velocity_held = True
            elif report.status.startswith("velocity released"):
                self._velocity_held = False

    def _lowest_priority(self) -> int:
        """The lowest SCHED_FIFO priority a thread of this robot takes (1 when a thread takes
        none): its layout processes' bus threads, :data:`_BUS_PRIORITY_BELOW_LOOP` below their
        loops (39 for the bundled layout), or in one process the control step's.

        Why: only a real-time program at that priority or above competes with the robot's
        threads for the CPUs. One below them is pre-empted by every thread of the robot —
        ``chrt -f 20 jointbus topic pub …``, which the README gives for a velocity stream the
        CPU hogs must not starve, turned the next demo's real time off (a new user's trial,
        2026-12-07: that robot then stalled 0.86 s and its bridge took over)."""
        if self.realtime is None or self.realtime.priority is None:
            return 1
        if self.layout is not None:
            loops = [p.priority for p in self.layout.processes if p.priority is not None]
            return max(1, min(loops) - _BUS_PRIORITY_BELOW_LOOP) if loops else 1
        control = control_realtime(self.realtime, step_priority=self.control_priority)
        priority = None if control is None else control.priority
        return 1 if priority is None else priority

    def _look_for_neighbours(self) -> None:
        """A stack that took real time because it was alone looks again every
        :data:`NEIGHBOUR_CHECK_S` for robot stacks started beside it since (they run without
        real time, behind this one's threads), and names each new one once: one WARN of the
        launcher among :meth:`take_reports`. A user's trial (2026-12-05) ran two stacks without
        real time beside a real-time one for 1 099 s; the real-time one never said so."""
        seen = self._neighbours_seen
        now = time.monotonic()
        if seen is None or now - self._neighbours_checked < NEIGHBOUR_CHECK_S:
            return
        self._neighbours_checked = now
        self._look_for_session_stacks()
        others = _neighbour_stacks()
        self._say_neighbours_real_time(others)
        new = {pid for pid, _ in others} - seen
        if not new:
            return
        # a layout's processes started after their launcher was seen are that stack, not a
        # new one (a user's trial read one stack as two WARNs, 11 s apart)
        fresh = {pid for pid in new if parent_of(pid) not in seen}
        seen |= new
        if not fresh:
            return
        named = [o for o in others if o[0] in fresh]
        text = _neighbour_note(named, since=True, lowest=self._lowest_priority())
        if text is not None:
            self._reports.append(Status.of(Level.WARN, _LAUNCHER, text))
            if not any(realtime_of(*o) for o in named):
                self._neighbours_without_rt |= fresh

    def _note_neighbours(self) -> None:
        """At start, beside no foreign real-time program: what to say of other robots' stacks
        (:attr:`neighbour_notes`), and what :meth:`_look_for_neighbours` has seen since."""
        others = _neighbour_stacks()
        mine = _stacks_by_launcher(_neighbour_stacks(session_processes))
        mine_rt = {
            root: members
            for root, members in mine.items()
            if any(realtime_of(*member) for member in members)
        }
        # both said: a trial's second demo named only a third robot's non-real-time stack, not
        # the real-time one its own terminal had started (2026-12-07)
        ours = [member for members in mine_rt.values() for member in members]
        lowest = self._lowest_priority()
        notes = (
            _neighbour_note(ours, session=True, lowest=lowest) if ours else None,
            _neighbour_note(others, lowest=lowest),
        )
        self.neighbour_notes = tuple(text for text in notes if text is not None)
        self._session_stacks_named = set(mine_rt)
        self._neighbours_seen = {pid for pid, _ in others}
        if others and not any(realtime_of(*o) for o in others):
            self._neighbours_without_rt = {
                pid for pid, _ in others if parent_of(pid) not in self._neighbours_seen
            }
        self._neighbours_checked = time.monotonic()

    def _look_for_session_stacks(self) -> None:
        """Name, once each, a robot stack started from this stack's session since that runs
        real time too: such a stack keeps its real time beside this one (robots started side by
        side on purpose, as a test run does), and says so itself at start; this one said nothing
        (a new user's trial, 2026-12-07: two demos from one terminal skipped 24.6 and 33.1 % of
        their cycles, and the first never named the second)."""
        named = self._session_stacks_named
        for root, members in _stacks_by_launcher(_neighbour_stacks(session_processes)).items():
            if root in named or not any(realtime_of(*member) for member in members):
                continue
            named.add(root)
            lowest = self._lowest_priority()
            text = _neighbour_note(members, since=True, session=True, lowest=lowest)
            if text is not None:
                self._reports.append(Status.of(Level.WARN, _LAUNCHER, text))

    def _say_neighbours_real_time(self, others: list[tuple[int, str]]) -> None:
        """A stack named as running without real time whose processes — its launcher's layout
        children, which start after it — now run SCHED_FIFO is named again, as real-time: a
        new user's ``demo --realtime`` beside a real-time robot was named "without real-time
        scheduling" from its launcher alone (its bridge and control processes were not up yet),
        never corrected, while the first robot skipped up to 3.8 % of its cycles (2026-12-07)."""
        without = self._neighbours_without_rt
        if not without:
            return
        for root in sorted(without):
            members = [o for o in others if o[0] == root or parent_of(o[0]) == root]
            if any(realtime_of(*o) for o in members):
                text = _neighbour_note(
                    members, since=True, now_real_time=True, lowest=self._lowest_priority()
                )
                if text is not None:
                    self._reports.append(Status.of(Level.WARN, _LAUNCHER, text))
                without.discard(root)
            elif not members:
                without.discard(root)  # that stack ended: none of its processes is left

    def take_reports(self) -> list[Status]:
        """The ``/hb50/status`` reports received since the last call, oldest first (at most
        the newest 256), and the launcher's own; any thread."""
        self._look_for_neighbours()
        reports = self._reports
        taken: list[Status] = []
        while reports:
            try:
                taken.append(reports.popleft())
            except IndexError:  # pragma: no cover - emptied by another caller meanwhile
                break
        return taken

    def _bridge_link(self, now: float) -> str | None:
        """:data:`BRIDGE_LOST` when the bridge runs elsewhere and is gone: STALE by its
        liveliness, or its state mirror older than :data:`BRIDGE_STATE_TIMEOUT_S` (after one
        arrived) — :data:`BRIDGE_LATE` instead when its process is a child of this stack that
        runs (:meth:`_bridge_process_runs`). ``None``: heard, or the bridge runs here."""
        if self.bridge is not None or "control" not in self.nodes:
            return None
        runs = self._bridge_process_runs(now)
        monitor = self.bridge_liveliness
        health = None if monitor is None else monitor.health(BridgeConfig().node_name)
        if health is not None and health.stale:
            return BRIDGE_LOST
        at = self._bridge_state.at
        if math.isnan(at) or now - at <= BRIDGE_STATE_TIMEOUT_S:
            return None
        return BRIDGE_LATE if runs else BRIDGE_LOST

    def _bridge_process_runs(self, now: float) -> bool:
        """Whether the bridge's process is a child of this stack, not stopped, and used
        :data:`_BRIDGE_RUNS_CPU_S` of CPU since a sample of ``/proc`` 0.2–2 s old (one is kept
        per call, at most four per 0.2 s: without one that old, False — the conservative answer,
        "lost" — unless this process itself was starved for longer: then its CPU since the newest
        older sample, at the same share of the span). A SIGSTOPped bridge is ``T``, a killed one
        gone."""
        group, name = self._group, self._bridge_process
        pid = None if group is None or name is None else group.pid(name)
        progress = None if pid is None else progress_of(pid)
        samples = self._bridge_cpu
        with self._bridge_cpu_lock:
            if progress is None or pid != self._bridge_cpu_pid:
                samples.clear()
                self._bridge_cpu_pid = pid
            if progress is None:
                return False
            state, cpu = progress
            old = [
                s for s in samples if _BRIDGE_RUNS_WINDOW_S <= now - s[0] <= _BRIDGE_RUNS_MAX_S
            ]
            # This process starved (no look for more than _BRIDGE_RUNS_MAX_S): the newest older
            # sample, with the CPU its span needs. A demo starved 5 s by the host said
            # ``bridge=lost`` of a bridge publishing at 499.8 Hz (a user's trial, 2026-12-06);
            # a bridge that hung in that span is STALE by its liveliness, judged first.
            starved = [s for s in samples if now - s[0] > _BRIDGE_RUNS_MAX_S] if not old else []
            if not samples or now - samples[-1][0] >= _BRIDGE_RUNS_WINDOW_S / 4:
                samples.append((now, cpu))
        if state in _NOT_RUNNING:
            return False
        if starved:
            at, before = starved[-1]
            return cpu - before >= _BRIDGE_RUNS_CPU_S * (now - at) / _BRIDGE_RUNS_WINDOW_S
        if not old:
            return False
        return cpu - old[-1][1] >= _BRIDGE_RUNS_CPU_S

    def _control_lost(self, now: float) -> bool:
        """True when the control node runs elsewhere and is gone: STALE by the bridge's
        liveliness monitor (where the bridge runs in this process), or its state mirror is
        older than :data:`ROBOT_STATE_TIMEOUT_S` (after one arrived; the process layout, where
        both run in child processes, has only this)."""
        if self.control is not None:
            return False
        if self.bridge is not None:
            health = self.bridge.liveliness.health(CONTROL_NODE_NAME)
            if health is not None and health.stale:
                return True
        at = self._robot_state.at
        return not math.isnan(at) and now - at > ROBOT_STATE_TIMEOUT_S

    def _loop_timing(self) -> tuple[float, float, float, float, int, float, LoopRun | None]:
        """The bridge loop's achieved rate, lateness p50 / p99 / max, overruns, skipped
        fraction and its run (:class:`LoopRun`): from its own statistics here, else from its
        ``/hb50/diagnostics``."""
        bridge = self.bridge
        if bridge is not None:
            loops = bridge.rate_loops
            if "bridge" in loops:
                s = loops["bridge"].stats()
                return (
                    s.achieved_rate_hz,
                    s.lateness_p50_s,
                    s.lateness_p99_s,
                    s.lateness_max_s,
                    s.overruns,
                    s.skipped_fraction,
                    LoopRun.of(s),
                )
        d: LoopDiagnostics | None = self._diagnostics.message
        if d is None or time.monotonic() - self._diagnostics.at > _DIAGNOSTICS_STALE_S:
            # none yet, or the bridge's 1 Hz report stopped: no figure rather than an old one
            return _NAN, _NAN, _NAN, _NAN, 0, _NAN, None
        return (
            d.achieved_rate_hz,
            d.lateness_p50_s,
            d.lateness_p99_s,
            d.lateness_max_s,
            d.overruns,
            d.skipped_fraction,
            LoopRun.of(d, age_s=time.monotonic() - self._diagnostics.at),
        )

    def run(
        self,
        duration: float | None = None,
        *,
        on_summary: Callable[[StackSummary], None] | None = None,
        period_s: float = 1.0,
        stop: threading.Event | None = None,
    ) -> StackSummary:
        """Start if needed, then call ``on_summary`` every ``period_s`` until ``duration`` s have
        passed (``None``: until ``stop`` is set or Ctrl-C), stop, and return the last summary.

        Ctrl-C (KeyboardInterrupt) ends the run normally; the stack is stopped in every case.
        """
        if duration is not None and not (math.isfinite(duration) and duration > 0):
            raise StackConfigError("duration", duration, "a finite number of seconds > 0 or None")
        if self._state == "new":
            self.start()
        begin = time.monotonic()
        end = None if duration is None else begin + duration
        event = stop if stop is not None else threading.Event()
        tick = begin
        try:
            with contextlib.suppress(KeyboardInterrupt):
                while end is None or time.monotonic() < end:
                    tick += period_s
                    wait = tick if end is None else min(tick, end)
                    if event.wait(max(0.0, wait - time.monotonic())):
                        break
                    if on_summary is not None:
                        on_summary(self.summary())
            summary = self.summary()
        finally:
            self.stop()
        return summary

def _physics_problem(period: float, control: float, timestep: float) -> str | None:
    """What a bridge period of ``period`` s must be for a stepped MuJoCo simulator, or ``None``
    when it advances it by whole physics steps: the driver splits a period into control steps of
    at most its ``control_period`` (2 ms), and each must be a whole number of ``timestep`` s."""
    ticks = max(1, math.ceil(period / control - 1e-9))
    steps = period / ticks / timestep
    if abs(steps - round(steps)) > 1e-6 or round(steps) < 1:
        return (
            f"a rate whose period is a whole number of the simulator's {timestep * 1e3:g} ms "
            f"physics steps per {control * 1e3:g} ms control step (e.g. 250, 500, 1000 or "
            f"2000 Hz)"
        )
    return None


def rate_problem(rate_hz: object, *, stepped_sim: bool = True) -> str | None:
    """What a bridge rate must be (the text of a :class:`StackConfigError`'s ``expected``), or
    ``None`` when ``rate_hz`` is one: a number in [:data:`MIN_RATE_HZ`, :data:`MAX_RATE_HZ`] Hz
    and, with ``stepped_sim`` (the default ``sim://`` URL, stepped by the bridge), whose period
    is a whole number of the default simulator's physics steps. :class:`Stack` checks it before
    anything starts, ``jointbus demo --rate`` before it builds a stack; a simulator of another
    URL is checked once opened, in the bridge's process."""
    if isinstance(rate_hz, bool) or not isinstance(rate_hz, int | float) or not (
        math.isfinite(rate_hz) and MIN_RATE_HZ <= rate_hz <= MAX_RATE_HZ
    ):
        return f"a rate in [{MIN_RATE_HZ:g}, {MAX_RATE_HZ:g}] Hz"
    if stepped_sim:
        return _physics_problem(1.0 / rate_hz, SIM_CONTROL_PERIOD_S, SIM_TIMESTEP_S)
    return None


def _check_physics_period(period: float, array: Any, timestep: float) -> None:
    """StackConfigError unless a bridge period of ``period`` s advances the stepped MuJoCo
    simulator ``array`` by whole physics steps of ``timestep`` s (:func:`_physics_problem`)."""
    expected = _physics_problem(period, array.sim_config.control_period, timestep)
    if expected is not None:
        raise StackConfigError("rate_hz", 1.0 / period, expected)


class _CycleCost:
    """The CPU time of the bridge loop's first cycles against its period: whether the loop can
    hold its rate on this host, said as soon as it is measured rather than when the first 1 s
    pace window closes (a user's ``--rate 2000``: ``bridge falls behind real time`` ~1 s in).

    The :data:`_COST_CYCLES` cycles after the first :data:`_COST_WARMUP_CYCLES` (cold caches,
    first allocations) are timed by the loop thread's CPU clock, body only (the simulator's step,
    the bridge's cycle). CPU time is a lower bound of the wall time a cycle takes, so each WARN
    states what those cycles did, not a guess: when the median cycle that advanced one slot took
    more CPU than the period, the loop cannot run every cycle (``skips cycles``); when even their
    CPU time per slot advanced — a cycle that steps the simulator over dropped slots spreads its
    cost over them — exceeds the period, the robot cannot keep the wall clock (``falls behind
    real time``). Below the period nothing is said here: other processes can still take the CPU
    the loop needs, which only the 1 s window's report (``bridge skips cycles`` / ``falls behind
    real time``) can measure — on the 2-vCPU VM at 2000 Hz the bridge's own cost fitted (0.36 ms
    of CPU per 0.5 ms slot at load 10, 2026-12-06) and that report was the first word."""

    def __init__(self, rate_hz: float, *, stepped: bool) -> None:
        self.rate_hz = rate_hz
        self.stepped = stepped
        self.cpu_ns = 0
        self.slots = 0
        self.cycles = 0
        self.one_slot_ns: list[int] = []

    @staticmethod
    def measures(index: int) -> bool:
        """Whether cycle ``index`` is one of those timed."""
        return _COST_WARMUP_CYCLES <= index < _COST_WARMUP_CYCLES + _COST_CYCLES

    def add(self, cpu_ns: int, slots: int) -> str | None:
        """Count one timed cycle; after the last, the WARN's text if the loop cannot hold."""
        self.cpu_ns += cpu_ns
        self.slots += slots
        self.cycles += 1
        if slots == 1:
            self.one_slot_ns.append(cpu_ns)
        if self.cycles != _COST_CYCLES:
            return None
        period_s = 1.0 / self.rate_hz
        per_slot_s = self.cpu_ns / self.slots / 1e9
        ones = sorted(self.one_slot_ns)
        cycle_s = ones[len(ones) // 2] / 1e9 if ones else math.nan
        what = "the simulator's step and the bridge's cycle" if self.stepped else "its cycle"
        cycles = f"cycles {_COST_WARMUP_CYCLES}-{_COST_WARMUP_CYCLES + _COST_CYCLES - 1}"
        if per_slot_s > period_s:
            return (
                f"bridge falls behind real time from the start: {what} took "
                f"{per_slot_s * 1e3:.2f} ms of CPU per {period_s * 1e3:g} ms slot ({cycles}, "
                f"measured), more than the {self.rate_hz:g} Hz period on this host; the robot "
                "moves slower than the wall clock"
            )
        if cycle_s > period_s:
            return (
                f"bridge skips cycles from the start: {what} took {cycle_s * 1e3:.2f} ms of CPU "
                f"(median of {len(ones)} one-slot {cycles}, measured), more than its "
                f"{period_s * 1e3:g} ms period at {self.rate_hz:g} Hz on this host"
            )
        return None


def _imu_source(array: ActuatorArray) -> Callable[[], ImuReading]:
    """The array's IMU as the bridge's ``imu`` callable (a reading is required each cycle)."""

    def read() -> ImuReading:
        reading = array.imu()
        if reading is None:
            raise DriverError("the actuator array's IMU stopped reporting")
        return reading

    return read


def bundled_layout(robot: str) -> Path:
    """The launch description shipped with ``robot`` (``jointbus/robots/<robot>/launch.yaml``)."""
    resource = resources.files("jointbus.robots") / robot / "launch.yaml"
    return Path(str(resource))


def _layout(
    robot: str,
    layout: str | Path | LaunchDescription | None,
    *,
    whole: bool,
    transport: str,
    zenoh: ZenohConfig | None,
) -> LaunchDescription | None:
    """The :class:`Stack`'s ``layout`` argument as a description (``None``: one process)."""
    if layout is None:
        layout = "processes" if whole and transport == "inproc" and zenoh is not None else "inproc"
    if layout == "inproc":
        return None
    if not whole:
        raise StackConfigError("nodes", "a subset", "every node when the layout runs processes")
    if transport != "inproc":
        raise StackConfigError(
            "transport", transport, "'inproc' with a process layout (Zenoh joins the processes)"
        )
    if zenoh is None:
        raise StackConfigError("zenoh", zenoh, "a ZenohConfig: the processes meet over Zenoh")
    try:
        if isinstance(layout, LaunchDescription):
            description = layout
        elif layout == "processes":
            path = bundled_layout(robot)
            if not path.is_file():
                raise StackConfigError("layout", layout, f"a robot with a launch file ({path})")
            description = LaunchDescription.load(path)
        else:
            description = LaunchDescription.load(Path(layout))
        description.check_nodes(NODES)
    except LaunchDescriptionError as exc:
        raise StackConfigError("layout", str(layout), str(exc), message=str(exc)) from None
    return description


def _loop_cpu(cpu: int | None) -> int | None:
    """The CPU a layout process's loop thread is pinned to: ``cpu`` where the host lets this
    process run on it, else ``None`` (not pinned).

    Why the loop thread and not the process: pinned whole, a process's bus threads (Zenoh's
    receive and send threads, SCHED_FIFO 10 below its loop) queue behind its own loop on one
    CPU, and each frame and command crosses two such queues. Measured on the 2-vCPU VM
    (2026-12-04, 30 s windows with a recorder beside the stack, alternating, host steal
    0.00-0.16 s per CPU per window):
    commands applied more than 2 cycles after their frame 0.21-1.42 % with the processes
    pinned, 0.05-0.07 % with only the loop threads pinned; the bridge's slots served over 1 ms
    late 5-51 and 4-24 of 15 000. Under host steal the processes pinned whole read 2.8-38 %
    against 1.3-3.2 %."""
    if cpu is None:
        return None
    allowed = _allowed_cpus()
    return cpu if allowed is not None and cpu in allowed else None


def _allowed_cpus() -> frozenset[int] | None:
    """The CPUs this process may run on (``None``: the OS does not say)."""
    host = _host_cpus()
    return None if host is None else host[1]


def _host_cpus() -> tuple[int, frozenset[int]] | None:
    """How many CPUs the host has and which of them this process may run on (``None``: the OS
    does not say). The one place a stack reads them: a layout's processes inherit this
    process's, so what the launcher reads here is what each of them pins its loop to or not
    (:func:`_loop_cpu`, :attr:`Stack.placements`)."""
    try:
        allowed = frozenset(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - no affinity on this OS
        return None
    return max(os.cpu_count() or 0, max(allowed, default=-1) + 1), allowed


def _fifo_refused(priority: int) -> str | None:
    """Why the OS refuses SCHED_FIFO ``priority`` here (``PermissionError: ...``), or ``None``
    when it grants it: asked for by a short-lived thread of this process, which then ends. The
    layout's processes, started by this one, have its user, capabilities and limits, and ask
    for their loops' priorities with the same call (:func:`~jointbus.runtime.realtime.
    apply_realtime`)."""
    refused: list[str] = []

    def attempt() -> None:
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
        except (AttributeError, OSError) as exc:
            refused.append(f"{type(exc).__name__}: {exc}")

    probe = threading.Thread(target=attempt, name="stack-fifo-probe", daemon=True)
    probe.start()
    probe.join()
    return refused[0] if refused else None


def _cpu_list(cpus: frozenset[int]) -> str:
    """``0-1``, ``0,2-3``: a CPU set as ``/proc``'s ``Cpus_allowed_list`` writes it."""
    ranges: list[str] = []
    for cpu in sorted(cpus):
        if ranges and cpu - 1 in cpus:
            ranges[-1] = f"{ranges[-1].split('-')[0]}-{cpu}"
        else:
            ranges.append(str(cpu))
    return ",".join(ranges)


def layout_step_priority(priority: int, nodes: Sequence[str]) -> int | None:
    """The SCHED_FIFO priority of the control node's step thread in a layout process whose loop
    runs at ``priority``: ``priority`` itself when the control node is the process's loop (no
    bridge in it), one below (at least 1) beside the bridge, whose cycle must pre-empt it
    (:func:`control_realtime`); ``None`` without the control node."""
    if "control" not in nodes:
        return None
    return priority if "bridge" not in nodes else max(FIFO_PRIORITY_MIN, priority - 1)


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a layout process's loop thread runs on this host (see :attr:`Stack.placements`):
    the ``cpu`` it is pinned to and its SCHED_FIFO ``priority`` (``None``: not pinned, the normal
    scheduler) beside those the layout asked for, and why not as asked: ``cpu_refused``
    (``not on this 2-CPU host``), ``priority_refused`` (the OS's refusal)."""

    process: str
    nodes: tuple[str, ...]
    cpu_asked: int | None = None
    cpu: int | None = None
    priority_asked: int | None = None
    priority: int | None = None
    cpu_refused: str | None = None
    priority_refused: str | None = None

    @property
    def step_priority(self) -> int | None:
        """The control node's step thread's SCHED_FIFO priority in this process
        (:func:`layout_step_priority`: :attr:`priority` when it is the process's loop, one
        below beside the bridge); ``None`` without the control node or without a priority."""
        return None if self.priority is None else layout_step_priority(self.priority, self.nodes)

    def describe(self) -> str:
        """``bridge (bridge on CPU 0, SCHED_FIFO 50)``, ``one (bridge + control, its loop on CPU
        0, SCHED_FIFO 50, its control step 49 on any CPU)``, or what was not applied: ``bridge
        (bridge on CPU 7 — not on this 2-CPU host: not pinned, SCHED_FIFO 50 refused: normal
        scheduler)``. The priority is
        the process's loop thread's: the bridge's rate loop, else the control node's step."""
        text = f"{self.process} ({' + '.join(self.nodes)}"
        # beside the bridge the control step is not pinned: "bridge + control on CPU 1" read as
        # both there (a trial, 2026-12-07); the CPU is the loop's
        beside = "bridge" in self.nodes and "control" in self.nodes
        if self.cpu_asked is not None:
            text += f", its loop on CPU {self.cpu_asked}" if beside else f" on CPU {self.cpu_asked}"
            if self.cpu is None:
                text += f" — {self.cpu_refused or 'not here'}: not pinned"
        if self.priority is not None:
            text += f", SCHED_FIFO {self.priority}"
            step = self.step_priority
            if step is not None and step != self.priority:
                text += f", its control step {step}" + (" on any CPU" if beside else "")
        elif self.priority_asked is not None and self.priority_refused is not None:
            text += f", SCHED_FIFO {self.priority_asked} refused: normal scheduler"
        return text + ")"

    @property
    def warnings(self) -> tuple[str, ...]:
        """One text per setting not applied as asked (the demo prints each as a WARN line)."""
        found: list[str] = []
        if self.cpu_asked is not None and self.cpu is None:
            found.append(
                f"process {self.process!r}: CPU {self.cpu_asked} is "
                f"{self.cpu_refused or 'not here'}: its loop is not pinned, it runs on any CPU "
                "(a layout's cpu applies where the host has that CPU)"
            )
        if self.priority_refused is not None:
            found.append(
                f"process {self.process!r}: SCHED_FIFO {self.priority_asked} refused "
                f"({self.priority_refused}): its loop runs on the normal scheduler. Grant "
                "CAP_SYS_NICE or an rtprio limit (/etc/security/limits.conf) to enable it"
            )
        return tuple(found)


def _placements(
    layout: LaunchDescription, realtime: bool, refused: Callable[[int], str | None]
) -> tuple[Placement, ...]:
    """What each process of ``layout`` applies on this host (see :attr:`Stack.placements`):
    its CPU where this process may run on it (:func:`_loop_cpu`), its priority where
    ``realtime`` and ``refused`` (:func:`_fifo_refused`) says the OS grants it."""
    host = _host_cpus()
    placed: list[Placement] = []
    for spec in layout.processes:
        cpu = _loop_cpu(spec.cpu)
        cpu_refused = None
        if spec.cpu is not None and cpu is None:
            if host is None:
                cpu_refused = "the OS does not say which CPUs there are"
            elif spec.cpu >= host[0]:
                cpu_refused = f"not on this {host[0]}-CPU host"
            else:
                cpu_refused = f"not one this process may use ({_cpu_list(host[1])})"
        priority = spec.priority if realtime else None
        priority_refused = None if priority is None else refused(priority)
        placed.append(
            Placement(
                spec.name,
                spec.nodes,
                cpu_asked=spec.cpu,
                cpu=cpu,
                priority_asked=spec.priority,
                priority=None if priority_refused is not None else priority,
                cpu_refused=cpu_refused,
                priority_refused=priority_refused,
            )
        )
    return tuple(placed)


def _child_main(argv: Sequence[str] | None = None) -> int:
    """One process of a layout (``python -m jointbus.stack``, started by :class:`Stack`): its
    nodes in this process, pinned and prioritised as its :class:`ProcessSpec` says, until
    SIGTERM / SIGINT; prints :data:`~jointbus.runtime.process_group.READY` once they run."""
    bind_to_parent()
    parser = argparse.ArgumentParser(prog="python -m jointbus.stack")
    parser.add_argument("--robot", required=True)
    parser.add_argument("--process", required=True, help="the ProcessSpec, as JSON")
    parser.add_argument("--zenoh", required=True, help="the ZenohConfig, as JSON")
    parser.add_argument("--rate", type=float, default=DEFAULT_RATE_HZ)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--namespace", default=DEFAULT_NAMESPACE)
    parser.add_argument("--url")
    parser.add_argument("--start-command")
    parser.add_argument("--no-realtime", action="store_true")
    parser.add_argument("--estop-category", type=int, choices=(0, 1), default=1)
    parser.add_argument("--siblings", help="its same-host links: SiblingGroup.to_arg()")
    args = parser.parse_args(argv)
    fields = json.loads(args.process)
    spec = ProcessSpec(**{**fields, "nodes": tuple(fields["nodes"])})
    zenoh = ZenohConfig.from_json(args.zenoh)
    # The layout's CPU is the loop thread's (the bridge's rate loop, the controller's step
    # thread), not the whole process's: the bus's threads run on any CPU (see _loop_cpu).
    cpu = _loop_cpu(spec.cpu)
    realtime = None
    bus_priority = None
    control_priority = None
    if not args.no_realtime and spec.priority is not None:
        # Every thread of the process — the bus's (Zenoh's) among them — runs SCHED_FIFO below the
        # loop's priority: a CPU hog on the host must not hold back the frames and commands the
        # loop and the controller exchange (measured at load 16: with the bus threads on the
        # normal scheduler, the commands stopped for 250 ms twice in 8 s and the bridge went
        # safe). They are raised once the nodes run (below), not before: start-up is not real
        # time, and a second robot refused for its namesake must not have started at the
        # running robot's priorities (it once took the running bridge's commands away).
        bus_priority = max(FIFO_PRIORITY_MIN, spec.priority - _BUS_PRIORITY_BELOW_LOOP)
        # The bridge's loop runs at the process's priority; a controller's step thread at it too
        # when it is the process's loop (beside the bridge: one below, layout_step_priority).
        # Given as one above for the control_realtime to take one off, a layout's 99 ran at 98.
        realtime = RealtimeConfig(priority=spec.priority, timerslack_ns=1, cpu=cpu)
        if "bridge" not in spec.nodes:
            control_priority = layout_step_priority(spec.priority, spec.nodes)
    elif cpu is not None:
        realtime = RealtimeConfig(cpu=cpu)
    stop = threading.Event()

    def on_signal(_signum: int, _frame: object) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    stack = Stack(
        args.robot,
        url=args.url,
        zenoh=zenoh,
        nodes=spec.nodes,
        realtime=realtime,
        start_command=args.start_command if "control" in spec.nodes else None,
        namespace=args.namespace,
        seed=args.seed,
        rate_hz=args.rate,
        layout="inproc",
        estop_category=args.estop_category,
        control_priority=control_priority,
        siblings=None if args.siblings is None else SiblingGroup.from_arg(args.siblings),
        observe=False,  # the launcher watches; nobody reads this process's summary
        # The launcher looked for other real-time programs and decided (and said so): a process
        # holding both nodes looked again and dropped the layout's priority and CPU without a
        # word, its first line still quoting them (a new user's trial, 2026-12-07).
        realtime_if_alone=False,
    )
    try:
        stack.start()
    except Exception as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 1
    if bus_priority is not None:
        apply_realtime(RealtimeConfig(priority=bus_priority))  # this thread: warns if refused
        raise_normal_threads(bus_priority)
    # Everything set up so far lives as long as the process: out of the collector's way, so a
    # full collection while the robot runs scans only what was made since (milliseconds less).
    gc.collect()
    gc.freeze()
    try:
        sys.stdout.write(f"{READY}\n")
        sys.stdout.flush()
        while not stop.wait(0.5):
            pass
    finally:
        stack.stop()
    return 0


if __name__ == "__main__":
    sys.exit(_child_main())
