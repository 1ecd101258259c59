"""The state of a set of joints, each value shaped to its joint's kind (Beam Bots ``JointState``).

Where it sits: :mod:`jointbus.messages`, above :mod:`jointbus.math`, :mod:`~.joint_kind`,
:mod:`~.sensor_msgs` and :mod:`~.jointbus_msgs` (its wire record); the robot model in
:mod:`jointbus.model` checks it with :meth:`JointState.check_against`.

Each of ``positions``, ``velocities`` and ``efforts`` lines up with ``names``, and an element has
the shape of its joint: a ``float`` for a single-DoF joint (rad or m, rad/s or m/s, N·m or N), a
:class:`~jointbus.math.Transform2D` / :class:`~jointbus.math.Twist2D` /
:class:`~jointbus.math.Wrench2D` for a planar joint, a :class:`~jointbus.math.Transform` /
:class:`~jointbus.math.Twist` / :class:`~jointbus.math.Wrench` for a floating one.

**Why multi-DoF joints share this one message** (the reason Beam Bots gives): splitting them into a
second message type would make a robot's joint state arrive on two topics, and every consumer that
wants the whole configuration — a mobile base's pose *and* its mast at the same instant — would
have to subscribe to both and correlate them by timestamp to rebuild one instant. That is a
permanent tax on every consumer, paid to avoid changing one message. All three lists carry shaped
values for the same reason: velocities and efforts have exactly the problem positions have.

Rules Beam Bots only documents and this type enforces (a violation raises a typed error naming the
joint, its index, the field, the value and what was expected; nothing is built):

- every list is empty ("not reported") or exactly as long as ``names``;
- names are non-empty and unique (consumers map by name);
- ints (and numpy scalars) are accepted and stored as ``float``; NaN and infinities are rejected
  (use an empty list for "not reported");
- a joint's shape agrees across the three lists. When lists disagree, a multi-DoF value decides
  the joint's kind (a stray ``0.0`` placeholder is the likely mistake, a ``Twist2D`` is not), and
  the disagreeing list is the one named in the error.

The array node builds the record of scalar joints each state cycle with
:meth:`JointState.scalar_wire`, straight from the driver's columns (:mod:`~.numpy_columns`): the
record ``to_wire`` gives, without building the shaped values first.

It is a :class:`~jointbus.messages.base.Message`, so it is published on a bus as itself
(``bus.publisher(topic, JointState)``): in-process subscribers receive the object, remote ones the
record's bytes, which a subscriber of either class decodes.

The type is immutable (values are tuples) but is *not* a wire dataclass — no ROS field type holds "a
float or a transform". ``to_cdr`` / ``from_cdr`` / ``msgdef`` go through the record
:class:`jointbus.messages.jointbus_msgs.JointState` (per-kind arrays; its module documents the
layout; :meth:`JointState.to_wire` / :meth:`JointState.from_wire` convert), losslessly: names,
order, kinds, which lists are not reported, and every value bit for bit — floating rotations
included, because :class:`~jointbus.math.Quaternion` keeps an already-unit quaternion's components
unchanged.

**ROS pair.** :meth:`JointState.to_ros` splits into ``sensor_msgs/JointState`` (single-DoF joints)
and ``sensor_msgs/MultiDOFJointState`` (planar and floating joints, as 3-D transforms, twists and
wrenches: a planar joint becomes a transform about +z). The pair cannot say which multi-DoF joints
are planar, nor how the two name lists interleave, so :meth:`JointState.from_ros` takes both as
arguments: ``kinds`` (a ``Mapping[str, JointKind]``, e.g. the robot model's; multi-DoF joints it
does not call planar come back floating) and ``order`` (the name order; default single-DoF joints
first). With them the trip is lossless except for the one thing the ROS representation rounds: a
planar heading comes back through a quaternion, i.e. wrapped into (-π, π] and within a few ulp
(compare with :meth:`Transform2D.isclose`). Floating rotations come back exact.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, Self

import numpy as np
import numpy.typing as npt

from jointbus import math as jm
from jointbus.codec.errors import DecodeError
from jointbus.messages import geometry_msgs, jointbus_msgs, sensor_msgs
from jointbus.messages.base import Message
from jointbus.messages.errors import (
    LengthMismatchError,
    NonFiniteError,
    ShapeMismatchError,
    UnknownJointError,
    ValidationError,
)
from jointbus.messages.joint_kind import JointKind
from jointbus.messages.numpy_columns import float64_lists, names_ok
from jointbus.messages.sensor_msgs import check_names
from jointbus.messages.std_msgs import Header

Position = float | jm.Transform2D | jm.Transform
Velocity = float | jm.Twist2D | jm.Twist
Effort = float | jm.Wrench2D | jm.Wrench

_TN: Final = "JointState"
SINGLE_DOF: Final = JointKind.SINGLE_DOF
PLANAR: Final = JointKind.PLANAR
FLOATING: Final = JointKind.FLOATING

FIELDS: Final = ("positions", "velocities", "efforts")
#: Python type of a value, per field and joint kind (float for single-DoF joints).
SHAPES: Final[dict[str, dict[JointKind, type[Any]]]] = {
    "positions": {SINGLE_DOF: float, PLANAR: jm.Transform2D, FLOATING: jm.Transform},
    "velocities": {SINGLE_DOF: float, PLANAR: jm.Twist2D, FLOATING: jm.Twist},
    "efforts": {SINGLE_DOF: float, PLANAR: jm.Wrench2D, FLOATING: jm.Wrench},
}
_KIND_OF_TYPE: Final = {
    name: {cls: kind for kind, cls in shapes.items() if cls is not float}
    for name, shapes in SHAPES.items()
}
_KIND_TEXT: Final = {
    SINGLE_DOF: "single-DoF joint",
    PLANAR: "planar joint",
    FLOATING: "floating joint",
}
_QUANTITY: Final = {"positions": "position", "velocities": "velocity", "efforts": "effort"}

PLANAR_TOLERANCE: Final = 1e-9
"""Largest out-of-plane component (m, rad, m/s, N, ...) accepted when a 3-D value from a ROS
``MultiDOFJointState`` is read back as a planar joint's value."""

