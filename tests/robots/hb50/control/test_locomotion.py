"""The LOCOMOTION mode's wrapper on MuJoCo: SI velocity commands in, stop within a gait cycle,
a dead joystick stops the robot, heights clamped and slewed, the gait reported truthfully."""

from __future__ import annotations

import numpy as np
import pytest

from jointbus.robots.hb50.control.locomotion import WALK_HEIGHT_RANGE, Locomotion
from jointbus.robots.hb50.messages import BodyVelocityCommand, MotionGait
from support.hb50_sim import PERIOD, apply_arrays, frame, hb50
from support.walking_sim import STAND_HEIGHT, WalkingSim


class _Run:
    """The robot standing in MuJoCo with a Locomotion started on it."""

    def __init__(self) -> None:
        self.sim = WalkingSim()
        self.loco = Locomotion(hb50())
        self.state = self.sim.estimator.update(frame(self.sim.world), PERIOD)
        self.loco.start(self.state, STAND_HEIGHT)
        self.gaits: list[MotionGait] = []
        self.heights: list[float] = []
        self.commanded_heights: list[float] = []

    def run(self, seconds: float, command: BodyVelocityCommand | None) -> None:
        world = self.sim.world
        for _ in range(round(seconds / PERIOD)):
            self.state = self.sim.estimator.update(frame(world), PERIOD)
            out = self.loco.step(
                self.state, command, stand_height=STAND_HEIGHT, height_rate=0.1, dt=PERIOD
            )
            apply_arrays(world, out.position, out.velocity, out.torque, out.kp, out.kd)
            world.step(PERIOD)
            self.gaits.append(self.loco.gait)
            self.heights.append(float(world.base_pose().position[2]))


def _cmd(vx: float = 0.0, yaw: float = 0.0, height: float = 1.0) -> BodyVelocityCommand:
    return BodyVelocityCommand(vx, 0.0, yaw, 0.0, 0.0, height)


def test_walks_reports_trot_and_stops_on_four_feet_within_a_cycle_after_stand() -> None:
    r = _Run()
    r.run(0.02, _cmd())
    assert r.loco.gait is MotionGait.STAND  # zero command: no stepping
    r.run(3.0, _cmd(vx=0.5))
    assert r.loco.gait is MotionGait.TROT
    assert r.loco.estimate is not None
    assert r.loco.estimate.body_linear_velocity[0] == pytest.approx(0.5, abs=0.15)
    r.loco.request_stop()
    period = r.loco.params.gait_period
    r.run(0.5 / 1.5 + period, _cmd(vx=0.5))  # the ramp down, then at most one cycle
    assert r.loco.stopped and r.loco.gait is MotionGait.STAND
    assert r.sim.world.foot_contacts().all()


def test_a_timed_out_command_stops_the_robot() -> None:
    r = _Run()
    r.run(2.0, _cmd(vx=0.4))
    r.run(0.4 / 1.5 + r.loco.params.gait_period, None)  # no (fresh) command
    assert r.loco.stopped
    v = r.sim.world.base_pose().linear_velocity
    assert np.hypot(v[0], v[1]) < 0.1


def test_forced_run_and_fast_commands_use_the_running_trot() -> None:
    r = _Run()
    r.run(3.0, _cmd(vx=1.0))
    assert r.loco.gait is MotionGait.RUN
    assert min(r.heights) > 0.2


def test_height_fraction_is_clamped_to_the_walking_range_and_slewed() -> None:
    r = _Run()
    r.run(2.5, _cmd(vx=0.3, height=0.0))  # fraction 0 → the lowest walking height
    lo, _ = WALK_HEIGHT_RANGE
    assert np.mean(r.heights[-250:]) == pytest.approx(lo, abs=0.02)
    # slewed at 0.1 m/s: no 2 ms step changes the body height by more than a few mm
    assert np.max(np.abs(np.diff(r.heights))) < 0.003
