"""The motion-mode state machine: transitions, interpolation, STAND pose commands, and the
stand-up of the simulated robot in MuJoCo (the issue's acceptance test)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from jointbus.drivers.sim.mujoco_world import MujocoWorld
from jointbus.math import Quaternion
from jointbus.messages.geometry_msgs import Twist, Vector3
from jointbus.robots.hb50.control.motion import (
    SOURCE_NODE,
    MotionController,
    MotionParams,
    TransitionError,
    UnknownCommandError,
    _clip,
)
from jointbus.robots.hb50.legged.stand_pose import BodyPose
from jointbus.robots.hb50.legged.state_estimator import EstimatedState, StateEstimator
from jointbus.robots.hb50.messages import MotionGait, MotionMode, MotionType
from support.hb50_sim import PERIOD, apply, frame, hb50, lying_world

MODEL = hb50()
NAMES = MODEL.actuator_order
M = MotionMode


def fake_state(q: np.ndarray) -> EstimatedState:
    """An estimate holding only joint positions (all the controller reads)."""
    zeros = np.zeros((4, 3))
    return EstimatedState(
        legs=("fr", "fl", "rl", "rr"),
        joint_position=np.asarray(q, dtype=float),
        joint_velocity=np.zeros(12),
        joint_effort=np.zeros(12),
        foot_position=zeros,
        foot_velocity=zeros,
        foot_force=zeros,
        contact=np.ones(4, dtype=bool),
        orientation=Quaternion.identity(),
        position=np.zeros(3),
        height=0.3,
        body_linear_velocity=np.zeros(3),
        body_angular_velocity=np.zeros(3),
        world_linear_velocity=np.zeros(3),
        world_angular_velocity=np.zeros(3),
    )


def mode_of(mc: MotionController) -> MotionMode:
    """The controller's mode (a call, so the type checker does not pin it between steps)."""
    return mc.mode


def controller_in(mode: MotionMode) -> tuple[MotionController, float]:
    """A controller brought to ``mode`` through real transitions; returns it and the time."""
    mc = MotionController(MODEL)
    lying = mc.q_sit
    t = 0.0
    mc.step(fake_state(lying), t)
    if mode is M.IDLE:
        return mc, t
    mc.handle_command("stand_up")
    mc.step(fake_state(lying), t)
    if mode is M.STAND_UP:
        return mc, t
    t += mc.params.stand_up_time
    mc.step(fake_state(mc.q_stand), t)
    if mode is M.STAND:
        return mc, t
    mc.handle_command("sit_down")
    mc.step(fake_state(mc.q_stand), t)
    assert mode is M.SIT_DOWN
    return mc, t


@pytest.mark.parametrize(
    ("start", "command", "end"),
    [
        (M.IDLE, "stand_up", M.STAND_UP),
        (M.SIT_DOWN, "stand_up", M.STAND_UP),
        (M.STAND, "sit_down", M.SIT_DOWN),
        (M.STAND_UP, "sit_down", M.SIT_DOWN),
        (M.STAND, "stand", M.STAND),
        (M.IDLE, "idle", M.IDLE),
        (M.STAND_UP, "idle", M.IDLE),
        (M.STAND, "idle", M.IDLE),
        (M.SIT_DOWN, "idle", M.IDLE),
        (M.STAND, " Sit_Down\n", M.SIT_DOWN),
    ],
)
def test_allowed_transitions(start: MotionMode, command: str, end: MotionMode) -> None:
    mc, _ = controller_in(start)
    assert mc.mode is start
    assert mc.handle_command(command) is end
    assert mc.mode is end


@pytest.mark.parametrize(
    ("start", "command", "reason"),
    [
        (M.STAND_UP, "stand_up", "already rising"),
        (M.STAND, "stand_up", "already standing"),
        (M.IDLE, "sit_down", "the robot is down"),
        (M.SIT_DOWN, "sit_down", "already sitting down"),
        (M.IDLE, "stand", "send stand_up first"),
        (M.STAND_UP, "stand", "still rising"),
        (M.SIT_DOWN, "stand", "stand_up to rise again"),
    ],
)
def test_refused_transitions_say_why_and_change_nothing(
    start: MotionMode, command: str, reason: str
) -> None:
    mc, _ = controller_in(start)
    with pytest.raises(TransitionError, match=reason) as info:
        mc.handle_command(command)
    assert info.value.mode is start
    assert info.value.command.value == command
    assert mc.mode is start


