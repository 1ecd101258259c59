"""``sim://`` and ``bus://`` side by side: the client of a served array behaves — values, flags,
errors and NACK reasons — exactly like the array itself.

``bus://arm6`` is ``sim://arm6?noise=false`` served by an array node on its own Zenoh session and
reached over loopback, as from another process. ``bus://`` also runs the shared driver suite
(``tests/drivers/test_conformance.py``); the cases here compare arm6-specific errors (joint names,
limits, the configured speed and home) that the shared suite, which runs on the hb50 CAN legs too,
cannot name.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Iterator

import pytest

from jointbus import drivers
from jointbus.drivers import ActuatorArray, RejectReason, RequestRejected
from jointbus.drivers.impedance import ImpedanceCommand
from jointbus.messages.actarray import ActuatorState
from jointbus.messages.errors import (
    LengthMismatchError,
    LimitError,
    NonFiniteError,
    UnknownJointError,
    ValidationError,
)
from support.array_server import served

URLS = ["sim://arm6?noise=false", "bus://arm6"]
SETTLE_TIMEOUT = 20.0  # s: an upper bound for a ≈ 1 s move on a loaded host, never a speed claim
ELBOW = 2


@contextlib.contextmanager
def opened(url: str) -> Iterator[ActuatorArray]:
    """The driver at ``url``, with whatever must answer it running."""
    if url.startswith("bus://"):
        with contextlib.ExitStack() as stack:
            server = stack.enter_context(served("sim://arm6?noise=false", "arm6"))
            yield stack.enter_context(drivers.open(server.url(timeout="2.0")))
        return
    with drivers.open(url) as array:
        yield array


@pytest.fixture(params=URLS, ids=lambda u: u.split("?")[0])
def arm(request: pytest.FixtureRequest) -> Iterator[ActuatorArray]:
    with opened(str(request.param)) as array:
        yield array


def wait_settled(arm: ActuatorArray, joint: int, target: float) -> float:
    deadline = time.monotonic() + SETTLE_TIMEOUT
    while time.monotonic() < deadline:
        state = arm.read().actuators[joint]
        if not state.state & ActuatorState.MOVING and abs(state.position - target) < 0.01:
            return state.position
        time.sleep(0.02)
    return arm.read().actuators[joint].position


def test_names_geometry_and_capabilities_are_the_served_arrays(arm: ActuatorArray) -> None:
    assert arm.names == (
        "shoulder_pan",
        "shoulder_lift",
        "elbow",
        "wrist_roll",
        "wrist_pitch",
        "flange_roll",
    )
    assert arm.index("elbow") == ELBOW
    geometry = arm.geometry()
    assert len(geometry) == 6
    assert geometry.actuators[ELBOW].min == arm.config.limits[ELBOW].position_min == -2.6
    assert {c.value for c in arm.capabilities()} >= {"power", "position", "set_speed", "home"}


def test_motion_while_powered_off_is_refused_and_nothing_moves(arm: ActuatorArray) -> None:
    before = arm.read().actuators[ELBOW].position
    with pytest.raises(RequestRejected) as err:
        arm.position("elbow", before + 0.3)
    assert err.value.reason is RejectReason.POWERED_OFF
    time.sleep(0.1)
    assert abs(arm.read().actuators[ELBOW].position - before) < 1e-3
    assert arm.read().motor_power is False


def test_a_move_is_reported_moving_and_reaches_its_target(arm: ActuatorArray) -> None:
    arm.power(True)
    here = arm.read().actuators[ELBOW].position
    target = here - 0.4 if here > 0 else here + 0.4
    assert arm.position("elbow", target) == ()
    seen_moving = False
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline and not seen_moving:
        seen_moving = bool(arm.read().actuators[ELBOW].state & ActuatorState.MOVING)
        time.sleep(0.005)
    assert seen_moving
    assert abs(wait_settled(arm, ELBOW, target) - target) < 0.01


@pytest.mark.parametrize(
    ("call", "error", "field", "joint", "index"),
    [
        (lambda a: a.position("elbow", 9.0), LimitError, "position", "elbow", 2),
        (lambda a: a.position("elbow", math.nan), NonFiniteError, "position", "elbow", 2),
        (lambda a: a.positions([0.0] * 5), LengthMismatchError, "positions", "flange_roll", 5),
        (lambda a: a.speeds([0.1, 0.1, 99.0, 0.1, 0.1, 0.1]), LimitError, "speeds", "elbow", 2),
        (lambda a: a.current(1, 1e6), LimitError, "current", "shoulder_lift", 1),
    ],
    ids=["limit", "nan", "length", "multi-limit", "current-limit"],
)
def test_bad_commands_raise_the_same_error_naming_joint_and_field(
    arm: ActuatorArray,
    call: object,
    error: type[ValidationError],
    field: str,
    joint: str | None,
    index: int | None,
) -> None:
    arm.power(True)
    before = arm.read_joints().position.copy()
    with pytest.raises(error) as err:
        call(arm)  # type: ignore[operator]
    assert (err.value.field, err.value.joint, err.value.index) == (field, joint, index)
    time.sleep(0.05)
    assert abs(arm.read_joints().position - before).max() < 1e-3  # nothing moved


def test_unknown_joints_and_bad_requests_are_refused_with_the_same_reasons(
    arm: ActuatorArray,
) -> None:
    with pytest.raises(UnknownJointError, match="no joint named 'knee'"):
        arm.position("knee", 0.1)
    with pytest.raises(RequestRejected) as err:
        arm.set_speed("knee", 1.0)
    assert err.value.reason is RejectReason.UNKNOWN_JOINT
    with pytest.raises(RequestRejected) as err:
        arm.set_speed("elbow", 99.0)
    assert (err.value.reason, err.value.joint, err.value.index) == (
        RejectReason.OUT_OF_RANGE,
        "elbow",
        2,
    )
    with pytest.raises(RequestRejected) as err:
        arm.power("yes")  # type: ignore[arg-type]
    assert err.value.reason is RejectReason.OUT_OF_RANGE


def test_configured_speed_is_acked_and_shows_in_the_geometry(arm: ActuatorArray) -> None:
    arm.set_speed("elbow", 0.7)
    assert arm.geometry().actuators[ELBOW].config_speed == pytest.approx(0.7)
    assert arm.config_speeds[ELBOW] == pytest.approx(0.7)
    arm.set_accel(None, 3.0)
    assert list(arm.config_accelerations) == pytest.approx([3.0] * 6)


def test_home_goes_to_the_geometry_home(arm: ActuatorArray) -> None:
    arm.power(True)
    home = arm.geometry().actuators[ELBOW].home
    arm.position("elbow", home + 0.3)
    wait_settled(arm, ELBOW, home + 0.3)
    arm.home("elbow")
    assert abs(wait_settled(arm, ELBOW, home) - home) < 0.01


def test_an_impedance_stream_holds_a_joint_where_it_is_told(arm: ActuatorArray) -> None:
    arm.power(True)
    here = arm.read_joints().position.tolist()
    target = list(here)
    target[ELBOW] = here[ELBOW] + 0.3 if here[ELBOW] < 2.0 else here[ELBOW] - 0.3
    end = time.monotonic() + 2.0
    while time.monotonic() < end:  # a 50 Hz stream from the default source
        arm.impedance(ImpedanceCommand.hold(target, 40.0, 2.0))
        time.sleep(0.02)
    assert arm.read_joints().position[ELBOW] == pytest.approx(target[ELBOW], abs=0.05)
