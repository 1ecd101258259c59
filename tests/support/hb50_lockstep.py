"""The real hb50 bridge and control node around MuJoCo, stepped in simulated time.

Part of :mod:`support` (``from support.hb50_lockstep import LockstepRobot``). What ``Stack``
runs — ``sim://hb50`` stepped, :class:`BridgeNode` on it, :class:`ControlNode` — but each 2 ms
cycle is driven by the test on a fake clock: physics step → bridge cycle (its watchdog, re-entry
and frame stamps on that clock) → the control node computes its command from that frame → the
bridge has it before the next cycle. Deterministic: seeded noise, simulated time only.

The two nodes sit on two in-process buses joined by a relay the test controls, so the test can
*starve* the control node as an overloaded host does (:meth:`LockstepRobot.run` with
``starved=True``: the bridge keeps cycling, the control node gets no frame and sends no command,
and the bridge's watchdog trips exactly as in the new user's 239 trips) and give it the newest
frame and bridge state again afterwards.
"""

from __future__ import annotations

import dataclasses
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from jointbus import drivers
from jointbus.bus import MAB_RT, RELIABLE, Bus
from jointbus.drivers.sim.mujoco_world import BasePose
from jointbus.drivers.sim.robots import MujocoSimArray
from jointbus.messages.std_msgs import String
from jointbus.robots.hb50.bridge.node import BridgeConfig, BridgeNode
from jointbus.robots.hb50.control.node import ControlNode
from jointbus.robots.hb50.messages import (
    BridgeData,
    BridgeState,
    JointCommand,
    Level,
    MotionMode,
    RobotState,
    Status,
)
from jointbus.runtime.timer import TimerThread
from support.hb50_sim import hb50

CYCLE_NS = 2_000_000
PERIOD = CYCLE_NS / 1e9
#: Wall-clock epoch of simulated time 0 (ns): stamps look like ROS stamps.
EPOCH_NS = 1_700_000_000_000_000_000
_WAIT_S = 10.0


def tilt_of(pose: BasePose) -> float:
    """Angle (rad) between the body's z axis and the world's vertical, from ground truth."""
    _w, x, y, _z = pose.orientation.tolist()
    return 2.0 * math.asin(min(1.0, math.hypot(x, y)))


@dataclass
class _Clock:
    now: int = 1_000_000_000_000

    def __call__(self) -> int:
        return self.now


