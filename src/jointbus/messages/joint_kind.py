"""What shape a joint's values have: single-DoF, planar or floating.

Where it sits: :mod:`jointbus.messages`, used by :mod:`jointbus.messages.joint_state` (which shapes
each joint's position, velocity and effort by it) and by the robot model in :mod:`jointbus.model`,
which describes each joint's kind and hands a ``Mapping[str, JointKind]`` down to
:meth:`jointbus.messages.joint_state.JointState.check_against`. The enum lives here, below the
model, because a message must be checkable without importing the layer above it.

The integer values are the wire constants of ``jointbus_msgs/msg/JointState`` (``uint8 kind[]``),
so they must never be renumbered.
"""

from __future__ import annotations

import enum


class JointKind(enum.IntEnum):
    """The kind of a joint, which fixes the Python type of its values.

    - ``SINGLE_DOF``: position ``float``, velocity ``float``, effort ``float``;
    - ``PLANAR``: :class:`~jointbus.math.Transform2D`, :class:`~jointbus.math.Twist2D`,
      :class:`~jointbus.math.Wrench2D`;
    - ``FLOATING``: :class:`~jointbus.math.Transform`, :class:`~jointbus.math.Twist`,
      :class:`~jointbus.math.Wrench`.

    Single-DoF covers revolute, continuous and prismatic joints (rad or m); planar joints move in
    the x-y plane of their parent (a mobile base on the floor); floating joints have all six
    degrees of freedom (a free-flying or legged base).
    """

    SINGLE_DOF = 0
    PLANAR = 1
    FLOATING = 2


__all__ = ["JointKind"]
