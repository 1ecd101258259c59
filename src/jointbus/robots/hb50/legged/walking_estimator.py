"""Body velocity, position, height and contacts while walking: leg odometry fused with the IMU.

Where it sits: :mod:`jointbus.robots.hb50.legged`, a pure component between the general
:class:`~.state_estimator.StateEstimator` (feet, ground forces, orientation; its contacts come from
the ground forces alone) and the walking controller (:mod:`.walking`). It refines an
:class:`~.state_estimator.EstimatedState` with what the gait schedule knows.

Why not the standing estimator's contacts: a swinging leg tracking its path at swing gains
loads its motors as a foot on the ground would, so contacts from torques alone flicker on swing
legs, and leg odometry over a swinging foot reads its swing speed as body speed. Here a foot is in
**contact** when the gait schedule says stance *and* its vertical ground force confirms it
(above ``contact_force`` N; a NaN force — a singular leg — leaves the schedule's word).

**Velocity** (world frame, m/s) — a Kalman filter per axis, the usual small one for legged robots:

- predict with the IMU: ``v ← v + (R·a_imu − g)·dt``, variance ``+ accel_noise²·dt``;
- correct with leg odometry: each stance foot is still on the ground, so
  ``v_body = −(ṗ_rel + ω × p)``; the mean over stance feet, turned into the world frame by ``R``,
  is a measurement with variance ``odometry_noise²``.

The drives' velocity noise (≈ 0.4 rad/s) makes one foot's reading uncertain by ≈ 0.1 m/s, and a
reading also carries what leg odometry cannot see (the foot sphere rolling, touchdown impacts), so
the odometry is trusted loosely (0.4 m/s) and the accelerometer tightly (0.5 m/s²): the filter
settles to a gain of ≈ 0.05 per 2 ms step, a time constant of ≈ 40 ms over which an accelerometer
bias of 0.05 m/s² costs ≈ 2 mm/s. Measured on MuJoCo walking at 0.5 m/s (ground truth, seeded
sensor noise): body-velocity RMS error 0.032–0.033 m/s with these values, 0.093 m/s with the
odometry trusted at 0.08 m/s and the IMU at 2 m/s². Without a stance foot only the prediction runs.
**Position**: integrated from the filtered world velocity (x, y; it drifts, as leg odometry does);
**height** (z): the mean over contact feet of ``−z + foot radius`` in the gravity-aligned frame.

It runs every step while walking, on three axes and four feet: plain floats (the filter per axis,
the rotations by the rows of ``R``), the per-foot work in one pass — ≈ 13 µs per update in the
tests' MuJoCo walk (p50, load 14) against ≈ 48 µs as 3-vector numpy operations.

**The compiled core.** Even as plain floats, a step is some 150 float operations on boxed Python
floats plus unpacking five arrays into lists (``tolist``), every 2 ms (1 ms on a 1 kHz bridge) of
a control step that has other work to do. The optional extension ``_estimate_accel``
(``_estimate_accel.c``, built by ``setup.py`` when a C compiler is present;
``JOINTBUS_NO_ACCEL=1`` turns it off) does that arithmetic in one call on the arrays' memory —
the rotation, the per-foot pass, the prediction, the correction, the position, the height and
``Rᵀ·v`` — and updates the filter state in place. Python keeps the argument checks (``dt``, the
stance length) and builds the arrays and the :class:`~.state_estimator.EstimatedState`, which
are now most of the cost (the dataclass ≈ 2 µs, the four arrays ≈ 0.9 µs, the C call ≈ 0.5 µs).
:meth:`WalkingEstimator.update_python` is the reference: the same formulas in the same order
(compiled without fused multiply-add), so the results and the filter state agree to the last
bit, every NaN branch included (a NaN force leaves the schedule's word, a non-finite acceleration
skips the prediction, non-finite odometry skips the correction, a non-finite height keeps the
last). Inputs the core does not take (arrays of another dtype or shape, a ``dt`` that is not a
float, config values that are not floats, …) run the reference. :data:`ACCELERATED` says whether
the core is in use. Measured back to back on the 2-vCPU development VM, load average 0.58:
thread CPU per update, median of 40 passes over 750 steps of the tests' MuJoCo walk at 0.5 m/s —
7.9 µs before (the plain-float version, filter state in lists), 4.2 µs compiled, 8.8 µs for the
reference (≈ 0.9 µs more than before: its filter state is now the ``array('d')`` it shares with
the core, whose items cost more to read and write than a list's).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from jointbus import compiled_core
from jointbus.messages.errors import LimitError, NonFiniteError
from jointbus.robots.hb50.legged.state_estimator import (
    EstimatedState,
    mat_vec,
    rotation_of,
)

FloatArray = npt.NDArray[np.float64]

__all__ = ["ACCELERATED", "WalkingEstimator", "WalkingEstimatorConfig"]

_OWNER = "WalkingEstimator"
_GRAVITY = 9.81  # m/s², along the world's z
_EXACT_INT = 2**53  # ints up to this size are doubles exactly


_CORE: Final = compiled_core.load("jointbus.robots.hb50.legged._estimate_accel")
#: Whether the compiled core ``_estimate_accel`` is built and enabled in this process.
ACCELERATED: Final = _CORE is not None


@dataclass(frozen=True, slots=True)
class WalkingEstimatorConfig:
    """``contact_force`` N: vertical force confirming a scheduled stance; ``accel_noise`` m/s²
    and ``odometry_noise`` m/s: the filter's process and measurement noise (1σ)."""

    contact_force: float = 5.0
    accel_noise: float = 0.5
    odometry_noise: float = 0.4

    def __post_init__(self) -> None:
        for name in ("contact_force", "accel_noise", "odometry_noise"):
            value = getattr(self, name)
            if not math.isfinite(value):
                raise NonFiniteError(_OWNER, name, value, "a finite value > 0")
            if value <= 0.0:
                raise LimitError(_OWNER, name, value, "> 0")