_isfinite = math.isfinite


def _is_number(value: object) -> bool:
    """A real number other than ``bool`` (``True`` as a joint position is a bug, not 1.0)."""
    return not isinstance(value, bool) and isinstance(value, numbers.Real)


def expected_text(field_name: str, kind: JointKind) -> str:
    """How an error spells the type a ``kind`` joint needs in ``field_name`` ("a float", ...)."""
    cls = SHAPES[field_name][kind]
    return "a float" if cls is float else cls.__name__


def _as_tuple(field_name: str, values: object) -> tuple[Any, ...]:
    if type(values) is tuple:
        return values
    if hasattr(values, "tolist") and not isinstance(values, str | bytes):
        listed = values.tolist()
        if isinstance(listed, list):
            return tuple(listed)
    if isinstance(values, str | bytes | Mapping) or not isinstance(values, Iterable):
        raise ValidationError(_TN, field_name, values, f"a sequence of joint {field_name}")
    return tuple(values)


def _classify(
    field_name: str, values: tuple[Any, ...], names: tuple[str, ...]
) -> tuple[tuple[Any, ...], tuple[JointKind, ...] | None]:
    """Normalise one reported list; return it with each joint's kind (``None``: all single-DoF).

    The fast path (every value a finite built-in float) costs one pass and one sum.
    """
    if all(type(v) is float for v in values) and _isfinite(sum(values)):
        return values, None
    kinds_of_type = _KIND_OF_TYPE[field_name]
    out: list[Any] = []
    kinds: list[JointKind] = []
    for index, value in enumerate(values):
        if type(value) is float or _is_number(value):
            try:
                number = float(value)
            except (OverflowError, ValueError, TypeError):
                number = math.nan
            if not _isfinite(number):
                raise NonFiniteError(
                    _TN,
                    field_name,
                    value,
                    f"a finite {_QUANTITY[field_name]} (an empty list means not reported)",
                    joint=names[index],
                    index=index,
                )
            out.append(number)
            kinds.append(SINGLE_DOF)
            continue
        kind = kinds_of_type.get(type(value))
        if kind is None:
            single, planar, floating = (expected_text(field_name, k) for k in JointKind)
            options = f"{single}, {planar} or {floating}"
            error = ShapeMismatchError if type(value) in _ALL_SHAPE_TYPES else ValidationError
            raise error(
                _TN,
                field_name,
                value,
                f"a joint {_QUANTITY[field_name]}: {options}",
                joint=names[index],
                index=index,
            )
        out.append(value)
        kinds.append(kind)
    return tuple(out), tuple(kinds)


