"""The ``can://`` driver declares its motor models' wire ranges in joint space
(:meth:`~jointbus.drivers.ActuatorArray.command_ranges`), through the calibration the base class
applies between joint and motor: a reversed joint swaps the ends of its position, velocity and
torque ranges, an offset shifts its position range, gains pass unchanged.

The array runs on a virtual bus with asymmetric wire ranges (a catalogue of its own), some joints
reversed and offset, and velocity and effort limits unbounded so that the wire ranges are what
bounds them. Property: any value inside a declared joint-space range, mapped to motor space as
the base class maps it, is taken by the wire (the link's own check, the one that refuses at
write); any value outside is refused by the node's command check, naming joint, index, field,
value and the motor model's wire range.

Where a joint has no velocity or effort limit, the wire range is also its bound wherever a limit
bounds something else: ``set_speed``, ``set_accel``, the configured speed, a current (through
the torque constant) and the limit guard's speed limit — the last two on the firmware twin.
"""

from __future__ import annotations

import dataclasses
import math
import uuid
from collections.abc import Iterator

import can
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jointbus.drivers.actuator_array import ActuatorArrayConfig, ActuatorArrayConfigError
from jointbus.drivers.calibration import Calibration
from jointbus.drivers.can.config import CanArrayConfig
from jointbus.drivers.can.driver import CanActuatorArray
from jointbus.drivers.can.motor_models import parse_motor_models
from jointbus.drivers.can.twin_server import TwinServer
from jointbus.drivers.command_ranges import COMMAND_RANGE_FIELDS
from jointbus.drivers.errors import RejectReason, RequestRejected
from jointbus.drivers.impedance import ImpedanceCommand
from jointbus.drivers.limits import JointLimits, LimitPolicy
from jointbus.messages.errors import LimitError
from jointbus.messages.joint_impedance import JointImpedance
from jointbus.model.calibration import JointCalibration
from jointbus.model.yaml_loader import load_robot
from jointbus.nodes.safety.command_check import CommandCheck, CommandRejected

#: Wire ranges that are not symmetric, so a swap of ends under a reversed joint shows.
SKEWED = {
    "schema_version": 1,
    "models": {
        "skewed": {
            "position_rad": [-6.0, 9.0],
            "velocity_rad_s": [-25.0, 40.0],
            "kp_nm_per_rad": [0.0, 300.0],
            "kd_nm_s_per_rad": [0.0, 4.0],
            "torque_nm": [-24.0, 30.0],
            "reply": {"layout": "basic"},
        }
    },
}
#: Per joint of hb50 (actuator order): direction and offset (rad) between joint and motor.
CALIBRATION = [JointCalibration(-1 if i % 3 == 1 else 1, (0.37, -1.21, 0.0)[i % 3] * (i % 2 + 1))
               for i in range(12)]


def unbounded_config(
    model: str = "skewed", *, config_speed: float = 10.0, calibrated: bool = True
) -> CanArrayConfig:
    """hb50 on motors of ``model`` (the skewed catalogue's, or a bundled one), every joint
    without velocity and effort limits, configured speed ``config_speed`` rad/s, joints reversed
    and offset by :data:`CALIBRATION` when ``calibrated``, on a fresh virtual channel."""
    hb50 = load_robot("hb50")
    catalog = parse_motor_models(SKEWED) if model == "skewed" else None
    base = CanArrayConfig.from_model(hb50, model, catalog=catalog)
    unbounded = tuple(
        dataclasses.replace(s, velocity_max=math.inf, effort_max=math.inf)
        for s in base.array.limits
    )
    geometry = base.array.geometry
    geometry = dataclasses.replace(
        geometry,
        actuators=tuple(
            dataclasses.replace(a, config_speed=config_speed) for a in geometry.actuators
        ),
    )
    calibrations = tuple(CALIBRATION) if calibrated else base.array.calibrations
    array_config = dataclasses.replace(
        base.array, limits=unbounded, calibrations=calibrations, geometry=geometry
    )
    assert isinstance(array_config, ActuatorArrayConfig)
    return dataclasses.replace(
        base, array=array_config, interface="virtual", channel=f"jb-ranges-{uuid.uuid4().hex}"
    )


@pytest.fixture(scope="module")
def array() -> Iterator[CanActuatorArray]:
    config = unbounded_config()
    bus = can.Bus(interface="virtual", channel=config.channel)
    try:
        with CanActuatorArray(config, bus) as driver:
            yield driver
    finally:
        bus.shutdown()


