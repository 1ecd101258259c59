"""The re-entry ramp: after the drives stopped following commands, start from the measured pose."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jointbus.nodes.safety.reentry import ReentryEngaged, ReentryFinished, ReentryRamp
from jointbus.robots.hb50.messages import JointCommand

NAMES = ("hip", "thigh", "knee")
PERIOD = 0.002
SPEED = 1.0
GAIN_TIME = 0.2
TOLERANCE = 0.1
F32 = 1e-6  # command values are float32 on the wire (rounding of a ≈ 2.6 rad target)


def ramp(limits: tuple[float, ...] = (20.0, 20.0, 20.0)) -> ReentryRamp:
    return ReentryRamp(
        NAMES,
        limits,
        speed=SPEED,
        gain_time=GAIN_TIME,
        tolerance=TOLERANCE,
        period=PERIOD,
        source_node="bridge_node",
    )


def hold(target: list[float], kp: float = 80.0, source: str = "control_node") -> JointCommand:
    return JointCommand.hold(NAMES, target, kp, 3.0, source_node=source)


def test_nothing_begun_passes_every_command_through() -> None:
    r = ramp()
    cmd = hold([0.0, 2.0, -2.0])
    assert r.shape(cmd) is cmd
    assert not r.active


def test_a_far_target_is_reached_from_the_measured_pose_at_the_reentry_speed() -> None:
    r = ramp()
    measured = [0.05, 0.0, -2.6]
    stand = [0.05, 0.7, -1.4]
    r.begin(measured, "e-stop reset")
    cmd = hold(stand)
    previous = np.array(measured)
    shaped = [r.shape(cmd) for _ in range(2000)]
    events = r.take_events()
    (engaged,) = [e for e in events if isinstance(e, ReentryEngaged)]
    (finished,) = [e for e in events if isinstance(e, ReentryFinished)]
    assert engaged.joint == "knee" and engaged.index == 2
    assert "e-stop reset" in engaged.describe() and "'knee' (index 2)" in engaged.describe()
    first = shaped[0]
    assert first.source_node == "bridge_node"
    # The first target is one step from the measured pose, not the command.
    assert np.max(np.abs(np.array(first.t_pos) - measured)) <= SPEED * PERIOD + F32
    steps = []
    for out in shaped:
        position = np.array(out.t_pos)
        steps.append(np.max(np.abs(position - previous)))
        previous = position
    assert max(steps) <= SPEED * PERIOD + F32  # never faster than the re-entry speed
    # Straight line in joint space: thigh and knee arrive together (1.2 rad at 1 rad/s).
    arrived = next(k for k, out in enumerate(shaped) if out is cmd)
    assert arrived == pytest.approx(1.2 / (SPEED * PERIOD), abs=2)
    mid = np.array(shaped[arrived // 2].t_pos)
    fraction = (mid - measured)[1:] / (np.array(stand) - measured)[1:]
    assert fraction == pytest.approx([0.5, 0.5], abs=0.01)
    # Stiffness rose from zero over the gain time.
    assert shaped[0].kp[2] == pytest.approx(80.0 / (GAIN_TIME / PERIOD))
    assert shaped[round(GAIN_TIME / PERIOD)].kp[2] == 80.0
    assert not r.active
    assert finished.seconds == pytest.approx(arrived * PERIOD, abs=2 * PERIOD)


def test_a_target_within_the_tolerance_or_without_stiffness_passes_at_once() -> None:
    r = ramp()
    measured = [0.0, 0.5, -1.0]
    r.begin(measured, "safe mode")
    near = hold([0.05, 0.45, -1.08])
    assert r.shape(near) is near
    assert not r.active and not r.take_events()
    r.begin(measured, "safe mode")
    damping = JointCommand.damping(NAMES, 1.0, source_node="control_node")  # t_pos 0, kp 0
    assert r.shape(damping) is damping


def test_only_the_joints_begun_are_ramped_and_the_speed_respects_each_joint_limit() -> None:
    r = ramp(limits=(20.0, 20.0, 0.5))
    r.begin([0.0, 0.0, 0.0], "brake release", np.array([False, False, True]))
    cmd = hold([1.0, 1.0, 1.0])
    out = r.shape(cmd)
    assert out.t_pos[:2] == cmd.t_pos[:2] and out.kp[:2] == cmd.kp[:2]
    assert out.t_pos[2] == pytest.approx(0.5 * PERIOD)  # its own limit, below the ramp speed
    assert out.t_vel[2] == pytest.approx(0.5)


def test_a_new_owner_is_ramped_to_only_once_its_own_command_arrives() -> None:
    r = ramp()
    r.begin([0.0, 0.0, 0.0], "owner change", source="control_node")
    old = hold([0.0, 0.0, 0.0], source="teleop")
    assert r.shape(old) is old and r.active
    new = hold([0.0, 0.5, 0.0])
    assert r.shape(new).t_pos[1] == pytest.approx(SPEED * PERIOD)


def test_an_unmeasured_joint_starts_at_its_target_with_its_gains_ramped() -> None:
    r = ramp()
    r.begin([0.0, math.nan, 0.0], "drives on (start)")
    cmd = hold([0.0, 0.3, 0.0])
    out = r.shape(cmd)
    assert out.t_pos[1] == pytest.approx(0.3)
    assert out.kp[1] < 80.0 * 0.1


def test_settings_are_checked() -> None:
    for speed, gain_time, tolerance in ((0.0, 0.2, 0.1), (1.0, -1.0, 0.1), (1.0, 0.2, math.nan)):
        with pytest.raises(ValueError, match="reentry_"):
            ReentryRamp.check_settings(speed, gain_time, tolerance)


angles = st.floats(-2.5, 2.5, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(
    measured=st.lists(angles, min_size=3, max_size=3),
    targets=st.lists(st.lists(angles, min_size=3, max_size=3), min_size=1, max_size=5),
)
def test_the_applied_target_never_moves_faster_than_the_reentry_speed(
    measured: list[float], targets: list[list[float]]
) -> None:
    """Whatever the source sends after a re-entry began (here: a new target every 50 cycles),
    each applied target is within one step of the last one until it has caught up."""
    r = ramp()
    r.begin(measured, "e-stop reset")
    previous = np.array(measured)
    for target in targets:
        cmd = hold(target)
        for _ in range(50):
            out = r.shape(cmd)
            position = np.array(out.t_pos)
            ramped = position != np.array(cmd.t_pos)
            if ramped.any():
                assert np.max(np.abs(position - previous)[ramped]) <= SPEED * PERIOD + F32
                assert max(out.kp) <= 80.0
            previous = position
        if not r.active:
            break
    events = r.take_events()
    assert all(isinstance(e, ReentryEngaged | ReentryFinished) for e in events)
