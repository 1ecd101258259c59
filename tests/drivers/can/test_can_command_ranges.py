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

from jointbus.drivers.actuator_array import ActuatorArrayConfig
from jointbus.drivers.calibration import Calibration
from jointbus.drivers.can.config import CanArrayConfig
from jointbus.drivers.can.driver import CanActuatorArray
from jointbus.drivers.can.motor_models import parse_motor_models
from jointbus.drivers.command_ranges import COMMAND_RANGE_FIELDS
from jointbus.drivers.limits import JointLimits, LimitPolicy
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


@pytest.fixture(scope="module")
def array() -> Iterator[CanActuatorArray]:
    hb50 = load_robot("hb50")
    base = CanArrayConfig.from_model(hb50, "skewed", catalog=parse_motor_models(SKEWED))
    unbounded = tuple(
        dataclasses.replace(s, velocity_max=math.inf, effort_max=math.inf)
        for s in base.array.limits
    )
    geometry = base.array.geometry
    geometry = dataclasses.replace(
        geometry,
        actuators=tuple(dataclasses.replace(a, config_speed=10.0) for a in geometry.actuators),
    )
    array_config = dataclasses.replace(
        base.array, limits=unbounded, calibrations=tuple(CALIBRATION), geometry=geometry
    )
    assert isinstance(array_config, ActuatorArrayConfig)
    config = dataclasses.replace(
        base, array=array_config, channel=f"jb-ranges-{uuid.uuid4().hex}"
    )
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
