"""The generic JointImpedance read back from bytes its rules refuse: the check names why."""

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
from jointbus.messages.joint_impedance import JointImpedance
from jointbus.model.limits import JointLimitSpec
from jointbus.nodes.array.unchecked_impedance import (
    UncheckedJointImpedance,
    decode_unchecked_impedance,
)
from jointbus.nodes.safety.command_check import CommandCheck, CommandRejected

NAMES = ("pan", "lift", "elbow")
SPECS = [JointLimitSpec(-3.0, 3.0), JointLimitSpec(-2.0, 2.0), JointLimitSpec(-2.5, 0.5)]
FLOAT_FIELDS = ("position", "velocity", "effort", "kp", "kd")


def command() -> JointImpedance:
    return JointImpedance(
        source_node="tester",
        name=NAMES,
        position=(0.1, -1.0, 0.2),
        velocity=(0.0, 0.0, 0.0),
        effort=(0.0, 1.0, -1.0),
        kp=(20.0, 20.0, 20.0),
        kd=(1.0, 1.0, 1.0),
        brake=(False, False, False),
    )


_any = st.one_of(
    st.floats(-1e6, 1e6, allow_nan=False),
    st.just(math.nan),
    st.just(math.inf),
    st.just(-math.inf),
)


# source: CDR strings cannot hold NUL, nor lone surrogates (not UTF-8).
@given(
    source=st.text(
        st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=12
    ),
    values=st.lists(st.tuples(_any, _any, _any, _any, _any, st.booleans()), max_size=5),
)
def test_unchecked_decoding_reads_any_wire_content_back_as_sent(
    source: str, values: list[tuple[float, float, float, float, float, bool]]
) -> None:
    """NaN, infinities, negative gains: ``JointImpedance.from_cdr`` refuses them; the node still
    needs the source node and the values, exactly (float64 on the wire), to name them."""
    names = tuple(f"j{i}" for i in range(len(values)))
    columns = list(zip(*values, strict=True)) if values else [()] * 6
    sent = UncheckedJointImpedance(JointImpedance().header, source, names, *columns)
    got = decode_unchecked_impedance(encode(sent))
    assert got.source_node == source and got.name == names
    for field in (*FLOAT_FIELDS, "brake"):
        a, b = np.array(getattr(got, field), float), np.array(getattr(sent, field), float)
        assert np.array_equal(a, b, equal_nan=True)


def test_the_mirror_has_the_messages_layout() -> None:
    """Same fields in the same order: a valid message's bytes read back unchanged, and the
    mirror's bytes of the same content are the message's bytes."""
    cmd = command()
    got = decode_unchecked_impedance(cmd.to_cdr())
    fields = [f.name for f in dataclasses.fields(JointImpedance)]
    assert [f.name for f in dataclasses.fields(UncheckedJointImpedance)] == fields
    assert all(getattr(got, f) == getattr(cmd, f) for f in fields)
    assert encode(got) == cmd.to_cdr()


def test_bytes_that_are_not_the_layout_are_a_decode_error() -> None:
    with pytest.raises(DecodeError):
        decode_unchecked_impedance(b"\x00\x01\x00\x00\xff")


@pytest.mark.parametrize(
    ("fields", "error", "field", "index"),
    [
        ({"position": (0.0, math.nan, 0.0)}, NonFiniteError, "position", 1),
        ({"velocity": (0.0, 0.0, math.inf)}, NonFiniteError, "velocity", 2),
        ({"kp": (20.0, -5.0, 20.0)}, LimitError, "kp", 1),
        ({"kd": (1.0, 1.0)}, LengthMismatchError, "kd", 2),
    ],
)
def test_unchecked_commands_get_the_checks_named_error(
    fields: dict[str, Any], error: type[Exception], field: str, index: int
) -> None:
    base = command()
    values = {f.name: getattr(base, f.name) for f in dataclasses.fields(JointImpedance)}
    values.update(fields)
    unchecked = decode_unchecked_impedance(encode(UncheckedJointImpedance(**values)))
    check = CommandCheck(NAMES, JointLimits(NAMES, SPECS), kp_max=500.0, kd_max=50.0)
    with pytest.raises(CommandRejected) as info:
        check.check(unchecked)
    assert isinstance(info.value.error, error)
    assert (info.value.source_node, info.value.field, info.value.index) == ("tester", field, index)
    assert info.value.joint == NAMES[index]