_ALL_SHAPE_TYPES: Final = frozenset(
    cls for shapes in SHAPES.values() for cls in shapes.values() if cls is not float
)


def _agree(
    names: tuple[str, ...],
    reported: list[tuple[str, tuple[Any, ...], tuple[JointKind, ...]]],
) -> tuple[JointKind, ...]:
    """The joints' kinds, or a :class:`ShapeMismatchError` for the first joint whose lists
    disagree (the first multi-DoF value decides; the first list that differs is named)."""
    first = reported[0][2]
    if all(kinds == first for _, _, kinds in reported[1:]):
        return first
    for index, name in enumerate(names):
        joint_kinds = [kinds[index] for _, _, kinds in reported]
        if all(k == joint_kinds[0] for k in joint_kinds):
            continue
        decider = next((i for i, k in enumerate(joint_kinds) if k is not SINGLE_DOF), 0)
        kind = joint_kinds[decider]
        decider_field = reported[decider][0]
        for field_name, values, kinds in reported:
            if kinds[index] != kind:
                raise ShapeMismatchError(
                    _TN,
                    field_name,
                    values[index],
                    f"{expected_text(field_name, kind)} ({_KIND_TEXT[kind]}, shape agrees with "
                    f"{decider_field})",
                    joint=name,
                    index=index,
                )
    raise AssertionError("unreachable: kinds differ but no joint disagrees")  # pragma: no cover


