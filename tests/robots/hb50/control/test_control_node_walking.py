"""The control node walks the simulated hb50 on velocity commands (in-process bus, lock-step with
MuJoCo as in test_control_node), reports what it does on RobotState and /hb50/status, and takes
walking parameters live."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator

import numpy as np
import pytest
from test_control_node import Rig, wait_until

from jointbus.bus import MAB_RT, Bus
from jointbus.messages.geometry_msgs import Twist, Vector3
from jointbus.messages.std_msgs import String
from jointbus.robots.hb50.messages import BridgeState, Level, MotionGait, MotionMode, MotionType
from support.hb50_sim import lying_world


@pytest.fixture
def rig() -> Iterator[Rig]:
    bus = Bus(name="control-walk-test")
    made = Rig(bus, lying_world())
    try:
        yield made
    finally:
        made.node.shutdown()
        bus.close()


def _walk(rig: Rig, seconds: float, twist: Twist) -> None:
    for _ in range(round(seconds / 0.05)):
        rig.velocity.publish(twist)
        rig.run(0.05)


FORWARD = Twist(Vector3(0.5, 0.0, 1.0), Vector3())


def test_velocity_commands_while_down_do_nothing_and_are_reported(rig: Rig) -> None:
    rig.run(0.05)
    rig.velocity.publish(FORWARD)
    rig.run(0.1)
    assert wait_until(lambda: rig.status_with("velocity_command ignored in mode IDLE", Level.WARN))
    assert rig.node.motion.mode is MotionMode.IDLE


def test_the_node_walks_on_velocity_commands_and_reports_it(rig: Rig) -> None:
    rig.run(0.05)
    rig.control.publish(String("stand_up"))
    assert wait_until(lambda: rig.node.motion.mode is MotionMode.STAND_UP)
    rig.run(2.0)
    x0 = float(rig.world.base_pose().position[0])
    _walk(rig, 4.0, FORWARD)
    assert (float(rig.world.base_pose().position[0]) - x0) / 4.0 == pytest.approx(0.45, abs=0.1)
    assert wait_until(lambda: rig.status_with("STAND -> LOCOMOTION (velocity command)", Level.OK))
    state = rig.states.latest()
    assert state is not None
    assert (state.motion_mode, state.motion_type) == (MotionMode.LOCOMOTION, MotionType.GAIT)
    assert state.motion_gait == MotionGait.TROT
    truth = rig.world.base_pose().linear_velocity
    assert state.body_vel.linear.x == pytest.approx(float(truth[0]), abs=0.15)
    assert state.world_vel.linear.x == pytest.approx(float(truth[0]), abs=0.15)
    assert state.pose.position.x > 1.0  # odometry moved with the robot
    assert 2 <= sum(leg.contact for leg in state.leg) <= 4
    # live walking parameter: a higher step, refused outside its declared range
    assert rig.node.parameters.set("step_height", 0.12).changed
    _walk(rig, 0.1, FORWARD)
    assert rig.node.motion.locomotion.params.step_height == 0.12
    with pytest.raises(ValueError, match="step_height"):
        rig.node.parameters.set("step_height", 0.5)
    assert rig.node.motion.locomotion.params.step_height == 0.12
    # a height the trot cannot walk at is clamped into its range and said so
    _walk(rig, 0.1, Twist(Vector3(0.5, 0.0, 0.5), Vector3()))
    assert wait_until(lambda: rig.status_with("walking at 0.28 m", Level.WARN))
    assert wait_until(lambda: rig.status_with("body height target 0.340 → 0.280 m", Level.WARN))
    # stand: stops on four feet within a gait cycle
    rig.control.publish(String("stand"))
    _walk(rig, 1.0, Twist(Vector3(0.0, 0.0, 1.0), Vector3()))
    assert rig.node.motion.mode is MotionMode.STAND
    assert rig.world.foot_contacts().all()
    assert np.hypot(*rig.world.base_pose().linear_velocity[:2]) < 0.1
    assert wait_until(
        lambda: rig.status_with("LOCOMOTION -> STAND (stopped on four feet)", Level.OK)
    )


def _standing(rig: Rig) -> None:
    rig.run(0.05)
    rig.control.publish(String("stand_up"))
    assert wait_until(lambda: rig.node.motion.mode is MotionMode.STAND_UP)
    rig.run(2.0)


def test_an_estop_while_walking_takes_the_node_to_damping(rig: Rig) -> None:
    states = rig.bus.publisher("/hb50/bridge_state", BridgeState, MAB_RT)
    states.publish(BridgeState(drives_enabled=True, status=("owner: control_node", "mode: run")))
    _standing(rig)
    _walk(rig, 1.5, FORWARD)
    assert rig.node.motion.mode is MotionMode.LOCOMOTION
    states.publish(
        BridgeState(
            drives_enabled=False,
            status=("owner: control_node", "mode: estop", "estop: hardware_command estop"),
        )
    )
    damping = rig.cycle()
    assert rig.node.motion.mode is MotionMode.DAMPING
    assert set(damping.kp) == {0.0}
    assert wait_until(lambda: rig.status_with("LOCOMOTION -> DAMPING: e-stop latched", Level.WARN))
    rig.velocity.publish(FORWARD)  # a joystick still pushing does nothing now, and says so
    rig.run(0.1)
    assert rig.node.motion.mode is MotionMode.DAMPING
    assert wait_until(lambda: rig.status_with("ignored in mode DAMPING", Level.WARN))


def test_a_custom_controller_taking_over_stops_the_walk(rig: Rig) -> None:
    states = rig.bus.publisher("/hb50/bridge_state", BridgeState, MAB_RT)
    states.publish(BridgeState(drives_enabled=True, status=("owner: control_node", "mode: run")))
    _standing(rig)
    _walk(rig, 1.5, FORWARD)
    states.publish(BridgeState(drives_enabled=True, status=("owner: squat", "mode: run")))
    rig.cycle()
    assert rig.node.motion.mode is MotionMode.STAND
    assert wait_until(lambda: rig.status_with("'squat' owns the actuators", Level.WARN))


def _yaw(rig: Rig) -> float:
    """The simulator's true heading (rad) of the body."""
    w, x, y, z = rig.world.base_pose().orientation
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


