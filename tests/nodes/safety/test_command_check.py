"""The command gate of the array node and hb50's bridge: every rejection path names source, joint,
index, field and value; an accepted command comes back as the joint-space ImpedanceCommand.

Most cases run on hb50's ``JointCommand`` (field names ``t_pos`` / ``t_vel`` / ``t_trq``, float32
on the wire, the reserved ``ki``): the richest shape the check reads. The generic
``JointImpedance`` has its own cases at the end."""

from __future__ import annotations

import dataclasses
import math
from typing import Any
from unittest import mock

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.drivers.impedance import CheckedImpedance, ImpedanceCommand
from jointbus.drivers.limits import JointLimits, LimitPolicy
from jointbus.messages.errors import LengthMismatchError, LimitError, NonFiniteError
from jointbus.messages.joint_impedance import JointImpedance
from jointbus.model.limits import JointLimitSpec
from jointbus.model.yaml_loader import load_robot
from jointbus.nodes.safety import command_check
from jointbus.nodes.safety.command_check import (
    CommandCheck,
    CommandRejected,
    JointOrderError,
    SourceNotAllowedError,
    bounds_verdict,
)
from jointbus.robots.hb50.bridge.unchecked_command import HB50_COMMAND_FIELDS
from jointbus.robots.hb50.messages import JointCommand
from support.profiled import numpy_reductions

NAMES = ("hip", "knee", "ankle")
SPECS = [
    JointLimitSpec(-1.047, 1.571, velocity_max=20.0, effort_max=24.0),
    JointLimitSpec(-2.705, 0.0, velocity_max=10.0, effort_max=12.0),
    JointLimitSpec(),  # unbounded
]
FLOAT_FIELDS = ("kp", "ki", "kd", "t_pos", "t_vel", "t_trq")


def make_check(**kwargs: Any) -> CommandCheck:
    kwargs.setdefault("kp_max", 500.0)
    kwargs.setdefault("kd_max", 50.0)
    kwargs.setdefault("fields", HB50_COMMAND_FIELDS)
    return CommandCheck(NAMES, JointLimits(NAMES, SPECS), **kwargs)


def command(source: str = "control_node", **overrides: Any) -> JointCommand:
    names = overrides.pop("name", NAMES)
    fields: dict[str, Any] = {
        "kp": (80.0, 80.0, 80.0),
        "ki": (0.0, 0.0, 0.0),
        "kd": (3.0, 3.0, 3.0),
        "t_pos": (0.1, -1.0, 5.0),
        "t_vel": (0.0, 0.0, 0.0),
        "t_trq": (0.0, 1.0, -1.0),
        "brake": (False, False, False),
    }
    fields.update(overrides)
    if len(names) != len(NAMES):
        raise ValueError("use JointCommand.hold for commands of other lengths")
    return JointCommand(source_node=source, name=names, **fields)


def raw_command(base: JointCommand, **fields: Any) -> JointCommand:
    """A JointCommand whose fields were set without the constructor's validation.

    The bridge must not rely on how a command object was made (a decoder fast path, a future
    transport), so these paths are tested with objects the constructor would have refused.
    """
    cmd = object.__new__(JointCommand)
    for f in dataclasses.fields(JointCommand):
        object.__setattr__(cmd, f.name, fields.get(f.name, getattr(base, f.name)))
    return cmd


def rejected(check: CommandCheck, cmd: JointCommand) -> CommandRejected:
    with pytest.raises(CommandRejected) as info:
        check.check(cmd)
    return info.value


def test_valid_command_comes_back_as_the_joint_space_command() -> None:
    cmd = command(brake=(True, False, False))
    got = make_check().check(cmd)
    assert isinstance(got, ImpedanceCommand)
    assert got == ImpedanceCommand(cmd.t_pos, cmd.t_vel, cmd.t_trq, cmd.kp, cmd.kd, cmd.brake)
    assert got.position.dtype == np.float64 and not got.position.flags.writeable


