"""``sim://rover``: a velocity-commanded planar base (x, y, theta) and a positioned mast."""

from __future__ import annotations

import math
import re
import time
from collections.abc import Iterator

import pytest

from jointbus import drivers
from jointbus.drivers import MotionTimeoutError, RejectReason, RequestRejected
from jointbus.drivers.planar_joint import PlanarJoint, planar_joints_of
from jointbus.drivers.sim.rover import RoverSimArray
from jointbus.math import Twist2D
from jointbus.messages.errors import LimitError


@pytest.fixture
def rover() -> Iterator[RoverSimArray]:
    array = drivers.open("sim://rover")
    assert isinstance(array, RoverSimArray)
    yield array
    array.close()


def drive_for(rover: RoverSimArray, twist: Twist2D, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:  # renew within the 0.25 s drive watchdog
        rover.drive(twist)
        time.sleep(0.02)


def test_the_base_is_a_declared_planar_joint_beside_the_mast(rover: RoverSimArray) -> None:
    assert rover.names == ("base_x", "base_y", "base_theta", "mast")
    assert planar_joints_of(rover) == (PlanarJoint("base", 0, 1, 2),)
    with drivers.open("sim://arm6") as arm:
        assert planar_joints_of(arm) == ()


def test_driving_forward_while_turning_integrates_the_pose_in_the_world_frame(
    rover: RoverSimArray,
) -> None:
    rover.power(True)
    drive_for(rover, Twist2D(0.5, 0.0, 0.5), 1.0)
    r = rover.read_joints()
    assert r.velocity[:3] == pytest.approx([0.5, 0.0, 0.5], abs=1e-6)
    x, y, theta = r.position[:3]
    # an arc of radius v/omega = 1 m: the pose lies on the circle through the start
    assert math.hypot(x, y - 1.0) == pytest.approx(1.0, abs=0.02)
    assert theta == pytest.approx(math.atan2(x, 1.0 - y), abs=0.02)
    assert y > 0.05  # it turned left


def test_the_drive_watchdog_stops_a_base_whose_commands_stopped(rover: RoverSimArray) -> None:
    rover.power(True)
    drive_for(rover, Twist2D(1.0, 0.0, 0.0), 0.5)
    time.sleep(rover.watchdog_s + 1.0)  # silence, then the 1 s ramp down at 6 m/s² is long over
    assert rover.read_joints().velocity[:3] == pytest.approx([0.0, 0.0, 0.0], abs=1e-9)


def test_base_axes_refuse_position_commands_and_limits_hold(rover: RoverSimArray) -> None:
    rover.power(True)
    with pytest.raises(RequestRejected) as err:
        rover.position("base_x", 1.0)
    assert (err.value.reason, err.value.joint, err.value.index) == (
        RejectReason.UNSUPPORTED,
        "base_x",
        0,
    )
    with pytest.raises(LimitError) as limit:
        rover.drive(Twist2D(3.0, 0.0, 0.0))
    assert (limit.value.joint, limit.value.index) == ("base_x", 0)
    rover.power(False)
    with pytest.raises(RequestRejected) as err:
        rover.drive(Twist2D(0.1, 0.0, 0.0))
    assert err.value.reason is RejectReason.POWERED_OFF


@pytest.mark.parametrize("joint", ["base_theta", 2, "base_x"])
def test_homing_a_base_axis_is_refused_as_the_home_request(
    rover: RoverSimArray, joint: str | int
) -> None:
    """The user called ``home``: the refusal names that request (not the ``position`` move the
    driver would make of it), the joint by name and index, and leaves the rover as it was."""
    rover.power(True)
    before = rover.read_joints().position.copy()
    with pytest.raises(RequestRejected) as err:
        rover.home(joint)
    index = rover.index(joint)
    assert (err.value.request, err.value.reason, err.value.joint, err.value.index) == (
        "home",
        RejectReason.UNSUPPORTED,
        rover.names[index],
        index,
    )
    assert str(err.value).startswith(
        f"request 'home' refused for joint {rover.names[index]!r} (index {index}): unsupported"
    )
    assert rover.read_joints().position == pytest.approx(before, abs=1e-9)


def test_the_mast_moves_to_a_position_and_home(rover: RoverSimArray) -> None:
    rover.power(True)
    rover.position("mast", 1.0)
    deadline = time.monotonic() + 10.0
    while time.monotonic() < deadline and abs(rover.read_joints().position[3] - 1.0) > 1e-3:
        time.sleep(0.02)
    assert rover.read_joints().position[3] == pytest.approx(1.0, abs=1e-3)
    rover.home()
    deadline = time.monotonic() + 10.0
    while time.monotonic() < deadline and abs(rover.read_joints().position[3]) > 1e-3:
        time.sleep(0.02)
    assert rover.read_joints().position[3] == pytest.approx(0.0, abs=1e-3)


def test_a_motion_timeout_gives_a_linear_joint_in_m_and_a_rotary_one_in_rad(
    rover: RoverSimArray,
) -> None:
    """The error's text had no units (``at 1.5, -0.0081/s``): the base's x axis is a linear
    (prismatic) actuator, m and m/s; the mast a rotary (revolute) one, rad and rad/s."""
    rover.power(True)
    drive_for(rover, Twist2D(0.5, 0.0, 0.0), 0.2)
    rover.position("mast", 1.0)
    with pytest.raises(MotionTimeoutError) as info:
        rover.wait_until_still(["base_x", "mast"], timeout=0.0)
    assert info.value.joints == ("base_x", "mast")
    assert info.value.linear == (True, False)
    text = str(info.value)
    assert re.fullmatch(
        r"still moving after 0 s: 'base_x' \(index 0\) at \S+ m, \+\S+ m/s, "
        r"'mast' \(index 3\) at \S+ rad, [+-]\S+ rad/s",
        text,
    ), text