def _core_constants(config: WalkingEstimatorConfig) -> tuple[float, float, float] | None:
    """``(contact_force, accel_noise², odometry_noise²)`` as the compiled core takes them: doubles
    with which C does exactly the reference's arithmetic (Python turns an int into a double the way
    ``float()`` does, and compares a float with an int exactly) — or None where it would not, and
    the reference runs: a value that is neither a float nor an int within ±2⁵³, or a square that
    overflows a float (the reference raises that OverflowError where it computes it)."""
    force, accel, odometry = config.contact_force, config.accel_noise, config.odometry_noise
    for value in (force, accel, odometry):
        if not (type(value) is float or (type(value) is int and abs(value) <= _EXACT_INT)):
            return None
    try:
        return float(force), float(accel**2), float(odometry**2)
    except OverflowError:
        return None


def _stance_mismatch(
    state: EstimatedState, stance: tuple[bool, ...] | npt.NDArray[np.bool_]
) -> ValueError:
    return ValueError(f"scheduled_stance: {len(stance)} legs; the state has {len(state.legs)}")


def _refined(
    state: EstimatedState,
    *,
    contact: Sequence[bool],
    position: tuple[float, float, float],
    height: float,
    body: tuple[float, float, float],
    world: tuple[float, float, float],
) -> EstimatedState:
    """``state`` with the fields the walking estimator refines (both paths build it here; spelled
    out: ``dataclasses.replace`` costs ≈ 3 µs per step)."""
    return EstimatedState(
        legs=state.legs,
        joint_position=state.joint_position,
        joint_velocity=state.joint_velocity,
        joint_effort=state.joint_effort,
        foot_position=state.foot_position,
        foot_velocity=state.foot_velocity,
        foot_force=state.foot_force,
        contact=np.array(contact, dtype=np.bool_),
        orientation=state.orientation,
        position=np.array(position),
        height=height,
        body_linear_velocity=np.array(body),
        body_angular_velocity=state.body_angular_velocity,
        world_linear_velocity=np.array(world),
        world_angular_velocity=state.world_angular_velocity,
        linear_acceleration=state.linear_acceleration,
    )