def test_hb50_standing_command_passes_the_robots_own_limits() -> None:
    robot = load_robot("hb50")
    order = robot.actuator_order
    check = CommandCheck(
        order,
        JointLimits(order, robot.limits_for(order)),
        kp_max=500,
        kd_max=50,
        fields=HB50_COMMAND_FIELDS,
    )
    home = robot.pose("home")
    positions = [home[n] for n in order]
    check.check(JointCommand.hold(order, positions, 80.0, 3.0, source_node="control_node"))


def test_values_exactly_at_the_limits_pass_despite_float32_rounding() -> None:
    # -1.047 is not a float32; the command holds float32(-1.047), below -1.047 in float64.
    cmd = command(t_pos=(-1.047, -2.705, 0.0), t_vel=(20.0, -10.0, 0.0), t_trq=(-24.0, 12.0, 0.0))
    assert cmd.t_pos[0] < -1.047
    got = make_check().check(cmd)
    assert got.position[0] == -1.047  # applied at the limit, not a hair beyond it
    cmd = command(t_pos=(1.571, 0.0, 0.0))  # float32(1.571) is a hair inside: passes as sent
    assert make_check().check(cmd).position[0] == cmd.t_pos[0]
    make_check().check(command(kp=(500.0, 0.0, 0.0), kd=(50.0, 0.0, 0.0)))


finite_limits = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)


@given(lower=finite_limits, width=st.floats(0.0, 1e6), at_upper=st.booleans())
def test_a_float32_value_at_any_limit_is_accepted_and_applied_at_the_limit(
    lower: float, width: float, at_upper: bool
) -> None:
    """The one rule (``at_limit_bounds``): the float32 rounding of a limit is the limit, for the
    node's check and for the driver alike."""
    upper = lower + width
    specs = [JointLimitSpec(lower, upper, velocity_max=10.0, effort_max=10.0), *SPECS[1:]]
    check = CommandCheck(NAMES, JointLimits(NAMES, specs), fields=HB50_COMMAND_FIELDS)
    limit = upper if at_upper else lower
    cmd = command(t_pos=(limit, -1.0, 0.0))  # rounded to float32 by the message
    sent = cmd.t_pos[0]
    at_limit = min(max(sent, lower), upper)  # rounded outside: the limit; inside: as sent
    assert abs(at_limit - limit) <= abs(sent - limit)
    assert check.check(cmd).position[0] == at_limit
    applied, saturations = JointLimits(NAMES, specs).apply(
        "position", np.array([sent, -1.0, 0.0])
    )
    assert applied[0] == at_limit and saturations == []


_EDGES = (
    0.0, -0.0, 3.0, 80.0, 500.0, 500.00001, 50.0, -1.047, 1.571, -2.705, 20.0, -20.0, 24.0,
    -12.0, 3.4e38, -3.5e38, 1e300, math.nan, math.inf, -math.inf,
)  # fmt: skip
_VALUE = st.one_of(st.sampled_from(_EDGES), st.floats(-600.0, 600.0, width=32))


@given(st.lists(st.tuples(_VALUE, _VALUE, _VALUE), min_size=6, max_size=6))
def test_the_values_are_tested_in_python_and_applied_as_numpy_clamps_them(
    rows: list[tuple[float, float, float]],
) -> None:
    """An accepted command costs no numpy reduction (comparisons, ``all``, ``clip``: 5–10 µs
    each on the bridge's loop thread, whose caches every cycle starts cold): its values are
    tested in plain Python. Whatever the values — NaN, ±inf, ±0, beyond float32, at, inside or
    a float32 rounding beyond each limit — the check refuses exactly the commands the block
    test refuses and applies the others exactly as numpy's clamp into the limits does, bit for
    bit (the sign of a zero too)."""
    with mock.patch.object(command_check, "_CORE", None):
        python_check = make_check()  # the plain-Python verdict, as without a C compiler
    for check in {make_check(), python_check}:
        _, reductions = numpy_reductions(lambda check=check: check.check(command()))
        assert reductions == []
        cmd = raw_command(command(), **dict(zip(FLOAT_FIELDS, rows, strict=True)))
        values = np.array(rows, dtype=np.float64)  # the rows in the check's order (FLOAT_FIELDS)
        inside = (values >= check._lower) & (values <= check._upper)  # the reference's test
        if not inside.all():
            with pytest.raises(CommandRejected):
                check.check(cmd)
            continue
        want = np.clip(values, check._block_lower, check._block_upper)
        got = check.check(cmd)
        for field, row in (("kp", 0), ("kd", 2), ("position", 3), ("velocity", 4), ("effort", 5)):
            applied = getattr(got, field)
            assert applied.tobytes() == want[row].tobytes(), field