def test_the_declared_ranges_are_the_wire_ranges_through_the_calibration(
    array: CanActuatorArray,
) -> None:
    ranges = array.command_ranges()
    assert ranges is array.command_ranges()  # fixed: the same object
    # joint 0: direction +1, offset 0.37; joint 1: reversed, offset -2.42 (-1.21 · 2)
    assert ranges.bounds("position", 0) == pytest.approx((-6.37, 8.63))
    assert ranges.bounds("velocity", 0) == (-25.0, 40.0)
    assert ranges.bounds("effort", 0) == (-24.0, 30.0)
    assert ranges.bounds("position", 1) == pytest.approx((-2.42 - 9.0, -2.42 + 6.0))
    assert ranges.bounds("velocity", 1) == (-40.0, 25.0)
    assert ranges.bounds("effort", 1) == (-30.0, 24.0)
    assert ranges.bounds("kp", 1) == (0.0, 300.0) and ranges.bounds("kd", 1) == (0.0, 4.0)
    assert ranges.bound_by[1] == "the skewed's wire range"


def _command(array: CanActuatorArray, field: str, index: int, value: float) -> JointImpedance:
    """A command holding every joint mid-range with ``field`` of joint ``index`` at ``value``."""
    n = array.count
    limits = array.config.limits
    values = {
        "position": [(s.position_min + s.position_max) / 2 for s in limits],
        "velocity": [0.0] * n,
        "effort": [0.0] * n,
        "kp": [20.0] * n,
        "kd": [1.0] * n,
    }
    values[field][index] = value
    return JointImpedance(
        source_node="control_node",
        name=array.names,
        position=tuple(values["position"]),
        velocity=tuple(values["velocity"]),
        effort=tuple(values["effort"]),
        kp=tuple(values["kp"]),
        kd=tuple(values["kd"]),
        brake=(False,) * n,
    )


@settings(max_examples=300, deadline=None)
@given(
    field=st.sampled_from(COMMAND_RANGE_FIELDS),
    index=st.integers(0, 11),
    fraction=st.one_of(st.just(0.0), st.just(1.0), st.floats(0.0, 1.0)),
)
def test_any_value_inside_the_declared_range_is_taken_by_the_wire(
    array: CanActuatorArray, field: str, index: int, fraction: float
) -> None:
    lo, hi = array.command_ranges().bounds(field, index)
    value = min(hi, max(lo, lo + fraction * (hi - lo)))
    joint = {f: np.zeros(array.count) for f in COMMAND_RANGE_FIELDS}
    joint["kp"][:] = 20.0
    joint["kd"][:] = 1.0
    joint[field][index] = value
    cal = Calibration(array.config.calibrations)  # as the base class maps joint → motor
    array.link.check_all(  # raises OutOfRangeError for what the wire refuses; sends nothing
        position=cal.position_to_actuator(joint["position"]),
        velocity=cal.rate_to_actuator(joint["velocity"]),
        torque=cal.rate_to_actuator(joint["effort"]),
        kp=joint["kp"],
        kd=joint["kd"],
    )


@settings(max_examples=300, deadline=None)
@given(
    field=st.sampled_from(("velocity", "effort", "kp", "kd")),
    index=st.integers(0, 11),
    above=st.booleans(),
    beyond=st.floats(1e-3, 1e6),  # past float32 rounding, which is "at the limit" (clamped)
)
def test_any_value_outside_the_declared_range_is_refused_by_the_check(
    array: CanActuatorArray, field: str, index: int, above: bool, beyond: float
) -> None:
    """Velocity and effort are unbounded by the joint limits here, so the wire range alone
    bounds them (a position outside the wire range is outside the joint limits, refused as
    such: covered by the command-check tests; a negative gain is refused by the message itself,
    so gains are tried above their range)."""
    above = above or field in ("kp", "kd")
    ranges = array.command_ranges()
    lo, hi = ranges.bounds(field, index)
    value = hi + beyond if above else lo - beyond
    check = CommandCheck(
        array.names,
        JointLimits(array.names, array.config.limits, LimitPolicy.REJECT),
        ranges=ranges,
    )
    with pytest.raises(CommandRejected) as info:
        check.check(_command(array, field, index, value))
    error = info.value
    assert (error.field, error.joint, error.index, error.value) == (
        field, array.names[index], index, value,
    )
    assert error.expected == f"within [{lo:g}, {hi:g}] (the skewed's wire range)"


# -- an unbounded joint limit takes the wire range as its bound ----------------------------------


def test_set_speed_above_the_wire_range_of_a_joint_without_velocity_limit_is_refused(
    array: CanActuatorArray,
) -> None:
    """Before: ``set_speed`` took any speed on a joint without a velocity limit, and the next
    move was refused at its first exchange ("velocity = 30 … nothing was sent"). Now the wire
    range is the joint's speed bound: joint 1 is reversed, its range [-40, 25] rad/s in joint
    space, so a speed (either sense) is bounded by 25."""
    before = array.config_speeds
    with pytest.raises(RequestRejected) as info:
        array.set_speed("fr_j1", 30.0)
    error = info.value
    assert error.reason is RejectReason.OUT_OF_RANGE
    assert (error.joint, error.index, error.field, error.value) == ("fr_j1", 1, "speed", 30.0)
    assert error.expected == "a speed > 0 and ≤ 25 (the skewed's wire range)"
    assert np.array_equal(array.config_speeds, before)  # changed nothing
    with pytest.raises(RequestRejected, match="the skewed's wire range"):
        array.set_speed(None, 25.5)
    assert np.array_equal(array.config_speeds, before)
    array.set_speed("fr_j1", 25.0)  # at the bound: taken
    array.set_speed("fr_j1", 10.0)


