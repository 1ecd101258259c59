"""Driver errors to :class:`ActuatorReply` and back: a remote caller gets the very error.

Where it sits: :mod:`jointbus.drivers.bus`, used by the array node (error → NACK) and the
``bus://`` driver (NACK → error). The classes that can cross are listed in one table
(:data:`WIRE_ERRORS`); an error of another class crosses as its nearest listed base class, with
the server's text kept verbatim, so ``str(error)`` reads the same on both sides.

Why rebuild the error rather than raise a generic "remote error": a program written against
``sim://arm6`` catches :class:`~jointbus.messages.errors.LimitError` or checks
``RequestRejected.reason``; it must keep working unchanged against ``bus://arm6``.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Iterable
from typing import Any, Final

from jointbus.drivers.errors import (
    DriverClosedError,
    DriverError,
    DriverIOError,
    RejectReason,
    RequestRejected,
)
from jointbus.drivers.limits import Saturation
from jointbus.messages.actarray.data import ActuatorArrayData
from jointbus.messages.actarray.reply import ActuatorReply
from jointbus.messages.errors import (
    LengthMismatchError,
    LimitError,
    MessageError,
    NonFiniteError,
    ShapeMismatchError,
    UnknownJointError,
    ValidationError,
)

__all__ = [
    "WIRE_ERRORS",
    "ack",
    "error_from_reply",
    "nack",
    "reject_reason",
    "saturations_from_reply",
]

#: The error classes a NACK names; anything else crosses as the first base class listed here.
WIRE_ERRORS: Final[dict[str, type[Exception]]] = {
    cls.__name__: cls
    for cls in (
        RequestRejected,
        DriverClosedError,
        DriverIOError,
        DriverError,
        UnknownJointError,
        LengthMismatchError,
        NonFiniteError,
        LimitError,
        ShapeMismatchError,
        ValidationError,
        MessageError,
    )
}


def ack(
    request: str,
    saturations: Iterable[Saturation] = (),
    state: ActuatorArrayData | None = None,
) -> ActuatorReply:
    """The ACK of ``request``, carrying the values the array clamped and its state after it."""
    sat = tuple(saturations)
    return ActuatorReply(
        accepted=True,
        request=request,
        state=() if state is None else (state,),
        saturated_joint=tuple(s.joint for s in sat),
        saturated_index=tuple(s.index for s in sat),
        saturated_field=tuple(s.field for s in sat),
        saturated_requested=tuple(s.requested for s in sat),
        saturated_applied=tuple(s.applied for s in sat),
    )


def _wire_name(error: BaseException) -> str:
    for cls in type(error).__mro__:
        if cls.__name__ in WIRE_ERRORS and WIRE_ERRORS[cls.__name__] is cls:
            return cls.__name__
    # Errors of the validation family defined elsewhere (e.g. the bridge's JointOrderError).
    if isinstance(error, ValidationError):
        return "ValidationError"
    return "DriverError"


def _wire_text(value: object) -> str:
    """``str(value)`` as a CDR string can carry it: UTF-8 without NUL (a NUL is shown as
    ``\\x00``, a lone surrogate as ``\\udXXX``), so any error text can cross."""
    text = str(value).replace("\x00", "\\x00")
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def reject_reason(error: BaseException) -> RejectReason:
    """Why ``error`` refused a request, as a :class:`RejectReason`: a :class:`RequestRejected`
    says so itself; an unknown joint is ``UNKNOWN_JOINT``, a value beyond a limit
    ``OUT_OF_RANGE``, any other refusal by the message rules (NaN, length, order, source)
    ``INVALID``, and a device that failed ``DRIVER_FAULT``.

    Why every NACK gets one: a caller (``jointbus service call``, a script reading the reply)
    branches on the reason; an empty one for a limit refusal read as "no reason given".
    """
    reason = getattr(error, "reason", None)
    if isinstance(reason, RejectReason):
        return reason
    wrapped = getattr(error, "error", None)  # a refusal that wraps the rule's error
    if isinstance(wrapped, BaseException) and wrapped is not error:
        return reject_reason(wrapped)
    if isinstance(error, UnknownJointError):
        return RejectReason.UNKNOWN_JOINT
    if isinstance(error, LimitError):
        return RejectReason.OUT_OF_RANGE
    if isinstance(error, DriverError):
        return RejectReason.DRIVER_FAULT
    return RejectReason.INVALID


def nack(request: str, error: BaseException) -> ActuatorReply:
    """The NACK of ``request`` refused with ``error`` (see the module docstring)."""
    joint = getattr(error, "joint", None)
    index = getattr(error, "index", None)
    if joint is None and index is None and isinstance(error, UnknownJointError):
        joint = error.name  # an unknown name; an unknown index is ``index`` (not a name)
    field = getattr(error, "field", "")
    return ActuatorReply(
        accepted=False,
        # the refused request as the error names it (``positions``), else the service's method
        request=_wire_text(getattr(error, "request", None) or request),
        error=_wire_name(error),
        reason=reject_reason(error).name,
        type_name=_wire_text(getattr(error, "type_name", "")),
        field=_wire_text(field),
        # the value of the field named (a RequestRejected built without one has no value)
        value=_wire_text(repr(getattr(error, "value", None))) if field else "",
        expected=_wire_text(getattr(error, "expected", "")),
        detail=_wire_text(getattr(error, "detail", "")),
        joint=(_wire_text(joint),) if isinstance(joint, str) else (),
        index=(index,) if isinstance(index, int) and not isinstance(index, bool) else (),
        text=_wire_text(error),
    )


_SPECIAL: Final = {"inf": math.inf, "nan": math.nan}


def _literal(node: ast.expr) -> Any:
    """A literal of ``repr`` output: numbers (with ``inf`` / ``nan``), strings, tuples, lists."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name) and node.id in _SPECIAL:
        return _SPECIAL[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        operand = _literal(node.operand)
        if isinstance(operand, int | float) and not isinstance(operand, bool):
            return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.Tuple):
        return tuple(_literal(e) for e in node.elts)
    if isinstance(node, ast.List):
        return [_literal(e) for e in node.elts]
    raise ValueError("not a literal")