@pytest.mark.skipif(command_check._CORE is None, reason="the compiled core was not built")
@given(st.lists(st.tuples(_VALUE, _VALUE, _VALUE), min_size=6, max_size=6))
def test_the_compiled_verdict_is_the_python_twins(rows: list[tuple[float, float, float]]) -> None:
    """``_limit_accel.bounds`` (one C call a command on the bridge's loop) gives the verdict
    :func:`bounds_verdict` gives, on every value the property test above draws."""
    check = make_check()
    values = np.array(rows, dtype=np.float64)
    compiled = command_check._CORE.bounds(
        check._lower, check._upper, check._block_lower, check._block_upper, values
    )
    assert compiled == bounds_verdict(values, check._every_bound)
    assert check._verdict(values) == compiled  # what the check calls


# -- source --------------------------------------------------------------------------------


def test_empty_source_is_rejected() -> None:
    err = rejected(make_check(), command(source=""))
    assert isinstance(err.error, SourceNotAllowedError)
    assert err.field == "source_node"
    assert "<no source_node>" in str(err)


def test_allow_list_rejects_unknown_source_and_names_it() -> None:
    check = make_check(allowed_sources=["control_node", "teleop"])
    check.check(command(source="teleop"))
    err = rejected(check, command(source="rogue"))
    assert isinstance(err.error, SourceNotAllowedError)
    assert (err.source_node, err.field, err.value) == ("rogue", "source_node", "rogue")
    assert "'control_node'" in err.expected and "'teleop'" in err.expected
    assert "'rogue'" in str(err)


def test_without_allow_list_any_named_source_passes() -> None:
    assert make_check().allowed_sources is None
    make_check().check(command(source="my_controller"))


def test_empty_allow_list_is_a_configuration_error() -> None:
    with pytest.raises(ValueError, match="allowed_sources"):
        make_check(allowed_sources=[])


# -- order and length ----------------------------------------------------------------------


def test_swapped_names_are_rejected_naming_the_first_differing_index() -> None:
    err = rejected(make_check(), command(source="teleop", name=("hip", "ankle", "knee")))
    assert isinstance(err.error, JointOrderError)
    assert (err.source_node, err.field, err.index, err.joint, err.value) == (
        "teleop",
        "name",
        1,
        "ankle",
        "ankle",
    )
    assert err.expected.startswith("'knee' at index 1 ('ankle' is actuator index 2; ")
    assert "index 1" in str(err)


def test_a_name_the_array_lacks_is_said_to_be_none_of_its_joints() -> None:
    """A new user's trial (2026-12-07) read "field 'name' = 'fl_jX'; expected 'fl_j1'" as an
    ordering error: the refusal now says the name is not a joint of the array."""
    err = rejected(make_check(), command(source="teleop", name=("hip", "elbow", "ankle")))
    assert isinstance(err.error, JointOrderError)
    assert (err.index, err.joint, err.value) == (1, "elbow", "elbow")
    assert err.expected == (
        "'knee' at index 1 ('elbow' is not a joint of this array; names in actuator order: "
        "hip, knee, ankle)"
    )


def test_missing_trailing_name_is_a_length_error() -> None:
    cmd = JointCommand.hold(NAMES[:2], (0.0, -1.0), 1.0, 1.0, source_node="c")
    err = rejected(make_check(), cmd)
    assert isinstance(err.error, LengthMismatchError)
    assert (err.field, err.index, err.joint) == ("name", 2, "ankle")
    # the text blames the short list, not a field of the joint that was never sent
    assert "joint 'ankle'" not in str(err.error)
    assert f"field 'name' = {list(NAMES[:2])!r}" in str(err.error)
    assert "first missing: 'ankle' (index 2)" in str(err.error)


