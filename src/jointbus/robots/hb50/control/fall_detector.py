"""Has the robot fallen over? The body's tilt from the IMU, held long enough to be believed.

Where it sits: :mod:`jointbus.robots.hb50.control`, a pure component (no bus, no clock: the caller
passes the estimate's orientation, height and time). :class:`~.motion.MotionController` feeds it
every step and enters FALLEN while it says so.

What a real robot has, not what the simulator knows: the estimator's orientation is the IMU's
(gravity direction from its filter), so the *tilt* — the angle between the body's z axis and the
vertical, ``acos(1 − 2(x² + y²))`` of the quaternion — is measured on hardware as in MuJoCo. Tilt
and not ``|roll|`` / ``|pitch|`` alone: it does not depend on yaw and has no Euler singularity at
pitch ±π/2; since ``cos tilt = cos roll · cos pitch`` it exceeds the limit whenever roll or
pitch alone would (roll and pitch are still reported, so a reader sees *how* it lies). The
base height estimate is reported but not used to decide: it is computed from the feet in the
gravity-aligned frame, which is meaningless upside down (the new user's robot on its back read
−0.295 m), and a robot lying folded on its belly is low too, so height cannot tell fallen from
lying.

Thresholds (:class:`FallConfig`), from the hb50's geometry:

- ``tilt_limit`` = 1.0 rad (57°). Standing, the feet are at |y| ≈ 0.145 m and x ≈ +0.16 / −0.24 m
  under a body at ≈ 0.33 m, so the centre of mass leaves the support polygon at a tilt of
  ``atan(0.145 / 0.33)`` ≈ 0.41 rad sideways and ``atan(0.16 / 0.33)`` ≈ 0.45 rad forwards: past
  that no posture brings it back. The controller itself commands at most the pose limits' ±0.20 rad
  roll and pitch. On its side the tilt is π/2, on its back π. 1.0 rad is more than twice the static
  tipping angle, five times the commanded attitude, and well short of lying on a side.
- ``fall_hold`` = 0.2 s: the tilt must stay above the limit this long, so one bad IMU sample or a
  sharp jolt is not a fall; a robot really tipped past 1 rad does not come back within it.
- ``upright_limit`` = 0.5 rad and ``upright_hold`` = 1.0 s: back upright (someone righted it) only
  once the tilt stays below a limit well inside the fall limit (hysteresis: no chattering at the
  edge) for a second, so the robot is set down and still before it tries to stand up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from jointbus.math import Quaternion
from jointbus.messages.errors import LimitError, ValidationError

__all__ = ["FallConfig", "FallDetector", "Tilt"]

#: Slack (s) on the holds: stamps are floats, and 100 frames of 2 ms must make 0.2 s.
_TIME_EPS = 1e-6


@dataclass(frozen=True, slots=True)
class FallConfig:
    """Thresholds of :class:`FallDetector` (rad, s); see the module docstring for why these."""

    tilt_limit: float = 1.0
    fall_hold: float = 0.2
    upright_limit: float = 0.5
    upright_hold: float = 1.0

    def __post_init__(self) -> None:
        for name in ("tilt_limit", "fall_hold", "upright_limit", "upright_hold"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValidationError("FallConfig", name, value, "a real number")
            if not math.isfinite(value) or value < 0.0:
                raise LimitError("FallConfig", name, value, "a finite value ≥ 0")
            object.__setattr__(self, name, float(value))
        if not 0.0 < self.tilt_limit < math.pi:
            raise LimitError("FallConfig", "tilt_limit", self.tilt_limit, "in (0, π) rad")
        if self.upright_limit >= self.tilt_limit:
            raise LimitError(
                "FallConfig",
                "upright_limit",
                self.upright_limit,
                f"< tilt_limit ({self.tilt_limit} rad), for hysteresis",
            )


@dataclass(frozen=True, slots=True)
class Tilt:
    """How the body lies: ``roll``, ``pitch`` (rad, Z-Y-X Euler angles), ``tilt`` (rad, body z
    axis from the vertical, 0 … π) and the estimated base ``height`` (m, NaN if unknown)."""

    roll: float
    pitch: float
    tilt: float
    height: float

    @classmethod
    def of(cls, orientation: Quaternion, height: float) -> Tilt:
        w, x, y, z = orientation.w, orientation.x, orientation.y, orientation.z
        up = 1.0 - 2.0 * (x * x + y * y)  # z of the body's z axis in the world
        roll = math.atan2(2.0 * (w * x + y * z), up)
        pitch = math.asin(max(-1.0, min(1.0, 2.0 * (w * y - z * x))))
        return cls(roll, pitch, math.acos(max(-1.0, min(1.0, up))), height)

    def describe(self) -> str:
        """E.g. ``roll +3.14 rad, pitch -0.00 rad (tilt 3.14 rad), estimated base height
        -0.295 m``."""
        return (
            f"roll {self.roll:+.2f} rad, pitch {self.pitch:+.2f} rad (tilt {self.tilt:.2f} rad "
            f"from upright), estimated base height {self.height:.3f} m"
        )


class FallDetector:
    """Fallen / upright from the tilt, with the holds and hysteresis of :class:`FallConfig`.

    Starts upright. Time ``now`` (s) is any monotonic clock (only differences are used).
    """

    def __init__(self, config: FallConfig | None = None) -> None:
        self.config = config if config is not None else FallConfig()
        self._fallen = False
        self._since: float | None = None  # when the tilt last crossed towards the other state
        self.tilt: Tilt | None = None
        """The newest :class:`Tilt` (None before the first update)."""
        self.at_change: Tilt | None = None
        """The tilt when the state last changed (what a fall or righting is reported with)."""

    @property
    def fallen(self) -> bool:
        """Whether the robot is (still) tipped over."""
        return self._fallen

    def update(self, orientation: Quaternion, height: float, now: float) -> bool:
        """Take one estimate at ``now`` (s); returns :attr:`fallen` after it."""
        tilt = Tilt.of(orientation, height)
        self.tilt = tilt
        cfg = self.config
        if self._fallen:
            crossing, hold = tilt.tilt < cfg.upright_limit, cfg.upright_hold
        else:
            crossing, hold = tilt.tilt > cfg.tilt_limit, cfg.fall_hold
        if not crossing:
            self._since = None
            return self._fallen
        if self._since is None:
            self._since = now
        if now - self._since >= hold - _TIME_EPS:
            self._fallen = not self._fallen
            self._since = None
            self.at_change = tilt
        return self._fallen

    def reset(self) -> None:
        """Forget the history (upright)."""
        self._fallen = False
        self._since = None
        self.tilt = self.at_change = None
