"""ActuatorReply and ArrayDescription: rules, exact CDR round trip, bytes equal to rosbags'."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.messages.actarray import ActuatorReply, ArrayDescription
from jointbus.messages.errors import LengthMismatchError, ValidationError
from support.rosbags_oracle import rosbags_cdr

# CDR strings: UTF-8 without NUL (no lone surrogates, which UTF-8 cannot encode)
text = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=20
)
names = st.lists(text.filter(bool), min_size=1, max_size=6, unique=True)


@st.composite
def replies(draw: st.DrawFn) -> ActuatorReply:
    accepted = draw(st.booleans())
    n = draw(st.integers(0, 3))
    floats = st.floats(allow_nan=False, allow_infinity=False, width=64)
    return ActuatorReply(
        accepted=accepted,
        request=draw(text),
        error="" if accepted else draw(text.filter(bool)),
        reason=draw(text),
        field=draw(text),
        value=draw(text),
        expected=draw(text),
        joint=tuple(draw(st.lists(text, max_size=1))),
        index=tuple(draw(st.lists(st.integers(0, 2**31 - 1), max_size=1))),
        text=draw(text),
        saturated_joint=tuple(draw(text) for _ in range(n)),
        saturated_index=tuple(draw(st.integers(0, 100)) for _ in range(n)),
        saturated_field=tuple(draw(text) for _ in range(n)),
        saturated_requested=tuple(draw(floats) for _ in range(n)),
        saturated_applied=tuple(draw(floats) for _ in range(n)),
    )


@given(replies())
def test_reply_round_trips_exactly_and_matches_rosbags(reply: ActuatorReply) -> None:
    data = reply.to_cdr()
    assert ActuatorReply.from_cdr(data) == reply
    assert data == rosbags_cdr(reply)


def test_a_nack_names_its_error_and_an_ack_has_none() -> None:
    with pytest.raises(ValidationError, match="error"):
        ActuatorReply(accepted=False)
    with pytest.raises(ValidationError, match="empty in an ACK"):
        ActuatorReply(accepted=True, error="LimitError")
    with pytest.raises(LengthMismatchError, match="at most one entry"):
        ActuatorReply(accepted=False, error="LimitError", joint=("a", "b"))
    with pytest.raises(LengthMismatchError, match="saturated_applied"):
        ActuatorReply(
            saturated_joint=("a",),
            saturated_index=(0,),
            saturated_field=("p",),
            saturated_requested=(1.0,),
        )


@given(names, st.data())
def test_description_round_trips_with_unbounded_limits(
    joint_names: list[str], data: st.DataObject
) -> None:
    n = len(joint_names)
    limit = st.floats(min_value=0.0, allow_nan=False)
    desc = ArrayDescription(
        names=tuple(joint_names),
        position_min=tuple(data.draw(st.floats(allow_nan=False)) for _ in range(n)),
        position_max=tuple(data.draw(st.floats(allow_nan=False)) for _ in range(n)),
        velocity_max=tuple(data.draw(limit) for _ in range(n)),
        effort_max=(math.inf,) * n,
        current_max=tuple(data.draw(limit) for _ in range(n)),
        acceleration=tuple(data.draw(limit) for _ in range(n)),
        capabilities=("power", "position"),
    )
    assert ArrayDescription.from_cdr(desc.to_cdr()) == desc
    assert desc.to_cdr() == rosbags_cdr(desc)


def test_description_refuses_wrong_lengths_and_nan_naming_the_joint() -> None:
    with pytest.raises(LengthMismatchError, match="velocity_max"):
        ArrayDescription(("a", "b"), (0, 0), (1, 1), (1,), (1, 1), (1, 1), (1, 1))
    with pytest.raises(ValidationError, match="joint 'b' \\(index 1\\)"):
        ArrayDescription(("a", "b"), (0, 0), (1, math.nan), (1, 1), (1, 1), (1, 1), (1, 1))


def test_description_carries_what_the_driver_can_carry_and_refuses_ranges_that_do_not_fit() -> None:
    two = {"names": ("a", "b"), "position_min": (0, 0), "position_max": (1, 1),
           "velocity_max": (1, 1), "effort_max": (1, 1), "current_max": (1, 1),
           "acceleration": (1, 1)}
    desc = ArrayDescription(
        **two,  # type: ignore[arg-type]
        command_fields=("kp", "kd"),
        command_min=(0.0, 0.0, 0.0, 0.0),
        command_max=(500.0, math.inf, 10.0, 5.0),
        command_bound_by=("the md80's wire range", ""),
    )
    assert ArrayDescription.from_cdr(desc.to_cdr()) == desc
    assert desc.to_cdr() == rosbags_cdr(desc)
    with pytest.raises(LengthMismatchError, match="command_max"):
        ArrayDescription(**two, command_fields=("kp",), command_min=(0.0, 0.0),  # type: ignore[arg-type]
                         command_max=(1.0,), command_bound_by=("", ""))
    with pytest.raises(ValidationError, match="joint 'b' \\(index 1\\)"):
        ArrayDescription(**two, command_fields=("kp",), command_min=(0.0, 2.0),  # type: ignore[arg-type]
                         command_max=(1.0, 1.0), command_bound_by=("", ""))