def test_surplus_name_is_a_length_error() -> None:
    cmd = JointCommand.hold((*NAMES, "toe"), (0.0, -1.0, 0.0, 0.0), 1.0, 1.0, source_node="c")
    err = rejected(make_check(), cmd)
    assert isinstance(err.error, LengthMismatchError)
    assert (err.field, err.index, err.joint) == ("name", 3, "toe")


@pytest.mark.parametrize("field", [*FLOAT_FIELDS, "brake"])
def test_short_array_is_rejected_naming_field_and_first_missing_joint(field: str) -> None:
    base = command()
    cmd = raw_command(base, **{field: getattr(base, field)[:1]})
    err = rejected(make_check(), cmd)
    assert isinstance(err.error, LengthMismatchError)
    assert (err.field, err.index, err.joint) == (field, 1, "knee")
    # the joint is named as the first without a value, not as the one at fault (a new user
    # read "joint 'fl_j0' (index 3): field 't_pos' = '3 values'" as a complaint about fl_j0)
    assert "the joint named is the first without one" in str(err.error), str(err.error)


def test_long_array_is_rejected() -> None:
    base = command()
    err = rejected(make_check(), raw_command(base, t_trq=(*base.t_trq, 0.0)))
    assert isinstance(err.error, LengthMismatchError)
    assert (err.field, err.index) == ("t_trq", 3)
    assert "the index named is the first surplus value's" in str(err.error), str(err.error)


# -- NaN / inf -----------------------------------------------------------------------------


@given(
    field=st.sampled_from(FLOAT_FIELDS),
    index=st.integers(0, len(NAMES) - 1),
    bad=st.sampled_from([math.nan, math.inf, -math.inf]),
)
def test_non_finite_value_is_named(field: str, index: int, bad: float) -> None:
    base = command()
    values = list(getattr(base, field))
    values[index] = bad
    err = rejected(make_check(), raw_command(base, **{field: tuple(values)}))
    assert isinstance(err.error, NonFiniteError)
    assert (err.field, err.index, err.joint) == (field, index, NAMES[index])
    assert str(err.value) == str(bad)


# -- limits --------------------------------------------------------------------------------

#: (field, index, value out of its bound, bound text) — one per kind of limit.
OUT_OF_LIMITS = [
    ("t_pos", 0, 1.6, "[-1.047, 1.571]"),
    ("t_pos", 1, 0.01, "[-2.705, 0]"),
    ("t_vel", 1, -10.5, "[-10, 10]"),
    ("t_trq", 0, 24.5, "[-24, 24]"),
    ("kp", 2, 501.0, "[0, 500]"),
    ("kd", 1, 51.0, "[0, 50]"),
]


@pytest.mark.parametrize(("field", "index", "value", "bounds"), OUT_OF_LIMITS)
def test_limit_violation_is_named(field: str, index: int, value: float, bounds: str) -> None:
    base = command()
    values = list(getattr(base, field))
    values[index] = value
    err = rejected(make_check(), command(**{field: tuple(values)}))
    assert isinstance(err.error, LimitError)
    assert (err.field, err.index, err.joint) == (field, index, NAMES[index])
    assert err.value == pytest.approx(value)
    assert bounds in err.expected
    assert f"'{NAMES[index]}' (index {index})" in str(err)
    # float32 on the wire: the value reads as it was sent (1.6, not 1.600000023841858)
    assert f"= {value}; expected" in str(err)


def test_negative_gain_is_rejected_even_when_constructed_unvalidated() -> None:
    base = command()
    err = rejected(make_check(), raw_command(base, kd=(3.0, -1.0, 3.0)))
    assert isinstance(err.error, LimitError)
    assert (err.field, err.index) == ("kd", 1)


def test_unbounded_joint_accepts_any_finite_target() -> None:
    make_check().check(command(t_pos=(0.0, 0.0, 1e30), t_vel=(0.0, 0.0, -1e30)))