def test_unknown_commands_are_refused() -> None:
    mc = MotionController(MODEL)
    with pytest.raises(UnknownCommandError, match=r"'jump'.*stand_up"):
        mc.handle_command("jump")
    assert mode_of(mc) is M.IDLE


def test_a_move_needs_joint_feedback() -> None:
    mc = MotionController(MODEL)
    with pytest.raises(TransitionError, match="no joint feedback"):
        mc.handle_command("stand_up")
    q = mc.q_sit.copy()
    q[7] = math.nan
    mc.step(fake_state(q), 0.0)
    with pytest.raises(TransitionError, match=r"'rl_j1' \(index 7\)"):
        mc.handle_command("stand_up")
    assert mode_of(mc) is M.IDLE


def test_idle_is_damping_only() -> None:
    mc = MotionController(MODEL)
    cmd = mc.step(fake_state(mc.q_sit), 0.0)
    assert cmd.source_node == SOURCE_NODE == "control_node"
    assert cmd.name == NAMES
    assert set(cmd.kp) == {0.0}
    assert set(cmd.kd) == {mc.params.idle_kd}
    assert (mc.motion_type, mc.motion_gait) == (MotionType.NONE, MotionGait.IDLE)


def test_stand_up_interpolates_from_the_measured_pose_then_stands() -> None:
    mc = MotionController(MODEL)
    start = mc.q_sit + 0.05
    mc.step(fake_state(start), 10.0)
    mc.handle_command("stand_up")
    T = mc.params.stand_up_time
    first = mc.step(fake_state(start), 10.0)
    np.testing.assert_allclose(first.t_pos, start, atol=1e-6)
    assert set(first.kp) == {80.0} and set(first.kd) == {3.0}
    mid = mc.step(fake_state(start), 10.0 + T / 2)
    np.testing.assert_allclose(mid.t_pos, (start + mc.q_stand) / 2, atol=1e-5)
    # minimum jerk: peak speed 1.875·Δ/T at the middle, carried as t_vel
    np.testing.assert_allclose(mid.t_vel, 1.875 * (mc.q_stand - start) / T, rtol=1e-5, atol=1e-6)
    assert mode_of(mc) is M.STAND_UP
    end = mc.step(fake_state(start), 10.0 + T)
    np.testing.assert_allclose(end.t_pos, mc.q_stand, atol=1e-6)
    assert set(end.t_vel) == {0.0}
    assert mode_of(mc) is M.STAND
    held = mc.step(fake_state(mc.q_stand), 10.0 + T + 0.1)
    np.testing.assert_allclose(held.t_pos, mc.q_stand, atol=1e-6)


def test_sit_down_ends_in_idle() -> None:
    mc, t = controller_in(M.SIT_DOWN)
    mc.step(fake_state(mc.q_stand), t + mc.params.sit_down_time / 2)
    assert mode_of(mc) is M.SIT_DOWN
    last = mc.step(fake_state(mc.q_stand), t + mc.params.sit_down_time)
    np.testing.assert_allclose(last.t_pos, mc.q_sit, atol=1e-6)
    assert mode_of(mc) is M.IDLE
    assert set(mc.step(fake_state(mc.q_sit), t + 2.0).kp) == {0.0}


def test_velocity_command_tilts_the_body_at_the_commanded_rate_within_limits() -> None:
    mc, t = controller_in(M.STAND)
    limit = mc.stand_pose.limits.roll_max
    twist = Twist(Vector3(0.0, 0.0, 1.0), Vector3(0.1, 0.0, 0.0))  # 0.1 rad/s roll
    for _ in range(100):  # 0.2 s
        t += PERIOD
        mc.set_velocity_command(twist, t)
        cmd = mc.step(fake_state(mc.q_stand), t)
    assert mc.pose_setpoint.roll == pytest.approx(0.02, abs=1e-6)
    expected, _ = mc.stand_pose.joint_targets(BodyPose(mc.reference_pose.height, roll=0.02))
    np.testing.assert_allclose(cmd.t_pos, expected, atol=1e-5)
    fast = Twist(Vector3(0.0, 0.0, 1.0), Vector3(1.0, 0.0, 0.0))
    for _ in range(1000):
        t += PERIOD
        mc.set_velocity_command(fast, t)
        mc.step(fake_state(mc.q_stand), t)
    assert mc.pose_setpoint.roll == pytest.approx(limit)