class WalkingEstimator:
    """See the module docstring. :meth:`reset` takes the base estimate to start from.

    The filter state — velocity (m/s, world frame), its variance per axis ((m/s)²), x, y and
    height (m) — is one flat ``array('d')`` of 9 doubles, ``_state``, which both the compiled core
    and the Python reference update in place (the tests start both from the same state).
    """

    def __init__(self, config: WalkingEstimatorConfig | None = None) -> None:
        self.config = config or WalkingEstimatorConfig()
        # v (3), var (3), x, y, height: plain doubles, where numpy calls cost more than the
        # handful of numbers per step (see the module docstring)
        self._state = array("d", (0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0, math.nan))
        self._started = False
        # the compiled core's constants, computed again when ``config`` is replaced
        self._constants_of: WalkingEstimatorConfig | None = None
        self._constants: tuple[float, float, float] | None = None

    def reset(self, state: EstimatedState) -> None:
        """Start from ``state``'s velocity, position and height."""
        s = self._state
        s[0], s[1], s[2] = state.world_linear_velocity.tolist()
        s[3] = s[4] = s[5] = self.config.odometry_noise**2
        s[6], s[7] = state.position[:2].tolist()
        s[8] = state.height
        self._started = True

    def update(
        self,
        state: EstimatedState,
        acceleration: FloatArray,
        scheduled_stance: tuple[bool, ...] | npt.NDArray[np.bool_],
        dt: float,
        foot_radius: FloatArray,
    ) -> EstimatedState:
        """``state`` refined: contacts, velocities, position and height (module docstring).

        ``acceleration`` (3,) m/s²: the IMU's specific force in the body frame (≈ (0, 0, 9.81) at
        rest); ``scheduled_stance``: the gait schedule, legs in ``state.legs`` order; ``dt`` s;
        ``foot_radius`` (legs,) m. Compiled when :data:`ACCELERATED`; :meth:`update_python` is
        the reference, and runs for inputs the compiled core does not take (arrays of another
        dtype or shape, a sequence where the reference expects an array, a ``dt`` that is not a
        float, config values that are not floats).
        """
        core = _CORE
        if core is None:
            return self.update_python(state, acceleration, scheduled_stance, dt, foot_radius)
        if not (dt > 0.0 and math.isfinite(dt)):
            raise LimitError(_OWNER, "dt", dt, "a finite time step > 0 s")
        if not self._started:
            self.reset(state)
        if len(scheduled_stance) != len(state.legs):
            raise _stance_mismatch(state, scheduled_stance)
        cfg = self.config
        if cfg is not self._constants_of:
            self._constants = _core_constants(cfg)
            self._constants_of = cfg
        constants = self._constants
        if constants is not None:
            contact_force, accel_variance, odometry_variance = constants
            out = core.update(
                self._state,
                state.orientation,
                state.foot_force,
                state.foot_position,
                state.foot_velocity,
                foot_radius,
                scheduled_stance,
                acceleration,
                state.body_angular_velocity,
                dt,
                contact_force,
                accel_variance,
                odometry_variance,
                state.height,
            )
            if out is not None:
                contact, position, height, body, world = out
                return _refined(
                    state,
                    contact=contact,
                    position=position,
                    height=height,
                    body=body,
                    world=world,
                )
        # an input the core does not take (it left the state as it was): the reference
        return self.update_python(state, acceleration, scheduled_stance, dt, foot_radius)

    def update_python(
        self,
        state: EstimatedState,
        acceleration: FloatArray,
        scheduled_stance: tuple[bool, ...] | npt.NDArray[np.bool_],
        dt: float,
        foot_radius: FloatArray,
    ) -> EstimatedState:
        """:meth:`update` in pure Python (the compiled core's reference)."""
        if not (dt > 0.0 and math.isfinite(dt)):
            raise LimitError(_OWNER, "dt", dt, "a finite time step > 0 s")
        if not self._started:
            self.reset(state)
        cfg = self.config
        isfinite = math.isfinite
        rot = rotation_of(state.orientation)
        ux, uy, uz = rot[2]
        if len(scheduled_stance) != len(state.legs):
            raise _stance_mismatch(state, scheduled_stance)
        threshold = cfg.contact_force
        radius = foot_radius.tolist()
        velocities = state.foot_velocity.tolist()
        # one pass over the feet: contact, and sums over the contact feet
        contact: list[bool] = []
        k = 0
        px = py = pz = rx = ry = rz = height = 0.0
        for i, ((fx, fy, fz), (x, y, z)) in enumerate(
            zip(state.foot_force.tolist(), state.foot_position.tolist(), strict=True)
        ):
            # a NaN force (singular leg) fails the comparison: the schedule's word stands
            down = bool(scheduled_stance[i]) and not fx * ux + fy * uy + fz * uz <= threshold
            contact.append(down)
            if down:
                k += 1
                px += x
                py += y
                pz += z
                height += radius[i] - (x * ux + y * uy + z * uz)
                dx, dy, dz = velocities[i]
                rx += dx
                ry += dy
                rz += dz
        s = self._state  # v (0-2), var (3-5), x (6), y (7), height (8)
        # predict with the IMU
        a = np.asarray(acceleration, dtype=np.float64).tolist()
        if isfinite(a[0]) and isfinite(a[1]) and isfinite(a[2]):
            (r00, r01, r02), (r10, r11, r12), (r20, r21, r22) = rot
            ax, ay, az = a
            s[0] += (r00 * ax + r01 * ay + r02 * az) * dt
            s[1] += (r10 * ax + r11 * ay + r12 * az) * dt
            s[2] += (r20 * ax + r21 * ay + r22 * az - _GRAVITY) * dt
        q = cfg.accel_noise**2 * dt
        s[3] += q
        s[4] += q
        s[5] += q
        # correct with leg odometry over the contact feet
        if k:
            px, py, pz, rx, ry, rz = px / k, py / k, pz / k, rx / k, ry / k, rz / k
            wx, wy, wz = state.body_angular_velocity.tolist()
            # v = −mean(ṗ_rel + ω × p) = −(mean ṗ_rel + ω × mean p)
            bx = -(rx + wy * pz - wz * py)
            by = -(ry + wz * px - wx * pz)
            bz = -(rz + wx * py - wy * px)
            if isfinite(bx) and isfinite(by) and isfinite(bz):
                r = cfg.odometry_noise**2
                for axis, z in enumerate(mat_vec(rot, bx, by, bz)):
                    var = s[axis + 3]
                    gain = var / (var + r)
                    s[axis] += gain * (z - s[axis])
                    s[axis + 3] = var * (1.0 - gain)
            height /= k
            if isfinite(height):
                s[8] = height
        vx, vy, vz = s[0], s[1], s[2]
        s[6] += vx * dt
        s[7] += vy * dt
        height = s[8]
        if not isfinite(height):
            height = state.height
        (r00, r01, r02), (r10, r11, r12), (r20, r21, r22) = rot
        body = (  # Rᵀ·v
            r00 * vx + r10 * vy + r20 * vz,
            r01 * vx + r11 * vy + r21 * vz,
            r02 * vx + r12 * vy + r22 * vz,
        )
        return _refined(
            state,
            contact=contact,
            position=(s[6], s[7], height),
            height=height,
            body=body,
            world=(vx, vy, vz),
        )
