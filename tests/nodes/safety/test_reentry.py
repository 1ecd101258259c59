"""The re-entry ramp: after the drives stopped following commands, start from the measured pose."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jointbus.drivers.impedance import ImpedanceCommand
from jointbus.nodes.safety.reentry import ReentryEngaged, ReentryFinished, ReentryRamp

NAMES = ("hip", "thigh", "knee")
SOURCE = "control_node"
PERIOD = 0.002
SPEED = 1.0
GAIN_TIME = 0.2
TOLERANCE = 0.1
F32 = 1e-9  # float64 round-off of the guide's steps


def ramp(limits: tuple[float, ...] = (20.0, 20.0, 20.0)) -> ReentryRamp:
    return ReentryRamp(
        NAMES,
        limits,
        speed=SPEED,
        gain_time=GAIN_TIME,
        tolerance=TOLERANCE,
        period=PERIOD,
    )


def hold(target: list[float], kp: float = 80.0) -> ImpedanceCommand:
    return ImpedanceCommand.hold(target, kp, 3.0)


def test_nothing_begun_passes_every_command_through() -> None:
    r = ramp()
    cmd = hold([0.0, 2.0, -2.0])
    assert r.shape(cmd, SOURCE) is cmd
    assert not r.active


def test_a_far_target_is_reached_from_the_measured_pose_at_the_reentry_speed() -> None:
    r = ramp()
    measured = [0.05, 0.0, -2.6]
    stand = [0.05, 0.7, -1.4]
    r.begin(measured, "e-stop reset")
    cmd = hold(stand)
    previous = np.array(measured)
    shaped = [r.shape(cmd, SOURCE) for _ in range(2000)]
    events = r.take_events()
    (engaged,) = [e for e in events if isinstance(e, ReentryEngaged)]
    (finished,) = [e for e in events if isinstance(e, ReentryFinished)]
    assert engaged.joint == "knee" and engaged.index == 2
    assert "e-stop reset" in engaged.describe() and "'knee' (index 2)" in engaged.describe()
    first = shaped[0]
    # The first target is one step from the measured pose, not the command.
    assert np.max(np.abs(np.array(first.position) - measured)) <= SPEED * PERIOD + F32
    steps = []
    for out in shaped:
        position = np.array(out.position)
        steps.append(np.max(np.abs(position - previous)))
        previous = position
    assert max(steps) <= SPEED * PERIOD + F32  # never faster than the re-entry speed
    # Straight line in joint space: thigh and knee arrive together (1.2 rad at 1 rad/s).
    arrived = next(k for k, out in enumerate(shaped) if out is cmd)
    assert arrived == pytest.approx(1.2 / (SPEED * PERIOD), abs=2)
    mid = np.array(shaped[arrived // 2].position)
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
    assert r.shape(near, SOURCE) is near
    assert not r.active and not r.take_events()
    r.begin(measured, "safe mode")
    damping = ImpedanceCommand.damping(len(NAMES), 1.0)  # position 0, kp 0
    assert r.shape(damping, SOURCE) is damping


def test_only_the_joints_begun_are_ramped_and_the_speed_respects_each_joint_limit() -> None:
    r = ramp(limits=(20.0, 20.0, 0.5))
    r.begin([0.0, 0.0, 0.0], "brake release", np.array([False, False, True]))
    cmd = hold([1.0, 1.0, 1.0])
    out = r.shape(cmd, SOURCE)
    assert out.position[:2].tolist() == cmd.position[:2].tolist()
    assert out.kp[:2].tolist() == cmd.kp[:2].tolist()
    assert out.position[2] == pytest.approx(0.5 * PERIOD)  # its own limit, below the ramp speed
    assert out.velocity[2] == pytest.approx(0.5)


def test_a_new_owner_is_ramped_to_only_once_its_own_command_arrives() -> None:
    r = ramp()
    r.begin([0.0, 0.0, 0.0], "owner change", source="control_node")
    old = hold([0.0, 0.0, 0.0])
    assert r.shape(old, "teleop") is old and r.active
    new = hold([0.0, 0.5, 0.0])
    assert r.shape(new, SOURCE).position[1] == pytest.approx(SPEED * PERIOD)


def test_an_unmeasured_joint_starts_at_its_target_with_its_gains_ramped() -> None:
    r = ramp()
    r.begin([0.0, math.nan, 0.0], "drives on (start)")
    cmd = hold([0.0, 0.3, 0.0])
    out = r.shape(cmd, SOURCE)
    assert out.position[1] == pytest.approx(0.3)
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
            out = r.shape(cmd, SOURCE)
            position = np.array(out.position)
            ramped = position != np.array(cmd.position)
            if ramped.any():
                assert np.max(np.abs(position - previous)[ramped]) <= SPEED * PERIOD + F32
                assert max(out.kp) <= 80.0
            previous = position
        if not r.active:
            break
    events = r.take_events()
    assert all(isinstance(e, ReentryEngaged | ReentryFinished) for e in events)
