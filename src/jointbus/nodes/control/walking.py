"""The trot: gait clock → footholds and swing paths → stance forces → one impedance command.

Where it sits: :mod:`jointbus.nodes.control`, a pure component (the caller passes the time step,
the state estimate and the velocity set-point) that the motion state machine (:mod:`.motion`) runs
in its WALK and RUN modes. Built from :mod:`.gait_scheduler`, :mod:`.swing`, :mod:`.stance_forces`,
:mod:`.leg_kinematics` and the leg IK. The structure is MIT Cheetah's (gait scheduler → footholds
→ swing → stance forces → leg controller), with a least-squares balance controller in place of
the convex MPC (see :mod:`.stance_forces` for why).

Frames: *body* (the root link), *horizontal* ``H`` (origin at the body, z up, x along the body's
heading: the body frame with roll and pitch taken out) and *odometry* (the estimator's world frame,
x-y position integrated from the estimated velocity). A swinging foot's path is planned in the
odometry frame, so it starts and ends at rest relative to the ground while the body moves on.

Per cycle (units SI):

1. the velocity set-point follows the command at most ``accel_limit`` m/s² and
   ``yaw_accel_limit`` rad/s², so no command (or a bad one clamped upstream) makes a jump;
2. the gait clock advances; its period shortens with speed
   (``gait_period / (1 + period_speed_gain·|v|)``) and above ``run_speed`` m/s (or when RUN is
   forced) it uses ``run_period`` and ``run_duty`` — a faster trot;
3. **swing legs** — foothold by :func:`.swing.raibert_foothold`, path by :func:`.swing.swing_point`
   rising ``step_height`` m, tracked through the leg IK with ``swing_kp`` / ``swing_kd`` (target
   position and velocity, ``J⁻¹·ṗ``);
4. **stance legs** — ground forces from :class:`.stance_forces.StanceForceSolver` for a wrench
   that holds the height (PD ``height_kp`` / ``height_kd``), roll and pitch (``attitude_kp`` /
   ``attitude_kd``), the yaw (heading integrated from the yaw-rate set-point) and the velocity
   (``velocity_kp``), mapped to joint torques ``τ = −Jᵀ·f``, clamped to ``torque_limit``, sent as
   the feed-forward torque with low gains ``stance_kp`` / ``stance_kd`` around a foot target that
   moves backwards at the set-point velocity.

A leg the IK cannot place (a foothold out of reach) keeps its measured joint positions as
targets for that cycle.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields

import numpy as np
import numpy.typing as npt

from jointbus.messages.errors import LimitError, NonFiniteError, ValidationError
from jointbus.model.errors import UnreachableError
from jointbus.model.parameters import ParameterValue, parameter_defaults
from jointbus.model.robot import RobotModel
from jointbus.nodes.control.gait_scheduler import GaitPhase, GaitScheduler
from jointbus.nodes.control.leg_kinematics import LegKinematics
from jointbus.nodes.control.stance_forces import StanceForceSolver
from jointbus.nodes.control.stand_pose import StandPose
from jointbus.nodes.control.state_estimator import EstimatedState
from jointbus.nodes.control.swing import raibert_foothold, swing_point

FloatArray = npt.NDArray[np.float64]

__all__ = ["WALK_PARAMETERS", "WalkCommand", "WalkOutput", "WalkParams", "WalkingController"]

_OWNER = "WalkParams"


@dataclass(frozen=True, slots=True)
class WalkParams:
    """Tuning of the trot (SI units; see the module docstring for where each acts)."""

    gait_period: float = 0.36  # s, gait cycle at standstill
    duty_factor: float = 0.6
    period_speed_gain: float = 0.3  # s/m
    run_period: float = 0.28  # s
    run_duty: float = 0.55
    run_speed: float = 0.8  # m/s
    step_height: float = 0.08  # m
    raibert_gain: float = 0.05  # s
    max_reach: float = 0.15  # m, foothold offset from the nominal foot
    swing_kp: float = 60.0  # N·m/rad
    swing_kd: float = 2.0  # N·m·s/rad
    stance_kp: float = 20.0  # N·m/rad
    stance_kd: float = 1.5  # N·m·s/rad
    height_kp: float = 80.0  # 1/s²
    height_kd: float = 15.0  # 1/s
    attitude_kp: float = 150.0  # 1/s²
    attitude_kd: float = 20.0  # 1/s
    yaw_kp: float = 30.0  # 1/s²
    yaw_kd: float = 10.0  # 1/s
    velocity_kp: float = 4.0  # 1/s
    accel_limit: float = 1.5  # m/s²
    yaw_accel_limit: float = 3.0  # rad/s²
    max_speed: float = 1.0  # m/s
    max_yaw_rate: float = 2.0  # rad/s
    torque_limit: float = 22.0  # N·m
    mu: float = 0.5
    mass: float = 17.1  # kg (hb50: MuJoCo subtree mass of the model)
    inertia_x: float = 0.3  # kg·m², whole body about its centre of mass
    inertia_y: float = 0.5
    inertia_z: float = 0.6
    com_x: float = -0.016  # m, centre of mass in the body frame (hb50 standing, MuJoCo)
    com_z: float = -0.017

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValidationError(_OWNER, f.name, value, "a real number")
            if not math.isfinite(value):
                raise NonFiniteError(_OWNER, f.name, value, "a finite number")
            if value < 0.0 and f.name not in ("com_x", "com_z"):
                raise LimitError(_OWNER, f.name, value, "≥ 0")
            object.__setattr__(self, f.name, float(value))
        # the gait clock's own ranges (period, duty), for the walking and the running trot
        GaitScheduler(self.gait_period, self.duty_factor)
        GaitScheduler(self.run_period, self.run_duty)

    @classmethod
    def from_parameters(cls, values: Mapping[str, ParameterValue]) -> WalkParams:
        """The fields found in ``values`` (e.g. live parameters), defaults for the others; names
        that are not fields are ignored (the robot file has parameters for other components)."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: float(v) for k, v in values.items() if k in names})

    @classmethod
    def from_model(
        cls, model: RobotModel, overrides: Mapping[str, ParameterValue] | None = None
    ) -> WalkParams:
        """The robot file's parameter defaults, then ``overrides``."""
        values = dict(parameter_defaults(model.parameters))
        values.update(overrides or {})
        return cls.from_parameters(values)


