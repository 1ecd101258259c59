"""The motion state machine's LOCOMOTION mode on MuJoCo, in simulated time: velocity commands
start and steer the trot, ``stand`` stops it on four feet, the posture commands keep working, and
commands that cannot apply change nothing."""

from __future__ import annotations

import math

import numpy as np
import pytest

from jointbus.messages.errors import NonFiniteError
from jointbus.messages.geometry_msgs import Twist, Vector3
from jointbus.robots.hb50.control.motion import MotionController, TransitionError
from jointbus.robots.hb50.legged.state_estimator import StateEstimator
from jointbus.robots.hb50.messages import MotionGait, MotionMode, MotionType
from support.hb50_sim import EPOCH, PERIOD, apply, frame, hb50, lying_world

M = MotionMode


def _twist(x: float = 0.0, y: float = 0.0, yaw: float = 0.0, z: float = 1.0) -> Twist:
    return Twist(Vector3(x, y, z), Vector3(0.0, 0.0, yaw))


class _Robot:
    """hb50 in MuJoCo under a MotionController, as the control node runs it (one step per frame,
    the frame stamp as the clock), velocity commands re-sent every 50 ms like a joystick."""

    def __init__(self) -> None:
        self.world = lying_world()
        self.mc = MotionController(hb50())
        self.est = StateEstimator(hb50())
        self.twist: Twist | None = None
        self.last_sent = -math.inf
        self.min_height = math.inf
        self.step(0.01)
        self.mc.handle_command("stand_up")
        self.step(2.0)
        assert self.mc.mode is M.STAND
        self.min_height = math.inf  # from standing on

    @property
    def now(self) -> float:
        return EPOCH + self.world.time

    def step(self, seconds: float) -> None:
        for _ in range(round(seconds / PERIOD)):
            if self.twist is not None and self.now - self.last_sent >= 0.05:
                self.mc.set_velocity_command(self.twist, self.now)
                self.last_sent = self.now
            state = self.est.update(frame(self.world), PERIOD)
            apply(self.world, self.mc.step(state, self.now))
            self.world.step(PERIOD)
            self.min_height = min(self.min_height, float(self.world.base_pose().position[2]))

    def x(self) -> float:
        return float(self.world.base_pose().position[0])


def test_a_forward_velocity_command_in_stand_starts_the_trot_and_steers_it() -> None:
    r = _Robot()
    r.twist = _twist(x=0.5)
    r.step(1.0)
    assert r.mc.mode is M.LOCOMOTION
    assert (r.mc.motion_type, r.mc.motion_gait) == (MotionType.GAIT, MotionGait.TROT)
    x0 = r.x()
    r.step(4.0)
    assert (r.x() - x0) / 4.0 == pytest.approx(0.5, rel=0.15)
    est = r.mc.estimate  # the walking estimate, as RobotState publishes it
    truth = r.world.base_pose().linear_velocity[0]
    assert est is not None and est.body_linear_velocity[0] == pytest.approx(truth, abs=0.15)
    assert est.contact.sum() >= 2  # the stance pair
    assert r.min_height > 0.2


def test_stand_stops_on_four_feet_within_a_gait_cycle_then_sit_down_works() -> None:
    r = _Robot()
    r.twist = _twist(x=0.4)
    r.step(2.0)
    r.mc.handle_command("stand")
    assert r.mc.mode is M.LOCOMOTION  # stopping: STAND follows with every foot down
    r.step(0.4 / 1.5 + r.mc.locomotion.params.gait_period)
    assert r.mc.mode is M.STAND and r.mc.motion_gait is MotionGait.STAND
    assert r.world.foot_contacts().all()
    r.step(0.5)  # the joystick still pushes: an explicit stand wins until it centres
    assert r.mc.mode is M.STAND
    r.twist = None
    r.step(0.5)
    assert abs(float(r.world.base_pose().linear_velocity[0])) < 0.05
    r.mc.handle_command("sit_down")
    r.step(2.0)
    assert r.mc.mode is M.IDLE
    assert r.min_height > 0.2 or float(r.world.base_pose().position[2]) < 0.2  # sat, not fell


