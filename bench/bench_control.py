"""Bench: the hb50 control node's step, standing and walking, in µs of CPU per step.

Goal (issue 21, as a ratio to an anchor of the same run): the control step's CPU while walking
≤ 0.5× the bare 500 Hz loop's cycle (required), ≤ 0.25× (goal). Standing carries the same goals
(it is the lighter step). The absolute figure stays beside each ratio: this shared VM's speed moves
2–3× from day to day.

What runs (one process, simulated time — deterministic): ``sim://hb50`` stepped by hand, the
real :class:`~jointbus.robots.hb50.bridge.node.BridgeNode` cycling on it (``run_loop=False``, a
fake clock) and publishing its frames on an in-process bus, and the real
:class:`~jointbus.robots.hb50.control.node.ControlNode` on a second in-process bus. Each 2 ms
cycle: physics step → bridge cycle → the newest ``BridgeData`` is handed to the control node's
frame callback (what its callback thread runs for every frame: the estimator, the motion step, the
``JointCommand`` built and published; ``RobotState`` only while someone listens to
``robot_state``, which nobody does here, as in the stack's layout since 2026-12-06) → the command
is relayed to the bridge, which applies it in its next cycle, as in the stack. The robot stands
up, stands, and then trots forward at 0.5 m/s (``/hb50/velocity_command`` at 20 Hz, as a
joystick sends it).

Where the control step runs: on **its own thread**, handed each frame and waited for, with the
real-time settings the stack gives the control node's callback thread
(:func:`jointbus.stack.control_realtime`: SCHED_FIFO 49 where allowed) — as the stack runs it
(and, in issue 21's layout, in its own process). The thread sleeps between frames, as the node's
does; on this VM a sleeping vCPU is halted and its caches go to other work. The same steps **on
the physics' thread** (normal scheduling, right after the physics and the bridge) are an
information row: on a loaded host the other processes pre-empt them mid-step, which the anchor
(SCHED_FIFO 50, as the bridge loop) is spared.

- **Rows** ``control.step.standing`` / ``control.step.walking``: the thread CPU time
  (``time.thread_time_ns``) of the frame callback, mean per step (quick: 1 000 steps = 2 s of
  simulated time, full: 5 000), after 1 s in the mode (walking: under way). p50 and p99, and the
  mean on the physics' thread, are information rows.
- **Sections** (information rows, a further window, own thread): the estimator, the motion step
  (stand / walk), ``RobotState`` built (when built), the two publishes — each wrapped, for that
  window only, in a thread-CPU timer (≈ 0.3 µs per timer pair, included in each figure).
- **Anchor**: the bare 500 Hz loop's cycle — :func:`bench.bench_stack.bare_loop`, the hand-written
  loop over a second ``sim://hb50`` (sim step + ``read_joints`` + hold command, sleeping to
  absolute deadlines on its own SCHED_FIFO thread where allowed): its process CPU time per cycle.
  It runs in chunks *alternating* with the control steps' (quick: 4 × 250 steps and 4 × 0.5 s of
  bare loop per mode; full: 10 × 500 steps and 10 × 1 s), so both are measured over the same
  minutes: on this shared VM a neighbour's load moves either by 30–60 % within a minute, and
  measured one after the other their ratio moved with it.
- **The bare cycle's body alone** (information rows, a stricter anchor): the same three calls run
  on the physics' thread after every control step, timed the same way (thread CPU), without the
  loop's sleep and wake-up (≈ 100 µs of the sleeping loop's cycle on this VM, which halts idle
  vCPUs).

The ratio is the step's CPU over the bare loop's cycle (≤ N× goals: smaller is better).

Run: ``python -m bench.bench_control [--full] [--sections]`` (≈ 15 s quick); ``bench.run``
calls :func:`run`.
"""

from __future__ import annotations