def test_a_stale_velocity_command_stops_the_motion_and_stand_relevels() -> None:
    mc, t = controller_in(M.STAND)
    mc.set_velocity_command(Twist(Vector3(0.0, 0.0, 1.0), Vector3(0.0, 0.2, 0.0)), t)
    for _ in range(500):  # 1 s, but the command is only valid for 0.5 s
        t += PERIOD
        mc.step(fake_state(mc.q_stand), t)
    assert mc.pose_setpoint.pitch == pytest.approx(0.2 * mc.params.command_timeout, abs=0.002)
    mc.handle_command("stand")
    for _ in range(500):
        t += PERIOD
        mc.step(fake_state(mc.q_stand), t)
    assert mc.pose_setpoint == mc.reference_pose


def test_height_follows_linear_z_slewed_and_clamped() -> None:
    mc, t = controller_in(M.STAND)
    ref = mc.params.stand_height
    mc.set_velocity_command(Twist(Vector3(0.0, 0.0, 0.8), Vector3()), t)
    t += PERIOD
    mc.step(fake_state(mc.q_stand), t)
    assert mc.pose_setpoint.height == pytest.approx(ref - mc.params.height_rate * PERIOD)
    for _ in range(1000):
        t += PERIOD
        mc.step(fake_state(mc.q_stand), t)
    assert mc.pose_setpoint.height == pytest.approx(0.8 * ref)
    report = mc.set_velocity_command(Twist(Vector3(0.0, 0.0, 0.0), Vector3()), t)
    assert not report  # z = 0: the height is not commanded, it stays
    for _ in range(1000):
        t += PERIOD
        mc.step(fake_state(mc.q_stand), t)
    assert mc.pose_setpoint.height == pytest.approx(0.8 * ref)
    report = mc.set_velocity_command(Twist(Vector3(0.0, 0.0, 0.01), Vector3()), t)
    assert not report  # 0.01 is in range, but below the safe height
    for _ in range(1000):
        t += PERIOD
        mc.step(fake_state(mc.q_stand), t)
    assert mc.pose_setpoint.height == pytest.approx(mc.stand_pose.limits.height_min)


def test_a_height_change_is_reported_once_and_a_zero_z_never() -> None:
    mc, t = controller_in(M.STAND)
    ref = mc.params.stand_height
    for _ in range(3):
        mc.set_velocity_command(Twist(Vector3(0.0, 0.0, 0.0), Vector3(0.0, 0.0, 0.2)), t)
        assert mc.take_height_report() is None
    for _ in range(3):  # a joystick at 1 = the reference: no change
        mc.set_velocity_command(Twist(Vector3(0.0, 0.0, 1.0), Vector3()), t)
        assert mc.take_height_report() is None
    mc.set_velocity_command(Twist(Vector3(0.0, 0.0, 0.8), Vector3()), t)
    report = mc.take_height_report()
    assert report is not None
    assert f"{ref:.3f} → {0.8 * ref:.3f} m" in report
    assert "linear.z = 0.8" in report
    mc.set_velocity_command(Twist(Vector3(0.0, 0.0, 0.8), Vector3()), t)  # the same again
    assert mc.take_height_report() is None
    mc.set_velocity_command(Twist(Vector3(0.0, 0.0, 0.79), Vector3()), t)  # 3.4 mm: not worth it
    assert mc.take_height_report() is None


def test_params_come_from_the_robot_file() -> None:
    params = MotionParams.from_model(MODEL, {"kp": 60.0, "watchdog_time": 1.0})
    assert (params.kp, params.kd, params.stand_height) == (60.0, 3.0, 0.34)
    with pytest.raises(ValueError, match="stand_up_time"):
        MotionParams(stand_up_time=0.0)


def run(mc: MotionController, est: StateEstimator, world: MujocoWorld, seconds: float) -> None:
    for _ in range(round(seconds / PERIOD)):
        state = est.update(frame(world), PERIOD)
        apply(world, mc.step(state, world.time))
        world.step(PERIOD)