def test_set_accel_of_a_joint_without_velocity_limit_is_bounded_by_the_wire_range(
    array: CanActuatorArray,
) -> None:
    """Before: unbounded (``set_accel(j, 1e12)`` taken); now at most the wire range's speed
    reached within one 2 ms period: 25 / 0.002 = 12 500 rad/s²."""
    with pytest.raises(RequestRejected) as info:
        array.set_accel("fr_j0", 1e6)
    assert info.value.expected == (
        "at most 1.25e+04, the most the joint can reach (its speed bound 25 (the skewed's wire "
        "range) reached within one 2 ms cycle)"
    )
    assert info.value.index == 0


def test_a_configured_speed_beyond_the_wire_range_is_refused_when_configured() -> None:
    """Without a velocity limit, every move at the configured speed would be refused at its
    first exchange; the config says so when it is made."""
    with pytest.raises(ActuatorArrayConfigError) as info:
        unbounded_config("md80", config_speed=30.0)
    assert str(info.value) == (
        "joint 'fr_j0' (index 0): configured speed [-30, 30] rad/s exceeds the motor model "
        "'md80' wire range [-25, 25] rad/s"
    )


@pytest.fixture
def twin_array() -> Iterator[tuple[TwinServer, CanActuatorArray]]:
    """md80 motors without velocity and effort limits (torque constant 0.5 N·m/A), on the
    firmware twin in lock-step (the driver's clock is the twin's time), powered."""
    config = dataclasses.replace(
        unbounded_config("md80", calibrated=False), torque_constants=(0.5,) * 12
    )
    with TwinServer(config, noise=False, clock=None) as server:  # lock-step: one period a cycle
        twin = server.twin
        with CanActuatorArray(config, clock=lambda: twin.cycles * config.period_s) as array:
            array.power(True)
            yield server, array


def test_a_current_beyond_the_wire_torque_of_a_joint_without_limits_is_refused_up_front(
    twin_array: tuple[TwinServer, CanActuatorArray],
) -> None:
    """Before: refused only at the exchange, as an actuator-space ``torque`` = 50 the caller
    never sent; now as the ``current`` sent, with the range the wire sets (±24 N·m / 0.5)."""
    server, array = twin_array
    sent = server.twin.cycles
    with pytest.raises(LimitError) as info:
        array.current("fr_j0", 100.0)
    error = info.value
    assert (error.joint, error.index, error.field, error.value) == ("fr_j0", 0, "current", 100.0)
    assert error.expected == (
        "within [-48, 48] A (the md80's wire range: torque [-24, 24] N·m over the torque "
        "constant 0.5 N·m/A)"
    )
    assert server.twin.cycles == sent  # nothing was sent
    array.current("fr_j0", 48.0)  # at the bound: taken
    array.current("fr_j0", 0.0)


def test_the_limit_guard_holds_a_joint_without_velocity_limit_to_the_wire_range(
    twin_array: tuple[TwinServer, CanActuatorArray],
) -> None:
    """The full 24 N·m feed-forward torque on a joint without a velocity limit, from rest
    mid-range. Before: the guard knew no speed limit; the joint ran at 29.7 rad/s (the twin
    motor's own limit), past the 25 rad/s its replies can say (they read 25). Now the guard's speed
    limit is the wire range: once it cuts the command (flagged at the speed limit) the joint's
    true speed stays within 25 rad/s (the cycle before the cut acts, the joint may pass it:
    replies report the state before the step in which a command acts)."""
    server, array = twin_array
    array.set_accel("fr_j0", 2_000.0)  # below what 24 N·m gives: the speed binds mid-range
    start = array.read_joints().position
    n = array.count
    pushed = np.arange(n) == 0
    command = ImpedanceCommand(
        position=start, velocity=np.zeros(n), effort=np.where(pushed, 24.0, 0.0),
        kp=np.where(pushed, 0.0, 60.0), kd=np.where(pushed, 0.0, 2.0), brake=np.zeros(n, bool),
    )
    array.impedance(command)
    flagged: list[bool] = []
    true_speed: list[float] = []
    for _ in range(40):
        flagged.append(bool(array.read_joints().speed_limited[0]))
        true_speed.append(abs(float(server.twin.model.velocities[0])))
    assert any(flagged), f"never held at a speed limit; true speeds {true_speed}"
    first = flagged.index(True)
    assert max(true_speed[first + 1:]) <= 25.0, true_speed
