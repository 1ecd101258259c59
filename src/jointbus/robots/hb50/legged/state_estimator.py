"""The control node's state estimate: legs (feet, contacts, forces) and the body's pose and twist.

Where it sits: :mod:`jointbus.robots.hb50.legged`, a pure component (no bus, no clock): the control
node feeds it every ``/hb50/bridge_data`` frame and publishes what it returns as ``RobotState``;
the motion controller reads the measured joints and the estimated contacts from it.

What is estimated, and how (units SI; "body frame" = the robot's root link, x forward, z up):

- **Feet** — positions of the foot-sphere centres (m, body frame) by forward kinematics and their
  velocities relative to the body (m/s, ``J·q̇``), from :mod:`.leg_kinematics`.
- **Ground reaction force** per foot (N, body frame): the force the ground exerts *on* the foot.
  Statics of a leg with that force at its foot: ``τ + Jᵀ·f = 0`` (``τ`` = measured motor torques
  on the leg, ``J`` = the leg's 3 × 3 foot Jacobian), so ``f = −(Jᵀ)⁻¹·τ``. A foot the robot
  stands on therefore reads ≈ (0, 0, +m·g/4) when level. Leg weight, joint friction and inertia are
  ignored, so the estimate is good to a few newtons. Near a singular leg (knee straight,
  ``|det J| < singular_det``) the force is NaN: it cannot be told from the torques.
- **Contact** per foot: the force's vertical component in the gravity-aligned frame exceeds
  ``contact_on`` (N); it is released below ``contact_off`` (hysteresis, so a foot carrying a load
  near the threshold does not flicker). A NaN force (missing torque, singular leg) means no contact.
- **Orientation**: the IMU's orientation (filtered by the IMU), moved to the body through the IMU's
  mount in the robot file. A frame whose quaternion is NaN or zero keeps the previous orientation.
- **Height** of the body origin above the ground: the mean over feet in contact of
  ``−z + foot radius``, with ``z`` the foot centre's height in the gravity-aligned body frame
  (``R·p``). With no foot in contact the robot is assumed to rest on the ground (lying, or
  with unloaded legs) and the lowest foot to touch it — right for a robot lying down (within the
  few centimetres its belly keeps the feet up), wrong for one held in the air, which no leg
  kinematics can tell; the last height is kept if no foot position is known.
- **Velocity** (body frame): leg odometry. A stance foot is still in the world, so
  ``0 = v + ω × p + ṗ_rel`` gives ``v = −(ṗ_rel + ω × p)`` per stance foot (``ω`` from the
  gyro); the mean over stance feet is low-pass filtered with time constant ``velocity_tau`` (the
  joint velocity noise of the drives is ≈ 0.4 rad/s, i.e. ≈ 0.1 m/s per foot). Without stance
  feet the last value is kept. World-frame velocities are the body ones turned by ``R``.
- **Position** in the world (odometry) frame: x, y integrated from the world velocity, z = height.
  It drifts, as all leg odometry does; it starts at (0, 0, height).

Speed (target: well under 100 µs, a twentieth of the 2 ms cycle; issue 21 asks the whole control
step for ≤ 0.5× the bare loop's cycle): the legs are evaluated in closed form by
:mod:`.leg_kinematics` (see there why per leg and not as numpy arrays), and everything after them —
contacts, height, leg odometry, the rotations by ``R`` — on plain floats (:func:`rotation_rows`,
:func:`mat_vec`), the per-foot work in one pass; numpy is used once per output field, to build the
arrays of the estimate. In the tests' MuJoCo walk on the 2-core development VM (thread CPU per
update, p50, at load 14): ≈ 20 µs, against ≈ 71 µs when the body-frame arithmetic was a few
3-vector numpy products (bench/bench_control.py measures the whole control step).

Compiled (2026-12-06): that Python still cost 60–68 µs of the control step's CPU a frame in the
running layout (cold caches between frames), 21–37 µs warm. What follows the orientation — the
legs, contacts, height, odometry — is now one call to ``_leg_accel``'s ``Legs.estimate``, and
the estimate's arrays are views of one fresh buffer it fills (11–18 µs warm, alternated with
the old code in the same minutes).
:meth:`StateEstimator.update_python` stays as the reference (it runs where the core is not
built); a hypothesis test holds the two together bit for bit, filter state included. Both keep
the filter state in one ``array('d')`` (:data:`_F_HEIGHT` …).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from jointbus.math import Quaternion
from jointbus.messages.errors import LimitError, UnknownJointError, ValidationError
from jointbus.model.robot import RobotModel
from jointbus.robots.hb50.legged.leg_kinematics import LegKinematics
from jointbus.robots.hb50.messages import BridgeData

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

__all__ = [
    "EstimatedState",
    "EstimatorConfig",
    "Matrix3",
    "StateEstimator",
    "mat_vec",
    "rotation_of",
    "rotation_rows",
]

_OWNER = "StateEstimator"
#: The filter state's layout (``StateEstimator._filter``, an ``array('d')`` that the compiled step
#: and the reference both update): height (m; NaN while unknown), body velocity (3, m/s, body
#: frame), odometry x and y (m), then one contact flag per leg (1.0 in contact, 0.0 not).
_F_HEIGHT, _F_V, _F_X, _F_Y, _F_CONTACT = 0, 1, 4, 5, 6


#: A 3 × 3 matrix as three rows of plain floats.
Matrix3 = tuple[
    tuple[float, float, float], tuple[float, float, float], tuple[float, float, float]
]


def rotation_rows(w: float, x: float, y: float, z: float) -> Matrix3:
    """Rows of the rotation matrix of the unit quaternion (w, x, y, z): the numbers of
    :meth:`Quaternion.to_matrix <jointbus.math.Quaternion.to_matrix>`, as plain floats — the
    per-step code turns a handful of 3-vectors with it, where a numpy call costs more than the
    arithmetic."""
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz = x * y, x * z, y * z
    wx, wy, wz = w * x, w * y, w * z
    return (
        (1.0 - 2.0 * (yy + zz), 2.0 * (xy - wz), 2.0 * (xz + wy)),
        (2.0 * (xy + wz), 1.0 - 2.0 * (xx + zz), 2.0 * (yz - wx)),
        (2.0 * (xz - wy), 2.0 * (yz + wx), 1.0 - 2.0 * (xx + yy)),
    )


def rotation_of(q: Quaternion) -> Matrix3:
    """:func:`rotation_rows` of ``q``."""
    return rotation_rows(q.w, q.x, q.y, q.z)


def mat_vec(m: Matrix3, x: float, y: float, z: float) -> tuple[float, float, float]:
    """``m·(x, y, z)``."""
    (a0, a1, a2), (b0, b1, b2), (c0, c1, c2) = m
    return (a0 * x + a1 * y + a2 * z, b0 * x + b1 * y + b2 * z, c0 * x + c1 * y + c2 * z)


@dataclass(frozen=True, slots=True)
class EstimatorConfig:
    """Tuning of the estimator.

    ``contact_on`` / ``contact_off`` (N): vertical ground force above which a foot is taken to be
    in contact, and below which it is released (``contact_off < contact_on``). The defaults suit a
    17 kg quadruped (≈ 42 N per foot standing). ``velocity_tau`` (s): time constant of the body
    velocity low-pass (0 = none). ``singular_det`` (m³): smallest ``|det J|`` of a leg whose force
    is estimated.
    """

    contact_on: float = 20.0
    contact_off: float = 10.0
    velocity_tau: float = 0.03
    singular_det: float = 1e-5

    def __post_init__(self) -> None:
        for name in ("contact_on", "contact_off", "velocity_tau", "singular_det"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValidationError("EstimatorConfig", name, value, "a real number")
            if not math.isfinite(value) or value < 0.0:
                raise LimitError("EstimatorConfig", name, value, "a finite value ≥ 0")
            object.__setattr__(self, name, float(value))
        if self.contact_off >= self.contact_on:
            raise LimitError(
                "EstimatorConfig",
                "contact_off",
                self.contact_off,
                f"< contact_on ({self.contact_on} N), for hysteresis",
            )


@dataclass(frozen=True, slots=True)
class EstimatedState:
    """One estimate (fresh arrays; the caller may keep them). Units SI, see the module docstring.

    Legs are in :attr:`legs` order (the actuator order: fr, fl, rl, rr on the hb50); joints in the
    model's actuator order (NaN where the bridge reported none).
    """

    legs: tuple[str, ...]
    joint_position: FloatArray  # (joints,) rad
    joint_velocity: FloatArray  # (joints,) rad/s
    joint_effort: FloatArray  # (joints,) N·m
    foot_position: FloatArray  # (legs, 3) m, body frame
    foot_velocity: FloatArray  # (legs, 3) m/s, relative to the body, body frame
    foot_force: FloatArray  # (legs, 3) N, ground on foot, body frame
    contact: BoolArray  # (legs,)
    orientation: Quaternion  # body in the world (gravity-aligned) frame
    position: FloatArray  # (3,) m, body origin in the odometry frame
    height: float  # m, body origin above the ground
    body_linear_velocity: FloatArray  # (3,) m/s, body frame
    body_angular_velocity: FloatArray  # (3,) rad/s, body frame
    world_linear_velocity: FloatArray  # (3,) m/s, world frame
    world_angular_velocity: FloatArray  # (3,) rad/s, world frame
    #: (3,) m/s², the IMU's specific force in the body frame (≈ (0, 0, 9.81) at rest; NaN when the
    #: bridge sent none) — the walking estimator's prediction input.
    linear_acceleration: FloatArray = field(default_factory=lambda: np.full(3, math.nan))

    @property
    def contact_count(self) -> int:
        """How many feet are in contact."""
        return int(self.contact.sum())


class StateEstimator:
    """Leg and body state from BridgeData frames (see the module docstring); keeps filter state.

    Args:
        model: the robot (legs, joint order, IMU mount, foot radius are read from it).
        config: thresholds and filter constants.
        imu: name of the IMU sensor mount whose orientation the bridge reports (default: the
            model's first IMU; none → the bridge's orientation is taken as the body's).
    """

    def __init__(
        self,
        model: RobotModel,
        config: EstimatorConfig | None = None,
        *,
        imu: str | None = None,
    ) -> None:
        self.model = model
        self.config = config or EstimatorConfig()
        self.kinematics = LegKinematics(model)
        self.legs = self.kinematics.legs
        self.joint_names = model.actuator_order
        mounts = [s for s in model.sensors if s.kind == "imu"]
        mount = model.sensor(imu) if imu is not None else (mounts[0] if mounts else None)
        rotation = mount.origin.rotation if mount is not None else Quaternion.identity()
        self._mount_inverse: Quaternion | None = (
            None if rotation.isclose(Quaternion.identity()) else rotation.conjugate()
        )
        self._mount_matrix = rotation_of(rotation)
        self._n_legs = len(self.legs)
        self._foot_radius = self.kinematics.foot_radius.tolist()
        self._order_cache: tuple[tuple[str, ...], list[int] | None] | None = None
        self._core = self.kinematics.core
        # the compiled step's output, one fresh float64 buffer per frame whose slices are the
        # estimate's arrays: the joints (3 × joints), the feet (3 × legs × 3), then position,
        # body and world velocities, the angular ones and the acceleration (6 × 3)
        n_joints = len(self.joint_names)
        self._out_size = 3 * n_joints + 9 * self._n_legs + 18
        self._filter = array("d", bytes(8 * (_F_CONTACT + self._n_legs)))
        self.reset()

    # ------------------------------------------------------------------ state

    def reset(self, position_xy: tuple[float, float] = (0.0, 0.0)) -> None:
        """Forget the filter state: no contacts, unknown height, zero velocity, odometry at
        ``position_xy`` (m)."""
        self._orientation = Quaternion.identity()
        self._rotation: Matrix3 = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))
        f = self._filter  # one flat state for the compiled step and the reference alike
        f[_F_HEIGHT] = math.nan
        f[_F_V] = f[_F_V + 1] = f[_F_V + 2] = 0.0
        f[_F_X], f[_F_Y] = float(position_xy[0]), float(position_xy[1])
        for i in range(self._n_legs):
            f[_F_CONTACT + i] = 0.0

    def move_odometry(self, position_xy: tuple[float, float]) -> None:
        """Put the odometry's position at ``position_xy`` (m), keeping everything else: the
        walking estimator's odometry, handed back when a walk ends, continues here (this
        estimator's own, integrated beside it meanwhile, had fallen to 0.39× the distance walked,
        and the published pose jumped back by metres — a new user's trial, 2026-12-07)."""
        f = self._filter
        f[_F_X], f[_F_Y] = float(position_xy[0]), float(position_xy[1])

    # ------------------------------------------------------------------ input

    def _order(self, names: tuple[str, ...]) -> list[int] | None:
        """Index of each model joint in the frame's arrays (None: same order, no gather)."""
        cached = self._order_cache
        if cached is not None and (cached[0] is names or cached[0] == names):
            return cached[1]
        if names == self.joint_names:
            index = None
        else:
            where = {name: i for i, name in enumerate(names)}
            missing = [n for n in self.joint_names if n not in where]
            if missing:
                raise UnknownJointError(missing[0], names)
            index = [where[n] for n in self.joint_names]
        self._order_cache = (names, index)
        return index

    def update(self, frame: BridgeData, dt: float) -> EstimatedState:
        """The estimate after bridge frame ``frame``, ``dt`` s after the previous one.

        Raises :class:`~jointbus.messages.errors.UnknownJointError` if the frame lacks one of the
        model's actuators, :class:`~jointbus.messages.errors.LimitError` for a ``dt`` that is not
        finite and > 0; in both cases the filter state is unchanged.
        """
        if not (dt > 0.0 and math.isfinite(dt)):
            raise LimitError(_OWNER, "dt", dt, "a finite time step > 0 s")
        core = self._core
        if core is None:
            return self.update_python(frame, dt)
        q, qd, tau = self._joints(frame)
        rot, wx, wy, wz = self._attitude(frame)
        a = frame.linear_acceleration
        ax, ay, az = a.x, a.y, a.z
        if self._mount_inverse is not None:
            ax, ay, az = mat_vec(self._mount_matrix, ax, ay, az)
        cfg = self.config
        out = np.empty(self._out_size)
        contact = np.empty(self._n_legs, dtype=np.bool_)
        f = self._filter
        core.estimate(
            q, qd, tau, cfg.singular_det, rot, wx, wy, wz, ax, ay, az, cfg.contact_on,
            cfg.contact_off, self._foot_radius, f, dt, cfg.velocity_tau, out, contact,
        )  # fmt: skip
        nj, n3 = len(self.joint_names), 3 * self._n_legs
        feet = 3 * nj
        body = feet + 3 * n3
        return EstimatedState(
            legs=self.legs,
            joint_position=out[:nj],
            joint_velocity=out[nj : 2 * nj],
            joint_effort=out[2 * nj : feet],
            foot_position=out[feet : feet + n3].reshape(-1, 3),
            foot_velocity=out[feet + n3 : feet + 2 * n3].reshape(-1, 3),
            foot_force=out[feet + 2 * n3 : body].reshape(-1, 3),
            contact=contact,
            orientation=self._orientation,
            position=out[body : body + 3],
            height=f[_F_HEIGHT],
            body_linear_velocity=out[body + 3 : body + 6],
            body_angular_velocity=out[body + 6 : body + 9],
            world_linear_velocity=out[body + 9 : body + 12],
            world_angular_velocity=out[body + 12 : body + 15],
            linear_acceleration=out[body + 15 : body + 18],
        )

    def _joints(
        self, frame: BridgeData
    ) -> tuple[Sequence[float], Sequence[float], Sequence[float]]:
        """The frame's joint positions, velocities and efforts in the model's order."""
        index = self._order(frame.joint_name)
        q: Sequence[float] = frame.joint_position
        qd: Sequence[float] = frame.joint_velocity
        tau: Sequence[float] = frame.joint_effort
        if index is not None:
            q = [q[i] for i in index]
            qd = [qd[i] for i in index]
            tau = [tau[i] for i in index]
        return q, qd, tau

    def _attitude(self, frame: BridgeData) -> tuple[Matrix3, float, float, float]:
        """The frame's orientation taken (kept when the IMU sends nothing usable): the body's
        rotation rows and its angular velocity (rad/s, body frame; zero when not finite)."""
        # orientation (kept when the IMU sends nothing usable)
        o = frame.orientation
        norm2 = o.w * o.w + o.x * o.x + o.y * o.y + o.z * o.z
        if math.isfinite(norm2) and norm2 > 1e-12:
            inv = 1.0 / math.sqrt(norm2)
            w, x, y, z = o.w * inv, o.x * inv, o.y * inv, o.z * inv
            if self._mount_inverse is None:
                self._orientation = Quaternion(w, x, y, z)
            else:
                self._orientation = Quaternion(w, x, y, z) * self._mount_inverse
            r = self._orientation
            self._rotation = rotation_rows(r.w, r.x, r.y, r.z)
        rot = self._rotation
        g = frame.angular_velocity
        wx, wy, wz = g.x, g.y, g.z
        if self._mount_inverse is not None:
            wx, wy, wz = mat_vec(self._mount_matrix, wx, wy, wz)
        isfinite = math.isfinite
        if not (isfinite(wx) and isfinite(wy) and isfinite(wz)):
            wx = wy = wz = 0.0
        return rot, wx, wy, wz

    def update_python(self, frame: BridgeData, dt: float) -> EstimatedState:
        """:meth:`update` in pure Python (the compiled step's reference; it runs when the core
        is not built), fresh arrays for every field."""
        if not (dt > 0.0 and math.isfinite(dt)):
            raise LimitError(_OWNER, "dt", dt, "a finite time step > 0 s")
        q, qd, tau = self._joints(frame)
        rot, wx, wy, wz = self._attitude(frame)
        cfg = self.config
        isfinite = math.isfinite
        f = self._filter
        pos, vel, force, _ = self.kinematics.evaluate_rows_python(
            q, qd, tau, singular_det=cfg.singular_det
        )

        # per-leg decisions on a handful of floats, in one pass: plain Python beats numpy calls
        ux, uy, uz = rot[2]  # world z in body coordinates
        on, off = cfg.contact_on, cfg.contact_off
        contact = [False] * len(pos)
        # per foot: the height the body would have if it touched (radius − the foot centre's
        # height relative to the body origin, gravity-aligned); sums over the stance feet
        ground: list[float] = []
        stance_ground: list[float] = []
        k = 0
        px = py = pz = vx = vy = vz = 0.0
        for i, (fx, fy, fz) in enumerate(force):
            x, y, z = pos[i]
            height_if_down = self._foot_radius[i] - (x * ux + y * uy + z * uz)
            ground.append(height_if_down)
            if fx * ux + fy * uy + fz * uz > (off if f[_F_CONTACT + i] != 0.0 else on):
                contact[i] = True
                stance_ground.append(height_if_down)
                k += 1
                px += x
                py += y
                pz += z
                x, y, z = vel[i]
                vx += x
                vy += y
                vz += z
        for i, down in enumerate(contact):
            f[_F_CONTACT + i] = 1.0 if down else 0.0

        # height from the feet in contact (gravity-aligned frame)
        if k:
            height = math.fsum(stance_ground) / k
            if isfinite(height):
                f[_F_HEIGHT] = height
        else:
            finite = [h for h in ground if isfinite(h)]
            if finite:
                f[_F_HEIGHT] = max(finite)  # the lowest foot: largest body height

        # body velocity by leg odometry over stance feet, low-pass filtered
        vbx, vby, vbz = f[_F_V], f[_F_V + 1], f[_F_V + 2]
        if k:
            # v = −mean(ṗ_rel + ω × p) over stance feet; mean(ω × p) = ω × mean(p)
            px, py, pz, vx, vy, vz = px / k, py / k, pz / k, vx / k, vy / k, vz / k
            mx = -(vx + wy * pz - wz * py)
            my = -(vy + wz * px - wx * pz)
            mz = -(vz + wx * py - wy * px)
            if isfinite(mx) and isfinite(my) and isfinite(mz):
                tau_v = cfg.velocity_tau
                alpha = dt / (tau_v + dt) if tau_v > 0.0 else 1.0
                vbx += alpha * (mx - vbx)
                vby += alpha * (my - vby)
                vbz += alpha * (mz - vbz)
                f[_F_V], f[_F_V + 1], f[_F_V + 2] = vbx, vby, vbz
        v_world = mat_vec(rot, vbx, vby, vbz)
        f[_F_X] += v_world[0] * dt
        f[_F_Y] += v_world[1] * dt
        height = f[_F_HEIGHT]

        return EstimatedState(
            legs=self.legs,
            joint_position=np.array(q),
            joint_velocity=np.array(qd),
            joint_effort=np.array(tau),
            foot_position=np.array(pos),
            foot_velocity=np.array(vel),
            foot_force=np.array(force),
            contact=np.array(contact, dtype=np.bool_),
            orientation=self._orientation,
            position=np.array((f[_F_X], f[_F_Y], height)),
            height=height,
            body_linear_velocity=np.array((vbx, vby, vbz)),
            body_angular_velocity=np.array((wx, wy, wz)),
            world_linear_velocity=np.array(v_world),
            world_angular_velocity=np.array(mat_vec(rot, wx, wy, wz)),
            linear_acceleration=self._acceleration(frame),
        )

    def _acceleration(self, frame: BridgeData) -> FloatArray:
        a = frame.linear_acceleration
        if self._mount_inverse is not None:
            return np.array(mat_vec(self._mount_matrix, a.x, a.y, a.z))
        return np.array((a.x, a.y, a.z))
