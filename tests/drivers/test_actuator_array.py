"""The ActuatorArray base class: checking, calibration, limits and policy, before any hook runs.

A recording driver stands in for hardware: its hooks store what they receive (actuator space),
so each test can say exactly what reached the "actuators" — and that nothing did when a call was
refused.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from jointbus.drivers import (
    ActuatorArray,
    ActuatorArrayConfig,
    ActuatorArrayConfigError,
    Capability,
    DriverClosedError,
    ImpedanceCommand,
    ImpedanceTargets,
    LimitPolicy,
    RawReading,
    RejectReason,
    RequestRejected,
    Saturation,
)
from jointbus.drivers.actuator_array import JointReading
from jointbus.drivers.impedance import CheckedImpedance
from jointbus.drivers.limits import JointLimits
from jointbus.messages.actarray import (
    ActuatorArrayData,
    ActuatorData,
    ActuatorGeometry,
    ActuatorState,
    ActuatorType,
    ArrayGeometry,
)
from jointbus.messages.actarray.geometry import Orientation3D
from jointbus.messages.errors import (
    LengthMismatchError,
    LimitError,
    NonFiniteError,
    UnknownJointError,
    ValidationError,
)
from jointbus.messages.geometry_msgs import Vector3
from jointbus.messages.joint_impedance import JointImpedance
from jointbus.messages.std_msgs import Header
from jointbus.model.calibration import JointCalibration
from jointbus.model.limits import JointLimitSpec, SoftLimits
from jointbus.model.yaml_loader import load_robot
from jointbus.nodes.safety.command_check import CommandCheck

NAMES = ("hip", "knee", "ankle")


def _geometry(has_brakes: tuple[bool, ...] = (True, False, False)) -> ArrayGeometry:
    return ArrayGeometry(
        actuators=tuple(
            ActuatorGeometry(
                type=ActuatorType.ROTARY,
                length=0.1,
                orientation=Orientation3D(),
                axis=Vector3(0.0, 0.0, 1.0),
                min=-1.0,
                centre=0.0,
                max=1.0,
                home=home,
                config_speed=1.0,
                has_brakes=brake,
            )
            for home, brake in zip((0.5, -0.25, 0.0), has_brakes, strict=True)
        )
    )


def make_config(policy: LimitPolicy = LimitPolicy.REJECT) -> ActuatorArrayConfig:
    limits = JointLimitSpec(-1.0, 1.0, velocity_max=2.0, effort_max=10.0, current_max=5.0)
    soft = JointLimitSpec(
        -1.0, 1.0, velocity_max=2.0, effort_max=10.0, current_max=5.0,
        soft=SoftLimits(-0.8, 0.8, k_position=10.0, k_velocity=5.0),
    )
    return ActuatorArrayConfig(
        names=NAMES,
        types=(ActuatorType.ROTARY,) * 3,
        limits=(limits, limits, soft),
        calibrations=(
            JointCalibration(),
            JointCalibration(direction=-1, offset=0.5),
            JointCalibration(direction=1, offset=-0.1),
        ),
        geometry=_geometry(),
        policy=policy,
    )


class RecordingArray(ActuatorArray):
    """Hooks record their arguments; the 'hardware' reports fixed actuator-space values."""

    def __init__(
        self,
        config: ActuatorArrayConfig,
        capabilities: frozenset[Capability] = frozenset(Capability),
        **kwargs: Any,
    ) -> None:
        super().__init__(config, **kwargs)
        self.caps = capabilities
        self.calls: list[tuple[str, Any]] = []
        self.powered = False
        self.actuator_position = np.array([0.1, 0.2, 0.3])
        self.actuator_velocity = np.array([0.0, -0.5, 0.0])
        self.braked = np.zeros(3, dtype=bool)
        self.closes = 0

    def _capabilities(self) -> frozenset[Capability]:
        return self.caps

    def _motor_power(self) -> bool:
        return self.powered

    def _read_raw(self) -> RawReading:
        n = self.count
        return RawReading(
            time=1.5,
            position=self.actuator_position.copy(),
            velocity=self.actuator_velocity.copy(),
            acceleration=np.full(n, math.nan),
            current=np.array([1.0, 2.0, -1.0]),
            effort=np.array([0.5, -0.5, 0.0]),
            temperature=np.array([30.0, 31.0, math.nan]),
            status=np.array([0, 3, 0], dtype=np.uint32),
            moving=np.array([False, True, False]),
            braked=self.braked.copy(),
            stalled=np.array([False, False, True]),
            motor_power=self.powered,
        )

    def _request_power(self, on: bool) -> None:
        self.calls.append(("power", on))
        self.powered = on

    def _request_brakes(self, on: bool) -> None:
        self.calls.append(("brakes", on))
        self.braked[0] = on  # only the hip has a brake

    def _request_speed(self, indices: Any, speeds: Any) -> None:
        self.calls.append(("set_speed", (indices.tolist(), speeds.tolist())))

    def _request_accel(self, indices: Any, accels: Any) -> None:
        self.calls.append(("set_accel", (indices.tolist(), accels.tolist())))

    def _write_positions(self, indices: Any, positions: Any) -> None:
        self.calls.append(("positions", (indices.tolist(), positions.tolist())))

    def _write_speeds(self, indices: Any, speeds: Any) -> None:
        self.calls.append(("speeds", (indices.tolist(), speeds.tolist())))

    def _write_currents(self, indices: Any, currents: Any) -> None:
        self.calls.append(("currents", (indices.tolist(), currents.tolist())))

    def _write_impedance(self, targets: ImpedanceTargets) -> None:
        self.calls.append(("impedance", targets))

    def _close(self) -> None:
        self.closes += 1


@pytest.fixture
def array() -> RecordingArray:
    a = RecordingArray(make_config())
    a.power(True)
    a.calls.clear()
    return a


# ------------------------------------------------------------------------------ config


def test_config_from_arm6_model_matches_the_robot_file() -> None:
    config = ActuatorArrayConfig.from_model(load_robot("arm6"))
    assert config.names[0] == "shoulder_pan" and config.count == 6
    pan, lift = config.geometry.actuators[:2]
    assert (pan.min, pan.max, pan.config_speed, pan.has_brakes) == (-3.05, 3.05, 1.0, True)
    assert (pan.axis.x, pan.axis.y, pan.axis.z) == (0.0, 0.0, 1.0)
    assert lift.home == -0.5 and lift.length == 0.30
    assert config.geometry.base_position.z == pytest.approx(0.10)
    assert config.geometry.header.frame_id == "base_link"
    # default acceleration: the configured speed in DEFAULT_RAMP_TIME
    assert config.accelerations[0] == pytest.approx(1.0 / ActuatorArrayConfig.DEFAULT_RAMP_TIME)


def test_config_rejects_inconsistent_parts() -> None:
    good = make_config()
    with pytest.raises(ActuatorArrayConfigError, match="named twice"):
        ActuatorArrayConfig(("a", "a", "b"), good.types, good.limits, good.calibrations,
                            good.geometry)
    with pytest.raises(ActuatorArrayConfigError, match="limits has 2 entries"):
        ActuatorArrayConfig(NAMES, good.types, good.limits[:2], good.calibrations, good.geometry)
    with pytest.raises(ActuatorArrayConfigError, match="acceleration"):
        ActuatorArrayConfig(NAMES, good.types, good.limits, good.calibrations, good.geometry,
                            accelerations=(1.0, 0.0, 1.0))


# ------------------------------------------------------------------------------ joints


def test_joints_by_index_or_name(array: RecordingArray) -> None:
    assert array.index("knee") == 1 and array.index(2) == 2 and array.index(np.int64(0)) == 0
    array.position("knee", 0.25)
    array.position(1, 0.25)
    assert array.calls[0] == array.calls[1]


@pytest.mark.parametrize("joint", ["elbow", 3, -1])
def test_unknown_joint_in_a_command_is_refused(array: RecordingArray, joint: Any) -> None:
    with pytest.raises(UnknownJointError) as info:
        array.position(joint, 0.0)
    assert "hip" in str(info.value)  # the known joints are listed
    assert array.calls == []


@pytest.mark.parametrize("joint", [True, 1.0, b"knee"])
def test_non_joint_values_are_typed_errors(array: RecordingArray, joint: Any) -> None:
    with pytest.raises(ValidationError):
        array.speed(joint, 0.1)
    assert array.calls == []


# ------------------------------------------------------------------------------ commands


def test_positions_are_calibrated_to_actuator_space(array: RecordingArray) -> None:
    assert array.positions([0.5, 0.25, -0.5]) == ()
    # knee: actuator = -1·0.25 + 0.5; ankle: 1·(-0.5) − 0.1
    indices, values = array.calls[0][1]
    assert indices == [0, 1, 2]
    assert values == pytest.approx([0.5, 0.25, -0.6])


def test_single_joint_none_addresses_every_joint(array: RecordingArray) -> None:
    array.speed(None, 0.5)
    assert array.calls == [("speeds", ([0, 1, 2], [0.5, -0.5, 0.5]))]


def test_speeds_and_currents_change_sign_only(array: RecordingArray) -> None:
    array.speeds([0.1, 0.2, 0.3])
    array.currents([1.0, 2.0, -3.0])
    assert array.calls[0][1][1] == pytest.approx([0.1, -0.2, 0.3])
    assert array.calls[1][1][1] == pytest.approx([1.0, -2.0, -3.0])


@given(
    values=st.lists(
        st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 5)),
        min_size=0,
        max_size=5,
    )
)
@example(values=[0.0, 0.0, 0.9])  # inside the ankle's hard limits, past its soft ones
@example(values=[0.0, 0.0, 0.8])
def test_invalid_multi_commands_never_reach_the_driver(values: list[float]) -> None:
    array = RecordingArray(make_config())
    array.powered = True
    # within each joint's position limits; the ankle's soft limits, ±0.8 rad, are inside its hard
    bounds = (1.0, 1.0, 0.8)
    ok = len(values) == 3 and all(
        math.isfinite(v) and -bound <= v <= bound for v, bound in zip(values, bounds, strict=True)
    )
    if ok:
        array.positions(values)
        assert len(array.calls) == 1
        return
    with pytest.raises(ValidationError):
        array.positions(values)
    assert array.calls == []


def test_errors_name_joint_index_field_value_and_bounds(array: RecordingArray) -> None:
    with pytest.raises(LengthMismatchError, match="3 values, one per joint") as short:
        array.positions([0.0, 0.0])
    # the first joint without a value, as impedance() names it (a trial: positions([0.0] * 5)
    # for six joints named none)
    assert (short.value.joint, short.value.index, short.value.field) == ("ankle", 2, "positions")
    with pytest.raises(LengthMismatchError) as long:
        array.speeds([0.0] * 4)
    assert (long.value.joint, long.value.index) == (None, 3)  # the first value too many
    with pytest.raises(NonFiniteError) as nan:
        array.speeds([0.0, math.nan, 0.0])
    assert (nan.value.joint, nan.value.index, nan.value.field) == ("knee", 1, "speeds")
    with pytest.raises(LimitError) as high:
        array.position("knee", 1.5)
    assert (high.value.joint, high.value.index, high.value.value) == ("knee", 1, 1.5)
    assert "[-1, 1]" in str(high.value)
    with pytest.raises(LimitError, match="current"):
        array.current(0, 6.0)
    assert array.calls == []


def test_speed_is_capped_by_the_configured_speed(array: RecordingArray) -> None:
    array.set_speed("hip", 0.5)
    with pytest.raises(LimitError, match="configured speed"):
        array.speed("hip", 0.6)
    assert array.calls == [("set_speed", ([0], [0.5]))]


def test_saturate_policy_clamps_and_reports() -> None:
    seen: list[tuple[Saturation, ...]] = []
    array = RecordingArray(make_config(LimitPolicy.SATURATE), on_saturation=seen.append)
    array.power(True)
    result = array.positions([2.0, -3.0, 0.0])
    assert [(s.joint, s.index, s.field, s.requested, s.applied) for s in result] == [
        ("hip", 0, "positions", 2.0, 1.0),
        ("knee", 1, "positions", -3.0, -1.0),
    ]
    assert array.last_saturations == result and seen == [result]
    assert array.calls[-1][1][1] == pytest.approx([1.0, 1.5, -0.1])  # clamped, then calibrated
    array.positions([0.0, 0.0, 0.0])
    assert array.last_saturations == ()  # reset by the next command


def test_a_target_past_the_soft_limit_is_refused_under_reject_clamped_under_saturate(
    array: RecordingArray,
) -> None:
    """Issue 20 item 14: under REJECT, 1.98 for a joint whose soft range ends at 1.95 was
    silently applied as 1.95. A target outside the soft range is now refused like one outside
    the hard range, naming joint, field, value and range; SATURATE still clamps, reported."""
    with pytest.raises(LimitError) as info:
        array.position("ankle", 0.9)
    err = info.value
    assert (err.joint, err.index, err.field) == ("ankle", 2, "position (soft limit)")
    assert err.value == 0.9
    assert "within [-0.8, 0.8]" in str(err)
    assert array.calls == []  # nothing applied
    saturating = RecordingArray(make_config(LimitPolicy.SATURATE))
    saturating.power(True)
    saturations = saturating.position("ankle", 0.9)
    assert [(s.field, s.applied) for s in saturations] == [("position (soft limit)", 0.8)]
    assert saturating.calls[-1][1][1] == pytest.approx([0.7])


def test_a_speed_above_the_configured_speed_names_set_speed(array: RecordingArray) -> None:
    """Issue 20 item 14: a speed inside the velocity limit but above the configured speed is
    refused, and the error says how to allow it."""
    array.set_speed("hip", 0.5)
    with pytest.raises(LimitError, match="set_speed raises it up to the velocity limit"):
        array.speed("hip", 0.8)


def test_soft_velocity_law_follows_ros2_control(array: RecordingArray) -> None:
    # ankle measured at actuator 0.3 → joint 0.4; vmax = −k_position·(p − upper) = −10·(0.4 − 0.8)
    saturations = array.speed("ankle", 1.0)
    assert saturations == ()  # soft bound 4.0, hard bound 2.0: 1.0 passes untouched
    array.actuator_position = np.array([0.1, 0.2, 0.85])  # joint 0.95: past the soft upper bound
    saturations = array.speed("ankle", 0.5)
    assert [s.field for s in saturations] == ["speed (soft limit)"]
    assert saturations[0].applied == pytest.approx(-10.0 * (0.95 - 0.8))


def test_soft_limits_need_a_measurement(array: RecordingArray) -> None:
    array.actuator_position = np.array([0.1, 0.2, math.nan])
    with pytest.raises(RequestRejected) as info:
        array.speed("ankle", 0.1)
    assert info.value.reason is RejectReason.TIMED_OUT and info.value.joint == "ankle"
    assert array.calls == []


def test_home_uses_geometry_home(array: RecordingArray) -> None:
    array.home("knee")
    array.home()
    assert array.calls[0] == ("positions", ([1], [0.75]))
    assert array.calls[1][1][1] == pytest.approx([0.5, 0.75, -0.1])


def test_motion_while_powered_off_is_refused(array: RecordingArray) -> None:
    array.power(False)
    array.calls.clear()
    for call in (
        lambda: array.position(0, 0.1),
        lambda: array.speeds([0.0, 0.0, 0.0]),
        array.home,
        lambda: array.current(None, 0.0),
        lambda: array.impedance(ImpedanceCommand.hold([0.0] * 3, 1.0, 0.1)),
    ):
        with pytest.raises(RequestRejected) as info:
            call()
        assert info.value.reason is RejectReason.POWERED_OFF
    assert array.calls == []


def test_a_power_off_refusal_names_the_joint_the_call_named(array: RecordingArray) -> None:
    array.power(False)
    for call in (lambda: array.position(1, 0.1), lambda: array.home(NAMES[1])):
        with pytest.raises(RequestRejected) as info:
            call()
        assert (info.value.joint, info.value.index) == (NAMES[1], 1)
        assert f"for joint {NAMES[1]!r} (index 1): powered off" in str(info.value)
    with pytest.raises(RequestRejected) as info:  # the whole array: no one joint to name
        array.speeds([0.0, 0.0, 0.0])
    assert info.value.joint is None
    assert "all 3 joints" in str(info.value)


# ------------------------------------------------------------------------------ impedance


def test_impedance_is_validated_and_calibrated(array: RecordingArray) -> None:
    command = ImpedanceCommand(
        position=(0.5, 0.25, 0.0),
        velocity=(0.5, 0.5, 0.0),
        effort=(1.0, 1.0, 0.0),
        kp=(10.0, 20.0, 30.0),
        kd=(1.0, 2.0, 3.0),
        brake=(True, False, False),
    )
    assert array.impedance(command) == ()
    name, targets = array.calls[0]
    assert name == "impedance"
    assert targets.kp.tolist() == [10.0, 20.0, 30.0]
    assert targets.position == pytest.approx([0.5, 0.25, -0.1])
    assert targets.velocity == pytest.approx([0.5, -0.5, 0.0])
    assert targets.torque == pytest.approx([1.0, -1.0, 0.0])
    assert targets.brake.tolist() == [True, False, False]


def test_impedance_takes_joint_space_arrays_not_a_wire_message(array: RecordingArray) -> None:
    with pytest.raises(ValidationError, match="ImpedanceCommand") as info:
        array.impedance("hold")  # type: ignore[arg-type]
    assert info.value.field == "command"
    assert array.calls == []


@pytest.mark.parametrize("field", ["position", "velocity", "effort", "kp", "kd", "brake"])
def test_impedance_needs_one_value_per_joint_in_every_field(
    array: RecordingArray, field: str
) -> None:
    short = ImpedanceCommand.hold([0.0] * 3, 1.0, 0.1)
    short = short.replace(**{field: getattr(short, field)[:2]})
    with pytest.raises(LengthMismatchError) as info:
        array.impedance(short)
    assert info.value.field == field
    assert "2 values" in str(info.value) and "3 values" in str(info.value)
    # named by the first joint without a value, as a short /hb50/joint_command is (a new user's
    # trial, 2026-12-05: over bus://hb50 the error named no joint)
    assert (info.value.joint, info.value.index) == ("ankle", 2)
    assert "joint 'ankle' (index 2): " in str(info.value)
    long = ImpedanceCommand.hold([0.0] * 4, 1.0, 0.1)
    with pytest.raises(LengthMismatchError) as info:
        array.impedance(short.replace(**{field: getattr(long, field)}))
    assert (info.value.joint, info.value.index) == (None, 3)  # the first value too many
    assert "index 3: " in str(info.value) and "4 values" in str(info.value)
    assert array.calls == []


@pytest.mark.parametrize(
    ("field", "index", "value", "error"),
    [
        ("position", 1, math.nan, NonFiniteError),
        ("velocity", 2, math.inf, NonFiniteError),
        ("effort", 1, 11.0, LimitError),
        ("kp", 0, -1.0, LimitError),
        ("kd", 2, math.nan, NonFiniteError),
        ("kp", 1, math.inf, NonFiniteError),
    ],
)
def test_a_bad_impedance_value_names_joint_index_field_value_and_expectation(
    array: RecordingArray, field: str, index: int, value: float, error: type[Exception]
) -> None:
    base = ImpedanceCommand.hold([0.0] * 3, 1.0, 0.1)
    values = getattr(base, field).copy()
    values[index] = value
    with pytest.raises(error) as info:
        array.impedance(base.replace(**{field: values}))
    assert isinstance(info.value, ValidationError)
    assert (info.value.field, info.value.joint, info.value.index) == (field, NAMES[index], index)
    assert f"{NAMES[index]!r} (index {index})" in str(info.value)
    assert info.value.expected
    assert array.calls == []


def _message(position: tuple[float, ...], source: str = "control_node") -> JointImpedance:
    return JointImpedance(
        source_node=source,
        name=NAMES,
        position=position,
        velocity=(0.0,) * 3,
        effort=(0.0,) * 3,
        kp=(10.0,) * 3,
        kd=(1.0,) * 3,
        brake=(False,) * 3,
    )


def test_a_command_checked_against_this_arrays_limits_is_applied_as_checked(
    array: RecordingArray,
) -> None:
    """Validated once: the node's check makes a CheckedImpedance for this array's limits and
    brakes, which the driver applies as it is (soft limits and power still apply)."""
    cfg = array.config
    check = CommandCheck(
        cfg.names,
        JointLimits(cfg.names, cfg.limits),
        has_brake=tuple(a.has_brakes for a in cfg.geometry.actuators),
    )
    checked = check.check(_message((0.5, 0.25, 0.0)))
    assert type(checked) is CheckedImpedance and checked.limits is cfg.limits
    assert array.impedance(checked) == ()
    _name, targets = array.calls[0]
    assert targets.position == pytest.approx([0.5, 0.25, -0.1])  # calibrated as any command
    array.power(False)
    with pytest.raises(RequestRejected) as info:  # what depends on the moment still applies
        array.impedance(checked)
    assert info.value.reason is RejectReason.POWERED_OFF


def test_a_command_checked_against_other_limits_is_checked_in_full(
    array: RecordingArray,
) -> None:
    cfg = array.config
    wide = tuple(JointLimitSpec(-3.0, 3.0, velocity_max=2.0, effort_max=10.0) for _ in NAMES)
    check = CommandCheck(cfg.names, JointLimits(cfg.names, wide), has_brake=(True, True, True))
    checked = check.check(_message((2.0, 0.0, 0.0)))  # within the check's limits ...
    assert type(checked) is CheckedImpedance
    with pytest.raises(LimitError) as info:  # ... not within the array's
        array.impedance(checked)
    assert (info.value.field, info.value.joint, info.value.index) == ("position", "hip", 0)
    assert array.calls == []


class RangedArray(RecordingArray):
    """A driver that declares what it can carry, in actuator space (rows position, velocity,
    torque, kp, kd): the knee (reversed, offset 0.5) has an asymmetric range."""

    def _actuator_command_ranges(self) -> tuple[Any, Any, tuple[str, ...]]:
        inf = math.inf
        lower = np.array([[-inf, -0.2, -inf], [-inf, -0.5, -inf], [-inf, -4.0, -inf],
                          [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
        upper = np.array([[inf, 0.9, inf], [inf, 1.0, inf], [inf, 6.0, inf],
                          [inf, 50.0, inf], [inf, 2.0, inf]])
        return lower, upper, ("", "the test drive's range", "")


@pytest.mark.parametrize("policy", [LimitPolicy.REJECT, LimitPolicy.SATURATE])
def test_what_the_driver_can_carry_is_refused_in_every_command_whatever_the_policy(
    policy: LimitPolicy,
) -> None:
    """The ranges a driver declares come into joint space through the calibration (the reversed
    knee swaps ends, its offset shifts the position range) and bound impedance, position and
    speed commands: refused (never clamped) naming joint, index, field, value and the range;
    nothing reaches a hook. A value at an end of the range reaches the hook inside the driver's
    actuator-space range."""
    array = RangedArray(make_config(policy))
    array.power(True)
    ranges = array.command_ranges()
    assert ranges is array.command_ranges()
    assert ranges.bounds("position", 1) == pytest.approx((-0.4, 0.7))
    assert ranges.bounds("velocity", 1) == (-1.0, 0.5)
    assert ranges.bounds("effort", 1) == (-6.0, 4.0)
    assert ranges.bounds("kp", 1) == (0.0, 50.0)
    array.calls.clear()
    refused = [
        (lambda: array.position("knee", 0.8), "position", 0.8, "within [-0.4, 0.7]"),
        (lambda: array.speed("knee", 0.8), "speed", 0.8, "within [-1, 0.5]"),
        (lambda: array.impedance(ImpedanceCommand.hold([0.0, 0.0, 0.0], [1.0, 60.0, 1.0], 0.1)),
         "kp", 60.0, "within [0, 50]"),
        (lambda: array.impedance(ImpedanceCommand.hold([0.0] * 3, 1.0, 0.1).replace(
            effort=[0.0, 5.0, 0.0])), "effort", 5.0, "within [-6, 4]"),
    ]
    for call, field, value, expected in refused:
        with pytest.raises(LimitError) as info:
            call()
        error = info.value
        assert (error.joint, error.index, error.field, error.value) == ("knee", 1, field, value)
        assert error.expected == f"{expected} (the test drive's range)"
    assert array.calls == []
    array.impedance(ImpedanceCommand.hold([0.0, 0.7, 0.0], 1.0, 0.1))  # the knee at an end
    (name, targets), = array.calls
    assert name == "impedance" and -0.2 <= targets.position[1] <= 0.9


def test_a_checked_command_cannot_be_made_without_the_check() -> None:
    plain = ImpedanceCommand.hold([0.0] * 3, 1.0, 0.1)
    with pytest.raises(TypeError, match="command check"):
        CheckedImpedance(  # type: ignore[call-arg]
            plain.position, plain.velocity, plain.effort, plain.kp, plain.kd, plain.brake,
            make_config().limits, (True, False, False), None, object(),
        )


def test_impedance_limits_and_brakes(array: RecordingArray) -> None:
    base = ImpedanceCommand.hold([0.0] * 3, 1.0, 0.1)
    with pytest.raises(LimitError, match="effort"):
        array.impedance(base.replace(effort=(0.0, 11.0, 0.0)))
    with pytest.raises(LimitError, match="no brake") as info:
        array.impedance(base.replace(brake=(False, True, False)))
    assert info.value.joint == "knee"
    assert array.calls == []


# ------------------------------------------------------------------------------ requests


def test_request_acks_reach_the_driver(array: RecordingArray) -> None:
    array.brakes(True)
    array.set_speed("knee", 1.5)
    array.set_accel(None, 4.0)
    assert array.calls == [
        ("brakes", True),
        ("set_speed", ([1], [1.5])),
        ("set_accel", ([0, 1, 2], [4.0, 4.0, 4.0])),
    ]
    assert array.geometry().actuators[1].config_speed == 1.5
    assert array.config_accelerations.tolist() == [4.0, 4.0, 4.0]


@pytest.mark.parametrize(
    ("call", "reason", "joint"),
    [
        (lambda a: a.set_speed("toe", 1.0), RejectReason.UNKNOWN_JOINT, None),
        (lambda a: a.set_speed(7, 1.0), RejectReason.UNKNOWN_JOINT, None),
        (lambda a: a.set_speed("knee", 0.0), RejectReason.OUT_OF_RANGE, "knee"),
        (lambda a: a.set_speed("knee", 2.5), RejectReason.OUT_OF_RANGE, "knee"),
        (lambda a: a.set_accel("hip", -1.0), RejectReason.OUT_OF_RANGE, "hip"),
        (lambda a: a.set_accel("toe", 1.0), RejectReason.UNKNOWN_JOINT, None),
        (lambda a: a.power(1), RejectReason.OUT_OF_RANGE, None),
        (lambda a: a.brakes("on"), RejectReason.OUT_OF_RANGE, None),
    ],
)
def test_request_nacks_change_nothing(
    array: RecordingArray, call: Any, reason: RejectReason, joint: str | None
) -> None:
    speeds = array.config_speeds
    with pytest.raises(RequestRejected) as info:
        call(array)
    assert info.value.reason is reason and info.value.joint == joint
    assert array.calls == []
    assert array.config_speeds.tolist() == speeds.tolist()


@pytest.mark.parametrize(
    ("call", "field", "value", "joint", "index"),
    [
        (lambda a: a.set_speed(1, math.nan), "speed", math.nan, "knee", 1),
        (lambda a: a.set_speed("hip", math.inf), "speed", math.inf, "hip", 0),
        (lambda a: a.set_speed(None, math.nan), "speed", math.nan, "hip", 0),  # as position()
        (lambda a: a.set_accel("knee", -math.inf), "accel", -math.inf, "knee", 1),
    ],
)
def test_a_non_finite_speed_or_accel_is_the_typed_nan_error_and_changes_nothing(
    array: RecordingArray, call: Any, field: str, value: float, joint: str, index: int
) -> None:
    """``set_speed(1, nan)`` was a RequestRejected "out of range"; every other NaN check raises
    NonFiniteError naming joint (name and index), field and value."""
    speeds, accels = array.config_speeds, array.config_accelerations
    with pytest.raises(NonFiniteError) as info:
        call(array)
    err = info.value
    assert (err.field, err.joint, err.index) == (field, joint, index)
    assert err.value == value or (math.isnan(err.value) and math.isnan(value))
    assert f"joint {joint!r} (index {index}): field {field!r} = {value!r}" in str(err), err
    assert array.calls == []
    assert array.config_speeds.tolist() == speeds.tolist()
    assert array.config_accelerations.tolist() == accels.tolist()


def test_unsupported_requests_and_commands_are_refused() -> None:
    array = RecordingArray(make_config(), capabilities=frozenset({Capability.POWER}))
    array.power(True)
    for call in (
        lambda: array.brakes(True),
        lambda: array.set_speed(0, 1.0),
        lambda: array.position(0, 0.0),
        lambda: array.currents([0.0] * 3),
        array.home,
    ):
        with pytest.raises(RequestRejected) as info:
            call()
        assert info.value.reason is RejectReason.UNSUPPORTED
        assert "power" in info.value.detail  # says what *is* supported
    assert array.calls == [("power", True)]


# ------------------------------------------------------------------------------ read


def test_read_converts_back_to_joint_space(array: RecordingArray) -> None:
    array.brakes(True)
    data = array.read()
    assert data.motor_power is True
    hip, knee, ankle = data.actuators
    assert knee.position == pytest.approx(0.3)  # (0.2 − 0.5)·(−1)
    assert knee.speed == pytest.approx(0.5) and knee.current == pytest.approx(-2.0)
    assert ankle.position == pytest.approx(0.4)
    assert math.isnan(hip.acceleration) and math.isnan(ankle.temperature)
    assert hip.state == ActuatorState.BRAKED
    assert knee.state == ActuatorState.MOVING and knee.status == 3
    assert ankle.state == ActuatorState.IDLE | ActuatorState.STALLED
    joints = array.read_joints()
    assert joints.time == 1.5
    assert joints.array_state() == ActuatorState.MOVING | ActuatorState.STALLED


def test_geometry_is_fresh_and_joint_space(array: RecordingArray) -> None:
    g = array.geometry()
    assert [a.home for a in g.actuators] == [0.5, -0.25, 0.0]
    assert g.header.stamp.to_ns() > 0


# ------------------------------------------------------------------------------ lifecycle


def test_closed_driver_refuses_everything() -> None:
    with RecordingArray(make_config()) as array:
        array.power(True)
    assert array.closed and array.closes == 1
    array.close()
    assert array.closes == 1  # idempotent
    for call in (array.read, array.geometry, array.capabilities, lambda: array.power(False),
                 lambda: array.position(0, 0.0)):
        with pytest.raises(DriverClosedError):
            call()


# ------------------------------------------------------------------------------ brakes, power


@pytest.mark.parametrize(
    "command",
    [
        lambda a: a.position("hip", 0.1),
        lambda a: a.positions([0.1, 0.0, 0.0]),
        lambda a: a.speed(None, 0.1),
        lambda a: a.speeds([0.1, 0.0, 0.0]),
        lambda a: a.current(0, 1.0),
        lambda a: a.currents([1.0, 0.0, 0.0]),
        lambda a: a.home(),
    ],
)
def test_motion_on_a_braked_joint_is_refused_and_reaches_no_hook(
    array: RecordingArray, command: Any
) -> None:
    """Issue 11 item 4: a command while braked was accepted, and made the joint jump on release."""
    array.brakes(True)
    array.calls.clear()
    with pytest.raises(RequestRejected) as info:
        command(array)
    assert info.value.reason is RejectReason.BRAKED
    assert (info.value.joint, info.value.index) == ("hip", 0)
    assert "brakes(False)" in str(info.value)
    assert array.calls == []
    array.position("knee", 0.1)  # a joint without a brake is not affected
    array.brakes(False)
    array.position("hip", 0.1)
    assert [c[0] for c in array.calls] == ["positions", "brakes", "positions"]


def test_flags_say_unpowered_not_idle_while_power_is_off() -> None:
    """Issue 11 item 20: while off, the still joints read IDLE."""
    a = RecordingArray(make_config())
    data = a.read()
    assert data.motor_power is False
    assert [x.state for x in data.actuators] == [
        ActuatorState.UNPOWERED,
        ActuatorState.UNPOWERED | ActuatorState.MOVING,
        ActuatorState.UNPOWERED | ActuatorState.STALLED,
    ]
    assert a.read_joints().array_state() & ActuatorState.UNPOWERED


def test_unknown_joint_messages_read_naturally(array: RecordingArray) -> None:
    """Issue 11 item 21: "unknown joint 'index 99 (…)'" and two error families for one mistake."""
    with pytest.raises(UnknownJointError) as by_index:
        array.position(99, 0.0)
    assert str(by_index.value) == (
        "no joint with index 99; the array has 3 joints (0–2): hip, knee, ankle"
    )
    with pytest.raises(UnknownJointError) as by_name:
        array.set_speed("kne", 1.0)
    assert str(by_name.value) == (
        "no joint named 'kne' (did you mean 'knee'?); the array's joints: hip, knee, ankle"
    )
    assert isinstance(by_name.value, RequestRejected)
    assert by_name.value.request == "set_speed"
    assert array.calls == []


# ------------------------------------------------------------------------------------------------
# JointReading.to_data: Player's array data of one reading, built in one pass
# ------------------------------------------------------------------------------------------------
UNPOWERED = ActuatorState.UNPOWERED


def _reading(**overrides: Any) -> JointReading:
    fields: dict[str, Any] = {
        "names": NAMES,
        "time": 0.5,
        "position": np.array([0.1, -0.2, 0.3]),
        "velocity": np.array([0.0, 1.5, -0.5]),
        "acceleration": np.full(3, math.nan),  # not measured
        "current": np.array([0.2, 0.0, math.nan]),
        "effort": np.array([1.0, -2.0, 0.5]),
        "temperature": np.array([31.0, math.nan, 29.5]),
        "status": np.array([0, 7, 2**32 - 1], np.uint32),
        "state": np.array(
            [ActuatorState.MOVING, ActuatorState.IDLE, ActuatorState.BRAKED | UNPOWERED],
            np.uint8,
        ),
        "motor_power": True,
    }
    fields.update(overrides)
    return JointReading(**fields)


def test_to_data_is_the_data_of_every_actuator_in_order() -> None:
    reading = _reading()
    header = Header.at_ns(2_000_000_000, "base")
    data = reading.to_data("ignored", header)
    assert data.header is header and data.motor_power is True
    expected = tuple(
        ActuatorData(p, v, a, c, ActuatorState(s), e, t, w)
        for p, v, a, c, s, e, t, w in zip(
            reading.position.tolist(), reading.velocity.tolist(),
            reading.acceleration.tolist(), reading.current.tolist(), reading.state.tolist(),
            reading.effort.tolist(), reading.temperature.tolist(), reading.status.tolist(),
            strict=True,
        )
    )
    assert data.actuators == expected
    assert data.to_cdr() == ActuatorArrayData(header, expected, True).to_cdr()
    assert data.actuators[2].state is ActuatorState.BRAKED | ActuatorState.UNPOWERED
    assert math.isnan(data.actuators[0].acceleration)  # not measured stays NaN
    assert reading.to_data("base").header.frame_id == "base"  # stamped now when no header


@pytest.mark.parametrize(
    ("overrides", "error", "text"),
    [
        ({"position": np.array([0.1, math.inf, 0.3])}, NonFiniteError,
         "joint 'knee' (index 1): field 'position' = inf"),
        ({"temperature": np.array([20.0, 20.0, -math.inf])}, NonFiniteError,
         "joint 'ankle' (index 2): field 'temperature' = -inf"),
        ({"state": np.array([2, 6, 1], np.uint8)}, ValidationError,
         "joint 'knee' (index 1): field 'state' = "),
        ({"current": np.zeros(2)}, LengthMismatchError, "field 'current' = '2 values'"),
    ],
)
def test_to_data_refuses_a_bad_reading_naming_joint_index_field_and_value(
    overrides: dict[str, Any], error: type[ValidationError], text: str
) -> None:
    with pytest.raises(error) as info:
        _reading(**overrides).to_data("base")
    assert type(info.value) is error and text in str(info.value)


def test_the_driver_api_exports_the_state_flags_of_its_readings() -> None:
    """README's Actuator arrays text names ``ActuatorState.STALE`` beside the driver API, but
    ``from jointbus.drivers import ActuatorState`` raised ImportError: it is the message layer's
    enum, exported by both packages."""
    from jointbus import drivers
    from jointbus.messages.actarray import ActuatorState

    assert drivers.ActuatorState is ActuatorState
    assert "ActuatorState" in drivers.__all__