import argparse
import threading
import time
import warnings
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from bench.bench_stack import bare_loop
from jointbus import drivers
from jointbus.bus import MAB_RT, Bus
from jointbus.drivers.impedance import ImpedanceCommand
from jointbus.drivers.sim.driver import SimActuatorArray
from jointbus.drivers.sim.robots import MujocoSimArray
from jointbus.messages.geometry_msgs import Twist, Vector3
from jointbus.model.yaml_loader import load_robot
from jointbus.robots.hb50.bridge.node import BridgeConfig, BridgeNode
from jointbus.robots.hb50.control import node as control_module
from jointbus.robots.hb50.control.node import ControlNode
from jointbus.robots.hb50.messages import BridgeData, BridgeState, JointCommand, MotionMode
from jointbus.runtime.realtime import apply_realtime
from jointbus.runtime.timer import TimerThread
from jointbus.stack import DEFAULT_REALTIME, control_realtime

#: Goals (issue 21): the walking step's CPU ≤ this × the bare loop's cycle (required, goal).
GOAL_RATIO = 0.5
GOAL_RATIO_STRETCH = 0.25
RATE_HZ = 500.0
CYCLE_NS = round(1e9 / RATE_HZ)
PERIOD_S = CYCLE_NS / 1e9
WALK_SPEED = 0.5  # m/s (cmd_vel_lin = 1, so also the normalised command)
ANCHOR = "bare 500 Hz loop (bench_stack: sim step + read_joints + hold command), CPU per cycle"
ANCHOR_BODY = "the bare loop's cycle body alone (no sleep), interleaved with the control steps"
#: Wall-clock epoch of simulated time 0 (ns): stamps look like ROS stamps.
_EPOCH_NS = 1_700_000_000_000_000_000


class _Clock:
    def __init__(self) -> None:
        self.now = 1_000_000_000_000

    def __call__(self) -> int:
        return self.now


class ControlThread:
    """Runs the control node's frame callback on its own thread (module docstring), one frame at
    a time: :meth:`step` hands a frame over and waits."""

    def __init__(self, control: ControlNode) -> None:
        self.control = control
        self._go = threading.Event()
        self._done = threading.Event()
        self._job: tuple[Twist | None, BridgeData] | None = None
        self._step_ns = 0
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="bench-control-step", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        realtime = control_realtime(DEFAULT_REALTIME)
        if realtime is not None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a refused setting: measured without it
                apply_realtime(realtime)
        clock = time.thread_time_ns
        while True:
            self._go.wait()
            self._go.clear()
            job = self._job
            if job is None:
                return
            twist, frame = job
            try:
                if twist is not None:
                    self.control._on_velocity_command(twist)
                t0 = clock()
                self.control._on_bridge_data(frame)
                self._step_ns = clock() - t0
            except BaseException as exc:  # re-raised on the caller's thread
                self._error = exc
            self._done.set()

    def step(self, twist: Twist | None, frame: BridgeData) -> int:
        """One control step on the thread; its thread CPU time (ns)."""
        self._job = (twist, frame)
        self._done.clear()
        self._go.set()
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._step_ns

    def close(self) -> None:
        self._job = None
        self._go.set()
        self._thread.join()


