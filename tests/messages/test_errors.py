"""The message layer's typed errors: texts that name the joint, and ``naming`` (index → name)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.messages.actarray.commands import MultiPositionCommand
from jointbus.messages.errors import (
    LengthMismatchError,
    LimitError,
    NonFiniteError,
    ValidationError,
    shown,
)

JOINTS = ("shoulder_pan", "shoulder_lift", "elbow")


@given(
    index=st.integers(0, len(JOINTS) - 1),
    kind=st.sampled_from([NonFiniteError, LimitError, LengthMismatchError]),
)
def test_naming_fills_the_joint_from_the_index_and_keeps_every_other_fact(
    index: int, kind: type[ValidationError]
) -> None:
    error = kind("t/msg/T", "positions", 9.5, "within [-1, 1]", index=index)
    named = error.naming(JOINTS)
    assert type(named) is kind and named is not error
    assert (named.type_name, named.field, named.value, named.expected, named.index) == (
        "t/msg/T", "positions", 9.5, "within [-1, 1]", index
    )
    assert named.joint == JOINTS[index]
    assert str(named) == (
        f"t/msg/T: joint {JOINTS[index]!r} (index {index}): field 'positions' = 9.5; "
        "expected within [-1, 1]"
    )
    assert error.joint is None and str(error).startswith(f"t/msg/T: index {index}: ")  # unchanged


@pytest.mark.parametrize(
    "error",
    [
        ValidationError("t/msg/T", "kp", -1.0, "≥ 0", joint="elbow", index=0),  # already named
        ValidationError("t/msg/T", "source_node", "", "a name"),  # no index
        ValidationError("t/msg/T", "kp", -1.0, "≥ 0", index=len(JOINTS)),  # index out of range
    ],
    ids=["named", "no-index", "out-of-range"],
)
def test_naming_leaves_an_error_it_cannot_improve_as_it_is(error: ValidationError) -> None:
    assert error.naming(JOINTS) is error


def test_a_multi_position_refusal_names_the_joint_once_the_names_are_known() -> None:
    with pytest.raises(NonFiniteError) as caught:
        MultiPositionCommand((0.0, 0.1, math.nan))
    assert "index 2: field 'positions' = nan" in str(caught.value)
    named = caught.value.naming(JOINTS)
    assert "joint 'elbow' (index 2): field 'positions' = nan" in str(named)
    with pytest.raises(NonFiniteError, match="joint 'elbow' \\(index 2\\)"):
        raise named


def test_a_value_from_a_float32_field_reads_as_it_was_sent() -> None:
    """A JointCommand's ``t_pos`` is float32: 1.6 out of limit was shown as its float64
    widening, 1.600000023841858 (new-user trial, 2026-12-05). Passed as ``np.float32`` (the
    checker knows the wire type) it reads 1.6, and ``value`` is a built-in float."""
    error = LimitError("hb50/msg/JointCommand", "t_pos", np.float32(1.6), "within [-1, 1]")
    assert "field 't_pos' = 1.6; expected within [-1, 1]" in str(error)
    assert type(error.value) is float and error.value == float(np.float32(1.6))
    widened = LimitError("T", "f", float(np.float32(1.6)), "x")  # no type known: exact
    assert "= 1.600000023841858;" in str(widened)
    assert "= 0.1;" in str(LimitError("T", "f", 0.1, "x"))


@given(st.floats(width=32, allow_nan=False, allow_infinity=False))
def test_a_float32_value_is_shown_in_a_form_that_reads_back_to_it(value: float) -> None:
    text = shown(np.float32(value))
    assert np.float32(float(text)) == np.float32(value)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_a_float64_value_is_shown_in_a_form_that_reads_back_to_it_exactly(value: float) -> None:
    assert float(shown(value)) == value
    assert float(shown(np.float64(value))) == value
