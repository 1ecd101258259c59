"""The bridge's gate for joint commands: who sent it, in which order, how long, finite, in limits.

Where it sits: :mod:`jointbus.nodes.safety` (used by the array node and hb50's bridge), the first
thing a ``/hb50/joint_command`` sample meets
in the bridge, before arbitration and long before a driver. A command that fails any check is
rejected *whole* with :class:`CommandRejected`; nothing of it is applied, and the bridge reports
the error (source node, joint name and index, field, value, expectation) on ``/hb50/status``.

Checks, in this order (the first failure is reported):

1. **Source** (:class:`SourceNotAllowedError`): ``source_node`` is non-empty — arbitration ranks
   commands by their source, so an anonymous command cannot be ranked — and, when an allow-list is
   configured, one of the allowed node names.
2. **Actuator order** (:class:`JointOrderError`, or :class:`LengthMismatchError` on ``name`` —
   :class:`MissingNamesError` when names are missing, its text about the list sent):
   ``name`` equals the configured actuator order exactly. The error names the first index that
   differs, the name found there and the name expected, because a swapped pair of legs is the
   mistake this check exists for.
3. **Lengths** (:class:`LengthMismatchError`): every array has one entry per actuator.
   :class:`~jointbus.robots.hb50.messages.JointCommand` already guarantees 2–4 when it is
   constructed or
   decoded; the bridge checks again (cheaply) because it must not depend on how the object was
   made.
4. **Finite** (:class:`NonFiniteError`) and **limits** (:class:`LimitError`): ``t_pos`` within the
   joint's position range (rad), ``t_vel`` within ± its velocity limit (rad/s), ``t_trq`` within ±
   its effort limit (N·m), ``kp`` in [0, ``kp_max``] (N·m/rad), ``kd`` in [0, ``kd_max``]
   (N·m·s/rad); ``ki`` (reserved) only within float32 range.
5. **Brakes** (:class:`LimitError` on ``brake``): when the bridge says which joints have a brake,
   ``brake`` may only be set on those.

**Commands refused at decode.** ``JointCommand.from_cdr`` applies the message's wire rules, so a
NaN, a negative gain or a short array never becomes a ``JointCommand`` and reaches the bridge only
as a :class:`~jointbus.bus.MalformedPayloadEvent` carrying the bytes. :func:`decode_unchecked`
reads those bytes into an :class:`UncheckedJointCommand` — the same CDR layout, built without any
check — and :meth:`CommandCheck.check` accepts it, so such a sample is refused with the same named
error (source node, joint, index, field, value) as one that decoded. Why a mirror class rather than
a flag on the decoder: the codec stays strict for everyone else, and the bridge's checks, which
already hold for any object with these fields, are the only judge of these bytes.

Why it is fast: the six float arrays become one 6×N float64 array, compared at once with
precomputed 6×N lower/upper bound arrays (one ``np.array`` and two comparisons per command, a few
µs at 500 Hz). Unbounded limits are stored as ±``float64`` max rather than ±inf, so the same
comparison also fails on NaN (comparisons with NaN are false) and on ±inf; only when it fails does
the code look for the culprit to name it. Bounds are rounded to float32 once, because command
values are float32 on the wire: a target of exactly the 1.571 rad limit arrives as float32(1.571),
and rounding is monotone, so comparing float32 with float32 keeps "at the limit" inside it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final

import numpy as np
from numpy.typing import NDArray

from jointbus.codec import cdr
from jointbus.codec.wire import FLOAT32_MAX, BoolSeq, Float32Seq, String, StringSeq
from jointbus.drivers.limits import JointLimits
from jointbus.messages.errors import (
    LengthMismatchError,
    LimitError,
    NonFiniteError,
    ValidationError,
)
from jointbus.messages.std_msgs import Header
from jointbus.robots.hb50.messages import JointCommand

__all__ = [
    "CommandCheck",
    "CommandRejected",
    "JointOrderError",
    "MissingNamesError",
    "SourceNotAllowedError",
    "UncheckedJointCommand",
    "decode_unchecked",
]

_TYPE: Final = JointCommand.TYPE_NAME
#: The float fields, in the row order of the stacked check array.
_FLOAT_FIELDS: Final = ("kp", "ki", "kd", "t_pos", "t_vel", "t_trq")
_ARRAY_FIELDS: Final = (*_FLOAT_FIELDS, "brake")
#: A short ``name`` list up to this long is shown whole in its error; a longer one by its count.
_NAMES_SHOWN: Final = 4
_BIG: Final = float(np.finfo(np.float64).max)


class MissingNamesError(LengthMismatchError):
    """A command names fewer joints than the actuator order: ``joint`` / ``index`` are the first
    missing one. Its text does not start with that joint, as other errors do ("joint 'fr_j1'
    (index 1): field 'name' ...") — that read as a fault of a joint the sender never sent; the
    names sent are the problem, so the text shows them and names the first missing joint in the
    expectation. The values are checked only once the names match (see the order of checks)."""

    def _text(self) -> str:
        return f"{self.type_name}: field {self.field!r} = {self.value!r}; expected {self.expected}"


class JointOrderError(ValidationError):
    """A command's ``name`` list is not the configured actuator order (names the first index)."""


class SourceNotAllowedError(ValidationError):
    """A command's ``source_node`` is empty, or not on the bridge's allow-list."""


class CommandRejected(ValueError):
    """A joint command the bridge refused whole; nothing of it was applied.

    ``error`` is the underlying :class:`~jointbus.messages.errors.ValidationError` (its ``field``,
    ``joint``, ``index``, ``value`` and ``expected`` are also exposed here); ``source_node`` is the
    node that sent the command, so the status report says *who* sent the bad command.
    """

    def __init__(self, source_node: str, error: ValidationError) -> None:
        self.source_node = source_node
        self.error = error
        who = source_node or "<no source_node>"
        super().__init__(f"joint command from {who!r} rejected: {error}")

    @property
    def field(self) -> str:
        return self.error.field

    @property
    def joint(self) -> str | None:
        return self.error.joint

    @property
    def index(self) -> int | None:
        return self.error.index

    @property
    def value(self) -> Any:
        return self.error.value

    @property
    def expected(self) -> str:
        return self.error.expected


@dataclass(frozen=True, slots=True)
class UncheckedJointCommand:
    """A ``JointCommand``'s wire content exactly as sent: same fields, same CDR layout, no checks.

    Only for reading (and, in tests, writing) samples the message's own rules refuse; see the
    module docstring. Units as in :class:`~jointbus.robots.hb50.messages.JointCommand`.
    """

    TYPE_NAME: ClassVar[str] = JointCommand.TYPE_NAME
    header: Header = field(default_factory=Header)
    source_node: String = ""
    name: StringSeq = ()
    kp: Float32Seq = ()  # N·m/rad
    ki: Float32Seq = ()
    kd: Float32Seq = ()  # N·m·s/rad
    t_pos: Float32Seq = ()  # rad
    t_vel: Float32Seq = ()  # rad/s
    t_trq: Float32Seq = ()  # N·m
    brake: BoolSeq = ()


def decode_unchecked(payload: bytes | bytearray | memoryview) -> UncheckedJointCommand:
    """``payload`` (CDR with its encapsulation header) as an :class:`UncheckedJointCommand`;
    :class:`~jointbus.codec.DecodeError` when the bytes are not even that layout."""
    decoded: UncheckedJointCommand = cdr.decode(UncheckedJointCommand, payload)
    return decoded


def _f32(bound: float) -> float:
    """``bound`` rounded to float32, with ±inf (unbounded) replaced by ±float64 max."""
    if math.isinf(bound):
        return math.copysign(_BIG, bound)
    return float(np.float32(bound))


class CommandCheck:
    """Validates :class:`JointCommand` samples for one robot (see the module docstring).

    ``actuator_order`` is the robot's actuator order; ``limits`` must cover the same joints in the
    same order (its policy does not matter: the bridge always rejects, never saturates, a command —
    saturating one field of a controller's command silently changes what it asked for).
    ``kp_max`` / ``kd_max`` bound the gains (N·m/rad, N·m·s/rad; ``inf`` = only ≥ 0).
    ``allowed_sources``: when given, only these ``source_node`` names are accepted.
    ``has_brake``: per joint, whether a brake is fitted (``None``: not checked).
    """

    __slots__ = ("_allowed", "_brakeless", "_lower", "_n", "_order", "_upper", "kd_max", "kp_max")

    def __init__(
        self,
        actuator_order: Sequence[str],
        limits: JointLimits,
        *,
        kp_max: float = math.inf,
        kd_max: float = math.inf,
        allowed_sources: Iterable[str] | None = None,
        has_brake: Sequence[bool] | None = None,
    ) -> None:
        order = tuple(actuator_order)
        if not order:
            raise ValueError("actuator_order is empty; expected at least one actuator")
        if len(set(order)) != len(order):
            raise ValueError(f"actuator_order {order} has duplicate names")
        if limits.names != order:
            raise ValueError(
                f"limits cover joints {limits.names}; expected the actuator order {order}"
            )
        for name, value in (("kp_max", kp_max), ("kd_max", kd_max)):
            if math.isnan(value) or value < 0:
                raise ValueError(f"{name} = {value}; expected ≥ 0 (inf for no bound)")
        self._order = order
        self._n = len(order)
        self._brakeless: tuple[int, ...] = ()
        if has_brake is not None:
            if len(has_brake) != len(order):
                raise ValueError(
                    f"has_brake has {len(has_brake)} entries for {len(order)} actuators"
                )
            self._brakeless = tuple(i for i, fitted in enumerate(has_brake) if not fitted)
        self.kp_max = float(kp_max)
        self.kd_max = float(kd_max)
        self._allowed: frozenset[str] | None = None
        if allowed_sources is not None:
            allowed = frozenset(allowed_sources)
            if not allowed or not all(isinstance(s, str) and s for s in allowed):
                raise ValueError(
                    f"allowed_sources {sorted(map(repr, allowed))}: expected non-empty node names"
                )
            self._allowed = allowed
        n = self._n
        rows_lo: dict[str, list[float]] = {
            "kp": [0.0] * n,
            "ki": [-FLOAT32_MAX] * n,
            "kd": [0.0] * n,
            "t_pos": [limits.bounds("position", i)[0] for i in range(n)],
            "t_vel": [limits.bounds("velocity", i)[0] for i in range(n)],
            "t_trq": [limits.bounds("effort", i)[0] for i in range(n)],
        }
        rows_hi: dict[str, list[float]] = {
            "kp": [self.kp_max] * n,
            "ki": [FLOAT32_MAX] * n,
            "kd": [self.kd_max] * n,
            "t_pos": [limits.bounds("position", i)[1] for i in range(n)],
            "t_vel": [limits.bounds("velocity", i)[1] for i in range(n)],
            "t_trq": [limits.bounds("effort", i)[1] for i in range(n)],
        }
        self._lower: NDArray[np.float64] = np.array(
            [[_f32(v) for v in rows_lo[f]] for f in _FLOAT_FIELDS], dtype=np.float64
        )
        self._upper: NDArray[np.float64] = np.array(
            [[_f32(v) for v in rows_hi[f]] for f in _FLOAT_FIELDS], dtype=np.float64
        )

    @property
    def actuator_order(self) -> tuple[str, ...]:
        return self._order

    @property
    def allowed_sources(self) -> frozenset[str] | None:
        """The allow-list of source nodes, or ``None`` when every named source is accepted."""
        return self._allowed

    def bounds(self, field: str, index: int) -> tuple[float, float]:
        """(lower, upper) the check applies to ``field`` of joint ``index`` (±inf = unbounded)."""
        row = _FLOAT_FIELDS.index(field)
        lo = float(self._lower[row, index])
        hi = float(self._upper[row, index])
        return (-math.inf if lo == -_BIG else lo, math.inf if hi == _BIG else hi)

    def check(self, cmd: JointCommand | UncheckedJointCommand) -> None:
        """Return if ``cmd`` may be applied; raise :class:`CommandRejected` otherwise."""
        source = cmd.source_node
        try:
            self._check_source(source)
            if cmd.name != self._order:
                self._raise_order(cmd.name)
            n = self._n
            for field in _ARRAY_FIELDS:
                count = len(getattr(cmd, field))
                if count != n:
                    self._raise_length(field, count)
            values = np.array(
                (cmd.kp, cmd.ki, cmd.kd, cmd.t_pos, cmd.t_vel, cmd.t_trq), dtype=np.float64
            )
            inside = (values >= self._lower) & (values <= self._upper)
            if not inside.all():
                self._raise_value(values, inside)
            if self._brakeless and True in cmd.brake:
                self._check_brakes(cmd.brake)
        except ValidationError as error:
            raise CommandRejected(source, error) from error

    # -- culprits (only reached when a check fails) ------------------------------------------

    def _check_source(self, source: object) -> None:
        if type(source) is not str or not source:
            raise SourceNotAllowedError(
                _TYPE, "source_node", source, "a non-empty node name (arbitration ranks by source)"
            )
        allowed = self._allowed
        if allowed is not None and source not in allowed:
            raise SourceNotAllowedError(
                _TYPE, "source_node", source, f"one of the allowed sources {sorted(allowed)}"
            )

    def _raise_order(self, names: tuple[str, ...]) -> None:
        order = self._order
        for index, (got, want) in enumerate(zip(names, order, strict=False)):
            if got != want:
                raise JointOrderError(
                    _TYPE,
                    "name",
                    got,
                    f"{want!r} (actuator order: {', '.join(order)})",
                    joint=got,
                    index=index,
                )
        # One list is a prefix of the other: a length problem.
        count, n = len(names), len(order)
        if count < n:
            raise MissingNamesError(
                _TYPE,
                "name",
                list(names) if count <= _NAMES_SHOWN else f"{count} names",
                f"one name per actuator, in actuator order: the command names only {count} of "
                f"the {n} actuators (first missing: {order[count]!r} (index {count})); its "
                "values are checked once its names match",
                joint=order[count],
                index=count,
            )
        raise LengthMismatchError(
            _TYPE,
            "name",
            f"{count} names",
            f"{n} names in actuator order (surplus {names[n]!r})",
            joint=names[n],
            index=n,
        )

    def _raise_length(self, field: str, count: int) -> None:
        n = self._n
        expected = f"{n} values, one per actuator"
        if count < n:
            raise LengthMismatchError(
                _TYPE, field, f"{count} values", expected, joint=self._order[count], index=count
            )
        raise LengthMismatchError(_TYPE, field, f"{count} values", expected, index=n)

    def _check_brakes(self, brake: tuple[bool, ...]) -> None:
        for index in self._brakeless:
            if brake[index]:
                raise LimitError(
                    _TYPE,
                    "brake",
                    True,
                    "False: this actuator has no brake",
                    joint=self._order[index],
                    index=index,
                )

    def _raise_value(self, values: NDArray[np.float64], inside: NDArray[np.bool_]) -> None:
        finite = np.isfinite(values)
        if not finite.all():
            row, index = (int(k) for k in np.argwhere(~finite)[0])
            raise NonFiniteError(
                _TYPE,
                _FLOAT_FIELDS[row],
                float(values[row, index]),
                "a finite number",
                joint=self._order[index],
                index=index,
            )
        row, index = (int(k) for k in np.argwhere(~inside)[0])
        lo, hi = self.bounds(_FLOAT_FIELDS[row], index)
        raise LimitError(
            _TYPE,
            _FLOAT_FIELDS[row],
            float(values[row, index]),
            f"within [{lo:g}, {hi:g}]",
            joint=self._order[index],
            index=index,
        )
