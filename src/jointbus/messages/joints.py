"""A named, time-stamped vector of joint samples (Rock ``base::samples::Joints``).

Where it sits: :mod:`jointbus.messages`, above :mod:`~.joint_sample`; bounded by
:class:`~jointbus.messages.joint_limits.JointLimits`. Wire type ``jointbus_msgs/msg/Joints``:
``std_msgs/Header header`` (the sample time, wall clock), ``string[] names`` and
``jointbus_msgs/JointSample[] samples``, one sample per name.

Consumers address joints by name (the design's joint-order rule), so names must be non-empty and
unique and there must be exactly one sample per name; a lookup of a name that is not there raises
:class:`~jointbus.messages.errors.UnknownJointError` carrying the missing name.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

from jointbus.codec.wire import StringSeq
from jointbus.messages.base import Message
from jointbus.messages.errors import LengthMismatchError, UnknownJointError, ValidationError
from jointbus.messages.joint_sample import AmbiguousModeError, JointSample, Mode
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


__all__ = ["Joints"]