@dataclass(frozen=True, slots=True)
class JointState(Message):
    """Positions, velocities and efforts of named joints, each value shaped to its joint.

    ``JointState(names, positions=(), velocities=(), efforts=(), header=Header())``; an empty list
    means the quantity is not reported. See the module docstring for the rules.

    A :class:`~jointbus.messages.base.Message` like the wire dataclasses (it overrides all three of
    ``to_cdr``, ``from_cdr`` and ``msgdef``), so a bus publishes it as itself: in-process
    subscribers get the object, remote ones its record's bytes.
    """

    TYPE_NAME: ClassVar[str] = jointbus_msgs.JointState.TYPE_NAME
    names: tuple[str, ...]
    positions: tuple[Position, ...] = ()
    velocities: tuple[Velocity, ...] = ()
    efforts: tuple[Effort, ...] = ()
    header: Header = field(default_factory=Header)
    _kinds: tuple[JointKind, ...] | None = field(
        init=False, repr=False, compare=False, default=None
    )

    def __post_init__(self) -> None:
        if type(self.header) is not Header:
            raise ValidationError(_TN, "header", self.header, "a std_msgs Header")
        names = check_names(_TN, "names", self.names)
        object.__setattr__(self, "names", names)
        count = len(names)
        reported: list[tuple[str, tuple[Any, ...], tuple[JointKind, ...]]] = []
        all_single = True
        for field_name in FIELDS:
            values = _as_tuple(field_name, getattr(self, field_name))
            if not values:
                object.__setattr__(self, field_name, ())
                continue
            if len(values) != count:
                raise LengthMismatchError(
                    _TN,
                    field_name,
                    f"{len(values)} values",
                    f"one value per name ({count}) or none (not reported)",
                )
            values, kinds = _classify(field_name, values, names)
            object.__setattr__(self, field_name, values)
            if kinds is None:
                kinds = (SINGLE_DOF,) * count
            else:
                all_single = all_single and all(k is SINGLE_DOF for k in kinds)
            reported.append((field_name, values, kinds))
        if not reported:
            return  # nothing reported: the joints' kinds are unknown
        agreed = reported[0][2] if all_single else _agree(names, reported)
        object.__setattr__(self, "_kinds", agreed)

    # -- queries ------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.names)

    @property
    def kinds(self) -> tuple[JointKind | None, ...]:
        """Each joint's kind as its values show it; ``None`` when no list is reported."""
        if self._kinds is None:
            return (None,) * len(self.names)
        return self._kinds

    def index(self, name: str) -> int:
        """Position of joint ``name`` (:class:`UnknownJointError` carrying ``name`` if absent)."""
        try:
            return self.names.index(name)
        except ValueError:
            raise UnknownJointError(name, self.names) from None

    def check_against(self, kinds: Mapping[str, JointKind]) -> None:
        """Check against a robot description: every joint must exist there, with that kind.

        Raises :class:`UnknownJointError` (carrying the name) for a joint the description lacks
        and :class:`ShapeMismatchError` for a value shaped for another kind.
        """
        own = self._kinds
        for index, name in enumerate(self.names):
            if name not in kinds:
                raise UnknownJointError(name, tuple(kinds))
            if own is None or own[index] == kinds[name]:
                continue
            kind = JointKind(kinds[name])
            field_name = next(f for f in FIELDS if getattr(self, f))
            raise ShapeMismatchError(
                _TN,
                field_name,
                getattr(self, field_name)[index],
                f"{expected_text(field_name, kind)} (the robot description says {name!r} is a "
                f"{_KIND_TEXT[kind]})",
                joint=name,
                index=index,
            )

    # -- the jointbus wire record ---------------------------------------------------------------

    def to_wire(self) -> jointbus_msgs.JointState:
        """The ``jointbus_msgs/msg/JointState`` record (unknown kinds are sent as SINGLE_DOF)."""
        kinds = self._kinds if self._kinds is not None else (SINGLE_DOF,) * len(self.names)
        arrays: dict[str, tuple[Any, ...]] = {}
        records: dict[JointKind, type[Any]]
        for field_name, wire_fields in zip(
            FIELDS, jointbus_msgs.QUANTITY_FIELDS.values(), strict=True
        ):
            values = getattr(self, field_name)
            single_name, planar_name, floating_name = wire_fields
            if not values:
                arrays[single_name] = arrays[planar_name] = arrays[floating_name] = ()
                continue
            records = _WIRE_RECORDS[field_name]
            arrays[single_name] = tuple(
                v for v, k in zip(values, kinds, strict=True) if k is SINGLE_DOF
            )
            arrays[planar_name] = tuple(
                records[PLANAR].from_math(v)
                for v, k in zip(values, kinds, strict=True)
                if k is PLANAR
            )
            arrays[floating_name] = tuple(
                records[FLOATING].from_math(v)
                for v, k in zip(values, kinds, strict=True)
                if k is FLOATING
            )
        return jointbus_msgs.JointState(
            header=self.header, name=self.names, kind=bytes(kinds), **arrays
        )

    @classmethod
    def scalar_wire(
        cls,
        header: Header,
        names: tuple[str, ...],
        positions: npt.NDArray[np.float64],
        velocities: npt.NDArray[np.float64],
        efforts: npt.NDArray[np.float64],
    ) -> jointbus_msgs.JointState:
        """The wire record of single-DoF joints given as float64 columns: the same record, by
        the same rules, as ``JointState(names, positions, velocities, efforts, header=header)
        .to_wire()`` — built directly for the per-cycle path of the array node
        (:mod:`.numpy_columns`), without the shaped values and the per-kind split.

        Units as the constructor's (rad or m, rad/s or m/s, N·m or N); an empty column is not
        reported. Anything else than 1-D float64 numpy columns of finite values, one per name
        or none, is handed to the constructor, whose error names the joint (name and index),
        field and value; nothing is built then.
        """
        count = len(names) if type(names) is tuple else -1
        columns = float64_lists(count, positions, velocities, efforts) or _reported_columns(
            count, positions, velocities, efforts
        )
        if (
            columns is None
            or type(header) is not Header
            or not names_ok(names)
            or not _isfinite(sum(map(sum, columns)))  # finite total: no NaN, no infinity
        ):
            columns_: Any = (positions, velocities, efforts)  # any sequence, numpy included
            return cls(names, columns_[0], columns_[1], columns_[2], header).to_wire()
        record = _new(jointbus_msgs.JointState)
        set_header, set_name, set_kind, set_p, set_v, set_e, *set_multi_dof = _RECORD_SETTERS
        set_header(record, header)
        set_name(record, names)
        set_kind(record, bytes(count))  # SINGLE_DOF (0) per joint
        p, v, e = columns
        set_p(record, tuple(p))
        set_v(record, tuple(v))
        set_e(record, tuple(e))
        for set_empty in set_multi_dof:
            set_empty(record, ())
        return record

    @classmethod
    def from_wire(cls, record: jointbus_msgs.JointState) -> Self:
        """The typed state of a record; a value that is not finite raises a
        :class:`NonFiniteError` naming the joint."""
        names = record.name
        kinds = tuple(JointKind(k) for k in record.kind)
        lists: dict[str, tuple[Any, ...]] = {}
        for field_name, wire_fields in zip(
            FIELDS, jointbus_msgs.QUANTITY_FIELDS.values(), strict=True
        ):
            arrays = [getattr(record, f) for f in wire_fields]
            if not any(arrays):
                lists[field_name] = ()
                continue
            cursors = [0, 0, 0]
            values: list[Any] = []
            for index, kind in enumerate(kinds):
                item = arrays[kind][cursors[kind]]
                cursors[kind] += 1
                if kind is SINGLE_DOF:
                    values.append(item)
                    continue
                try:
                    values.append(item.to_math())
                except ValueError as exc:
                    raise NonFiniteError(
                        _TN,
                        field_name,
                        item,
                        f"{expected_text(field_name, kind)} with finite components ({exc})",
                        joint=names[index],
                        index=index,
                    ) from None
            lists[field_name] = tuple(values)
        return cls(names, header=record.header, **lists)

    def to_cdr(self) -> bytes:
        """CDR bytes of the ``jointbus_msgs/msg/JointState`` record (see module docstring)."""
        return self.to_wire().to_cdr()

    @classmethod
    def from_cdr(cls, data: bytes | bytearray | memoryview) -> Self:
        """Decode; raises only :class:`~jointbus.codec.DecodeError` (naming the rule broken)."""
        record = jointbus_msgs.JointState.from_cdr(data)
        try:
            return cls.from_wire(record)
        except ValueError as exc:
            reason = f"decoded message is invalid: {exc}"
            raise DecodeError(cls.TYPE_NAME, len(data), reason) from exc

    @classmethod
    def msgdef(cls) -> str:
        """The ``.msg`` definition of the wire record (with its dependencies)."""
        return jointbus_msgs.JointState.msgdef()

    # -- the ROS pair ---------------------------------------------------------------------------

    def to_ros(self) -> tuple[sensor_msgs.JointState, sensor_msgs.MultiDOFJointState]:
        """Split into ``sensor_msgs/JointState`` (single-DoF joints) and
        ``sensor_msgs/MultiDOFJointState`` (planar joints lifted to 3-D, floating joints), both
        with this header. Joints whose kind is unknown (nothing reported) go to the first."""
        kinds = self._kinds if self._kinds is not None else (SINGLE_DOF,) * len(self.names)
        single = [i for i, k in enumerate(kinds) if k is SINGLE_DOF]
        multi = [i for i, k in enumerate(kinds) if k is not SINGLE_DOF]

        def pick(values: tuple[Any, ...], indices: list[int]) -> tuple[Any, ...]:
            return tuple(values[i] for i in indices) if values else ()

        joint_state = sensor_msgs.JointState(
            self.header,
            tuple(self.names[i] for i in single),
            pick(self.positions, single),
            pick(self.velocities, single),
            pick(self.efforts, single),
        )
        multi_dof = sensor_msgs.MultiDOFJointState(
            self.header,
            tuple(self.names[i] for i in multi),
            tuple(_lift_transform(v) for v in pick(self.positions, multi)),
            tuple(_lift_twist(v) for v in pick(self.velocities, multi)),
            tuple(_lift_wrench(v) for v in pick(self.efforts, multi)),
        )
        return joint_state, multi_dof

    @classmethod
    def from_ros(
        cls,
        joint_state: sensor_msgs.JointState,
        multi_dof: sensor_msgs.MultiDOFJointState,
        kinds: Mapping[str, JointKind] | None = None,
        order: Sequence[str] | None = None,
    ) -> Self:
        """Merge a ROS pair back into one state (the inverse of :meth:`to_ros`).

        ``kinds`` says which multi-DoF joints are planar (their 3-D values must then lie in the
        plane, within :data:`PLANAR_TOLERANCE`); other multi-DoF joints come back floating.
        ``order`` is the name order of the result (default: single-DoF joints first). Both
        messages must carry the same header when both name joints, and a quantity must be
        reported in both or neither.
        """
        kinds = kinds or {}
        single_names = joint_state.name
        multi_names = multi_dof.joint_names
        header = joint_state.header
        if single_names and multi_names:
            if multi_dof.header != joint_state.header:
                raise ValidationError(
                    _TN,
                    "header",
                    multi_dof.header,
                    f"the JointState's header {joint_state.header!r} (one instant)",
                )
        elif multi_names:
            header = multi_dof.header
        for index, name in enumerate(multi_names):
            if name in single_names:
                raise ValidationError(
                    _TN,
                    "names",
                    name,
                    "a joint in only one of JointState and MultiDOFJointState",
                    joint=name,
                    index=index,
                )
        for name in single_names:
            kind = JointKind(kinds.get(name, SINGLE_DOF))
            if kind is not SINGLE_DOF:
                raise ShapeMismatchError(
                    _TN,
                    "names",
                    name,
                    f"a {_KIND_TEXT[kind]} in MultiDOFJointState, not in JointState",
                    joint=name,
                    index=single_names.index(name),
                )
        multi_kinds: list[JointKind] = []
        for index, name in enumerate(multi_names):
            kind = JointKind(kinds.get(name, FLOATING))
            if kind is SINGLE_DOF:
                raise ShapeMismatchError(
                    _TN,
                    "names",
                    name,
                    "a single-DoF joint in JointState, not in MultiDOFJointState",
                    joint=name,
                    index=index,
                )
            multi_kinds.append(kind)

        by_name: dict[str, dict[str, Any]] = {name: {} for name in (*single_names, *multi_names)}
        ros_fields = (
            ("positions", "position", "transforms", _lower_transform),
            ("velocities", "velocity", "twist", _lower_twist),
            ("efforts", "effort", "wrench", _lower_wrench),
        )
        reported: dict[str, bool] = {}
        for field_name, single_field, multi_field, lower in ros_fields:
            single_values = getattr(joint_state, single_field)
            multi_values = getattr(multi_dof, multi_field)
            if single_names and multi_names and bool(single_values) != bool(multi_values):
                missing = multi_field if single_values else single_field
                raise LengthMismatchError(
                    _TN,
                    field_name,
                    f"reported in only one message ({missing} is empty)",
                    "a quantity reported for every joint or for none",
                )
            reported[field_name] = bool(single_values) or bool(multi_values)
            for name, value in zip(single_names, single_values, strict=False):
                by_name[name][field_name] = value
            for index, (name, kind, value) in enumerate(
                zip(multi_names, multi_kinds, multi_values, strict=False)
            ):
                by_name[name][field_name] = lower(value, kind, field_name, name, index)

        names = tuple(order) if order is not None else (*single_names, *multi_names)
        if sorted(names) != sorted(by_name):
            raise ValidationError(
                _TN,
                "order",
                names,
                f"a permutation of the joints in the pair: {sorted(by_name)}",
            )
        lists = {
            field_name: tuple(by_name[name][field_name] for name in names)
            if reported[field_name]
            else ()
            for field_name in FIELDS
        }
        return cls(names, header=header, **lists)