class Lockstep:
    """``sim://hb50`` + bridge + control node, one 2 ms cycle at a time (module docstring)."""

    def __init__(self, seed: int = 1) -> None:
        model = load_robot("hb50")
        array = drivers.open(f"sim://hb50?realtime=false&seed={seed}")
        if not isinstance(array, MujocoSimArray):
            raise RuntimeError("sim://hb50 did not open a stepping MuJoCo array")
        self.array = array
        self.clock = _Clock()
        self.bridge_bus = Bus(name="bench-control-bridge")
        self.control_bus = Bus(name="bench-control-node")
        self.bridge_timers = TimerThread("bench-bridge", clock=self.clock, threaded=False)
        self.control_timers = TimerThread("bench-control", clock=self.clock, threaded=False)

        def imu() -> Any:
            return array.imu()

        self.bridge = BridgeNode(
            array,
            self.bridge_bus,
            BridgeConfig.from_model(model),
            imu=imu,
            timers=self.bridge_timers,
            run_loop=False,
            stamp_ns=lambda: _EPOCH_NS + round(array.time * 1e9),
        )
        self.control = ControlNode(self.control_bus, model, timers=self.control_timers)
        self._frame: BridgeData | None = None
        self._state: BridgeState | None = None
        self._to_control_state = self.control_bus.publisher(
            "/hb50/bridge_state", BridgeState, MAB_RT
        )
        to_bridge = self.bridge_bus.publisher("/hb50/joint_command", JointCommand, MAB_RT)
        self._velocity = self.control_bus.publisher("/hb50/velocity_command", Twist, MAB_RT)
        self.bridge_bus.subscribe(
            "/hb50/bridge_data", BridgeData, self._keep_frame, MAB_RT, realtime=True
        )
        self.bridge_bus.subscribe(
            "/hb50/bridge_state", BridgeState, self._keep_state, MAB_RT, realtime=True
        )
        self.control_bus.subscribe(
            "/hb50/joint_command", JointCommand, to_bridge.publish, MAB_RT, realtime=True
        )
        self.bridge.start()
        self.control.start()
        self.step_ns: list[int] = []
        self.bare_ns: list[int] = []
        self.own_thread = True
        """Whether the control step runs on its own thread (else on the physics' thread)."""
        self._thread = ControlThread(self.control)
        bare = drivers.open(f"sim://hb50?realtime=false&seed={seed}")
        if not isinstance(bare, SimActuatorArray):
            raise RuntimeError("sim://hb50 did not open a stepping simulator")
        bare.power(True)
        measured = bare.read_joints().position
        self._bare = bare
        self._hold = ImpedanceCommand.hold(
            [
                min(max(float(p), s.position_min), s.position_max)
                for p, s in zip(measured, bare.config.limits, strict=True)
            ],
            20.0,
            0.5,
        )

    def _keep_frame(self, msg: BridgeData) -> None:
        self._frame = msg

    def _keep_state(self, msg: BridgeState) -> None:
        self._state = msg

    def cycle(self, twist: Twist | None = None) -> None:
        """One cycle; the control node's frame callback is timed (thread CPU) into step_ns."""
        self.array.step(PERIOD_S)
        self.clock.now += CYCLE_NS
        self.bridge.cycle(self.clock.now)
        self.bridge_timers.run_due(self.clock.now)
        self.control_timers.run_due(self.clock.now)
        if self._state is not None:
            self._to_control_state.publish(self._state)
        frame = self._frame
        assert frame is not None
        clock = time.thread_time_ns
        if self.own_thread:
            self.step_ns.append(self._thread.step(twist, frame))
        else:
            if twist is not None:
                self.control._on_velocity_command(twist)
            t0 = clock()
            self.control._on_bridge_data(frame)
            self.step_ns.append(clock() - t0)
        bare = self._bare  # the anchor's cycle, at the same moment
        t0 = clock()
        bare.step(PERIOD_S)
        bare.read_joints()
        bare.impedance(self._hold)
        self.bare_ns.append(clock() - t0)

    def run(self, steps: int, twist: Callable[[int], Twist | None] = lambda _i: None) -> None:
        for i in range(steps):
            self.cycle(twist(i))

    def window(
        self, steps: int, twist: Callable[[int], Twist | None]
    ) -> tuple[np.ndarray, np.ndarray]:
        """Per-step thread CPU (ns) of ``steps`` cycles: the control step's, the bare cycle's."""
        self.step_ns, self.bare_ns = [], []
        self.run(steps, twist)
        return np.array(self.step_ns, dtype=np.int64), np.array(self.bare_ns, dtype=np.int64)

    def close(self) -> None:
        self._thread.close()
        self.control.shutdown()
        self.bridge.shutdown()
        self.control_bus.close()
        self.bridge_bus.close()
        self._bare.close()