def _value(text: str) -> Any:
    """The offending value back from its ``repr`` when it is a literal; else the text itself."""
    try:
        return _literal(ast.parse(text, mode="eval").body)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text


def error_from_reply(reply: ActuatorReply) -> Exception:
    """The exception a NACK describes, with the server's message as its text."""
    cls = WIRE_ERRORS.get(reply.error, DriverError)
    joint = reply.joint[0] if reply.joint else None
    index = reply.index[0] if reply.index else None
    error: Exception
    if cls is RequestRejected:
        try:
            reason = RejectReason[reply.reason]
        except KeyError:
            reason = RejectReason.UNSUPPORTED
        error = RequestRejected(
            reply.request,
            reason,
            reply.detail,
            joint=joint,
            index=index,
            field=reply.field,
            value=_value(reply.value) if reply.field else None,
            expected=reply.expected,
        )
    elif cls is UnknownJointError:
        asked = joint if joint is not None else None if index is None else str(index)
        error = UnknownJointError(asked or "?", field=reply.field or "joint")
        error.value = _value(reply.value) if reply.field else error.value
        error.expected = reply.expected or error.expected
    elif issubclass(cls, ValidationError):
        error = cls(
            reply.type_name,
            reply.field,
            _value(reply.value),
            reply.expected,
            joint=joint,
            index=index,
        )
    else:
        error = cls(reply.text)
    error.args = (reply.text,)
    return error


def saturations_from_reply(reply: ActuatorReply) -> tuple[Saturation, ...]:
    """The clamps an ACK reports, as :class:`Saturation` records."""
    return tuple(
        Saturation(j, i, f, r, a)
        for j, i, f, r, a in zip(
            reply.saturated_joint,
            reply.saturated_index,
            reply.saturated_field,
            reply.saturated_requested,
            reply.saturated_applied,
            strict=True,
        )
    )