def test_gains_are_unbounded_above_by_default() -> None:
    check = CommandCheck(NAMES, JointLimits(NAMES, SPECS), fields=HB50_COMMAND_FIELDS)
    check.check(command(kp=(1e6, 0.0, 0.0)))
    assert check.bounds("kp", 0) == (0.0, math.inf)


def test_saturating_limits_policy_still_rejects() -> None:
    check = CommandCheck(
        NAMES, JointLimits(NAMES, SPECS, LimitPolicy.SATURATE), fields=HB50_COMMAND_FIELDS
    )
    err = rejected(check, command(t_pos=(2.0, -1.0, 0.0)))
    assert isinstance(err.error, LimitError)


in_bounds = st.tuples(st.floats(-1.047, 1.571), st.floats(-2.705, 0.0), st.floats(-1e6, 1e6))


@given(t_pos=in_bounds, kp=st.lists(st.floats(0, 500), min_size=3, max_size=3))
def test_any_command_within_limits_passes(
    t_pos: tuple[float, float, float], kp: list[float]
) -> None:
    make_check().check(command(t_pos=t_pos, kp=tuple(kp)))


@given(
    index=st.integers(0, 1),
    excess=st.floats(1e-3, 1e3),
    above=st.booleans(),
)
def test_any_position_beyond_a_bound_is_rejected_at_its_index(
    index: int, excess: float, above: bool
) -> None:
    lo, hi = SPECS[index].position_min, SPECS[index].position_max
    t_pos = [0.0, -1.0, 0.0]
    t_pos[index] = hi + excess if above else lo - excess
    err = rejected(make_check(), command(t_pos=tuple(t_pos)))
    assert (err.field, err.index) == ("t_pos", index)


def test_first_failing_field_is_reported_when_several_fail() -> None:
    # Rows are checked in message order (kp before t_pos), joints in actuator order.
    err = rejected(make_check(), command(kp=(80.0, 600.0, 80.0), t_pos=(9.0, -1.0, 0.0)))
    assert (err.field, err.index) == ("kp", 1)


# -- configuration -------------------------------------------------------------------------


def test_limits_must_cover_the_actuator_order() -> None:
    with pytest.raises(ValueError, match="actuator order"):
        CommandCheck(("knee", "hip", "ankle"), JointLimits(NAMES, SPECS))


def test_reserved_ki_is_checked_but_not_applied() -> None:
    err = rejected(make_check(), raw_command(command(), ki=(0.0, 1e39, 0.0)))
    assert (err.field, err.index) == ("ki", 1)
    got = make_check().check(command(ki=(5.0, 5.0, 5.0)))
    assert got == make_check().check(command())


def test_check_leaves_the_command_untouched() -> None:
    cmd = command(t_pos=(5.0, -1.0, 0.0))
    before = cmd.to_cdr()
    rejected(make_check(), cmd)
    assert cmd.to_cdr() == before
    assert np.array_equal(np.asarray(cmd.t_pos), np.float32([5.0, -1.0, 0.0]))


def test_brake_only_where_fitted_when_the_bridge_knows() -> None:
    check = make_check(has_brake=(True, False, False))
    check.check(command(brake=(True, False, False)))
    err = rejected(check, command(brake=(True, True, False)))
    assert isinstance(err.error, LimitError)
    assert (err.field, err.index, err.joint, err.value) == ("brake", 1, "knee", True)
    assert "no brake" in err.expected
    make_check().check(command(brake=(True, True, True)))  # not configured: not checked


# -- the generic message ---------------------------------------------------------------------


def impedance(source: str = "control_node", **overrides: Any) -> JointImpedance:
    fields: dict[str, Any] = {
        "name": NAMES,
        "position": (0.1, -1.0, 5.0),
        "velocity": (0.0, 0.0, 0.0),
        "effort": (0.0, 1.0, -1.0),
        "kp": (80.0, 80.0, 80.0),
        "kd": (3.0, 3.0, 3.0),
        "brake": (False, False, False),
    }
    fields.update(overrides)
    return JointImpedance(source_node=source, **fields)