def test_the_robot_stands_up_in_mujoco_and_sits_down_again() -> None:
    """Issue acceptance: stands to within 10 % of 0.34 m, all four feet down, the estimated
    height within 2 cm of the simulator's; then sits back down to the ground."""
    world = lying_world()
    mc = MotionController(MODEL)
    est = StateEstimator(MODEL)
    run(mc, est, world, 0.1)
    assert world.base_pose().position[2] < 0.1
    mc.handle_command("stand_up")
    run(mc, est, world, mc.params.stand_up_time + 1.0)
    assert mode_of(mc) is M.STAND
    truth = world.base_pose()
    state = est.update(frame(world), PERIOD)
    assert truth.position[2] == pytest.approx(0.34, rel=0.10)
    assert world.foot_contacts().all()
    assert state.contact.all()
    assert state.height == pytest.approx(truth.position[2], abs=0.02)
    # and the body pose commands move the real body
    twist = Twist(Vector3(0.0, 0.0, 1.0), Vector3(0.0, 0.15, 0.0))
    for _ in range(round(1.0 / PERIOD)):
        mc.set_velocity_command(twist, world.time)
        run(mc, est, world, PERIOD)
    _, pitch, _ = est.update(frame(world), PERIOD).orientation.to_rpy()
    assert pitch == pytest.approx(0.15, abs=0.03)
    mc.handle_command("sit_down")
    run(mc, est, world, mc.params.sit_down_time + 1.0)
    assert mode_of(mc) is M.IDLE
    assert world.base_pose().position[2] < 0.1


# -- following the bridge (issue 11 item 1b) and joint limits (item 2) ---------------------


@pytest.mark.parametrize("start", [M.STAND, M.STAND_UP])
def test_drives_unavailable_leave_standing_for_damping_and_the_return_stands_up_from_the_floor(
    start: MotionMode,
) -> None:
    mc, t = controller_in(start)
    assert mc.follow_drives(False, "e-stop latched (jointbus_cli)") is M.DAMPING
    assert (mc.motion_type, mc.motion_gait) == (MotionType.NONE, MotionGait.IDLE)
    fallen = mc.q_sit + 0.3 * np.sign(mc.q_sit)  # lying, legs folded further than sitting
    t += 0.002
    damping = mc.step(fake_state(fallen), t)
    assert set(damping.kp) == {0.0} and set(damping.kd) == {mc.params.idle_kd}
    assert mc.follow_drives(False, "e-stop latched (jointbus_cli)", fallen) is None  # no change
    with pytest.raises(TransitionError, match="e-stop latched"):
        mc.handle_command("sit_down")
    # The reset: back through a stand-up from where the robot lies, never to the old targets.
    assert mc.follow_drives(True, "", fallen) is M.STAND_UP
    t += 0.002
    first = mc.step(fake_state(fallen), t)
    expected = np.clip(fallen, mc.lower, mc.upper)
    assert np.allclose(first.t_pos, expected, atol=1e-6)
    t += mc.params.stand_up_time
    last = mc.step(fake_state(mc.q_stand), t)
    assert np.allclose(last.t_pos, mc.q_stand, atol=1e-6)
    assert mc.mode is M.STAND


def test_a_robot_still_standing_when_the_drives_are_back_rises_from_there_without_folding() -> None:
    """A short safe spell (or a power blip) while standing: the stand-up after it starts where the
    robot still stands and never folds the legs to the sitting pose first — a new user saw the
    body drop from 0.33 m to 0.12 m and rise again after 2 ms of safe mode."""
    mc, t = controller_in(M.STAND)
    assert mc.follow_drives(False, "bridge mode: safe") is M.DAMPING
    sagged = mc.q_stand + 0.05 * np.sign(mc.q_sit - mc.q_stand)  # sagged a little toward sitting
    assert mc.follow_drives(True, "", sagged) is M.STAND_UP
    targets = []
    while mc.mode is M.STAND_UP:
        t += 0.002
        targets.append(np.array(mc.step(fake_state(sagged), t).t_pos))
        assert t < 10.0
    far = max(float(np.max(np.abs(q - mc.q_stand))) for q in targets)
    assert far <= 0.05 + 1e-6  # float32 targets: never beyond where it stood, toward sitting
    assert mc.mode is M.STAND