class Sections:
    """Thread CPU (ns) per named section, while :meth:`wrapping` (instance attributes only)."""

    def __init__(self) -> None:
        self.ns: dict[str, int] = defaultdict(int)

    def wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        clock, ns = time.thread_time_ns, self.ns

        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = clock()
            try:
                return fn(*args, **kwargs)
            finally:
                ns[name] += clock() - t0

        return timed

    def instrument(self, control: ControlNode) -> Callable[[], None]:
        """Wrap the control node's sections; returns what undoes it."""
        w = self.wrap
        est, motion = control.estimator, control.motion
        pubs = {
            "joint_command_pub": "JointCommand published",
            "robot_state_pub": "RobotState published",
        }
        saved_pubs = {attr: getattr(control, attr).publish for attr in pubs}
        saved_message = control_module.robot_state_message
        est.update = w("estimator", est.update)  # type: ignore[method-assign]
        motion.step = w("motion step", motion.step)  # type: ignore[method-assign]
        for attr, label in pubs.items():
            getattr(control, attr).publish = w(label, saved_pubs[attr])
        control_module.robot_state_message = w(  # type: ignore[assignment]
            "RobotState built", saved_message
        )

        def undo() -> None:
            del est.update
            del motion.step
            for attr in pubs:
                del getattr(control, attr).publish
            control_module.robot_state_message = saved_message  # type: ignore[assignment]

        return undo


@dataclass(frozen=True)
class Phase:
    """One mode's measurement (µs): the control step's CPU per step, the bare loop's CPU per
    cycle (alternating chunks), the bare cycle's body (interleaved), and the sections (per
    step, from a further window)."""

    mean_us: float
    p50_us: float
    p99_us: float
    same_thread_us: float  # the same steps on the physics' thread
    bare_loop_us: float
    bare_body_us: float
    sections_us: dict[str, float]
    speed_m_s: float  # the simulated robot's ground-truth speed over the control windows


def _phase(robot: Lockstep, chunks: int, steps: int, twist: Callable[[int], Twist | None]) -> Phase:
    """``chunks`` × (``steps`` control steps on their own thread, as many on the physics' thread,
    then the bare loop for as many cycles); then the sections (own thread)."""
    step_parts: list[np.ndarray] = []
    same_parts: list[np.ndarray] = []
    body_parts: list[np.ndarray] = []
    bare_cpu_s = 0.0
    bare_cycles = 0.0
    world = robot.array.world
    start = world.base_pose().position.copy()
    for _ in range(chunks):
        robot.own_thread = True
        step_part, body_part = robot.window(steps, twist)
        step_parts.append(step_part)
        body_parts.append(body_part)
        robot.own_thread = False
        same_parts.append(robot.window(steps, twist)[0])
        robot.own_thread = True
        bare = bare_loop(steps / RATE_HZ, RATE_HZ)
        cycles = steps  # bare_loop runs window_s × rate cycles
        bare_cpu_s += bare.cpu_pct / 100.0 / bare.rate_hz * cycles
        bare_cycles += cycles
    travel = float(np.hypot(*(world.base_pose().position - start)[:2]))
    step_ns = np.concatenate(step_parts)
    bare_ns = np.concatenate(body_parts)
    sections = Sections()
    undo = sections.instrument(robot.control)
    try:
        robot.window(steps, twist)
    finally:
        undo()
    us = step_ns / 1e3
    return Phase(
        float(us.mean()),
        float(np.percentile(us, 50)),
        float(np.percentile(us, 99)),
        float(np.concatenate(same_parts).mean() / 1e3),
        bare_cpu_s / bare_cycles * 1e6,
        float(bare_ns.mean() / 1e3),
        {name: ns / steps / 1e3 for name, ns in sections.ns.items()},
        travel / (2 * chunks * steps * PERIOD_S),
    )


