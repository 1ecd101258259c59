"""A named, time-stamped vector of joint samples (Rock ``base::samples::Joints``).

Where it sits: :mod:`jointbus.messages`, above :mod:`~.joint_sample`; bounded by
:class:`~jointbus.messages.joint_limits.JointLimits`. Wire type ``jointbus_msgs/msg/Joints``:
``std_msgs/Header header`` (the sample time, wall clock), ``string[] names`` and
``jointbus_msgs/JointSample[] samples``, one sample per name.

Consumers address joints by name (the design's joint-order rule), so names must be non-empty and
unique and there must be exactly one sample per name; a lookup of a name that is not there raises
:class:`~jointbus.messages.errors.UnknownJointError` carrying the missing name.

The array node publishes one per state cycle, built by :meth:`Joints.from_arrays` straight from
the driver's columns (:mod:`~.numpy_columns`): the constructors' message, without their
per-sample checks once each column has been checked.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final

import numpy as np
import numpy.typing as npt

from jointbus.codec.wire import StringSeq
from jointbus.messages.base import Message
from jointbus.messages.errors import LengthMismatchError, UnknownJointError, ValidationError
from jointbus.messages.joint_sample import FIELDS, AmbiguousModeError, JointSample, Mode
from jointbus.messages.numpy_columns import float64_lists, has_infinity, listed, names_ok
from jointbus.messages.sensor_msgs import check_names
from jointbus.messages.stamp import Time
from jointbus.messages.std_msgs import Header


@dataclass(frozen=True, slots=True)
class Joints(Message):
    """Samples of several joints taken at one time: ``samples[i]`` belongs to ``names[i]``."""

    TYPE_NAME: ClassVar[str] = "jointbus_msgs/msg/Joints"
    header: Header = field(default_factory=Header)
    names: StringSeq = ()
    samples: tuple[JointSample, ...] = ()

    def __post_init__(self) -> None:
        tn = self.TYPE_NAME
        if type(self.header) is not Header:
            raise ValidationError(tn, "header", self.header, "a std_msgs Header")
        names = check_names(tn, "names", self.names)
        object.__setattr__(self, "names", names)
        samples: Any = self.samples
        if type(samples) is not tuple:
            if isinstance(samples, str | bytes) or not isinstance(samples, Iterable):
                raise ValidationError(tn, "samples", samples, "a sequence of JointSample")
            samples = tuple(samples)
            object.__setattr__(self, "samples", samples)
        if len(samples) != len(names):
            raise LengthMismatchError(
                tn, "samples", f"{len(samples)} samples", f"one sample per name ({len(names)})"
            )
        for index, sample in enumerate(samples):
            if type(sample) is not JointSample:
                raise ValidationError(
                    tn, "samples", sample, "a JointSample", joint=names[index], index=index
                )

    @classmethod
    def from_pairs(
        cls, pairs: Iterable[tuple[str, JointSample]], header: Header | None = None
    ) -> Joints:
        """Build from ``(name, sample)`` pairs (e.g. ``dict.items()``), in their order."""
        items = tuple(pairs)
        return cls(
            header if header is not None else Header(),
            tuple(name for name, _ in items),
            tuple(sample for _, sample in items),
        )

    @classmethod
    def from_arrays(
        cls,
        header: Header,
        names: tuple[str, ...],
        *,
        position: npt.NDArray[np.float64],
        speed: npt.NDArray[np.float64],
        effort: npt.NDArray[np.float64],
        raw: npt.NDArray[np.float64],
        acceleration: npt.NDArray[np.float64],
    ) -> Joints:
        """The samples of one read, from per-joint columns (``names[i]`` gets
        ``JointSample(position[i], speed[i], effort[i], raw[i], acceleration[i])``; units as
        :class:`JointSample`'s, NaN = unset).

        The same message, by the same rules, as the constructors — built in one pass for the
        per-cycle path of the array node (:mod:`.numpy_columns`): each column is checked once,
        then the samples are built without re-running the element checks.

        Columns that are not 1-D float64 numpy arrays of one value per name go through
        :class:`JointSample` element by element. An invalid value raises the error
        :class:`JointSample` raises, naming the joint (name and index); a column of another
        length raises a :class:`LengthMismatchError` naming it. Nothing is built then.
        """
        count = len(names) if type(names) is tuple else -1
        columns = float64_lists(count, position, speed, effort, raw, acceleration)
        if (
            columns is None
            or type(header) is not Header
            or not names_ok(names)
            or has_infinity(columns)
        ):
            return cls._from_columns(header, names, (position, speed, effort, raw, acceleration))
        new = _new
        set_p, set_s, set_e, set_r, set_a = _SAMPLE_SETTERS
        samples: list[JointSample] = []
        append = samples.append
        for p, s, e, r, a in zip(*columns, strict=True):
            sample = new(JointSample)
            set_p(sample, p)
            set_s(sample, s)
            set_e(sample, e)
            set_r(sample, r)
            set_a(sample, a)
            append(sample)
        msg = new(cls)
        setattr_ = object.__setattr__
        setattr_(msg, "header", header)
        setattr_(msg, "names", names)
        setattr_(msg, "samples", tuple(samples))
        return msg

    @classmethod
    def _from_columns(
        cls, header: Header, names: Sequence[str], columns: tuple[object, ...]
    ) -> Joints:
        """:meth:`from_arrays` through the constructors, element by element (columns of any
        sequence type; the path that finds and names what is wrong)."""
        tn = cls.TYPE_NAME
        checked = check_names(tn, "names", names)
        lists = [listed(tn, name, column) for name, column in zip(FIELDS, columns, strict=True)]
        for name, values in zip(FIELDS, lists, strict=True):
            if len(values) != len(checked):
                raise LengthMismatchError(
                    tn, name, f"{len(values)} values", f"one value per name ({len(checked)})"
                )
        samples = []
        for index, (p, s, e, r, a) in enumerate(zip(*lists, strict=True)):
            try:
                samples.append(JointSample(p, s, e, r, a))
            except ValidationError as exc:
                raise type(exc)(
                    exc.type_name,
                    exc.field,
                    exc.value,
                    exc.expected,
                    joint=checked[index],
                    index=index,
                ) from None
        return cls(header, checked, tuple(samples))

    @property
    def time(self) -> Time:
        """When the samples were taken (the header stamp, wall clock)."""
        return self.header.stamp

    def __len__(self) -> int:
        return len(self.names)

    def __iter__(self) -> Iterator[tuple[str, JointSample]]:
        """``(name, sample)`` pairs in order."""
        return zip(self.names, self.samples, strict=True)

    def __contains__(self, name: object) -> bool:
        return name in self.names

    def index(self, name: str) -> int:
        """Position of joint ``name`` (:class:`UnknownJointError` carrying ``name`` if absent)."""
        try:
            return self.names.index(name)
        except ValueError:
            raise UnknownJointError(name, self.names) from None

    def sample(self, name: str) -> JointSample:
        """The sample of joint ``name`` (:class:`UnknownJointError` carrying ``name`` if absent)."""
        return self.samples[self.index(name)]

    def __getitem__(self, name: str) -> JointSample:
        """Same as :meth:`sample`: joints are looked up by name, never by position."""
        return self.sample(name)

    def mode(self, name: str) -> Mode:
        """The command mode of joint ``name``; an :class:`AmbiguousModeError` names the joint."""
        index = self.index(name)
        try:
            return self.samples[index].mode()
        except AmbiguousModeError as exc:
            raise AmbiguousModeError(exc.fields, joint=name, index=index) from None


#: The slot setters of JointSample's fields in constructor order: a built sample's fields, set
#: as its constructor would leave them, without its element checks.
_SAMPLE_SETTERS: Final = tuple(JointSample.__dict__[name].__set__ for name in FIELDS)
_new = object.__new__

__all__ = ["Joints"]