def test_a_tipping_robot_is_not_stood_up_when_the_drives_are_back_until_it_is_upright() -> None:
    """The bridge's fallback hands over a robot that tipped past 0.5 rad ("a controller may take
    over"); a stand-up started on it rolled it over (a user's trial, 2026-12-05). The controller
    waits in DAMPING, the wish kept, and stands up once the body is upright again."""
    mc, t = controller_in(M.STAND)
    assert mc.follow_drives(False, "bridge mode: safe") is M.DAMPING
    tipping = dataclasses.replace(
        fake_state(mc.q_stand), orientation=Quaternion.from_rpy(0.6, 0.0, 0.0)
    )
    t += 0.002
    assert set(mc.step(tipping, t).kp) == {0.0}
    assert mc.held_by_tilt is None  # the drives hold it back, not the tilt
    assert mc.follow_drives(True, "", mc.q_stand) is None
    assert mc.mode is M.DAMPING and mc.stands_when_back
    assert mc.held_by_tilt == pytest.approx(0.6, abs=1e-6)  # what the node reports
    t += 0.002
    assert set(mc.step(tipping, t).kp) == {0.0}  # still damping only
    t += 0.002
    mc.step(fake_state(mc.q_stand), t)  # level again
    assert mc.follow_drives(True, "", mc.q_stand) is M.STAND_UP
    assert mc.held_by_tilt is None


@pytest.mark.parametrize("start", [M.STAND, M.STAND_UP])
def test_after_its_own_stall_the_controller_holds_the_pose_it_finds_before_it_damps(
    start: MotionMode,
) -> None:
    """Right after its own stall this node's view of the bridge is as old as the stall: the
    bridge may already apply its commands, and damping applied to a standing robot folds it
    (chaos, seed 11, t ≈ 1 597 s). DAMPING holds the pose of its first step, stiff, for
    ``stall_hold_time``, then damps (the sign a bridge in its fallback waits for)."""
    mc, t = controller_in(start)
    lost = t
    assert mc.lose_control("a stall (no control step for 0.36 s)", t, stalled=True) is M.DAMPING
    sagged = mc.q_stand + 0.04 * np.sign(mc.q_sit - mc.q_stand)
    for k in range(3):  # the pose of the first step is held, wherever the body goes next
        t += 0.002
        held = mc.step(fake_state(sagged + 0.01 * k), t)
        assert set(held.kp) == {mc.params.kp} and set(held.kd) == {mc.params.kd}
        assert np.allclose(held.t_pos, np.clip(sagged, mc.lower, mc.upper), atol=1e-6)
        assert set(held.t_vel) == {0.0} and set(held.t_trq) == {0.0}
    t = lost + mc.params.stall_hold_time - 0.002
    assert set(mc.step(fake_state(sagged), t).kp) == {mc.params.kp}
    t = lost + mc.params.stall_hold_time + 0.002
    assert set(mc.step(fake_state(sagged), t).kp) == {0.0}  # no word from the bridge: damping
    assert mc.mode is M.DAMPING and mc.stands_when_back
    # the drives back: a stand-up from where it stands, as before
    assert mc.follow_drives(True, "", sagged) is M.STAND_UP


def test_a_bridge_that_says_it_went_safe_is_answered_with_damping_at_once() -> None:
    """Told by the bridge (safe mode, e-stop: a fresh state), or lost for another reason than
    its own stall, the controller damps from its first step in DAMPING."""
    mc, t = controller_in(M.STAND)
    assert mc.follow_drives(False, "bridge mode: safe") is M.DAMPING
    assert set(mc.step(fake_state(mc.q_stand), t + 0.002).kp) == {0.0}
    mc, t = controller_in(M.STAND)
    assert mc.lose_control("the bridge is re-entering from safe mode", t) is M.DAMPING
    assert set(mc.step(fake_state(mc.q_stand), t + 0.002).kp) == {0.0}


def test_control_lost_mid_sit_down_damps_as_it_goes_down_anyway() -> None:
    mc, t = controller_in(M.STAND)
    mc.handle_command("sit_down")
    mc.step(fake_state(mc.q_stand), t)
    assert mc.lose_control("a stall", t, stalled=True) is M.DAMPING and not mc.stands_when_back
    assert set(mc.step(fake_state(mc.q_stand), t + 0.002).kp) == {0.0}


def test_idle_while_the_drives_are_off_keeps_the_robot_down_when_they_are_back() -> None:
    mc, _t = controller_in(M.STAND)
    mc.follow_drives(False, "bridge mode: safe")
    assert mc.handle_command("idle") is M.IDLE
    assert mc.follow_drives(True, "", mc.q_sit) is None
    assert mc.mode is M.IDLE


