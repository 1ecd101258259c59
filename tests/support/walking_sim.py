"""Shared harness of the walking tests: the hb50 in MuJoCo, stepped in simulated time.

Part of :mod:`support`. Each 2 ms cycle (``period``: 1 ms for a 1 kHz bridge) does what the
bridge and the control node do: a noisy BridgeData frame from the simulated drives → state
estimate → walking controller → impedance command to the drives → one MuJoCo step. Ground truth
(the base pose and twist, and which geoms touch the floor) is read from MuJoCo after each step, as
``/hb50/sim/ground_truth`` publishes it. Deterministic: seeded noise, simulated time only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import mujoco
import numpy as np

from jointbus.drivers.sim.mujoco_world import MujocoWorld
from jointbus.nodes.ground_truth import odometry_of
from jointbus.robots.hb50.legged.stand_pose import BodyPose, StandPose
from jointbus.robots.hb50.legged.state_estimator import StateEstimator
from jointbus.robots.hb50.legged.walking import (
    WalkCommand,
    WalkingController,
    WalkOutput,
    WalkParams,
)
from jointbus.robots.hb50.legged.walking_estimator import WalkingEstimator
from support.hb50_sim import PERIOD, apply_arrays, frame, hb50, make_world

STAND_HEIGHT = 0.34  # m


@dataclass
class Trace:
    """Per-cycle ground truth and estimate (world frame unless said)."""

    t: list[float] = field(default_factory=list)
    position: list[np.ndarray] = field(default_factory=list)
    yaw: list[float] = field(default_factory=list)
    velocity_body: list[np.ndarray] = field(default_factory=list)  # truth, base frame
    yaw_rate: list[float] = field(default_factory=list)
    estimated_velocity: list[np.ndarray] = field(default_factory=list)  # body frame
    min_height: float = np.inf
    body_contact: bool = False  # any floor contact other than a foot
    stance_count: list[int] = field(default_factory=list)

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return np.array(self.t), np.array(self.position)


def _non_foot_floor_contact(world: MujocoWorld, feet: set[int]) -> bool:
    d = world.mujoco_data
    for k in range(int(d.ncon)):
        g1, g2 = int(d.contact.geom1[k]), int(d.contact.geom2[k])
        if 0 in (g1, g2) and not ({g1, g2} - {0}) <= feet:
            return True
    return False


class WalkingSim:
    """The robot standing at ``STAND_HEIGHT``, ready to walk; one cycle every ``period`` s (the
    bridge's 2 ms by default; 0.001 for a 1 kHz bridge)."""

    def __init__(
        self, params: WalkParams | None = None, seed: int = 1, period: float = PERIOD
    ) -> None:
        self.period = period
        model = hb50()
        # a period shorter than the robot file's 2 ms MuJoCo step: sim://hb50's 0.5 ms
        self.world = make_world(seed, None if period >= PERIOD else 0.0005)
        self.controller = WalkingController(model, params)
        self.estimator = StateEstimator(model)
        self.walking_estimator = WalkingEstimator()
        m = self.world.mujoco_model
        self.feet = {
            i
            for i in range(m.ngeom)
            if (mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, i) or "").endswith("foot_collision0")
        }
        q = StandPose(model).solve(BodyPose(STAND_HEIGHT))
        self.world.reset(base_height=STAND_HEIGHT + 0.01, joint_positions=q)
        n = len(q)
        self.world.actuators.set_command(
            position=q,
            velocity=np.zeros(n),
            torque=np.zeros(n),
            kp=np.full(n, 80.0),
            kd=np.full(n, 3.0),
        )
        for _ in range(round(0.5 / period)):  # 0.5 s settling under stand gains, estimator on
            self.estimator.update(frame(self.world), period)
            self.world.step(period)
        self.trace = Trace()
        self.last_output: WalkOutput | None = None
        """The controller's last command (what the drives apply until the next)."""

    def run(
        self,
        duration: float,
        command: Callable[[float], WalkCommand],
        *,
        push: tuple[float, float, np.ndarray] | None = None,
        force_run: bool = False,
    ) -> Trace:
        """Walk for ``duration`` s of simulated time; ``command(t)`` gives the set-point at t;
        ``push`` = (start s, duration s, world force N) applied at the base."""
        world, ctl, est, tr = self.world, self.controller, self.estimator, self.trace
        period = self.period
        d = world.mujoco_data
        t0 = world.time
        steps = round(duration / period)
        for _ in range(steps):
            t = world.time - t0
            data = frame(world)
            a = data.linear_acceleration
            state = self.walking_estimator.update(
                est.update(data, period),
                np.array((a.x, a.y, a.z)),
                ctl.gait.peek().stance,
                period,
                ctl.foot_radius,
            )
            out = ctl.step(state, command(t), period, force_run=force_run)
            self.last_output = out
            apply_arrays(world, out.position, out.velocity, out.torque, out.kp, out.kd)
            if push is not None:
                start, length, f = push
                d.xfrc_applied[1, :3] = f if start <= t < start + length else 0.0
            world.step(period)
            odom = odometry_of(world.base_pose(), "body")
            pose, tw = odom.pose.pose, odom.twist.twist
            q = pose.orientation
            tr.t.append(world.time)
            tr.position.append(np.array((pose.position.x, pose.position.y, pose.position.z)))
            tr.yaw.append(float(np.arctan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y**2 + q.z**2))))
            tr.velocity_body.append(np.array((tw.linear.x, tw.linear.y, tw.linear.z)))
            tr.yaw_rate.append(tw.angular.z)
            tr.estimated_velocity.append(state.body_linear_velocity.copy())
            tr.stance_count.append(int(sum(out.phase.stance)))
            tr.min_height = min(tr.min_height, pose.position.z)
            if not tr.body_contact and _non_foot_floor_contact(world, self.feet):
                tr.body_contact = True
        return tr


def constant(
    vx: float = 0.0, vy: float = 0.0, yaw_rate: float = 0.0
) -> Callable[[float], WalkCommand]:
    cmd = WalkCommand(vx, vy, yaw_rate, STAND_HEIGHT)
    return lambda _t: cmd