def test_a_turn_command_from_standing_turns_the_robot_in_place(rig: Rig) -> None:
    """``j``/``l`` in teleop from standing: ``angular.z`` alone starts walking as a forward or
    sideways speed does, and the robot turns at the commanded rate (ground truth)."""
    _standing(rig)
    assert rig.node.motion.mode is MotionMode.STAND
    turn = Twist(Vector3(), Vector3(0.0, 0.0, 1.0))  # 1 rad/s left, height not commanded
    _walk(rig, 1.0, turn)  # the set-point ramps and the gait settles
    assert rig.node.motion.mode is MotionMode.LOCOMOTION
    assert wait_until(lambda: rig.status_with("STAND -> LOCOMOTION (velocity command)", Level.OK))
    x0 = rig.world.base_pose().position[:2].copy()
    turned = 0.0
    for _ in range(60):  # 3 s, heading unwrapped every 50 ms
        before = _yaw(rig)
        _walk(rig, 0.05, turn)
        turned += math.remainder(_yaw(rig) - before, math.tau)
    assert turned / 3.0 == pytest.approx(1.0, rel=0.2)
    assert np.hypot(*(rig.world.base_pose().position[:2] - x0)) < 0.3  # in place


def test_a_turn_too_small_to_walk_is_reported_not_dropped(rig: Rig) -> None:
    _standing(rig)
    _walk(rig, 0.5, Twist(Vector3(), Vector3(0.0, 0.0, 0.05)))  # the feet would move 1.4 cm/s
    assert rig.node.motion.mode is MotionMode.STAND
    assert wait_until(
        lambda: (
            rig.status_with("velocity_command ignored in mode STAND", Level.WARN)
            and rig.status_with("turn rate 0.050 rad/s", Level.WARN)
        )
    )


@pytest.mark.long  # 2 × 13 s of simulated walking through the node
@pytest.mark.parametrize("rate", [1.0, 2.0])
def test_the_readme_turn_in_place_from_standing(rig: Rig, rate: float) -> None:
    """README "Make it walk": a turn held 10 s from standing, the rate averaged over seconds
    1–10 from the ground truth (2 rad/s needs ``cmd_vel_ang`` 2: ``angular.z`` is in [-1, 1])."""
    assert rig.node.parameters.set("cmd_vel_ang", max(rate, 1.0)).changed is (rate > 1.0)
    _standing(rig)
    turn = Twist(Vector3(), Vector3(0.0, 0.0, rate / max(rate, 1.0)))
    _walk(rig, 1.0, turn)
    x0 = rig.world.base_pose().position[:2].copy()
    turned = 0.0
    for _ in range(180):  # seconds 1–10
        before = _yaw(rig)
        _walk(rig, 0.05, turn)
        turned += math.remainder(_yaw(rig) - before, math.tau)
    assert turned / 9.0 == pytest.approx(rate, rel=0.05)  # measured 1.001 / 2.004 rad/s
    assert np.hypot(*(rig.world.base_pose().position[:2] - x0)) < 0.1  # measured 3 cm


def test_the_odometry_goes_on_from_the_walk_when_it_ends(rig: Rig) -> None:
    """A new user's trial (2026-12-07): when a walk ended (LOCOMOTION -> STAND) the published
    pose jumped back from 5.237 to 2.034 m in one message — from the walking estimator's odometry
    to the state estimator's own, integrated beside it — while the body stood at 5.5 m. The pose
    now goes on from where the walk left it, in ``robot_state`` and after."""
    _standing(rig)
    x0 = float(rig.world.base_pose().position[0])
    _walk(rig, 3.0, FORWARD)
    assert rig.node.motion.mode is MotionMode.LOCOMOTION
    rig.control.publish(String("stand"))
    xs: list[tuple[MotionMode, float]] = []
    for _ in range(round(1.5 / 0.002)):
        rig.velocity.publish(Twist(Vector3(0.0, 0.0, 1.0), Vector3()))
        rig.cycle()
        latest = rig.states.latest()
        assert latest is not None
        xs.append((rig.node.motion.mode, float(latest.pose.position.x)))
    modes = [mode for mode, _ in xs]
    assert MotionMode.LOCOMOTION in modes and modes[-1] is MotionMode.STAND, set(modes)
    steps = [abs(b - a) for (_, a), (_, b) in itertools.pairwise(xs)]
    assert max(steps) < 0.01, max(steps)  # no jump: a few mm a 2 ms step at most
    walked = float(rig.world.base_pose().position[0]) - x0
    assert walked > 1.0
    assert xs[-1][1] == pytest.approx(walked, rel=0.2)  # the odometry still says how far it went