def test_zero_command_keeps_locomotion_on_four_feet_and_a_new_one_walks_again() -> None:
    r = _Robot()
    r.mc.handle_command("walk")
    r.twist = _twist()
    r.step(0.5)
    assert r.mc.mode is M.LOCOMOTION and r.mc.motion_gait is MotionGait.STAND
    r.twist = _twist(yaw=0.8)  # in LOCOMOTION angular.z is a turn rate
    r.step(3.0)
    assert r.mc.motion_gait is MotionGait.TROT
    w, x, y, z = r.world.base_pose().orientation
    assert math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z)) > 1.0
    r.mc.handle_command("run")
    r.step(0.5)
    assert r.mc.motion_gait is MotionGait.RUN
    r.mc.handle_command("idle")  # stopping is never refused
    assert r.mc.mode is M.IDLE


def test_a_dead_joystick_stops_the_walk() -> None:
    r = _Robot()
    r.twist = _twist(x=0.4)
    r.step(1.5)
    r.twist = None  # the publisher dies: the command times out after command_timeout
    r.step(r.mc.params.command_timeout + 0.4 / 1.5 + r.mc.locomotion.params.gait_period)
    assert r.mc.motion_gait is MotionGait.STAND
    assert np.hypot(*r.world.base_pose().linear_velocity[:2]) < 0.1


def test_walking_is_refused_while_down_and_velocity_commands_there_do_nothing() -> None:
    world = lying_world()
    mc = MotionController(hb50())
    est = StateEstimator(hb50())
    apply(world, mc.step(est.update(frame(world), PERIOD), EPOCH))
    with pytest.raises(TransitionError, match="send stand_up first"):
        mc.handle_command("walk")
    mc.set_velocity_command(_twist(x=1.0), EPOCH)
    assert mc.velocity_ignored() == "ignored in mode IDLE: the robot is down: send stand_up first"
    command = mc.step(est.update(frame(world), PERIOD), EPOCH + PERIOD)
    assert mc.mode is M.IDLE and set(command.kp) == {0.0}  # still only damping


def test_bad_velocity_commands_while_walking_change_nothing() -> None:
    r = _Robot()
    r.twist = _twist(x=0.3)
    r.step(1.0)
    before = r.mc.velocity_command
    with pytest.raises(NonFiniteError, match=r"linear\.x"):
        r.mc.set_velocity_command(_twist(x=math.nan), r.now)
    assert r.mc.velocity_command == before
    report = r.mc.set_velocity_command(_twist(x=3.0), r.now)  # clamped to 1 → 1 m/s, ramped
    assert report.components() == ("linear.x",)
    r.twist = _twist(x=3.0)
    v0 = float(r.world.base_pose().linear_velocity[0])
    r.step(0.1)
    assert float(r.world.base_pose().linear_velocity[0]) - v0 < 0.3  # no jump: ≤ 1.5 m/s²
    assert r.min_height > 0.2


def test_leaving_the_walk_when_another_source_takes_over() -> None:
    r = _Robot()
    r.twist = _twist(x=0.4)
    r.step(1.5)
    assert r.mc.leave_walking()
    assert r.mc.mode is M.STAND
    assert not r.mc.leave_walking()  # only from LOCOMOTION
    r.step(0.2)  # the joystick still pushes: no walk until it centres
    assert r.mc.mode is M.STAND


def test_a_height_outside_the_walking_range_is_named_when_walking() -> None:
    r = _Robot()
    r.twist = _twist(x=0.3)
    r.step(0.5)
    assert r.mc.walking_height_clamped() is None  # z = 1: the reference 0.34 m
    r.mc.set_velocity_command(_twist(x=0.3, z=0.0), r.now)
    assert r.mc.walking_height_clamped() is None  # z = 0: the height is not commanded
    r.mc.set_velocity_command(_twist(x=0.3, z=0.5), r.now)
    note = r.mc.walking_height_clamped()
    assert note is not None and "linear.z 0.5" in note and "0.28 m" in note