def measure(chunks: int, steps: int) -> tuple[Phase, Phase]:
    """(standing, walking) of one lock-step run (module docstring)."""
    robot = Lockstep()
    try:
        control = robot.control
        robot.run(10)
        control.command("stand_up")
        for _ in range(round(10.0 / PERIOD_S)):
            robot.cycle()
            if control.motion.mode is MotionMode.STAND:
                break
        if control.motion.mode is not MotionMode.STAND:
            raise RuntimeError(f"the robot did not stand up: {control.motion.mode.name}")
        settle = round(1.0 / PERIOD_S)
        robot.run(settle)
        standing = _phase(robot, chunks, steps, lambda _i: None)
        forward = Twist(Vector3(WALK_SPEED, 0.0, 1.0), Vector3())
        every = round(0.05 / PERIOD_S)  # 20 Hz, as a joystick sends it

        def joystick(i: int) -> Twist | None:
            return forward if i % every == 0 else None

        robot.run(settle, joystick)
        if control.motion.mode is not MotionMode.LOCOMOTION:
            raise RuntimeError(f"the robot did not start walking: {control.motion.mode.name}")
        walking = _phase(robot, chunks, steps, joystick)
        if control.motion.mode is not MotionMode.LOCOMOTION:
            raise RuntimeError(f"the robot stopped walking: {control.motion.mode.name}")
        return standing, walking
    finally:
        robot.close()


def _row(
    metric: str,
    value: float,
    anchor_value: float,
    goal: str | None = None,
    ok: bool | None = None,
    *,
    unit: str = "µs",
    anchor: str = ANCHOR,
) -> dict[str, Any]:
    return {
        "metric": metric,
        "value": value,
        "unit": unit,
        "anchor": anchor,
        "anchor_value": anchor_value,
        "ratio": value / anchor_value if anchor_value else None,
        "goal": goal,
        "pass": ok,
    }


def run(quick: bool) -> list[dict[str, Any]]:
    chunks, steps = (4, 250) if quick else (10, 500)
    standing, walking = measure(chunks, steps)
    rows: list[dict[str, Any]] = []
    for name, phase in (("walking", walking), ("standing", standing)):
        cycle_us = phase.bare_loop_us
        ratio = phase.mean_us / cycle_us
        rows.append(
            _row(
                f"control.step.{name}",
                phase.mean_us,
                cycle_us,
                f"<= {GOAL_RATIO}x anchor (required)",
                ratio <= GOAL_RATIO,
            )
        )
        rows.append(
            _row(
                f"control.step.{name}.stretch",
                phase.mean_us,
                cycle_us,
                f"<= {GOAL_RATIO_STRETCH}x anchor (goal)",
                ratio <= GOAL_RATIO_STRETCH,
            )
        )
        rows.append(
            _row(
                f"control.step.{name}, on the physics' thread",
                phase.same_thread_us,
                cycle_us,
            )
        )
        rows.append(
            _row(
                f"control.step.{name} vs the bare cycle's body",
                phase.mean_us,
                phase.bare_body_us,
                anchor=ANCHOR_BODY,
            )
        )
        rows.append(
            _row(
                f"control.{name}.speed (ground truth)",
                phase.speed_m_s,
                WALK_SPEED if name == "walking" else 0.0,
                unit="m/s",
                anchor="commanded speed",
            )
        )
        rows.append(_row(f"control.step.{name}.p50", phase.p50_us, cycle_us))
        rows.append(_row(f"control.step.{name}.p99", phase.p99_us, cycle_us))
        for section, us in phase.sections_us.items():
            rows.append(_row(f"control.step.{name}: {section}", us, cycle_us))
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true")
    for row in run(quick=not parser.parse_args().full):
        ratio = "" if row["ratio"] is None else f"{row['ratio']:.3f}x"
        verdict = "" if row["pass"] is None else ("ok" if row["pass"] else "MISSED")
        print(
            f"{row['metric']:52s} {row['value']:9.1f} {row['unit']:3s} {ratio:8s} "
            f"(anchor {row['anchor_value']:.1f}) {row['goal'] or ''} {verdict}"
        )
