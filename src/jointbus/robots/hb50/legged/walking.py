"""The trot: gait clock → footholds and swing paths → stance forces → one impedance command.

Where it sits: :mod:`jointbus.robots.hb50.legged`, a pure component (the caller passes the time
step, the state estimate and the velocity set-point) that the control node's motion state machine
(:mod:`jointbus.robots.hb50.control.motion`) runs in its WALK and RUN modes, and the bridge's
fallback runs to trot to a stop when the control node is lost
(:mod:`jointbus.robots.hb50.bridge.stopping_trot`). Built from :mod:`.gait_scheduler`,
:mod:`.swing`, :mod:`.stance_forces`, :mod:`.leg_kinematics` and the leg IK. The structure is
MIT Cheetah's (gait scheduler → footholds → swing → stance forces → leg controller), with a
least-squares balance controller in place of the convex MPC (see :mod:`.stance_forces` for why).

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

Speed (issue 21: the whole control step ≤ 0.5× the bare 500 Hz loop's cycle): a step works on a
few dozen numbers — four feet, one 3 × 3 rotation, a 6-row wrench — where each numpy call costs
≈ 1 µs of fixed overhead, more than its arithmetic. So the step runs on plain floats: the frames
as the rows of ``R_rp``, the stance forces through :meth:`.StanceForceSolver.solve_dual` (a 6 × 6
system instead of a 3k × 3k numpy solve), the joint-level step — IK, joint rates and torques in
closed form per leg (instead of a batched ``numpy.linalg.solve`` and an ``einsum``), gains and
limits — through :meth:`.LegKinematics.joint_targets`; numpy builds the five output arrays. The
stance forces and the joint-level step are compiled when the optional core of
:mod:`.leg_kinematics` is built. In the tests' MuJoCo walk on the 2-core development VM (thread
CPU per step, p50, load 14): ≈ 32 µs, against ≈ 197 µs with the numpy calls — the same commands to
rounding (the tests compare the fast paths with the numpy ones, the compiled core with its Python
reference).

Steps 3 and 4 up to the stance-force solve — the frames, every foot's target and velocity (the
Raibert foothold and the swing path of each swinging leg), the wrench — are :meth:`plan`, compiled
too (``walk_plan`` in ``_leg_accel.c``): on plain Python floats they were ≈ 15 µs of a walking step
that issue 21 wants at ≤ 0.5× the bare loop's cycle, and they stood between that goal and the
step (0.49–0.53× in two runs before, 0.44–0.45× after; docs/PERFORMANCE.md § The control step).
:meth:`plan_python` is the reference it is tested against, cycle after cycle from the same memory
(the stance targets, lift-off points, last stance flags and heading target kept between cycles,
one flat array both use): the same numbers to the last bit, to 1e-12 where Raibert's reach limit
takes a hypotenuse. The gait logic lives in two places because of this; the test holds them
together, and a change to one that the other lacks fails it.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Mapping
from dataclasses import dataclass, fields

import numpy as np
import numpy.typing as npt

from jointbus.messages.errors import LimitError, NonFiniteError, ValidationError
from jointbus.model.parameters import ParameterValue, parameter_defaults
from jointbus.model.robot import RobotModel
from jointbus.robots.hb50.legged.gait_scheduler import GaitPhase, GaitScheduler
from jointbus.robots.hb50.legged.leg_kinematics import LegKinematics, leg_core
from jointbus.robots.hb50.legged.stance_forces import GRAVITY, StanceForceSolver
from jointbus.robots.hb50.legged.stand_pose import StandPose
from jointbus.robots.hb50.legged.state_estimator import EstimatedState, Matrix3, rotation_of
from jointbus.robots.hb50.legged.swing import Vec, raibert_foothold, swing_point

FloatArray = npt.NDArray[np.float64]

__all__ = [
    "WALK_PARAMETERS",
    "Plan",
    "WalkCommand",
    "WalkOutput",
    "WalkParams",
    "WalkingController",
]

_OWNER = "WalkParams"

#: One cycle's plan (:meth:`WalkingController.plan`): the rows of ``R_rp`` (body → horizontal
#: frame), every foot relative to the centre of mass (m, horizontal frame), every foot's target
#: (m) and velocity relative to the body (m/s), and the wrench for the stance forces (N, N·m).
Plan = tuple[
    Matrix3, list[Vec], list[Vec], list[Vec], tuple[float, float, float, float, float, float]
]


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
        self._nominal = [(float(x), float(y), 0.0) for x, y in self.nominal.tolist()]
        self.foot_radius: FloatArray = self.kinematics.foot_radius.copy()
        self._foot_radius: list[float] = self.foot_radius.tolist()
        limits = model.limits_for(model.actuator_order)
        self.velocity_limit = np.array([lim.velocity_max for lim in limits])
        self.effort_limit = np.array([lim.effort_max for lim in limits])
        self.gait = GaitScheduler(self.params.gait_period, self.params.duty_factor)
        #: the compiled core (``_leg_accel``) or None: :meth:`plan` then runs its reference
        self._core = leg_core()
        self._build_solver()
        self.reset()

    def _build_solver(self) -> None:
        p = self.params
        self.solver = StanceForceSolver(p.mass, (p.inertia_x, p.inertia_y, p.inertia_z), mu=p.mu)
        # the numbers :meth:`plan`'s compiled core takes, in its order
        self._plan_gains = (
            p.step_height,
            p.raibert_gain,
            p.max_reach,
            p.com_x,
            p.com_z,
            p.height_kp,
            p.height_kd,
            p.velocity_kp,
            p.attitude_kp,
            p.attitude_kd,
            p.yaw_kp,
            p.yaw_kd,
            self.solver.mass,
            *self.solver.inertia.tolist(),
            GRAVITY,
        )
        # per joint: (torque limit, velocity limit)
        self._limits: list[tuple[float, float]] = list(
            zip(
                np.minimum(self.effort_limit, p.torque_limit).tolist(),
                self.velocity_limit.tolist(),
                strict=True,
            )
        )

    def retune(self, params: WalkParams) -> None:
        """Put ``params`` in force from the next step (the gait clock keeps its phase)."""
        self.params = params
        self._build_solver()

    def reset(self) -> None:
        """Start from standing: clock stopped, set-point zero, stance targets from the next
        estimate."""
        n = self.n_legs
        self.gait = GaitScheduler(self.params.gait_period, self.params.duty_factor)
        self._vx = self._vy = 0.0
        self._yaw_rate = 0.0
        # what :meth:`plan` keeps between cycles, one flat array for the compiled core and its
        # reference alike: per leg the stance target (x, y, z; horizontal frame), then per leg
        # the lift-off point (x, y in the odometry frame, z in the horizontal frame), then per
        # leg whether it was in stance (1.0 / 0.0), then the heading target (rad), whether it is
        # set, whether the stance targets are set
        self._memory = array("d", [0.0] * (7 * n + 3))
        self._memory[6 * n : 7 * n] = array("d", [1.0] * n)
        self.running = False

    def take_over(
        self, velocity: tuple[float, float, float], swinging: tuple[bool, ...] | list[bool]
    ) -> None:
        """Start mid-stride (another controller's trot taken over): the set-point at
        ``velocity`` (vx, vy m/s in the heading frame, yaw rate rad/s), from which it ramps to
        the next commands within the acceleration limits, and the clock at the lift-off of the
        legs ``swinging`` (in the air, or due to lift; none: the clock stays stopped)."""
        self.reset()
        p = self.params
        vx, vy, wz = velocity
        self._vx = min(max(vx, -p.max_speed), p.max_speed) if math.isfinite(vx) else 0.0
        self._vy = min(max(vy, -p.max_speed), p.max_speed) if math.isfinite(vy) else 0.0
        self._yaw_rate = min(max(wz, -p.max_yaw_rate), p.max_yaw_rate) if math.isfinite(wz) else 0.0
        self.gait.start_swing(list(swinging))

    def plan(
        self,
        state: EstimatedState,
        phase: GaitPhase,
        setpoint: tuple[float, float, float, float],
        dt: float,
    ) -> Plan:
        """Steps 3 and 4 of the module docstring for one cycle: the frames, every foot's target
        and velocity (stance: moving back at the set-point; swing: the Raibert foothold and the
        swing path), and the wrench the stance feet must push with — what the stance-force solve
        and the joint-level step take. ``setpoint``: the ramped ``(vx, vy, yaw_rate, height)``
        (m/s, rad/s, m); ``dt`` s. Updates the stance targets, the lift-off points and the heading
        target kept between cycles. Compiled when :data:`.leg_kinematics.ACCELERATED`
        (:meth:`plan_python` is the reference)."""
        rotation = rotation_of(state.orientation)
        if self._core is None:
            return self.plan_python(state, rotation, phase, setpoint, dt)
        result: Plan = self._core.walk_plan(
            rotation,
            state.foot_position,
            state.body_linear_velocity,
            state.body_angular_velocity,
            state.position,
            state.height,
            phase.stance,
            phase.progress,
            phase.stance_time,
            phase.swing_time,
            phase.stopped,
            setpoint,
            dt,
            self._nominal,
            self._foot_radius,
            self._plan_gains,
            self._memory,
        )
        return result

    def plan_python(
        self,
        state: EstimatedState,
        rotation: Matrix3,
        phase: GaitPhase,
        setpoint: tuple[float, float, float, float],
        dt: float,
    ) -> Plan:
        """:meth:`plan` in pure Python (the compiled core's reference); ``rotation``: the rows of
        ``R`` (body to world) of ``state.orientation``."""
        p = self.params
        cos, sin = math.cos, math.sin
        mem = self._memory
        n = self.n_legs
        o_lift, o_was, o_yaw = 3 * n, 6 * n, 7 * n
        vdx, vdy, wz_des, height = setpoint
        # frames (plain floats: see the module docstring): R_rp = Rz(−yaw)·R, rows a, b, c
        (r00, r01, r02), (r10, r11, r12), (r20, r21, r22) = rotation
        yaw = math.atan2(r10, r00)
        cy, sy = cos(yaw), sin(yaw)
        ax, ay, az = cy * r00 + sy * r10, cy * r01 + sy * r11, cy * r02 + sy * r12
        bx, by, bz = -sy * r00 + cy * r10, -sy * r01 + cy * r11, -sy * r02 + cy * r12
        feet_h = [
            (ax * x + ay * y + az * z, bx * x + by * y + bz * z, r20 * x + r21 * y + r22 * z)
            for x, y, z in state.foot_position.tolist()
        ]
        x, y, z = state.body_linear_velocity.tolist()
        vhx, vhy, vhz = (
            ax * x + ay * y + az * z,
            bx * x + by * y + bz * z,
            r20 * x + r21 * y + r22 * z,
        )
        x, y, z = state.body_angular_velocity.tolist()
        whx, why, whz = (
            ax * x + ay * y + az * z,
            bx * x + by * y + bz * z,
            r20 * x + r21 * y + r22 * z,
        )
        roll = math.atan2(r21, r22)
        pitch = -math.asin(min(max(r20, -1.0), 1.0))
        ox, oy, _ = state.position.tolist()
        if mem[o_yaw + 1] == 0.0 or phase.stopped:  # no heading target yet, or standing
            yaw_target = yaw
        else:
            err = math.remainder(mem[o_yaw] + wz_des * dt - yaw, math.tau)
            yaw_target = yaw + min(max(err, -0.3), 0.3)
        mem[o_yaw] = yaw_target
        mem[o_yaw + 1] = 1.0
        ground_z = [r - height for r in self._foot_radius]
        if mem[o_yaw + 2] == 0.0:  # the first step: every stance target where its foot is
            mem[o_yaw + 2] = 1.0
            for i, (fx_h, fy_h, fz_h) in enumerate(feet_h):
                mem[3 * i], mem[3 * i + 1], mem[3 * i + 2] = fx_h, fy_h, fz_h

        foot_t_h: list[Vec] = []
        foot_v_h: list[Vec] = []
        stance = phase.stance
        for i in range(n):
            fx_h, fy_h, fz_h = feet_h[i]
            if stance[i]:
                if mem[o_was + i] == 0.0:  # touchdown: hold where it landed
                    mem[3 * i], mem[3 * i + 1] = fx_h, fy_h
                tx, ty = mem[3 * i], mem[3 * i + 1]
                # the foot moves back at the set-point: −(v + ω × p), ω = (0, 0, ω_z)
                rvx, rvy = -(vdx - wz_des * ty), -(vdy + wz_des * tx)
                tx, ty = tx + rvx * dt, ty + rvy * dt
                mem[3 * i], mem[3 * i + 1], mem[3 * i + 2] = tx, ty, ground_z[i]
                foot_t_h.append((tx, ty, ground_z[i]))
                foot_v_h.append((rvx, rvy, 0.0))
            else:
                k = o_lift + 3 * i
                if mem[o_was + i] != 0.0:  # lift-off, remembered in the odometry frame
                    mem[k] = ox + cy * fx_h - sy * fy_h
                    mem[k + 1] = oy + sy * fx_h + cy * fy_h
                    mem[k + 2] = fz_h
                s = phase.progress[i]
                fx, fy = raibert_foothold(
                    self._nominal[i],
                    (vhx, vhy, 0.0),
                    (vdx, vdy, 0.0),
                    wz_des,
                    stance_time=phase.stance_time,
                    t_ahead=(1.0 - s) * phase.swing_time,
                    gain=p.raibert_gain,
                    max_reach=p.max_reach,
                )
                end = (ox + cy * fx - sy * fy, oy + sy * fx + cy * fy, ground_z[i] - 0.01)
                (px, py, pz), (wvx, wvy, wvz) = swing_point(
                    (mem[k], mem[k + 1], mem[k + 2]), end, p.step_height, s, phase.swing_time
                )
                dx, dy = px - ox, py - oy
                foot_t_h.append((cy * dx + sy * dy, -sy * dx + cy * dy, pz))
                # relative to the body: v_foot − v_body − ω × p
                foot_v_h.append(
                    (
                        cy * wvx + sy * wvy - vhx - (why * fz_h - whz * fy_h),
                        -sy * wvx + cy * wvy - vhy - (whz * fx_h - whx * fz_h),
                        wvz - vhz - (whx * fy_h - why * fx_h),
                    )
                )
            mem[o_was + i] = 1.0 if stance[i] else 0.0

        # 4. the wrench for the stance forces (horizontal frame, about the centre of mass)
        com_x, com_z = p.com_x, p.com_z
        chx = ax * com_x + ay * 0.0 + az * com_z
        chy = bx * com_x + by * 0.0 + bz * com_z
        chz = r20 * com_x + r21 * 0.0 + r22 * com_z
        a_z = p.height_kp * (height - state.height) - p.height_kd * vhz
        accel = (
            min(max(p.velocity_kp * (vdx - vhx), -3.0), 3.0),
            min(max(p.velocity_kp * (vdy - vhy), -3.0), 3.0),
            min(max(a_z, -5.0), 5.0) if math.isfinite(a_z) else 0.0,
        )
        yaw_err = math.remainder(yaw_target - yaw, math.tau)
        alpha = (
            -p.attitude_kp * roll - p.attitude_kd * whx,
            -p.attitude_kp * pitch - p.attitude_kd * why,
            p.yaw_kp * yaw_err + p.yaw_kd * (wz_des - whz),
        )
        return (
            ((ax, ay, az), (bx, by, bz), (r20, r21, r22)),
            [(x - chx, y - chy, z - chz) for x, y, z in feet_h],
            foot_t_h,
            foot_v_h,
            self.solver.wrench_of(accel, alpha),
        )

    @property
    def velocity_setpoint(self) -> tuple[float, float, float]:
        """The ramped set-point now: vx, vy (m/s), yaw rate (rad/s)."""
        return self._vx, self._vy, self._yaw_rate

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
        self._vx = vdx = _approach(self._vx, vx_c, dv)
        self._vy = vdy = _approach(self._vy, vy_c, dv)
        self._yaw_rate = wz_des = _approach(self._yaw_rate, wz_c, p.yaw_accel_limit * dt)
        speed = math.hypot(vdx, vdy)
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

        # 3–4. frames, feet, the wrench (plan), then the stance forces
        rows, feet_c, foot_t_h, foot_v_h, wrench = self.plan(
            state, phase, (vdx, vdy, wz_des, command.height), dt
        )
        stance = phase.stance
        forces_h = self.solver.solve_dual(feet_c, stance, wrench)

        # 5. joints: IK, J⁻¹·ṗ and −Jᵀ·f per leg, gains, limits (LegKinematics.joint_targets)
        kp, kd, pos_t, vel_t, torques = self.kinematics.joint_targets(
            state.joint_position.tolist(),
            rows,
            foot_targets=foot_t_h,
            foot_velocities=foot_v_h,
            foot_forces=forces_h,
            stance=stance,
            gains=(p.stance_kp, p.stance_kd, p.swing_kp, p.swing_kd),
            limits=self._limits,
        )
        # one array for the five (one allocation instead of five), each field a row of it
        block = np.array((kp, kd, pos_t, vel_t, torques), dtype=np.float64)
        return WalkOutput(block[0], block[1], block[2], block[3], block[4], phase, running)
