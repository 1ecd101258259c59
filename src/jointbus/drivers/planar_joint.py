"""A planar joint expressed as three scalar actuators of an array (x, y, theta).

Where it sits: :mod:`jointbus.drivers`, beside :mod:`.actuator_array`. The driver API addresses
scalar actuators; a mobile base's planar joint is three of them. A driver that has such joints
lists them in a ``planar_joints`` attribute (:func:`planar_joints_of` reads it), so that the array
node can publish each as one Beam Bots value — a ``Transform2D`` pose, ``Twist2D`` velocity,
``Wrench2D`` effort — instead of three unrelated floats.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PlanarJoint", "planar_joints_of"]


@dataclass(frozen=True, slots=True)
class PlanarJoint:
    """Planar joint ``name`` made of the actuators at indices ``x`` (m), ``y`` (m), ``theta``
    (rad): positions are the pose in the parent frame, velocities the joint's own planar velocity
    (vx, vy m/s; omega rad/s)."""

    name: str
    x: int
    y: int
    theta: int

    @property
    def indices(self) -> tuple[int, int, int]:
        return (self.x, self.y, self.theta)


def planar_joints_of(array: object) -> tuple[PlanarJoint, ...]:
    """The planar joints a driver declares (none for most arrays)."""
    joints = getattr(array, "planar_joints", ())
    return tuple(j for j in joints if isinstance(j, PlanarJoint))
