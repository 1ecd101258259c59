"""jointbus.math: small immutable geometry value types.

Where it sits: the lowest layer of jointbus (``math`` → ``codec`` → ``messages`` → ...); it imports
only numpy and the standard library. Every type is a frozen, slotted dataclass of finite floats,
compares by value, validates on construction (raising :class:`MathError`, a ``ValueError``) and
converts to and from numpy arrays. Arithmetic on single values is pure Python because at 500 Hz the
per-call cost of a numpy round trip for three numbers dominates.

Units are SI: m, m/s, rad, rad/s, N, N·m. Quaternions are (w, x, y, z), always unit length.
"""

from jointbus.math.errors import MathError
from jointbus.math.quaternion import Quaternion
from jointbus.math.transform import Transform
from jointbus.math.transform2d import Transform2D, wrap_angle
from jointbus.math.twist import Twist, Twist2D
from jointbus.math.vec3 import Vec3
from jointbus.math.wrench import Wrench, Wrench2D

__all__ = [
    "MathError",
    "Quaternion",
    "Transform",
    "Transform2D",
    "Twist",
    "Twist2D",
    "Vec3",
    "Wrench",
    "Wrench2D",
    "wrap_angle",
]