def test_stand_up_while_the_drives_are_off_waits_for_them() -> None:
    mc, _t = controller_in(M.IDLE)
    assert mc.follow_drives(False, "drives off (bridge mode: off)") is None
    assert mc.mode is M.IDLE  # lying already: nothing to leave
    assert mc.handle_command("stand_up") is M.DAMPING
    assert mc.stands_when_back
    assert mc.follow_drives(True, "", mc.q_sit) is M.STAND_UP


def test_a_sit_down_cut_by_an_estop_ends_down() -> None:
    mc, _t = controller_in(M.SIT_DOWN)
    assert mc.follow_drives(False, "e-stop latched (x)") is M.DAMPING
    assert not mc.stands_when_back
    assert mc.follow_drives(True, "", mc.q_sit) is M.IDLE


def test_after_a_collapse_past_the_knee_limit_every_target_is_inside_the_limits() -> None:
    """The knees of a collapsed hb50 end past ±2.705 rad: the stand-up from there starts at the
    limit and moves into range along its ramp; the bridge refused 16–46 such commands before."""
    mc = MotionController(MODEL)
    collapsed = mc.q_sit.copy()
    knees = [NAMES.index(f"{leg}_j2") for leg in ("fr", "fl", "rl", "rr")]
    collapsed[knees] = np.sign(mc.q_stand[knees]) * 2.75  # 45 mrad past the 2.705 rad limit
    t = 0.0
    mc.step(fake_state(collapsed), t)
    mc.handle_command("stand_up")
    commands = []
    while mc.mode is not M.STAND:
        commands.append(mc.step(fake_state(collapsed), t))
        t += 0.002
    commands.append(mc.step(fake_state(collapsed), t))
    joints = {j.name: j.limits for j in MODEL.actuated_joints()}
    lower = np.array([joints[n].position_min for n in NAMES])
    upper = np.array([joints[n].position_max for n in NAMES])
    for cmd in commands:
        q = np.array(cmd.t_pos)
        assert (q >= lower - 1e-6).all() and (q <= upper + 1e-6).all(), q
    assert np.allclose(np.abs(np.array(commands[0].t_pos)[knees]), 2.705, atol=1e-6)


def test_a_stand_up_from_a_sprawl_folds_the_legs_first_then_rises() -> None:
    """After a fall the legs can lie far from the folded pose (a front thigh swept back to
    −1.55 rad); sweeping them straight to standing pushes the body along the floor and, in
    MuJoCo, over onto its back. The stand-up folds them to the sitting pose first."""
    mc = MotionController(MODEL)
    sprawl = mc.q_sit.copy()
    sprawl[NAMES.index("fr_j1")] = -1.55
    t = 0.0
    mc.step(fake_state(sprawl), t)
    mc.handle_command("stand_up")
    targets = []
    while mc.mode is M.STAND_UP:
        targets.append(np.array(mc.step(fake_state(sprawl), t).t_pos))
        t += 0.002
        assert t < 10.0
    folded = min(range(len(targets)), key=lambda k: float(np.max(np.abs(targets[k] - mc.q_sit))))
    assert np.allclose(targets[folded], mc.q_sit, atol=1e-3)  # passes through the folded pose
    assert 0 < folded < len(targets) - 1
    steps = np.abs(np.diff(np.array(targets), axis=0)).max(axis=0) / 0.002
    assert steps.max() <= 1.05 * max(1.5, 1.875 * np.max(np.abs(mc.q_stand - mc.q_sit)) / 1.5)
    assert np.allclose(targets[-1], mc.q_stand, atol=1e-3)


def _motion(x: float = 0.0, y: float = 0.0, yaw: float = 0.0) -> Twist:
    """A normalised walking command, height not commanded (``linear.z = 0``, as teleop sends)."""
    return Twist(Vector3(x, y, 0.0), Vector3(0.0, 0.0, yaw))


def _after_one_step(twist: Twist) -> MotionController:
    """A standing controller that took ``twist`` and made one step with it."""
    mc, t = controller_in(M.STAND)
    mc.set_velocity_command(twist, t)
    mc.step(fake_state(mc.q_stand), t + PERIOD)
    return mc