def test_the_generic_message_is_the_default_and_its_errors_name_its_fields() -> None:
    check = CommandCheck(NAMES, JointLimits(NAMES, SPECS), kp_max=500.0)
    got = check.check(impedance())
    assert got == ImpedanceCommand(
        (0.1, -1.0, 5.0), (0.0, 0.0, 0.0), (0.0, 1.0, -1.0), (80.0,) * 3, (3.0,) * 3,
        (False,) * 3,
    )
    err = rejected(check, impedance(position=(0.1, 0.5, 5.0)))  # type: ignore[arg-type]
    assert isinstance(err.error, LimitError)
    assert (err.field, err.index, err.joint) == ("position", 1, "knee")
    assert JointImpedance.TYPE_NAME in str(err)
    err = rejected(check, impedance(kp=(80.0, 80.0, 501.0)))  # type: ignore[arg-type]
    assert (err.field, err.index, err.joint) == ("kp", 2, "ankle")


@given(lower=finite_limits, width=st.floats(0.0, 1e6))
def test_a_float64_value_exactly_at_a_limit_passes_the_generic_check(
    lower: float, width: float
) -> None:
    upper = lower + width
    specs = [JointLimitSpec(lower, upper, velocity_max=10.0, effort_max=10.0), *SPECS[1:]]
    check = CommandCheck(NAMES, JointLimits(NAMES, specs))
    for limit in (lower, upper):
        got = check.check(impedance(position=(limit, -1.0, 0.0)))  # type: ignore[arg-type]
        assert got.position[0] == limit


def test_a_check_that_knows_the_brakes_returns_a_checked_command_for_the_driver() -> None:
    limits = JointLimits(NAMES, tuple(SPECS))
    checked = CommandCheck(NAMES, limits, has_brake=(True, False, False)).check(impedance())
    assert type(checked) is CheckedImpedance
    assert checked.limits is limits.specs and checked.has_brake == (True, False, False)
    # changed after the check (ramp, derating): a plain command, checked in full by the driver
    assert type(checked.replace(kp=(1.0, 1.0, 1.0))) is ImpedanceCommand
    # brakes unknown to the check: the driver must check them, so no checked command
    assert type(CommandCheck(NAMES, limits).check(impedance())) is ImpedanceCommand


def test_what_the_driver_can_carry_narrows_the_limits_and_the_error_says_so() -> None:
    """A driver's command ranges (a CAN motor model's wire range) fold into the check: a value
    inside the robot's limits but outside them is refused whole, naming joint, index, the field as
    sent, value and the range with what sets it; a value refused by the robot's own limit says
    nothing of the wire; a passed command is certified against the ranges too."""
    from jointbus.drivers.command_ranges import CommandRanges

    inf = math.inf
    lower = np.array([[-12.5] * 3, [-25.0] * 3, [-24.0] * 3, [0.0] * 3, [0.0] * 3])
    upper = np.array([[12.5] * 3, [25.0] * 3, [24.0] * 3, [300.0, 300.0, inf], [10.0] * 3])
    ranges = CommandRanges(NAMES, lower, upper, ("the md80's wire range",) * 3)
    check = make_check(ranges=ranges)
    with pytest.raises(CommandRejected) as info:
        check.check(command(kp=(80.0, 400.0, 80.0)))  # kp_max is 500, the wire 300
    error = info.value
    assert (error.field, error.joint, error.index, error.value) == ("kp", "knee", 1, 400.0)
    assert error.expected == "within [0, 300] (the md80's wire range)"
    with pytest.raises(CommandRejected) as info:  # the unbounded ankle: the wire's torque range
        check.check(command(t_trq=(0.0, 1.0, -30.0)))
    assert (info.value.field, info.value.index) == ("t_trq", 2)
    assert info.value.expected == "within [-24, 24] (the md80's wire range)"
    with pytest.raises(CommandRejected) as info:  # the knee's own velocity limit is tighter
        check.check(command(t_vel=(0.0, 11.0, 0.0)))
    assert info.value.expected == "within [-10, 10]"
    checked = check.check(command(kp=(80.0, 300.0, 450.0)))  # ankle: kp_max alone bounds it
    assert isinstance(checked, ImpedanceCommand) and checked.kp.tolist() == [80.0, 300.0, 450.0]


