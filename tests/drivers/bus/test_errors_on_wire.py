"""A NACK carries a driver error across the bus and back as the same error: class, fields, text."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from jointbus.drivers.bus.errors_on_wire import (
    WIRE_ERRORS,
    ack,
    error_from_reply,
    nack,
    saturations_from_reply,
)
from jointbus.drivers.errors import (
    DriverClosedError,
    DriverIOError,
    RejectReason,
    RequestRejected,
)
from jointbus.drivers.limits import Saturation
from jointbus.messages.actarray import (
    ActuatorArrayData,
    ActuatorData,
    ActuatorReply,
    ActuatorState,
)
from jointbus.messages.errors import (
    LengthMismatchError,
    LimitError,
    NonFiniteError,
    UnknownJointError,
    ValidationError,
)
from jointbus.messages.std_msgs import Header
from jointbus.nodes.safety.command_check import (
    CommandRejected,
    JointOrderError,
    MissingNamesError,
    SourceNotAllowedError,
)

words = st.text(st.characters(min_codepoint=32, max_codepoint=126), min_size=1, max_size=12)
values = st.one_of(
    st.floats(), st.integers(-(10**6), 10**6), st.tuples(st.floats(allow_nan=False)), words
)


def across(error: Exception, request: str = "positions") -> Exception:
    """``error`` as the client sees it: NACK → CDR bytes → decoded → rebuilt."""
    reply = ActuatorReply.from_cdr(nack(request, error).to_cdr())
    return error_from_reply(reply)


@given(
    st.sampled_from([ValidationError, LengthMismatchError, NonFiniteError, LimitError]),
    words,
    words,
    values,
    words,
    st.one_of(st.none(), st.tuples(words, st.integers(0, 500))),
)
def test_validation_errors_cross_with_class_fields_and_text(
    cls: type[ValidationError],
    type_name: str,
    field: str,
    value: object,
    expected: str,
    where: tuple[str, int] | None,
) -> None:
    joint, index = where if where is not None else (None, None)
    error = cls(type_name, field, value, expected, joint=joint, index=index)
    back = across(error)
    assert type(back) is cls
    assert isinstance(back, ValidationError)
    assert str(back) == str(error)
    assert (back.type_name, back.field, back.expected, back.joint, back.index) == (
        type_name,
        field,
        expected,
        joint,
        index,
    )
    assert repr(back.value) == repr(value)  # the same value (NaN included), not its text


@given(st.sampled_from(list(RejectReason)), words, st.one_of(st.none(), st.integers(0, 40)))
def test_request_rejected_keeps_its_reason_and_joint(
    reason: RejectReason, detail: str, index: int | None
) -> None:
    joint = None if index is None else f"j{index}"
    error = RequestRejected("set_speed", reason, detail, joint=joint, index=index)
    back = across(error, "set_speed")
    assert isinstance(back, RequestRejected)
    assert (back.request, back.reason, back.detail, back.joint, back.index) == (
        "set_speed",
        reason,
        detail,
        joint,
        index,
    )
    assert str(back) == str(error)


def test_unknown_joint_and_other_driver_errors_keep_class_and_text() -> None:
    error = UnknownJointError("knee", ("hip", "elbow"))
    back = across(error, "position")
    assert isinstance(back, UnknownJointError) and str(back) == str(error)
    assert back.name == "knee"
    io = across(DriverIOError("bus-off on can0"))
    assert type(io) is DriverIOError and str(io) == "bus-off on can0"


def test_an_ack_carries_the_clamps_and_the_state_after_the_call() -> None:
    clamps = (Saturation("elbow", 2, "position", 3.0, 2.6),)
    state = ActuatorArrayData(
        Header.now("base_link"),
        (ActuatorData(0.1, 0.2, 0.0, 1.5, ActuatorState.MOVING),),
        motor_power=True,
    )
    reply = ActuatorReply.from_cdr(ack("position", clamps, state).to_cdr())
    assert reply.accepted and saturations_from_reply(reply) == clamps
    assert reply.state == (state,)
    assert nack("position", LimitError("T", "position", 3.0, "<= 2.6")).state == ()


def test_a_nul_or_lone_surrogate_in_an_error_text_still_crosses() -> None:
    error = RequestRejected("power", RejectReason.TIMED_OUT, "drive 3 said '\x00' and '\ud800'")
    back = across(error, "power")
    assert isinstance(back, RequestRejected)
    assert "\\x00" in back.detail and "\\ud800" in back.detail


@given(
    st.sampled_from(
        [
            *WIRE_ERRORS.values(),
            JointOrderError,
            SourceNotAllowedError,
            MissingNamesError,
            ValueError,
            TypeError,
        ]
    ),
    words,
)
def test_every_nack_carries_a_reason(cls: type[Exception], text: str) -> None:
    error: Exception
    if cls is RequestRejected:
        error = RequestRejected("position", RejectReason.BRAKED, text)
    elif cls is UnknownJointError:
        error = UnknownJointError(text)
    elif issubclass(cls, ValidationError):
        error = cls("ActuatorArray", "position", 1.0, "within [-2.5, 0.5]")
    else:
        error = cls(text)
    reply = ActuatorReply.from_cdr(nack("position", error).to_cdr())
    assert reply.reason in RejectReason.__members__, (cls, reply.reason)


def test_a_nack_reason_says_what_kind_of_refusal_it_is() -> None:
    def reason(error: Exception) -> str:
        return nack("position", error).reason

    limit = LimitError("ActuatorArray", "position", 1.0, "within [-2.5, 0.5]", joint="j", index=2)
    assert reason(limit) == "OUT_OF_RANGE"
    assert reason(CommandRejected("ctl", limit)) == "OUT_OF_RANGE"  # a wrapped limit refusal
    assert reason(UnknownJointError("wrist")) == "UNKNOWN_JOINT"
    assert reason(NonFiniteError("ActuatorArray", "position", math.nan, "finite")) == "INVALID"
    assert reason(LengthMismatchError("Joints", "names", (), "at least one")) == "INVALID"
    assert reason(DriverClosedError("closed")) == "DRIVER_FAULT"
    assert reason(RequestRejected("position", RejectReason.ESTOPPED)) == "ESTOPPED"
    assert ack("position").reason == ""  # an ACK has none
