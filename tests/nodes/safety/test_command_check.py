"""The bridge's command gate: every rejection path names source, joint, index, field and value."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.codec import DecodeError
from jointbus.codec.cdr import encode
from jointbus.drivers.limits import JointLimits, LimitPolicy
from jointbus.messages.errors import LengthMismatchError, LimitError, NonFiniteError
from jointbus.model.limits import JointLimitSpec
from jointbus.model.yaml_loader import load_robot
from jointbus.nodes.safety.command_check import (
    CommandCheck,
    CommandRejected,
    JointOrderError,
    SourceNotAllowedError,
    UncheckedJointCommand,
    decode_unchecked,
)
from jointbus.robots.hb50.messages import JointCommand

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


def test_valid_command_passes() -> None:
    make_check().check(command())


def test_hb50_standing_command_passes_the_robots_own_limits() -> None:
    robot = load_robot("hb50")
    order = robot.actuator_order
    check = CommandCheck(order, JointLimits(order, robot.limits_for(order)), kp_max=500, kd_max=50)
    home = robot.pose("home")
    positions = [home[n] for n in order]
    check.check(JointCommand.hold(order, positions, 80.0, 3.0, source_node="control_node"))


def test_values_exactly_at_the_limits_pass_despite_float32_rounding() -> None:
    # -1.047 is not a float32; the command holds float32(-1.047), below -1.047 in float64.
    cmd = command(t_pos=(-1.047, -2.705, 0.0), t_vel=(20.0, -10.0, 0.0), t_trq=(-24.0, 12.0, 0.0))
    assert cmd.t_pos[0] < -1.047
    make_check().check(cmd)
    cmd = command(t_pos=(1.571, 0.0, 0.0))
    make_check().check(cmd)
    make_check().check(command(kp=(500.0, 0.0, 0.0), kd=(50.0, 0.0, 0.0)))


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
    assert err.expected.startswith("'knee'")
    assert "index 1" in str(err)


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


def test_long_array_is_rejected() -> None:
    base = command()
    err = rejected(make_check(), raw_command(base, t_trq=(*base.t_trq, 0.0)))
    assert isinstance(err.error, LengthMismatchError)
    assert (err.field, err.index) == ("t_trq", 3)


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


def test_negative_gain_is_rejected_even_when_constructed_unvalidated() -> None:
    base = command()
    err = rejected(make_check(), raw_command(base, kd=(3.0, -1.0, 3.0)))
    assert isinstance(err.error, LimitError)
    assert (err.field, err.index) == ("kd", 1)


def test_unbounded_joint_accepts_any_finite_target() -> None:
    make_check().check(command(t_pos=(0.0, 0.0, 1e30), t_vel=(0.0, 0.0, -1e30)))


def test_gains_are_unbounded_above_by_default() -> None:
    check = CommandCheck(NAMES, JointLimits(NAMES, SPECS))
    check.check(command(kp=(1e6, 0.0, 0.0)))
    assert check.bounds("kp", 0) == (0.0, math.inf)


def test_saturating_limits_policy_still_rejects() -> None:
    check = CommandCheck(NAMES, JointLimits(NAMES, SPECS, LimitPolicy.SATURATE))
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


# -- commands the wire rules refuse at decode: read back unchecked, checked here -------------

_finite = st.floats(-1e3, 1e3, allow_nan=False, width=32)
_any = st.one_of(_finite, st.just(math.nan), st.just(math.inf), st.just(-math.inf))


# source: CDR strings cannot hold NUL, nor lone surrogates (not UTF-8): the encoder refuses both,
# so they are left out of the text.
@given(
    source=st.text(
        st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=12
    ),
    values=st.lists(st.tuples(_any, _any, _any, _any, _any, _any, st.booleans()), max_size=5),
)
def test_unchecked_decoding_reads_any_wire_content_back_as_sent(
    source: str, values: list[tuple[float, float, float, float, float, float, bool]]
) -> None:
    """NaN, negative gains and short arrays are refused by ``JointCommand.from_cdr`` (its wire
    rules); the bridge still needs the source node and the values to name them."""
    names = tuple(f"j{i}" for i in range(len(values)))
    columns = list(zip(*values, strict=True)) if values else [()] * 7
    sent = UncheckedJointCommand(JointCommand().header, source, names, *columns)
    got = decode_unchecked(encode(sent))
    assert got.source_node == source and got.name == names
    for field in (*FLOAT_FIELDS, "brake"):
        a, b = np.array(getattr(got, field), dtype=float), np.array(getattr(sent, field), float)
        assert np.array_equal(a.astype(np.float32), b.astype(np.float32), equal_nan=True)


def test_unchecked_decoding_of_a_valid_command_equals_the_checked_one() -> None:
    cmd = command()
    got = decode_unchecked(cmd.to_cdr())
    assert (got.source_node, got.name, got.kp, got.t_pos, got.brake) == (
        cmd.source_node,
        cmd.name,
        cmd.kp,
        cmd.t_pos,
        cmd.brake,
    )


def test_unchecked_decoding_of_garbage_is_a_decode_error() -> None:
    with pytest.raises(DecodeError):
        decode_unchecked(b"\x00\x01\x00\x00\xff")


@pytest.mark.parametrize(
    ("fields", "error", "field", "index"),
    [
        ({"kp": (80.0, math.nan, 80.0)}, NonFiniteError, "kp", 1),
        ({"t_vel": (0.0, 0.0, math.inf)}, NonFiniteError, "t_vel", 2),
        ({"kd": (3.0, -1.0, 3.0)}, LimitError, "kd", 1),
        ({"t_trq": (0.0, 1.0)}, LengthMismatchError, "t_trq", 2),
    ],
)
def test_unchecked_commands_get_the_checks_named_error(
    fields: dict[str, Any], error: type[Exception], field: str, index: int
) -> None:
    base = command()
    values = {f.name: getattr(base, f.name) for f in dataclasses.fields(JointCommand)}
    values.update(fields)
    unchecked = decode_unchecked(encode(UncheckedJointCommand(**values)))
    with pytest.raises(CommandRejected) as info:
        make_check().check(unchecked)
    assert isinstance(info.value.error, error)
    assert (info.value.source_node, info.value.field, info.value.index) == (
        "control_node",
        field,
        index,
    )
    assert info.value.joint == NAMES[index]