@pytest.mark.parametrize(
    ("twist", "walks"),
    [
        (_motion(yaw=1.0), True),  # teleop j: turn in place
        (_motion(yaw=-1.0), True),  # teleop l
        (_motion(yaw=0.1), True),  # the rear feet move at 0.029 m/s
        (_motion(yaw=0.05), False),  # 0.014 m/s: joystick noise
        (_motion(x=0.03), True),
        (_motion(x=0.015), False),
        (_motion(y=-0.03), True),
        (_motion(y=-0.015), False),
        (_motion(x=0.015, yaw=0.05), True),  # each below, together a rear foot at 0.025 m/s
    ],
)
def test_a_command_that_moves_the_feet_starts_walking_from_stand(twist: Twist, walks: bool) -> None:
    """One rule for x, y and yaw: a command starts walking when it would move a foot of the
    standing footprint faster than ``AUTO_WALK_SPEED`` (a turn moves the feet as a speed does)."""
    mc = _after_one_step(twist)
    assert (mc.mode is M.LOCOMOTION) is walks
    if walks:
        assert mc.velocity_ignored() is None


def test_a_turn_command_in_stand_is_a_turn_rate_not_a_body_yaw() -> None:
    mc = _after_one_step(_motion(yaw=1.0))
    assert mc.mode is M.LOCOMOTION
    assert mc.pose_setpoint.yaw == 0.0  # the standing body did not twist over its feet


@given(
    st.floats(-1.0, 1.0),
    st.floats(-1.0, 1.0),
    st.floats(-1.0, 1.0),
    st.sampled_from([0.0, 0.1, 1.0]),
)
@example(0.0, 0.0, 5e-324, 1.0)  # the feet's speed rounds to 0.0: standing still
@settings(max_examples=60, deadline=None)
def test_no_walking_command_in_stand_is_dropped_silently(
    x: float, y: float, yaw: float, scale: float
) -> None:
    """Whatever the command, from STAND it either starts walking or says why not; one that
    moves no foot (stand still) is nothing to report — a zero, or one so small that the feet's
    speed rounds to 0.0 m/s (a turn of 5e-324 rad/s, found by hypothesis)."""
    twist = _motion(x * scale, y * scale, yaw * scale)
    mc = _after_one_step(twist)
    moving = mc.foot_speed(mc.velocity_command) > 0.0
    if mc.mode is M.LOCOMOTION:
        assert moving
        return
    assert mc.mode is M.STAND
    reason = mc.velocity_ignored()
    if not moving:
        assert reason is None
    else:
        assert reason is not None
        assert "ignored in mode STAND" in reason and "0.02 m/s" in reason


def test_a_small_command_in_stand_is_reported_with_what_would_start_walking() -> None:
    mc = _after_one_step(_motion(yaw=0.05))
    assert mc.mode is M.STAND
    reason = mc.velocity_ignored()
    assert reason is not None
    assert "turn rate 0.050 rad/s" in reason and "0.014 m/s" in reason and "0.069 rad/s" in reason
    assert "jointbus mode walk" in reason


def test_after_an_explicit_stand_a_held_turn_is_reported_until_it_centres() -> None:
    mc, t = controller_in(M.STAND)
    turn = _motion(yaw=1.0)
    mc.set_velocity_command(turn, t)
    mc.step(fake_state(mc.q_stand), t + PERIOD)
    assert mc.mode is M.LOCOMOTION
    mc.leave_walking()  # as `stand` does once the feet are down
    t += 2 * PERIOD
    mc.set_velocity_command(turn, t)
    mc.step(fake_state(mc.q_stand), t)
    assert mc.mode is M.STAND
    reason = mc.velocity_ignored()
    assert reason is not None and "centre" in reason
    mc.set_velocity_command(_motion(), t)  # released
    assert mc.velocity_ignored() is None
    mc.set_velocity_command(turn, t + PERIOD)
    mc.step(fake_state(mc.q_stand), t + 2 * PERIOD)
    assert mc.mode is M.LOCOMOTION


@settings(max_examples=300)
@given(
    st.lists(
        st.tuples(st.floats(), st.floats(), st.floats()),  # NaN, ±inf, ±0 and subnormals included
        min_size=1,
        max_size=12,
    )
)
def test_the_step_s_clip_is_numpy_s(rows: list[tuple[float, float, float]]) -> None:
    """The per-step clamp into the joint limits (``_clip``: two ufuncs) gives what ``np.clip``
    gives, number for number: NaN stays NaN, the same signed zeros, a lower bound above the
    upper one giving the upper."""
    q, lower, upper = (np.array(column) for column in zip(*rows, strict=True))
    got, want = _clip(q, lower, upper), np.clip(q, lower, upper)
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(want))
