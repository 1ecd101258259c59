"""The gate for impedance commands: who sent it, in which order, how long, finite, in limits.

Where it sits: :mod:`jointbus.nodes.safety` (used by the array node and hb50's bridge), the first
thing an impedance sample meets in a node that owns actuators — the array node's
``jointbus_msgs/msg/JointImpedance``, hb50's ``JointCommand`` on ``/hb50/joint_command`` — before
arbitration and long before a driver. It is also the edge where the wire message becomes the device
API's joint-space value: :meth:`CommandCheck.check` returns the command as an
:class:`~jointbus.drivers.impedance.ImpedanceCommand` (float64 arrays in actuator order), which is
all the components after it see. Which wire fields hold what is an :class:`ImpedanceFields` (the
generic message's names, or hb50's ``t_pos`` / ``t_vel`` / ``t_trq``), so errors name the field
the sender wrote. A command that fails any check is rejected *whole* with
:class:`CommandRejected`; nothing of it is applied, and the node reports the error (source node,
joint name and index, field, value, expectation) on its status topic.

Checks, in this order (the first failure is reported):

1. **Source** (:class:`SourceNotAllowedError`): ``source_node`` is non-empty — arbitration ranks
   commands by their source, so an anonymous command cannot be ranked — and, when an allow-list is
   configured, one of the allowed node names.
2. **Actuator order** (:class:`JointOrderError`, or :class:`LengthMismatchError` on ``name`` —
   :class:`MissingNamesError` when names are missing, its text about the list sent):
   ``name`` equals the configured actuator order exactly. The error names the first index that
   differs, the name found there and the name expected, because a swapped pair of legs is the
   mistake this check exists for.
3. **Lengths** (:class:`LengthMismatchError`): every array has one entry per actuator. The
   messages already guarantee 2–4 when they are constructed or decoded; the check runs again
   (cheaply) because it must not depend on how the object was made.
4. **Finite** (:class:`NonFiniteError`) and **limits** (:class:`LimitError`): the position target
   within the joint's position range (rad), the velocity within ± its velocity limit (rad/s), the
   effort within ± its effort limit (N·m), ``kp`` in [0, ``kp_max``] (N·m/rad), ``kd`` in
   [0, ``kd_max``] (N·m·s/rad); reserved fields (hb50's ``ki``) only within float32 range. Each
   also within what the driver can carry (``ranges``: the array's
   :meth:`~jointbus.drivers.actuator_array.ActuatorArray.command_ranges`, e.g. a CAN motor
   model's wire range — ``kp`` 0…500 for md80), so a command the driver would refuse at write is
   refused here, whole, before arbitration; the error then says what sets the bound
   ("within [0, 500] (the md80's wire range)").
5. **Brakes** (:class:`LimitError` on ``brake``): when the node says which joints have a brake,
   ``brake`` may only be set on those.

**Commands refused at decode.** A message's wire rules refuse a NaN, a negative gain or a short
array at decode, so such a sample reaches the node only as a
:class:`~jointbus.bus.MalformedPayloadEvent` carrying the bytes. A node may read those bytes back
into a mirror class without checks (hb50's bridge does:
:mod:`jointbus.robots.hb50.bridge.unchecked_command`) and pass it here: :meth:`CommandCheck.check`
reads any object with the message's fields, so such a sample is refused with the same named error
(source node, joint, index, field, value) as one that decoded.

Why it is fast: the float arrays become one rows×N float64 array, compared at once with
precomputed lower/upper bound arrays (one ``np.array`` and two comparisons per command), clamped
in place as one block, and the command's fields are read-only views of its rows; the brake flags'
array is shared while they do not change. What a passed hb50 command (12 joints) costs, by
``time.thread_time_ns`` around each call on a loaded 2-CPU host (2026-12-06): 22 µs back to back
(35 µs before the block clamp, the row views and the shared brakes), and a median of 51–64 µs
(42–84) on the bridge's loop thread in the running demo, whose caches every 2 ms cycle starts cold
(82–84, range 62–97, before; alternated five times: see docs/PERFORMANCE.md). Unbounded limits
are stored as ±``float64`` max rather than ±inf, so the same comparison
also fails on NaN (comparisons with NaN are false) and on ±inf; only when it fails does the code
look for the culprit to name it. A value within float32 rounding of a limit is *at* the limit
(:func:`jointbus.drivers.limits.at_limit_bounds`, the one rule the driver applies too: hb50's
values are float32 on the wire, so a target of exactly the 1.571 rad limit arrives as
float32(1.571), a hair above it) and is applied clamped to it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

import numpy as np
from numpy.typing import NDArray

from jointbus import compiled_core
from jointbus.codec.wire import FLOAT32_MAX
from jointbus.drivers.command_ranges import CommandRanges
from jointbus.drivers.impedance import CheckedImpedance, ImpedanceCommand, _certify
from jointbus.drivers.limits import JointLimits, at_limit_bounds
from jointbus.errors import Refused
from jointbus.messages.errors import (
    LengthMismatchError,
    LimitError,
    NonFiniteError,
    ValidationError,
)
from jointbus.messages.joint_impedance import JointImpedance

__all__ = [
    "JOINT_IMPEDANCE_FIELDS",
    "CommandCheck",
    "CommandRejected",
    "ImpedanceFields",
    "ImpedanceMessage",
    "JointOrderError",
    "MissingNamesError",
    "SourceNotAllowedError",
]

#: A short ``name`` list up to this long is shown whole in its error; a longer one by its count.
_NAMES_SHOWN: Final = 4
_BIG: Final = float(np.finfo(np.float64).max)


@dataclass(frozen=True, slots=True)
class ImpedanceFields:
    """Where a wire impedance message keeps each quantity, so errors name the field as sent.

    ``type_name`` is the message type errors name; ``position`` / ``velocity`` / ``effort`` /
    ``kp`` / ``kd`` / ``brake`` are its field names; ``reserved`` are float fields the drives do
    not use (hb50's ``ki``): only bounded to the float32 range, and dropped. Every message has
    ``source_node`` and ``name`` (the actuator order).
    """

    type_name: str
    position: str = "position"
    velocity: str = "velocity"
    effort: str = "effort"
    kp: str = "kp"
    kd: str = "kd"
    brake: str = "brake"
    reserved: tuple[str, ...] = ()
    float32: bool = False
    """The wire holds float32 (hb50): a refused value is shown in float32's shortest form, as
    it was sent (``1.6``, not ``1.600000023841858``)."""

    @property
    def rows(self) -> tuple[str, ...]:
        """The float fields in the order they are checked (reserved ones after ``kp``, as in
        hb50's layout)."""
        return (self.kp, *self.reserved, self.kd, self.position, self.velocity, self.effort)


#: The fields of the generic ``jointbus_msgs/msg/JointImpedance``.
JOINT_IMPEDANCE_FIELDS: Final = ImpedanceFields(JointImpedance.TYPE_NAME)


class ImpedanceMessage(Protocol):
    """What :meth:`CommandCheck.check` reads from any impedance message (the other fields by the
    names of its :class:`ImpedanceFields`)."""

    @property
    def source_node(self) -> str: ...

    @property
    def name(self) -> tuple[str, ...]: ...


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


class CommandRejected(Refused, ValueError):
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



#: ``_limit_accel`` (its ``bounds``) when it was built and not switched off (``JOINTBUS_NO_ACCEL``).
_CORE = compiled_core.load("jointbus.drivers._limit_accel")


def bounds_verdict(
    values: NDArray[np.float64], every_bound: Sequence[tuple[float, float, float, float]]
) -> int:
    """The command's values against their bounds, one verdict: -1 when a value is not within its
    accepted (lower, upper) — NaN and ±inf too —, else 1 when one is not strictly inside its exact
    limits (it is to be clamped to the limit), else 0. ``every_bound`` holds, per value of the
    block in its order, (lower, upper, exact lower, exact upper).

    The plain-Python twin of ``_limit_accel.bounds`` (compiled: under a microsecond for hb50's 72
    values, against 25–35 µs a command here on the bridge's loop; the tests hold the two to each
    other). In plain Python rather than numpy: numpy's comparisons, ``all`` and ``clip`` on the
    loop thread, whose caches every 2 ms cycle starts cold, cost ≈ 12 µs more a command (≈ 43 →
    30 µs with the caches flushed before each call, 2026-12-06)."""
    verdict = 0
    for value, (lower, upper, exact_lower, exact_upper) in zip(
        values.ravel().tolist(), every_bound, strict=True
    ):
        if not lower <= value <= upper:  # NaN and ±inf too
            return -1
        if not exact_lower < value < exact_upper:
            verdict = 1
    return verdict


class CommandCheck:
    """Validates impedance samples for one array and turns them into its joint-space command
    (see the module docstring).

    ``actuator_order`` is the array's actuator order; ``limits`` must cover the same joints in the
    same order (its policy does not matter: a node always rejects, never saturates, a streamed
    command — saturating one field of a controller's command silently changes what it asked for).
    ``kp_max`` / ``kd_max`` bound the gains (N·m/rad, N·m·s/rad; ``inf`` = only ≥ 0).
    ``allowed_sources``: when given, only these ``source_node`` names are accepted.
    ``has_brake``: per joint, whether a brake is fitted (``None``: not checked). ``fields``: the
    wire message's field names (default: ``jointbus_msgs/msg/JointImpedance``'s). ``ranges``: what
    the driver can carry (the array's ``command_ranges()``), folded into the limits (``None``:
    unbounded).
    """

    __slots__ = (
        "_allowed",
        "_block_lower",
        "_block_upper",
        "_brake_key",
        "_brakeless",
        "_brakes",
        "_certified",
        "_every_bound",
        "_exact",
        "_fields",
        "_length_fields",
        "_limit_exact",
        "_lower",
        "_n",
        "_order",
        "_ranges",
        "_rows",
        "_type",
        "_upper",
        "_verdict",
        "kd_max",
        "kp_max",
    )

    def __init__(
        self,
        actuator_order: Sequence[str],
        limits: JointLimits,
        *,
        kp_max: float = math.inf,
        kd_max: float = math.inf,
        allowed_sources: Iterable[str] | None = None,
        has_brake: Sequence[bool] | None = None,
        fields: ImpedanceFields = JOINT_IMPEDANCE_FIELDS,
        ranges: CommandRanges | None = None,
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
        if ranges is not None and ranges.names != order:
            raise ValueError(
                f"command ranges cover joints {ranges.names}; expected the actuator order {order}"
            )
        self._ranges = ranges
        for name, value in (("kp_max", kp_max), ("kd_max", kd_max)):
            if math.isnan(value) or value < 0:
                raise ValueError(f"{name} = {value}; expected ≥ 0 (inf for no bound)")
        self._fields = fields
        self._type = fields.type_name
        self._rows = fields.rows
        self._order = order
        self._n = len(order)
        self._brakeless: tuple[int, ...] = ()
        if has_brake is not None:
            if len(has_brake) != len(order):
                raise ValueError(
                    f"has_brake has {len(has_brake)} entries for {len(order)} actuators"
                )
            self._brakeless = tuple(i for i, fitted in enumerate(has_brake) if not fitted)
        # What a passed command was checked against, for the driver (None: brakes unchecked,
        # so the driver checks in full).
        self._certified: tuple[tuple[Any, ...], tuple[bool, ...]] | None = (
            None if has_brake is None else (limits.specs, tuple(bool(b) for b in has_brake))
        )
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
        exact: dict[str, tuple[NDArray[np.float64], NDArray[np.float64]]] = {
            fields.kp: (np.zeros(n), np.full(n, self.kp_max)),
            fields.kd: (np.zeros(n), np.full(n, self.kd_max)),
        }
        for field_name in fields.reserved:
            exact[field_name] = (np.full(n, -FLOAT32_MAX), np.full(n, FLOAT32_MAX))
        for field_name, quantity in (
            (fields.position, "position"),
            (fields.velocity, "velocity"),
            (fields.effort, "effort"),
        ):
            exact[field_name] = limits.bounds_array(quantity)
        self._limit_exact = dict(exact)  # the robot's limits alone, for what an error says
        if ranges is not None:  # what the driver can carry narrows the limits
            for field_name, quantity in (
                (fields.position, "position"),
                (fields.velocity, "velocity"),
                (fields.effort, "effort"),
                (fields.kp, "kp"),
                (fields.kd, "kd"),
            ):
                lower, upper = exact[field_name]
                carried_lower, carried_upper = ranges.bounds_array(quantity)
                exact[field_name] = (
                    np.maximum(lower, carried_lower),
                    np.minimum(upper, carried_upper),
                )
        self._exact = exact
        accepted = {f: at_limit_bounds(*exact[f]) for f in self._rows}
        self._lower: NDArray[np.float64] = np.clip(
            np.array([accepted[f][0] for f in self._rows]), -_BIG, _BIG
        )
        self._upper: NDArray[np.float64] = np.clip(
            np.array([accepted[f][1] for f in self._rows]), -_BIG, _BIG
        )
        # What is applied: the accepted values clamped into the exact limits ("at the limit"),
        # clamped as one block in the order of the rows (a reserved row is clamped too, and
        # dropped); the row views kp, kd, position, velocity, effort are the command.
        self._block_lower = np.array([exact[f][0] for f in self._rows])
        self._block_upper = np.array([exact[f][1] for f in self._rows])
        # Per value of the rows×N block, in its order: the accepted (lower, upper) and the exact
        # (lower, upper) — the check's test in plain Python (see check()).
        self._every_bound = tuple(
            zip(
                self._lower.ravel().tolist(),
                self._upper.ravel().tolist(),
                self._block_lower.ravel().tolist(),
                self._block_upper.ravel().tolist(),
                strict=True,
            )
        )
        self._length_fields = (*self._rows, fields.brake)
        # verdict(values) → -1 / 1 / 0 (:func:`bounds_verdict`): compiled where built, one C call
        self._verdict: Callable[[NDArray[np.float64]], int] = (
            functools.partial(bounds_verdict, every_bound=self._every_bound)
            if _CORE is None
            else functools.partial(
                _CORE.bounds, self._lower, self._upper, self._block_lower, self._block_upper
            )
        )
        # The brake flags of the last command that passed and their read-only array: a
        # controller's brakes rarely change, so most commands share it (one array fewer each).
        self._brake_key: tuple[Any, ...] | None = None
        self._brakes: NDArray[np.bool_] = np.zeros(0, dtype=np.bool_)

    @property
    def actuator_order(self) -> tuple[str, ...]:
        return self._order

    @property
    def fields(self) -> ImpedanceFields:
        """The wire field names this check reads and its errors name."""
        return self._fields

    @property
    def allowed_sources(self) -> frozenset[str] | None:
        """The allow-list of source nodes, or ``None`` when every named source is accepted."""
        return self._allowed

    def bounds(self, field: str, index: int) -> tuple[float, float]:
        """(lower, upper) limits of ``field`` of joint ``index`` (±inf = unbounded); a value
        within float32 rounding of one is at it (:func:`~jointbus.drivers.limits.at_limit_bounds`).
        """
        lower, upper = self._exact[field]
        return float(lower[index]), float(upper[index])

    def check(self, cmd: ImpedanceMessage) -> ImpedanceCommand:
        """``cmd`` as the array's joint-space command if it may be applied; raise
        :class:`CommandRejected` otherwise. A value within float32 rounding of a limit comes
        back clamped to the limit.

        When the check knows the brakes (``has_brake``), the command comes back as a
        :class:`~jointbus.drivers.impedance.CheckedImpedance`: the driver whose limits these are
        applies it without checking its values again (validated once on the 500 Hz path)."""
        source = cmd.source_node
        try:
            allowed = self._allowed
            if (
                type(source) is not str
                or not source
                or (allowed is not None and source not in allowed)
            ):
                self._check_source(source)
            names = cmd.name
            if names is not self._order and names != self._order:
                self._raise_order(names)
            n = self._n
            columns = [getattr(cmd, f) for f in self._rows]
            brake = getattr(cmd, self._fields.brake)
            columns.append(brake)
            for column in columns:
                if len(column) != n:
                    for field, culprit in zip(self._length_fields, columns, strict=True):
                        if len(culprit) != n:
                            self._raise_length(field, len(culprit))
            del columns[-1]
            values = np.array(columns, dtype=np.float64)
            # Each value within its accepted bounds — and, the common case, strictly inside its
            # exact limits, where clamping it would change nothing (:func:`bounds_verdict`).
            verdict = self._verdict(values)
            if verdict < 0:
                self._raise_value(values, (values >= self._lower) & (values <= self._upper))
            clamp = verdict > 0  # at or within float32 rounding of a limit: clamped to it
            if self._brakeless and True in brake:
                self._check_brakes(brake)
        except ValidationError as error:
            raise CommandRejected(source, error) from error
        # kp, kd, position, velocity, effort: the first row and the last four (reserved rows
        # are dropped), read-only so the command takes them without a copy.
        if clamp:
            np.clip(values, self._block_lower, self._block_upper, out=values)
        values.flags.writeable = False
        kp, kd = values[0], values[-4]
        position, velocity, effort = values[-3], values[-2], values[-1]
        if type(brake) is tuple and brake == self._brake_key:
            brakes = self._brakes
        else:
            brakes = np.array(brake, dtype=np.bool_)
            brakes.flags.writeable = False
            if type(brake) is tuple:
                self._brake_key, self._brakes = brake, brakes
        certified = self._certified
        if certified is None:
            return ImpedanceCommand(position, velocity, effort, kp, kd, brakes)
        checked: CheckedImpedance = _certify(
            position, velocity, effort, kp, kd, brakes, certified[0], certified[1], self._ranges
        )
        return checked

    # -- culprits (only reached when a check fails) ------------------------------------------

    def _check_source(self, source: object) -> None:
        if type(source) is not str or not source:
            raise SourceNotAllowedError(
                self._type,
                "source_node",
                source,
                "a non-empty node name (arbitration ranks by source)",
            )
        allowed = self._allowed
        if allowed is not None and source not in allowed:
            raise SourceNotAllowedError(
                self._type, "source_node", source, f"one of the allowed sources {sorted(allowed)}"
            )

    def _raise_order(self, names: tuple[str, ...]) -> None:
        order = self._order
        for index, (got, want) in enumerate(zip(names, order, strict=False)):
            if got != want:
                # Say which of the two it is: a new user read "expected 'fl_j1'" for a name the
                # robot does not have as an ordering error, and "joint 'fr_j1' (index 0)" for a
                # swap without knowing fr_j1's own index (trial, 2026-12-07).
                why = (
                    f"{got!r} is actuator index {order.index(got)}"
                    if got in order
                    else f"{got!r} is not a joint of this array"
                )
                raise JointOrderError(
                    self._type,
                    "name",
                    got,
                    f"{want!r} at index {index} ({why}; names in actuator order: "
                    f"{', '.join(order)})",
                    joint=got,
                    index=index,
                )
        # One list is a prefix of the other: a length problem.
        count, n = len(names), len(order)
        if count < n:
            raise MissingNamesError(
                self._type,
                "name",
                list(names) if count <= _NAMES_SHOWN else f"{count} names",
                f"one name per actuator, in actuator order: the command names only {count} of "
                f"the {n} actuators (first missing: {order[count]!r} (index {count})); its "
                "values are checked once its names match",
                joint=order[count],
                index=count,
            )
        raise LengthMismatchError(
            self._type,
            "name",
            f"{count} names",
            f"{n} names in actuator order (surplus {names[n]!r})",
            joint=names[n],
            index=n,
        )

    def _raise_length(self, field: str, count: int) -> None:
        # The error names a joint, as every refusal does: here the first without a value (or the
        # index of the first surplus value). Said so: "joint 'fl_j0' (index 3): field 't_pos' =
        # '3 values'" read to a new user as if fl_j0 were at fault (2026-12-07).
        n = self._n
        if count < n:
            raise LengthMismatchError(
                self._type,
                field,
                f"{count} values",
                f"{n} values, one per actuator (the joint named is the first without one)",
                joint=self._order[count],
                index=count,
            )
        raise LengthMismatchError(
            self._type,
            field,
            f"{count} values",
            f"{n} values, one per actuator (the index named is the first surplus value's)",
            index=n,
        )

    def _check_brakes(self, brake: tuple[bool, ...]) -> None:
        for index in self._brakeless:
            if brake[index]:
                raise LimitError(
                    self._type,
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
                self._type,
                self._rows[row],
                float(values[row, index]),
                "a finite number",
                joint=self._order[index],
                index=index,
            )
        row, index = (int(k) for k in np.argwhere(~inside)[0])
        field = self._rows[row]
        lo, hi = self.bounds(field, index)
        value = float(values[row, index])
        single = self._fields.float32 and abs(value) <= FLOAT32_MAX  # beyond: no float32 form
        raise LimitError(
            self._type,
            field,
            np.float32(value) if single else value,
            f"within [{lo:g}, {hi:g}]{self._bound_by(field, index, value)}",
            joint=self._order[index],
            index=index,
        )

    def _bound_by(self, field: str, index: int, value: float) -> str:
        """`` (the md80's wire range)`` when the bound ``value`` passed is the driver's command
        range rather than a limit of the robot's, else empty."""
        ranges = self._ranges
        quantity = self._quantity(field)
        if ranges is None or quantity is None or not ranges.bound_by[index]:
            return ""
        lower, upper = self._limit_exact[field]
        carried_lo, carried_hi = ranges.bounds(quantity, index)
        below = value < float(lower[index]) or value < carried_lo
        tighter = carried_lo > lower[index] if below else carried_hi < upper[index]
        return f" ({ranges.bound_by[index]})" if tighter else ""

    def _quantity(self, field: str) -> str | None:
        """The command-range quantity of a wire field (``t_trq`` → ``effort``), or ``None``."""
        f = self._fields
        names = {f.position: "position", f.velocity: "velocity", f.effort: "effort",
                 f.kp: "kp", f.kd: "kd"}
        return names.get(field)