# -- the 500 Hz path: what a passed command costs ------------------------------------------


def test_commands_with_unchanged_brakes_share_one_read_only_brake_array() -> None:
    """A passed command's brake flags are one read-only array shared by every following command
    with the same flags (a controller's brakes rarely change): one array less to make per
    command on the bridge's loop, where each check cost 66–85 µs of its CPU (2026-12-06). A
    change of flags gets its own array, and the shared one is never written."""
    check = make_check(has_brake=(True, True, True))
    first = check.check(command())
    second = check.check(command(t_pos=(0.2, -1.0, 5.0), source="my_ctl"))
    assert second.brake is first.brake and not first.brake.flags.writeable
    braked = check.check(command(brake=(True, False, False)))
    assert braked.brake.tolist() == [True, False, False] and braked.brake is not first.brake
    assert first.brake.tolist() == [False, False, False]
    again = check.check(command(brake=(True, False, False)))
    assert again.brake is braked.brake


def _reference_check(check: CommandCheck, cmd: JointCommand) -> ImpedanceCommand:
    """The command check's conversion as it was computed before 2026-12-06 (the accepted rows
    compared at once, the applied rows picked and clamped into the exact limits), for a command
    that passes."""
    rows = check.fields.rows
    values = np.array([getattr(cmd, f) for f in rows], dtype=np.float64)
    exact = [check.bounds(f, i) for f in rows for i in range(len(NAMES))]
    lower = np.array([lo for lo, _ in exact]).reshape(values.shape)
    upper = np.array([hi for _, hi in exact]).reshape(values.shape)
    applied = np.clip(
        values[[0, -4, -3, -2, -1]], lower[[0, -4, -3, -2, -1]], upper[[0, -4, -3, -2, -1]]
    )
    kp, kd, position, velocity, effort = applied
    return ImpedanceCommand(position, velocity, effort, kp, kd, np.array(cmd.brake, dtype=bool))


finite_values = st.floats(-1e4, 1e4, allow_nan=False, allow_infinity=False, width=32)


@given(
    kp=st.lists(st.floats(0.0, 500.0, width=32), min_size=3, max_size=3),
    kd=st.lists(st.floats(0.0, 50.0, width=32), min_size=3, max_size=3),
    ki=st.lists(finite_values, min_size=3, max_size=3),
    position=st.tuples(
        st.floats(-1.047, 1.571), st.floats(-2.705, 0.0), finite_values
    ),
    velocity=st.tuples(
        st.floats(-20.0, 20.0), st.floats(-10.0, 10.0), finite_values
    ),
    effort=st.tuples(
        st.floats(-24.0, 24.0), st.floats(-12.0, 12.0), finite_values
    ),
    brake=st.tuples(st.booleans(), st.booleans(), st.booleans()),
    known_brakes=st.booleans(),
)
def test_a_passed_command_is_the_reference_conversion_value_for_value(
    kp: list[float],
    kd: list[float],
    ki: list[float],
    position: tuple[float, float, float],
    velocity: tuple[float, float, float],
    effort: tuple[float, float, float],
    brake: tuple[bool, bool, bool],
    known_brakes: bool,
) -> None:
    """Whatever a command holds within the limits (float32 values at a limit included, which
    come back at it), the check returns what the reference computation does, bit for bit, and
    a repeated check of the same check object (its shared brake array) too."""
    check = make_check(has_brake=(True, True, True) if known_brakes else None)
    cmd = command(kp=kp, ki=ki, kd=kd, t_pos=position, t_vel=velocity, t_trq=effort, brake=brake)
    want = _reference_check(check, cmd)
    for _ in range(2):
        got = check.check(cmd)
        for name in (*ImpedanceCommand.FIELDS, "brake"):
            value, expected = getattr(got, name), getattr(want, name)
            assert value.dtype == expected.dtype and value.tobytes() == expected.tobytes(), name
            assert not value.flags.writeable