def _reported_columns(count: int, *columns: object) -> list[list[float]] | None:
    """Each column's floats, when each is a 1-D float64 column of ``count`` values or empty
    (not reported); ``None`` otherwise (see :meth:`JointState.scalar_wire`)."""
    out: list[list[float]] = []
    for column in columns:
        values = float64_lists(count, column) or float64_lists(0, column)
        if values is None:
            return None
        out.append(values[0])
    return out


#: The slot setters of the record's fields: header, name, kind, the single-DoF arrays in
#: ``FIELDS`` order, then the planar and floating arrays (a scalar record leaves them empty).
_RECORD_SETTERS: Final = tuple(
    vars(jointbus_msgs.JointState)[name].__set__
    for name in (
        "header",
        "name",
        "kind",
        *(fields[0] for fields in jointbus_msgs.QUANTITY_FIELDS.values()),
        *(name for fields in jointbus_msgs.QUANTITY_FIELDS.values() for name in fields[1:]),
    )
)
_new = object.__new__

_WIRE_RECORDS: Final[dict[str, dict[JointKind, type[Any]]]] = {
    "positions": {PLANAR: jointbus_msgs.Transform2D, FLOATING: geometry_msgs.Transform},
    "velocities": {PLANAR: jointbus_msgs.Twist2D, FLOATING: geometry_msgs.Twist},
    "efforts": {PLANAR: jointbus_msgs.Wrench2D, FLOATING: geometry_msgs.Wrench},
}


