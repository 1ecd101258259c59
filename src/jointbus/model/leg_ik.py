"""Analytic inverse kinematics of one three-joint quadruped leg (the hb50 leg).

Where it sits: :mod:`jointbus.model`, beside :mod:`~jointbus.model.kinematics` (which is the
forward direction); the control node turns foot targets into joint targets with it at 500 Hz.

The leg is read from the robot model, not hard-coded: ``<leg>_j0`` (hip abduction, axis ±x of the
body, through a point of the body), ``<leg>_j1`` (hip flexion, axis ±y) and ``<leg>_j2`` (knee,
axis ±y), then a fixed joint to the ``<leg>_foot`` link. :meth:`LegIK.from_model` checks that the
model has that structure and raises :class:`~jointbus.model.errors.DefinitionError` otherwise.

A foot position has up to four solutions (two for the abduction, two knee directions). The one
returned keeps the **conventions of the reference pose** (``home``, the standing pose): the foot on
the same side of the abduction axis as when standing (below it), and the knee bent the same way.
That is what a controller wants — the leg never flips through a singularity to a mirror pose —
and it makes ``ik(fk(q)) == q`` for every ``q`` inside the limits that follows the same
conventions. A target out of reach or needing a joint beyond its limits raises
:class:`~jointbus.model.errors.UnreachableError` naming the leg, the target and the reason.

Derivation (hip frame = body frame turned by j0 about the abduction axis): the thigh and shank
move in the plane ``y = w`` of the hip frame, where ``w`` is the leg's lateral offset (0.081 m on
the hb50). Turning the target about the abduction axis until its lateral coordinate is ``w``
gives j0; in that plane the knee angle follows from the law of cosines on the distance from the
j1 axis, and j1 from the direction of the target minus the knee's contribution.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt

from jointbus.math import Quaternion, Vec3
from jointbus.model.errors import DefinitionError, UnreachableError
from jointbus.model.joint import JointType
from jointbus.model.limits import JointLimitSpec
from jointbus.model.robot import RobotModel

_AXIS_TOL = 1e-9
_LIMIT_TOL = 1e-9
_REACH_TOL = 1e-9
_TAU = math.tau
_IDENTITY = Quaternion.identity()


def _wrap(angle: float) -> float:
    wrapped = math.remainder(angle, _TAU)
    return math.pi if wrapped <= -math.pi else wrapped


def _sign(axis: Vec3, component: str, owner: str) -> float:
    """+1 or -1 if ``axis`` is ±(that unit vector), else a DefinitionError."""
    values = {"x": axis.x, "y": axis.y, "z": axis.z}
    main = values.pop(component)
    if abs(abs(main) - 1.0) > _AXIS_TOL or any(abs(v) > _AXIS_TOL for v in values.values()):
        raise DefinitionError(owner, "axis", tuple(axis), f"±{component} for leg IK")
    return 1.0 if main > 0 else -1.0


@dataclass(frozen=True, slots=True)
class LegIK:
    """Closed-form IK of one leg; build with :meth:`from_model` (all lengths m, angles rad)."""

    leg: str
    joint_names: tuple[str, str, str]
    joint_indices: tuple[int, int, int]
    limits: tuple[JointLimitSpec, JointLimitSpec, JointLimitSpec]
    hip: tuple[float, float, float]  # a point of the abduction axis, body frame
    s0: float  # abduction axis = s0 · x
    s1: float  # hip flexion axis = s1 · y
    s2: float  # knee axis = s2 · y
    j1_offset: tuple[float, float, float]  # j1 origin in the hip frame
    plane_y: float  # lateral offset of the leg plane in the hip frame
    thigh: tuple[float, float]  # (length, angle in the x-z plane at j1 = 0)
    shank: tuple[float, float]  # (length, angle relative to the thigh frame at j2 = 0)
    below: float  # -1: foot below the abduction axis (hip frame z < 0) in the reference pose
    knee: float  # sign of the knee bend (sin of the shank-thigh angle) in the reference pose
    #: (position_min, position_max) of each joint (rad), read from ``limits`` for :meth:`solve`.
    bounds: tuple[tuple[float, float], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "bounds", tuple((lim.position_min, lim.position_max) for lim in self.limits)
        )

    @classmethod
    def from_model(cls, model: RobotModel, leg: str, reference_pose: str = "home") -> LegIK:
        """The IK of leg ``leg`` (``"fr"`` …) of ``model``; conventions from ``reference_pose``."""
        chain = model.chain(f"{leg}_foot")
        names = (f"{leg}_j0", f"{leg}_j1", f"{leg}_j2")
        moving = [j for j in chain if j.is_moving]
        if [j.name for j in moving] != list(names) or chain[0].parent != model.root:
            raise DefinitionError(
                f"leg {leg!r}",
                "chain",
                [j.name for j in chain],
                f"{names} from the root link then fixed joints to {leg}_foot",
            )
        for joint in chain:
            if joint.origin.rotation.angle_to(_IDENTITY) > _AXIS_TOL:
                raise DefinitionError(
                    f"joint {joint.name!r}", "origin.rpy", joint.origin.rotation, "no rotation"
                )
            if joint.is_moving and joint.type is not JointType.REVOLUTE:
                raise DefinitionError(f"joint {joint.name!r}", "type", joint.type, "revolute")
        j0, j1, j2 = moving
        after_j2 = chain[chain.index(j2) + 1 :]
        s0 = _sign(j0.axis, "x", f"joint {j0.name!r}")
        s1 = _sign(j1.axis, "y", f"joint {j1.name!r}")
        s2 = _sign(j2.axis, "y", f"joint {j2.name!r}")
        t = j2.origin.translation
        f = Vec3.ZERO
        for joint in after_j2:
            f = f + joint.origin.translation
        o1 = j1.origin.translation
        thigh_angle = math.atan2(t.z, t.x)
        shank_angle = math.atan2(f.z, f.x) - thigh_angle
        ik = cls(
            leg=leg,
            joint_names=names,
            joint_indices=(
                model.actuator_index(names[0]),
                model.actuator_index(names[1]),
                model.actuator_index(names[2]),
            ),
            limits=(j0.limits, j1.limits, j2.limits),
            hip=(j0.origin.translation.x, j0.origin.translation.y, j0.origin.translation.z),
            s0=s0,
            s1=s1,
            s2=s2,
            j1_offset=(o1.x, o1.y, o1.z),
            plane_y=o1.y + t.y + f.y,
            thigh=(math.hypot(t.x, t.z), thigh_angle),
            shank=(math.hypot(f.x, f.z), shank_angle),
            below=-1.0,
            knee=1.0,
        )
        pose = model.pose(reference_pose)
        below, knee = ik._branches(
            (pose.get(names[0], 0.0), pose.get(names[1], 0.0), pose.get(names[2], 0.0))
        )
        return replace(ik, below=below, knee=knee)

    # --- the two branch signs of a configuration ---------------------------------------------
    def _branches(self, q: tuple[float, float, float]) -> tuple[float, float]:
        """(side of the abduction axis, knee sign) of configuration ``q``."""
        _j0, j1, j2 = q
        _x, _y, z = self._hip_frame_foot(j1, j2)
        gamma = self.shank[1] - self.s2 * j2
        below = -1.0 if z < 0 else 1.0
        knee = 1.0 if math.sin(gamma) >= 0 else -1.0
        return below, knee

    def _hip_frame_foot(self, j1: float, j2: float) -> tuple[float, float, float]:
        """Foot position in the hip frame, relative to the abduction-axis point."""
        (l1, a1), (l2, a2) = self.thigh, self.shank
        psi_t = a1 - self.s1 * j1
        psi_s = psi_t + a2 - self.s2 * j2
        ox, _oy, oz = self.j1_offset
        return (
            ox + l1 * math.cos(psi_t) + l2 * math.cos(psi_s),
            self.plane_y,
            oz + l1 * math.sin(psi_t) + l2 * math.sin(psi_s),
        )

    # --- forward and inverse -----------------------------------------------------------------
    def forward(self, j0: float, j1: float, j2: float) -> tuple[float, float, float]:
        """Foot position (m, body frame) of joint angles ``(j0, j1, j2)`` (rad)."""
        x, y, z = self._hip_frame_foot(j1, j2)
        a = self.s0 * j0
        c, s = math.cos(a), math.sin(a)
        hx, hy, hz = self.hip
        return (hx + x, hy + c * y - s * z, hz + s * y + c * z)

    def solve(self, target: Vec3 | tuple[float, float, float]) -> tuple[float, float, float]:
        """Joint angles ``(j0, j1, j2)`` (rad) putting the foot centre at ``target`` (m, body).

        Raises :class:`UnreachableError` if the target is out of reach or needs a joint outside
        its limits (by more than 1e-9 rad).

        Written for the walking controller, which calls it for every leg at 500 Hz: the three
        angles are wrapped and checked against the limits inline (what :func:`_wrap` and
        :meth:`_within_limits` do, which build the error), so a reachable target costs no
        helper calls.
        """
        tx, ty, tz = (target.x, target.y, target.z) if isinstance(target, Vec3) else target
        px, py, pz = float(tx), float(ty), float(tz)
        isfinite = math.isfinite
        if not (isfinite(px) and isfinite(py) and isfinite(pz)):
            raise UnreachableError(self.leg, (px, py, pz), "the target is not finite")
        hx, hy, hz = self.hip
        rx, ry, rz = px - hx, py - hy, pz - hz
        rho = math.hypot(ry, rz)
        w = self.plane_y
        if rho < abs(w) - _REACH_TOL:
            raise UnreachableError(
                self.leg,
                (px, py, pz),
                f"{rho:.4f} m from the abduction axis, closer than the leg's lateral offset "
                f"{abs(w):.4f} m",
            )
        alpha = math.atan2(rz, ry)
        alpha_hip = self.below * math.acos(max(-1.0, min(1.0, w / rho))) if rho > 0 else 0.0
        j0 = math.remainder(self.s0 * (alpha - alpha_hip), _TAU)
        # target in the hip frame, relative to the j1 axis, in the leg plane
        ox, _oy, oz = self.j1_offset
        big_x = rx - ox
        big_z = rho * math.sin(alpha_hip) - oz
        (l1, a1), (l2, a2) = self.thigh, self.shank
        dist2 = big_x * big_x + big_z * big_z
        cos_gamma = (dist2 - l1 * l1 - l2 * l2) / (2.0 * l1 * l2)
        if not -1.0 - _REACH_TOL <= cos_gamma <= 1.0 + _REACH_TOL:
            raise UnreachableError(
                self.leg,
                (px, py, pz),
                f"{math.sqrt(dist2):.4f} m from the hip flexion axis; the leg reaches "
                f"[{abs(l1 - l2):.4f}, {l1 + l2:.4f}] m",
            )
        gamma = self.knee * math.acos(max(-1.0, min(1.0, cos_gamma)))
        j2 = math.remainder(self.s2 * (a2 - gamma), _TAU)
        psi_t = math.atan2(big_z, big_x) - math.atan2(
            l2 * math.sin(gamma), l1 + l2 * math.cos(gamma)
        )
        j1 = math.remainder(self.s1 * (a1 - psi_t), _TAU)
        # _wrap: −π → π; then _within_limits: in range (within the tolerance) → clamped
        (lo0, hi0), (lo1, hi1), (lo2, hi2) = self.bounds
        if j0 <= -math.pi:
            j0 = math.pi
        if j1 <= -math.pi:
            j1 = math.pi
        if j2 <= -math.pi:
            j2 = math.pi
        if (
            lo0 - _LIMIT_TOL <= j0 <= hi0 + _LIMIT_TOL
            and lo1 - _LIMIT_TOL <= j1 <= hi1 + _LIMIT_TOL
            and lo2 - _LIMIT_TOL <= j2 <= hi2 + _LIMIT_TOL
        ):
            return (
                min(max(j0, lo0), hi0),
                min(max(j1, lo1), hi1),
                min(max(j2, lo2), hi2),
            )
        point = (px, py, pz)
        return (
            self._within_limits(point, 0, j0),
            self._within_limits(point, 1, j1),
            self._within_limits(point, 2, j2),
        )

    def _within_limits(self, point: tuple[float, float, float], i: int, value: float) -> float:
        spec = self.limits[i]
        lo, hi = spec.position_min, spec.position_max
        for candidate in (value, value + _TAU, value - _TAU):
            if lo - _LIMIT_TOL <= candidate <= hi + _LIMIT_TOL:
                return min(max(candidate, lo), hi)
        raise UnreachableError(
            self.leg,
            point,
            f"needs {self.joint_names[i]} = {value:.4f} rad, outside its limits [{lo}, {hi}]",
            joint=self.joint_names[i],
            index=self.joint_indices[i],
        )

    def solve_array(self, target: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """:meth:`solve` for a length-3 array, returning a length-3 array."""
        x, y, z = np.asarray(target, dtype=np.float64).reshape(3).tolist()
        return np.array(self.solve((x, y, z)))


def legs_ik(
    model: RobotModel, legs: tuple[str, ...] = ("fr", "fl", "rl", "rr")
) -> dict[str, LegIK]:
    """``{leg: LegIK}`` for each leg of a quadruped model."""
    return {leg: LegIK.from_model(model, leg) for leg in legs}
