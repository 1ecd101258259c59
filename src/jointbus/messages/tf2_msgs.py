"""``tf2_msgs/TFMessage``: the message of the ``/tf`` and ``/tf_static`` topics.

Where it sits: :mod:`jointbus.messages`, above ``geometry_msgs``. The robot's frame tree (body,
legs, feet) is published with it so that RViz and Foxglove draw the robot as they do for ROS.
Each entry is a :class:`~jointbus.messages.geometry_msgs.TransformStamped` from its
``header.frame_id`` (parent) to its ``child_frame_id``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

from jointbus.messages.base import Message
from jointbus.messages.errors import ValidationError
from jointbus.messages.geometry_msgs import TransformStamped


@dataclass(frozen=True, slots=True)
class TFMessage(Message):
    """A batch of transforms, each stamped and naming its parent and child frame."""

    TYPE_NAME: ClassVar[str] = "tf2_msgs/msg/TFMessage"
    transforms: tuple[TransformStamped, ...] = ()

    def __post_init__(self) -> None:
        transforms = self.transforms
        if type(transforms) is not tuple:
            if not isinstance(transforms, Iterable):
                raise ValidationError(
                    self.TYPE_NAME, "transforms", transforms, "a sequence of TransformStamped"
                )
            transforms = tuple(transforms)
            object.__setattr__(self, "transforms", transforms)
        for index, item in enumerate(transforms):
            if type(item) is not TransformStamped:
                raise ValidationError(
                    self.TYPE_NAME,
                    "transforms",
                    item,
                    "a geometry_msgs TransformStamped",
                    index=index,
                )


__all__ = ["TFMessage"]