#: The WalkParams fields the control node offers as live parameters when the robot file declares
#: them (``jointbus param``).
WALK_PARAMETERS = (
    "gait_period",
    "duty_factor",
    "step_height",
    "stance_kp",
    "stance_kd",
    "swing_kp",
    "swing_kd",
    "max_speed",
    "max_yaw_rate",
    "run_speed",
)


@dataclass(frozen=True, slots=True)
class WalkCommand:
    """The walking set-point: ``vx``, ``vy`` m/s (body heading frame), ``yaw_rate`` rad/s,
    ``height`` m (body origin above the ground)."""

    vx: float = 0.0
    vy: float = 0.0
    yaw_rate: float = 0.0
    height: float = 0.34


@dataclass(frozen=True, slots=True)
class WalkOutput:
    """One impedance command (actuator order): ``kp``, ``kd``, ``position`` rad, ``velocity``
    rad/s, ``torque`` N·m, and the schedule it followed."""

    kp: FloatArray
    kd: FloatArray
    position: FloatArray
    velocity: FloatArray
    torque: FloatArray
    phase: GaitPhase
    running: bool


def _rotz(yaw: float) -> FloatArray:
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array(((c, -s), (s, c)))


def _approach(value: float, target: float, step: float) -> float:
    return min(target, value + step) if target > value else max(target, value - step)


