"""hb50's JointCommand read back from bytes its wire rules refuse: the bridge's check names why."""

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
from jointbus.drivers.limits import JointLimits
from jointbus.messages.errors import LengthMismatchError, LimitError, NonFiniteError
from jointbus.model.limits import JointLimitSpec
from jointbus.nodes.safety.command_check import CommandCheck, CommandRejected
from jointbus.robots.hb50.bridge.unchecked_command import (
    HB50_COMMAND_FIELDS,
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


def make_check() -> CommandCheck:
    return CommandCheck(
        NAMES, JointLimits(NAMES, SPECS), kp_max=500.0, kd_max=50.0, fields=HB50_COMMAND_FIELDS
    )


def command() -> JointCommand:
    return JointCommand(
        source_node="control_node",
        name=NAMES,
        kp=(80.0, 80.0, 80.0),
        ki=(0.0, 0.0, 0.0),
        kd=(3.0, 3.0, 3.0),
        t_pos=(0.1, -1.0, 5.0),
        t_vel=(0.0, 0.0, 0.0),
        t_trq=(0.0, 1.0, -1.0),
        brake=(False, False, False),
    )


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