# ------------------------------------------------------------------------------------------------
# ROS pair helpers: planar values lift to 3-D about +z and come back when the joint is planar
# ------------------------------------------------------------------------------------------------
def _lift_transform(value: jm.Transform2D | jm.Transform) -> geometry_msgs.Transform:
    if isinstance(value, jm.Transform2D):
        value = value.to_transform()
    return geometry_msgs.Transform.from_math(value)


def _lift_twist(value: jm.Twist2D | jm.Twist) -> geometry_msgs.Twist:
    if isinstance(value, jm.Twist2D):
        value = value.to_twist()
    return geometry_msgs.Twist.from_math(value)


def _lift_wrench(value: jm.Wrench2D | jm.Wrench) -> geometry_msgs.Wrench:
    if isinstance(value, jm.Wrench2D):
        value = value.to_wrench()
    return geometry_msgs.Wrench.from_math(value)


def _to_math(value: Any, field_name: str, name: str, index: int) -> Any:
    try:
        return value.to_math()
    except ValueError as exc:
        raise NonFiniteError(
            _TN,
            field_name,
            value,
            f"finite components ({exc})",
            joint=name,
            index=index,
        ) from None


def _planar_check(
    off_plane: tuple[float, ...], value: Any, field_name: str, name: str, index: int, *, what: str
) -> None:
    if any(not abs(c) <= PLANAR_TOLERANCE for c in off_plane):
        raise ShapeMismatchError(
            _TN,
            field_name,
            value,
            f"{what} (planar joint): out-of-plane components within {PLANAR_TOLERANCE}",
            joint=name,
            index=index,
        )