class WalkingController:
    """The trot for one robot (see the module docstring). ``reset`` before the first step."""

    def __init__(self, model: RobotModel, params: WalkParams | None = None) -> None:
        self.model = model
        self.params = params or WalkParams()
        self.kinematics = LegKinematics(model)
        self.iks = self.kinematics.iks
        self.n_legs = self.kinematics.count
        self.n_joints = len(model.actuator_order)
        self.nominal: FloatArray = StandPose(model).footprint[:, :2].copy()
        self.foot_radius: FloatArray = self.kinematics.foot_radius.copy()
        limits = model.limits_for(model.actuator_order)
        self.velocity_limit = np.array([lim.velocity_max for lim in limits])
        self.effort_limit = np.array([lim.effort_max for lim in limits])
        self.gait = GaitScheduler(self.params.gait_period, self.params.duty_factor)
        self._build_solver()
        self.reset()

    def _build_solver(self) -> None:
        p = self.params
        self.solver = StanceForceSolver(p.mass, (p.inertia_x, p.inertia_y, p.inertia_z), mu=p.mu)

    def retune(self, params: WalkParams) -> None:
        """Put ``params`` in force from the next step (the gait clock keeps its phase)."""
        self.params = params
        self._build_solver()

    def reset(self) -> None:
        """Start from standing: clock stopped, set-point zero, stance targets from the next
        estimate."""
        n = self.n_legs
        self.gait = GaitScheduler(self.params.gait_period, self.params.duty_factor)
        self._v = np.zeros(2)
        self._yaw_rate = 0.0
        self._yaw_target: float | None = None
        self._was_stance = [True] * n
        self._liftoff = np.zeros((n, 3))  # odometry x, y and H z of each lift-off
        self._stance_target: FloatArray | None = None  # (legs, 3) H frame
        self.running = False

    @property
    def velocity_setpoint(self) -> tuple[float, float, float]:
        """The ramped set-point now: vx, vy (m/s), yaw rate (rad/s)."""
        return float(self._v[0]), float(self._v[1]), self._yaw_rate

    def step(
        self, state: EstimatedState, command: WalkCommand, dt: float, *, force_run: bool = False
    ) -> WalkOutput:
        """The command for this cycle (see the module docstring); ``dt`` s since the last."""
        p = self.params
        # 1. set-point ramp, bounded
        vx_c = min(max(command.vx, -p.max_speed), p.max_speed)
        vy_c = min(max(command.vy, -p.max_speed), p.max_speed)
        wz_c = min(max(command.yaw_rate, -p.max_yaw_rate), p.max_yaw_rate)
        dv = p.accel_limit * dt
        self._v[0] = _approach(float(self._v[0]), vx_c, dv)
        self._v[1] = _approach(float(self._v[1]), vy_c, dv)
        self._yaw_rate = _approach(self._yaw_rate, wz_c, p.yaw_accel_limit * dt)
        v_des = self._v
        wz_des = self._yaw_rate
        speed = math.hypot(v_des[0], v_des[1])
        moving = speed > 1e-3 or abs(wz_des) > 1e-3 or abs(vx_c) + abs(vy_c) + abs(wz_c) > 0.0

        # 2. gait clock
        running = force_run or speed >= p.run_speed
        if running:
            self.gait.set_timing(p.run_period, p.run_duty)
        else:
            self.gait.set_timing(
                max(p.gait_period / (1.0 + p.period_speed_gain * speed), 0.15), p.duty_factor
            )
        self.running = running
        phase = self.gait.step(dt, moving)

        # frames
        rot = state.orientation.to_matrix()
        yaw = math.atan2(rot[1, 0], rot[0, 0])
        rz = _rotz(yaw)
        r_rp = np.eye(3)
        r_rp[:2, :] = rz.T @ rot[:2, :]
        r_rp[2, :] = rot[2, :]
        feet_h = state.foot_position @ r_rp.T
        v_h = r_rp @ state.body_linear_velocity
        w_h = r_rp @ state.body_angular_velocity
        roll = math.atan2(r_rp[2, 1], r_rp[2, 2])
        pitch = -math.asin(min(max(r_rp[2, 0], -1.0), 1.0))
        odom = state.position[:2]
        if self._yaw_target is None or phase.stopped:
            self._yaw_target = yaw
        else:
            err = math.remainder(self._yaw_target + wz_des * dt - yaw, math.tau)
            self._yaw_target = yaw + min(max(err, -0.3), 0.3)
        height = command.height
        ground_z = -height + self.foot_radius
        if self._stance_target is None:
            self._stance_target = feet_h.copy()

        n = self.n_legs
        q = state.joint_position
        j_all = self.kinematics.jacobians(q)
        pos_t = q.copy()
        vel_t = np.zeros(self.n_joints)
        kp = np.zeros(self.n_joints)
        kd = np.zeros(self.n_joints)
        foot_t_h = np.zeros((n, 3))
        foot_v_h = np.zeros((n, 3))
        stance = np.array(phase.stance, dtype=np.bool_)
        v3 = np.array((v_des[0], v_des[1], 0.0))
        w3 = np.array((0.0, 0.0, wz_des))
        for i in range(n):
            if stance[i]:
                if not self._was_stance[i]:  # touchdown: hold where it landed
                    self._stance_target[i] = feet_h[i]
                tgt = self._stance_target[i]
                rel_v = -(v3 + np.cross(w3, tgt))
                tgt = tgt + rel_v * dt
                tgt[2] = ground_z[i]
                self._stance_target[i] = tgt
                foot_t_h[i] = tgt
                foot_v_h[i] = rel_v
            else:
                if self._was_stance[i]:  # lift-off
                    xy = odom + rz @ feet_h[i, :2]
                    self._liftoff[i] = (xy[0], xy[1], feet_h[i, 2])
                s = phase.progress[i]
                t_ahead = (1.0 - s) * phase.swing_time
                fx, fy = raibert_foothold(
                    (self.nominal[i, 0], self.nominal[i, 1], 0.0),
                    (float(v_h[0]), float(v_h[1]), 0.0),
                    (float(v_des[0]), float(v_des[1]), 0.0),
                    wz_des,
                    stance_time=phase.stance_time,
                    t_ahead=t_ahead,
                    gain=p.raibert_gain,
                    max_reach=p.max_reach,
                )
                end_xy = odom + rz @ np.array((fx, fy))
                start = self._liftoff[i]
                pt, vt = swing_point(
                    (float(start[0]), float(start[1]), float(start[2])),
                    (float(end_xy[0]), float(end_xy[1]), float(ground_z[i]) - 0.01),
                    p.step_height,
                    s,
                    phase.swing_time,
                )
                xy_h = rz.T @ (np.array(pt[:2]) - odom)
                foot_t_h[i] = (xy_h[0], xy_h[1], pt[2])
                v_world_h = np.array((*(rz.T @ np.array(vt[:2])), vt[2]))
                foot_v_h[i] = v_world_h - v_h - np.cross(w_h, feet_h[i])
            self._was_stance[i] = bool(stance[i])

        # 4. stance forces (horizontal frame, about the centre of mass)
        com_h = r_rp @ np.array((p.com_x, 0.0, p.com_z))
        accel = np.array(
            (
                p.velocity_kp * (v_des[0] - v_h[0]),
                p.velocity_kp * (v_des[1] - v_h[1]),
                p.height_kp * (height - state.height) - p.height_kd * v_h[2],
            )
        )
        if not math.isfinite(float(accel[2])):
            accel[2] = 0.0
        accel[:2] = np.clip(accel[:2], -3.0, 3.0)
        accel[2] = min(max(float(accel[2]), -5.0), 5.0)
        yaw_err = math.remainder(self._yaw_target - yaw, math.tau)
        alpha = np.array(
            (
                -p.attitude_kp * roll - p.attitude_kd * w_h[0],
                -p.attitude_kp * pitch - p.attitude_kd * w_h[1],
                p.yaw_kp * yaw_err + p.yaw_kd * (wz_des - w_h[2]),
            )
        )
        forces_h = self.solver.solve(feet_h - com_h, stance, self.solver.wrench(accel, alpha))
        forces_b = forces_h @ r_rp  # row-wise R_rpᵀ·f

        # 5. joints
        torque = np.zeros(self.n_joints)
        foot_t_b = foot_t_h @ r_rp
        foot_v_b = foot_v_h @ r_rp
        for i, ik in enumerate(self.iks):
            idx = list(ik.joint_indices)
            jac = j_all[i]
            try:
                x, y, z = foot_t_b[i].tolist()
                pos_t[idx] = ik.solve((x, y, z))
            except UnreachableError:
                pos_t[idx] = q[idx]
            try:
                vel_t[idx] = np.linalg.solve(jac, foot_v_b[i])
            except np.linalg.LinAlgError:
                vel_t[idx] = 0.0
            if stance[i]:
                kp[idx] = p.stance_kp
                kd[idx] = p.stance_kd
                torque[idx] = -(jac.T @ forces_b[i])
            else:
                kp[idx] = p.swing_kp
                kd[idx] = p.swing_kd
        lim_t = np.minimum(self.effort_limit, p.torque_limit)
        np.clip(torque, -lim_t, lim_t, out=torque)
        np.clip(vel_t, -self.velocity_limit, self.velocity_limit, out=vel_t)
        bad = ~np.isfinite(pos_t)
        pos_t[bad] = q[bad]
        vel_t[~np.isfinite(vel_t)] = 0.0
        torque[~np.isfinite(torque)] = 0.0
        return WalkOutput(kp, kd, pos_t, vel_t, torque, phase, running)