class LockstepRobot:
    """``sim://hb50`` + the bridge + the control node, one cycle at a time (see the module)."""

    def __init__(
        self, seed: int = 1, *, sim_stamps: bool = True, fallback: str | None = None
    ) -> None:
        self.sim_stamps = sim_stamps
        model = hb50()
        array = drivers.open(f"sim://hb50?realtime=false&seed={seed}")
        assert isinstance(array, MujocoSimArray)
        self.array = array
        self.world = array.world
        self.clock = _Clock()
        self._t0 = self.clock.now
        self.bridge_bus = Bus(name="lockstep-bridge")
        self.control_bus = Bus(name="lockstep-control")
        self.bridge_timers = TimerThread("lockstep-bridge", clock=self.clock, threaded=False)
        self.control_timers = TimerThread("lockstep-control", clock=self.clock, threaded=False)

        def imu() -> object:
            reading = array.imu()
            assert reading is not None
            return reading

        config = BridgeConfig.from_model(model)
        if fallback is not None:  # e.g. "damping": the watchdog's damping, the body collapses
            config = dataclasses.replace(config, fallback=fallback)
        self.bridge = BridgeNode(
            array,
            self.bridge_bus,
            config,
            imu=imu,  # type: ignore[arg-type]
            timers=self.bridge_timers,
            run_loop=False,
            stamp_ns=self.stamp_ns,
        )
        self.control = ControlNode(self.control_bus, model, timers=self.control_timers)
        self.starved = False
        self._stale_state: BridgeState | None = None
        self._stale_cycles = 0
        self._frame: BridgeData | None = None
        self._state: BridgeState | None = None
        self._lock = threading.Lock()
        self.statuses: list[Status] = []
        self.states: list[RobotState] = []
        self._to_control_data = self.control_bus.publisher("/hb50/bridge_data", BridgeData, MAB_RT)
        self._to_control_state = self.control_bus.publisher(
            "/hb50/bridge_state", BridgeState, MAB_RT
        )
        self._to_bridge = self.bridge_bus.publisher("/hb50/joint_command", JointCommand, MAB_RT)
        self.commands = self.control_bus.publisher("/hb50/control_command", String, RELIABLE)
        self.bridge_bus.subscribe(
            "/hb50/bridge_data", BridgeData, self._keep_frame, MAB_RT, realtime=True
        )
        self.bridge_bus.subscribe(
            "/hb50/bridge_state", BridgeState, self._keep_state, MAB_RT, realtime=True
        )
        self.control_bus.subscribe(
            "/hb50/joint_command", JointCommand, self._to_bridge.publish, MAB_RT, realtime=True
        )
        self.control_bus.subscribe(
            "/hb50/status", Status, self.statuses.append, RELIABLE, realtime=True
        )
        self.control_bus.subscribe(
            "/hb50/robot_state", RobotState, self.states.append, MAB_RT, realtime=True
        )
        self.bridge.start()
        self.control.start()

    # ---- time ----------------------------------------------------------------------------
    @property
    def sim_time(self) -> float:
        """Simulated time since the start (s)."""
        return self.array.time

    def stamp_ns(self) -> int:
        """The frame stamp: the node clock on a wall-clock epoch (ns), as ``Header.now`` stamps
        on a host whose clock runs with the nodes' — or simulated time, with ``sim_stamps``."""
        if self.sim_stamps:
            return EPOCH_NS + round(self.array.time * 1e9)
        return EPOCH_NS + self.clock.now - self._t0

    def _keep_frame(self, msg: BridgeData) -> None:
        self._frame = msg

    def _keep_state(self, msg: BridgeState) -> None:
        self._state = msg

    # ---- the loop ------------------------------------------------------------------------
    def cycle(self) -> None:
        """One 2 ms cycle: physics, bridge, then (unless starved) the control node's step."""
        self.array.step(PERIOD)
        self.clock.now += CYCLE_NS
        self.bridge.cycle(self.clock.now)
        self.bridge_timers.run_due(self.clock.now)
        self.control_timers.run_due(self.clock.now)
        if self.starved:
            return
        frame, state = self._frame, self._state
        assert frame is not None
        if self._stale_cycles > 0:
            self._stale_cycles -= 1
            state = self._stale_state
        self._deliver(state, frame)

    def _deliver(self, state: BridgeState | None, frame: BridgeData) -> None:
        """The bridge's state, then its frame, to the control node; returns once it took it."""
        if state is not None:
            self._to_control_state.publish(state)
        done = self.control.frames_used + self.control.frames_rejected
        self._to_control_data.publish(frame)
        deadline = time.monotonic() + _WAIT_S
        while self.control.frames_used + self.control.frames_rejected == done:
            if time.monotonic() > deadline:
                raise TimeoutError("the control node did not take the frame")
            time.sleep(0.00005)

    def run(self, seconds: float, *, starved: bool = False) -> None:
        """``seconds`` of simulated time; ``starved``: the control node gets nothing."""
        self.starved = starved
        try:
            for _ in range(round(seconds / PERIOD)):
                self.cycle()
        finally:
            self.starved = False

    def freeze(
        self, seconds: float, before_cycle: Callable[[int], None] | None = None
    ) -> None:
        """The control process stopped for ``seconds`` (SIGSTOP, then SIGCONT) while its socket
        kept what came: the bridge cycles on (its watchdog trips) and its states and frames
        queue in order; at least ``seconds`` of the host's clock pass; then the node steps on
        every queued frame in turn, each after its state, as a receive buffer's backlog delivers
        them — their stamps show no gap, only the node's own clock does. ``before_cycle(i)``
        runs before each frozen cycle (a publisher that keeps sending; the node takes what it
        sends at once, stamped with its last frame before the stall, as it takes such queued
        commands first)."""
        start = time.monotonic()
        queued: list[tuple[BridgeState | None, BridgeData]] = []
        self.starved = True
        try:
            for i in range(round(seconds / PERIOD)):
                if before_cycle is not None:
                    before_cycle(i)
                self.cycle()
                assert self._frame is not None
                queued.append((self._state, self._frame))
        finally:
            self.starved = False
        time.sleep(max(0.0, seconds - (time.monotonic() - start)))
        for state, frame in queued:
            self._deliver(state, frame)

    def stall(self, seconds: float) -> None:
        """The whole process stalls for ``seconds`` of host time (nothing runs: no physics step,
        no bridge cycle, no control step) — the clock moves on, the simulated robot does not."""
        self.clock.now += round(seconds * 1e9)

    def stale_state_view(self, cycles: int) -> None:
        """For the next ``cycles`` control steps the node gets the bridge state it has now,
        however the bridge changes: the 10 Hz state of a starved process arrives late (chaos,
        seed 11, t ≈ 1 597 s), frames go on."""
        self._stale_state, self._stale_cycles = self._state, cycles

    def command(self, text: str) -> None:
        """Send ``text`` on ``/hb50/control_command``; the node's callback thread takes it before
        the frame of the next cycle (one queue, in order), which this runs."""
        self.commands.publish(String(text))
        self.cycle()

    # ---- what happened -------------------------------------------------------------------
    @property
    def mode(self) -> MotionMode:
        return self.control.motion.mode

    def pose(self) -> BasePose:
        """Ground truth of the base (MuJoCo)."""
        return self.world.base_pose()

    def tilt(self) -> float:
        return tilt_of(self.pose())

    def statuses_at(self, level: Level) -> list[str]:
        """The control node's reports of ``level`` so far."""
        return [s.status for s in self.statuses if s.level == level]

    def tip_over(
        self,
        orientation_wxyz: tuple[float, float, float, float],
        height: float,
        *,
        clear_of_floor: bool = False,
    ) -> None:
        """Put the body at ``height`` (m) in ``orientation`` (w, x, y, z), at rest, joints
        where they are — someone kicked it over (or righted it).

        ``clear_of_floor``: raise the body until no part of the robot is inside the floor. A
        body turned in place with its legs splayed can put a leg 7–31 cm into the ground, and the
        contact solver then shoots it out at ≈ 1 m/s and spins it over: that is the teleport,
        not anything a kick or the controller does."""
        import mujoco

        with self.array.locked():
            m, d = self.world.mujoco_model, self.world.mujoco_data
            free = int(np.flatnonzero(m.jnt_type == mujoco.mjtJoint.mjJNT_FREE)[0])
            a = int(m.jnt_qposadr[free])
            v = int(m.jnt_dofadr[free])
            d.qpos[a + 2] = height
            q = np.array(orientation_wxyz, dtype=np.float64)
            d.qpos[a + 3 : a + 7] = q / np.linalg.norm(q)
            d.qvel[v : v + 6] = 0.0
            mujoco.mj_forward(m, d)
            for _ in range(10 if clear_of_floor else 0):
                depth = self.floor_depth()
                if depth <= 0.0:
                    break
                d.qpos[a + 2] += depth + 0.001  # m: resting on the floor, not in it
                mujoco.mj_forward(m, d)

    def floor_depth(self) -> float:
        """How deep (m) the deepest part of the robot is inside the floor now; 0 if none is
        (from the contacts of the last forward pass)."""
        m, d = self.world.mujoco_model, self.world.mujoco_data
        return max(
            (
                -float(c.dist)
                for c in d.contact[: d.ncon]
                if 0 in (m.geom_bodyid[c.geom1], m.geom_bodyid[c.geom2])
            ),
            default=0.0,
        )

    def kick(self, roll_rate: float) -> None:
        """Give the body a sudden roll rate (rad/s, about its x axis) — a kick from the side."""
        import mujoco

        with self.array.locked():
            m, d = self.world.mujoco_model, self.world.mujoco_data
            free = int(np.flatnonzero(m.jnt_type == mujoco.mjtJoint.mjJNT_FREE)[0])
            v = int(m.jnt_dofadr[free])
            d.qvel[v + 3] = roll_rate  # free joint: linear (world), then angular (body frame)
            mujoco.mj_forward(m, d)

    def close(self) -> None:
        self.control.shutdown()
        self.bridge.shutdown()
        self.control_bus.close()
        self.bridge_bus.close()
