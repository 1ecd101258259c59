"""The one base class of every refusal, whichever layer refused.

Where it sits: the lowest layer of :mod:`jointbus` (it imports nothing), so that every layer that
refuses something can derive its errors from it: the message layer's validation errors, the
drivers' NACKed requests, the bus's refused service calls, the runtime's refused parameters, the
bridge's refused commands. Why: a refusal reaches a user from several places — a NaN is refused
by the message class (:class:`~jointbus.messages.errors.NonFiniteError`, a ``ValueError``), a
powered-off joint by the driver (:class:`~jointbus.drivers.errors.RequestRejected`, a
``DriverError``) — and before this class the two hierarchies had nothing in common, so a
program that wanted "anything the robot refused, and nothing else" had to list them. Every
refusal keeps its own class and its old bases (``except ValueError`` and ``except DriverError``
still catch what they caught); :class:`Refused` is an extra base::

    from jointbus.errors import Refused

    try:
        arm.position("elbow", float("nan"))
    except Refused as refusal:   # NonFiniteError, LimitError, RequestRejected, ...
        print("refused, nothing moved:", refusal)

A refusal means *nothing changed*: the command, request or value was refused whole. Failures that
say nothing about the input — a timeout, a lost server, a closed driver — are not refusals.
"""

from __future__ import annotations

__all__ = ["Refused"]


class Refused(Exception):
    """Something asked of jointbus was refused whole; nothing of it was applied.

    The base of :class:`~jointbus.messages.errors.MessageError` (``ValidationError``,
    ``LengthMismatchError``, ``NonFiniteError``, ``LimitError``, ``UnknownJointError``, ...),
    :class:`~jointbus.drivers.errors.RequestRejected` (and ``UnknownArrayJointError``),
    :class:`~jointbus.bus.service_errors.ServiceRefused`,
    :class:`~jointbus.runtime.parameters.ParameterRefusedError` and
    :class:`~jointbus.nodes.safety.command_check.CommandRejected`. The subclasses carry the
    details (joint name and index, field, value, expectation, reason) as attributes.
    """
