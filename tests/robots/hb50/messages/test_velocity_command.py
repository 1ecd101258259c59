"""The normalised velocity command: SI scaling, clamping with a report, and rejected input."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus import math as jm
from jointbus.messages.errors import LimitError, NonFiniteError, ValidationError
from jointbus.messages.geometry_msgs import Twist, Vector3
from jointbus.robots.hb50.messages import (
    BodyVelocityCommand,
    ClampedComponent,
    ClampReport,
    VelocityScale,
)
from jointbus.robots.hb50.messages.velocity_command import NORMALISED_RANGES

SCALE = VelocityScale(cmd_vel_lin=1.2, cmd_vel_ang=2.0)
COMPONENTS = [path for path, _, _ in NORMALISED_RANGES]
ANY_FINITE = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6)


def twist(
    lx: float = 0.0,
    ly: float = 0.0,
    lz: float = 1.0,
    ax: float = 0.0,
    ay: float = 0.0,
    az: float = 0.0,
) -> Twist:
    return Twist(Vector3(lx, ly, lz), Vector3(ax, ay, az))


def test_components_scale_to_si_as_the_seed_defines() -> None:
    command, report = SCALE.to_si(twist(0.5, -0.25, 0.8, 0.1, -0.2, 1.0))
    assert command == BodyVelocityCommand(
        vx=0.5 * 1.2,
        vy=-0.25 * 1.2,
        yaw_rate=1.0 * 2.0,
        roll_rate=0.1 * 2.0,
        pitch_rate=-0.2 * 2.0,
        height_fraction=0.8,
    )
    assert not report
    assert report == ClampReport()


def test_full_scale_gives_the_configured_maxima() -> None:
    command, _ = SCALE.to_si(twist(1.0, -1.0, 1.0, 0.0, 0.0, -1.0))
    assert (command.vx, command.vy, command.yaw_rate) == (1.2, -1.2, -2.0)


def test_out_of_range_values_are_clamped_and_reported() -> None:
    command, report = SCALE.to_si(twist(1.5, 0.0, 1.2, 0.0, -3.0, 0.5))
    assert command.vx == 1.2
    assert command.height_fraction == 1.0
    assert command.pitch_rate == -2.0
    assert command.yaw_rate == 1.0
    assert report
    assert report.clamped == (
        ClampedComponent("linear.x", 1.5, 1.0),
        ClampedComponent("linear.z", 1.2, 1.0),
        ClampedComponent("angular.y", -3.0, -1.0),
    )
    assert report.components() == ("linear.x", "linear.z", "angular.y")
    assert report.describe() == "linear.x 1.5 → 1.0; linear.z 1.2 → 1.0; angular.y -3.0 → -1.0"


def test_negative_height_is_clamped_to_zero_which_commands_no_height() -> None:
    command, report = SCALE.to_si(twist(lz=-0.5))
    assert command.height_fraction is None
    assert report.clamped == (ClampedComponent("linear.z", -0.5, 0.0),)


def test_a_plain_ros_twist_does_not_command_a_height() -> None:
    """``'{linear: {x: 0.5}}'`` (z = 0, as every ROS teleop sends) keeps the robot's height."""
    command, report = SCALE.to_si(Twist(Vector3(0.5, 0.0, 0.0), Vector3()))
    assert command.height_fraction is None
    assert command.vx == pytest.approx(0.6)
    assert not report
    assert SCALE.to_normalised(command).linear.z == 0.0


@given(st.lists(ANY_FINITE, min_size=6, max_size=6))
def test_result_is_always_within_range_and_report_is_exact(values: list[float]) -> None:
    command, report = SCALE.to_si(twist(*values))
    assert abs(command.vx) <= 1.2
    assert abs(command.vy) <= 1.2
    for rate in (command.roll_rate, command.pitch_rate, command.yaw_rate):
        assert abs(rate) <= 2.0
    fraction = command.height_fraction
    assert (fraction is None) == (values[2] <= 0.0)
    assert fraction is None or 0.0 < fraction <= 1.0
    expected = [
        ClampedComponent(path, v, lo if v < lo else hi)
        for v, (path, lo, hi) in zip(values, NORMALISED_RANGES, strict=True)
        if not lo <= v <= hi
    ]
    assert list(report.clamped) == expected


@given(st.integers(0, 5), st.sampled_from([math.nan, math.inf, -math.inf]))
def test_non_finite_input_is_rejected_naming_the_component(i: int, bad: float) -> None:
    values = [0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
    values[i] = bad
    with pytest.raises(NonFiniteError) as info:
        SCALE.to_si(twist(*values))
    assert info.value.field == COMPONENTS[i]
    assert info.value.type_name == "geometry_msgs/msg/Twist"


def test_only_a_geometry_twist_is_accepted() -> None:
    with pytest.raises(ValidationError):
        SCALE.to_si(jm.Twist.zero())  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("lin", "ang", "field", "error"),
    [
        (0.0, 1.0, "cmd_vel_lin", LimitError),
        (1.0, -1.0, "cmd_vel_ang", LimitError),
        (math.nan, 1.0, "cmd_vel_lin", LimitError),
        (1.0, math.inf, "cmd_vel_ang", LimitError),
        ("1", 1.0, "cmd_vel_lin", ValidationError),
        (1.0, True, "cmd_vel_ang", ValidationError),
    ],
)
def test_scale_must_be_finite_and_positive(
    lin: object, ang: object, field: str, error: type[ValidationError]
) -> None:
    with pytest.raises(error) as info:
        VelocityScale(lin, ang)  # type: ignore[arg-type]
    assert info.value.field == field


def test_integer_scale_is_stored_as_float() -> None:
    scale = VelocityScale(1, 2)
    assert (type(scale.cmd_vel_lin), type(scale.cmd_vel_ang)) == (float, float)


@given(st.lists(st.floats(-1.0, 1.0), min_size=6, max_size=6))
def test_to_normalised_inverts_to_si(values: list[float]) -> None:
    values[2] = abs(values[2])
    command, _ = SCALE.to_si(twist(*values))
    back = SCALE.to_normalised(command)
    got = (
        back.linear.x,
        back.linear.y,
        back.linear.z,
        back.angular.x,
        back.angular.y,
        back.angular.z,
    )
    assert all(math.isclose(a, b, abs_tol=1e-12) for a, b in zip(got, values, strict=True))


def test_body_twist() -> None:
    command, _ = SCALE.to_si(twist(0.5, 0.0, 1.0, 0.0, 0.0, 0.5))
    assert command.to_twist() == jm.Twist(jm.Vec3(0.6, 0.0, 0.0), jm.Vec3(0.0, 0.0, 1.0))