def _lower_transform(
    value: geometry_msgs.Transform, kind: JointKind, field_name: str, name: str, index: int
) -> jm.Transform | jm.Transform2D:
    if kind is FLOATING:
        result: jm.Transform = _to_math(value, field_name, name, index)
        return result
    t, q = value.translation, value.rotation
    _planar_check(
        (t.z, q.x, q.y), value, field_name, name, index, what="a transform in the x-y plane"
    )
    if q.z == 0.0 and q.w == 0.0:
        raise ShapeMismatchError(
            _TN, field_name, value, "a non-zero rotation about +z", joint=name, index=index
        )
    theta = jm.wrap_angle(2.0 * math.atan2(q.z, q.w)) if _isfinite(q.z + q.w) else math.nan
    try:
        return jm.Transform2D(t.x, t.y, theta)
    except ValueError as exc:
        raise NonFiniteError(
            _TN, field_name, value, f"finite components ({exc})", joint=name, index=index
        ) from None


def _lower_twist(
    value: geometry_msgs.Twist, kind: JointKind, field_name: str, name: str, index: int
) -> jm.Twist | jm.Twist2D:
    twist: jm.Twist = _to_math(value, field_name, name, index)
    if kind is FLOATING:
        return twist
    lin, ang = twist.linear, twist.angular
    _planar_check((lin.z, ang.x, ang.y), value, field_name, name, index, what="a planar twist")
    return jm.Twist2D(lin.x, lin.y, ang.z)


def _lower_wrench(
    value: geometry_msgs.Wrench, kind: JointKind, field_name: str, name: str, index: int
) -> jm.Wrench | jm.Wrench2D:
    wrench: jm.Wrench = _to_math(value, field_name, name, index)
    if kind is FLOATING:
        return wrench
    force, torque = wrench.force, wrench.torque
    off_plane = (force.z, torque.x, torque.y)
    _planar_check(off_plane, value, field_name, name, index, what="a planar wrench")
    return jm.Wrench2D(force.x, force.y, torque.z)


__all__ = [
    "FIELDS",
    "PLANAR_TOLERANCE",
    "SHAPES",
    "Effort",
    "JointState",
    "Position",
    "Velocity",
    "expected_text",
]
