"""A robot in MuJoCo, driven by the simulated actuators: the physics behind ``sim://hb50``.

Where it sits: :mod:`jointbus.drivers.sim`, above :mod:`.mjcf` (which writes the MuJoCo model
from the :class:`~jointbus.model.robot.RobotModel`) and :mod:`.actuator_model` (the drives). The
``sim://`` driver owns a :class:`MujocoWorld`, sends commands, power and brakes to
:attr:`MujocoWorld.actuators` and calls :meth:`MujocoWorld.step` once per cycle; nothing here
knows about the driver API or the bus.

Division of labour, per physics substep (``timestep``, 2 ms or finer). The drives' impedance
law is computed in numpy and its clamp applied by MuJoCo: each gear-1 motor of the generated
model (one per actuated joint, in actuator order) gets, after compiling, a force range of the
drive's ``±torque_max`` (:class:`~jointbus.drivers.sim.actuator_model.DriveLaw`: the torque
limit where the drive is enabled, 0 where it is off or tripped). So per substep:

1. one test that every joint is below its velocity roll-off band (``Σ v² < speed_sq_bound``,
   one numpy call);
2. ``ctrl = (offset − kp·q) − kd·v`` into MuJoCo's ``ctrl``, in place (four numpy calls, the
   operations of :meth:`ActuatorArrayModel.actuate` in its order, so the torques are bit for bit
   the same);
3. MuJoCo clamps (``ctrlrange``, the joint's effort limit, as before, then ``forcerange``) and
   integrates; after the substep that completes a supervision period
   (:meth:`ActuatorArrayModel.substeps_to_supervision`), the forces it applied and the state the
   substep ended in go to :meth:`ActuatorArrayModel.applied`, which advances the drives'
   electrical, thermal and stall state as their standalone mode does (at the same 2 ms / 10 ms
   rates as :meth:`~ActuatorArrayModel.actuate`).

A substep in which a joint is in its roll-off band (the available torque then depends on its
speed), or a world built with ``engine_clamp=False``, a model whose joints are not contiguous or
whose motors have no control range, takes the whole law from
:meth:`ActuatorArrayModel.actuate` (about twenty numpy calls: the state checked and copied, the
speed-dependent bounds, the clamp) and writes the torque to ``ctrl``; the force range, then never
narrower than that torque, changes nothing.

The rotor inertia, viscous friction and dry friction (Coulomb plus an engaged brake) of the
drives are MuJoCo's ``dof_armature``, ``dof_damping`` and ``dof_frictionloss``, set from the
actuator parameters (which therefore override the robot file's joint dynamics): MuJoCo treats
them implicitly / as constraints, so a braked or sticking joint holds still instead of chattering
as an explicit ``sign(v)`` torque would. ``dof_frictionloss`` and the force range are refreshed
from the drives when they change (:attr:`ActuatorArrayModel.drive_state_version`: brakes, power,
a protection), at the next :meth:`~MujocoWorld.step` or, for a protection tripping during a step,
from the next substep on (never between computing a substep's torque and applying it).

Each substep is ``mj_step2`` then ``mj_step1`` (MuJoCo's split step), so that after
:meth:`~MujocoWorld.step` the kinematics and the position/velocity sensors (IMU orientation and
angular rate) describe the *final* state, exactly like :meth:`~MujocoWorld.base_pose`; the
accelerometer reads the acceleration over the last substep (it depends on the torques, which the
next substep has not computed yet). The actuator model's state is synchronised to the final state
too, so its :meth:`~ActuatorArrayModel.measure` reports what MuJoCo holds.

Cost: index arrays (or slices, when the joints are contiguous, as in a generated model) are
resolved once, and with slices the joint state, controls and forces are views into MuJoCo's
arrays made once; a substep is five numpy calls and MuJoCo's split step, never a per-joint Python
loop. ``bench/bench_mujoco.py`` measures it against a bare ``mj_step`` plus the PD law in numpy.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

import mujoco
import numpy as np
import numpy.typing as npt

from jointbus.drivers.sim.actuator_model import ActuatorArrayModel, ActuatorParams
from jointbus.drivers.sim.mjcf import (
    DEFAULT_FOOT_FRICTION,
    MjcfError,
    foot_links,
    geom_name,
    imu_sensor_names,
    mjcf_from_model,
)
from jointbus.messages.errors import (
    LengthMismatchError,
    LimitError,
    NonFiniteError,
    UnknownJointError,
    ValidationError,
)
from jointbus.model.joint import JointType
from jointbus.model.robot import RobotModel

__all__ = ["PROTECTION_PERIOD", "BasePose", "ImuSample", "MujocoWorld"]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
Index = slice | npt.NDArray[np.intp]

_WORLD: Final[str] = "MujocoWorld"
_STEP_TOLERANCE: Final[float] = 1e-9  # relative: dt must be a whole number of timesteps
PROTECTION_PERIOD: Final[float] = 0.01
"""s: how often the drives a world creates run their protections (temperatures, shutdowns,
stall detection; :class:`~jointbus.drivers.sim.actuator_model.ActuatorArrayModel`'s
``protection_period``): 10 ms, on the heat averaged over it, against thermal time constants of
minutes and a stall time of 0.5 s; the currents stay at the 2 ms supervision."""


@dataclass(frozen=True, slots=True)
class ImuSample:
    """One IMU reading from MuJoCo's sensors; fresh arrays the caller may keep.

    ``orientation`` (w, x, y, z): the IMU frame in the world frame (z up), as an IMU with an
    orientation filter reports it. ``angular_velocity``: rad/s in the IMU frame.
    ``linear_acceleration``: specific force in the IMU frame, m/s², including gravity — at rest on
    level ground it reads ≈ (0, 0, +9.81), as a real accelerometer does.
    """

    time: float
    """Simulated time of the reading, s."""
    orientation: FloatArray
    angular_velocity: FloatArray
    linear_acceleration: FloatArray


@dataclass(frozen=True, slots=True)
class BasePose:
    """Ground truth of the root link (tests and test oracles only: a robot does not know this).

    ``position`` m and ``orientation`` (w, x, y, z) in the world frame; ``linear_velocity`` m/s in
    the world frame; ``angular_velocity`` rad/s in the base frame (the frame a body-mounted gyro
    measures in).
    """

    time: float
    position: FloatArray
    orientation: FloatArray
    linear_velocity: FloatArray
    angular_velocity: FloatArray


def _index(addresses: Sequence[int]) -> Index:
    """A slice when ``addresses`` are consecutive (a view, no gather), else an index array."""
    if addresses and list(addresses) == list(range(addresses[0], addresses[0] + len(addresses))):
        return slice(addresses[0], addresses[0] + len(addresses))
    return np.asarray(addresses, dtype=np.intp)


class MujocoWorld:
    """A :class:`RobotModel` simulated in MuJoCo with :class:`ActuatorArrayModel` drives.

    Args:
        model: the robot; its actuated joints must be single-DoF.
        params: drive parameters, one for all or one per actuated joint (actuator order);
            give either this or ``actuators``.
        actuators: an existing actuator model to drive the joints (its names must be the
            robot's actuator order); the world then shares it with whoever passed it in.
        timestep: MuJoCo step, s (default: the robot file's ``simulation.timestep``); ≤ 2 ms is
            what the drives' impedance loop needs to stay stable at high gains.
        seed: seed of the actuator model's sensor noise (ignored with ``actuators``).
        floor: add a floor plane at z = 0.
        foot_friction: (sliding, torsional, rolling) friction of the feet.
        self_collision: let robot geoms collide with each other, not only with the floor.
        bus_voltage: supply voltage of a created actuator model, V.
        engine_clamp: let MuJoCo clamp the drives' torque (the default; see the module
            docstring); ``False`` takes every substep's torque from
            :meth:`ActuatorArrayModel.actuate`, the reference the default is tested against
            (the same torques, bit for bit, at several times the cost).

    Drives the world creates run their protections every :data:`PROTECTION_PERIOD`.

    The robot starts at the model's zero configuration (a floating base at the origin); call
    :meth:`reset` to place it. The drives start powered off, as the actuator model does.
    """

    def __init__(
        self,
        model: RobotModel,
        params: ActuatorParams | Sequence[ActuatorParams] | None = None,
        *,
        actuators: ActuatorArrayModel | None = None,
        timestep: float | None = None,
        seed: int | None = 0,
        floor: bool = True,
        foot_friction: Sequence[float] = DEFAULT_FOOT_FRICTION,
        self_collision: bool = False,
        bus_voltage: float = 48.0,
        engine_clamp: bool = True,
    ) -> None:
        names = model.actuator_order
        if (params is None) == (actuators is None):
            raise ValidationError(
                _WORLD, "params, actuators", (params, actuators), "exactly one of the two"
            )
        if params is not None:
            actuators = ActuatorArrayModel(
                names,
                params,
                bus_voltage=bus_voltage,
                seed=seed,
                protection_period=PROTECTION_PERIOD,
            )
        elif actuators is not None and actuators.names != names:
            raise ValidationError(
                _WORLD,
                "actuators.names",
                actuators.names,
                f"the robot's actuator order {names}",
            )
        step = model.simulation.timestep if timestep is None else float(timestep)
        if not (math.isfinite(step) and 0.0 < step <= 0.002):
            raise LimitError(_WORLD, "timestep", step, "> 0 and <= 0.002 s")
        if actuators is None:  # unreachable: exactly one of params / actuators was given
            raise ValidationError(_WORLD, "actuators", None, "an ActuatorArrayModel")
        self._robot = model
        self._actuators = actuators
        self._timestep = step
        self._mjcf = mjcf_from_model(
            model,
            timestep=step,
            floor=floor,
            foot_friction=foot_friction,
            self_collision=self_collision,
        )
        try:
            self._model = mujoco.MjModel.from_xml_string(self._mjcf)
        except ValueError as exc:  # MuJoCo's compiler rejects the model
            raise MjcfError(
                f"robot {model.name!r}", "mjcf", str(exc), "a model MuJoCo compiles"
            ) from exc
        self._data = mujoco.MjData(self._model)
        m = self._model

        def joint_id(name: str) -> int:
            return int(mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, name))

        ids = [joint_id(name) for name in names]
        self._qpos_index = _index([int(m.jnt_qposadr[i]) for i in ids])
        self._dof_index = _index([int(m.jnt_dofadr[i]) for i in ids])
        actuator_ids = [int(mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_ACTUATOR, n)) for n in names]
        self._ctrl_index = _index(actuator_ids)
        limits = model.limits_for(names)
        self._lower = np.array([lim.position_min for lim in limits], dtype=np.float64)
        self._upper = np.array([lim.position_max for lim in limits], dtype=np.float64)

        # Drive dynamics from the actuator parameters (see the module docstring).
        per_joint = actuators.params
        dof = self._dof_index
        m.dof_armature[dof] = [p.rotor_inertia for p in per_joint]
        m.dof_damping[dof] = [p.viscous_friction for p in per_joint]
        m.dof_frictionloss[dof] = actuators.dry_friction
        mujoco.mj_setConst(m, self._data)  # constraint scaling depends on the armature

        # MuJoCo clamps the drives' torque (module docstring); the range follows the drives.
        ci = self._ctrl_index
        m.actuator_forcelimited[ci] = 1
        self._engine_clamp = (
            bool(engine_clamp)
            and all(isinstance(index, slice) for index in (self._qpos_index, self._dof_index, ci))
            and bool(np.all(m.actuator_ctrllimited[ci]))  # a huge ctrl is clamped, not zeroed
        )
        d = self._data
        #: Views into MuJoCo's arrays (valid for the data's lifetime; only with slices).
        self._q_view = d.qpos[self._qpos_index]
        self._v_view = d.qvel[self._dof_index]
        self._ctrl_view = d.ctrl[ci]
        self._force_view = d.actuator_force[ci]
        self._term = np.zeros(len(names))
        self._drive_state_seen = -1  # the drives' drive_state_version last copied

        self._root_body = int(mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, model.root))
        self._free_qpos: int | None = None
        if model.base_mount is JointType.FLOATING:
            free = int(mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, f"{model.root}_free"))
            self._free_qpos = int(m.jnt_qposadr[free])

        self._feet = foot_links(model)
        self._geom_leg = np.full(m.ngeom, -1, dtype=np.intp)
        for leg, link_name in enumerate(self._feet):
            for i in range(len(model.link(link_name).collisions)):
                gid = int(mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, geom_name(link_name, i)))
                self._geom_leg[gid] = leg

        self._imus: dict[str, tuple[slice, slice, slice]] = {}
        for sensor in model.sensors:
            if sensor.kind != "imu":
                continue
            slices = []
            for sensor_name in imu_sensor_names(sensor.name):
                sid = int(mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SENSOR, sensor_name))
                adr, dim = int(m.sensor_adr[sid]), int(m.sensor_dim[sid])
                slices.append(slice(adr, adr + dim))
            self._imus[sensor.name] = (slices[0], slices[1], slices[2])

        self._velocity6 = np.zeros(6)
        self._substeps_for: dict[float, int] = {}
        mujoco.mj_forward(m, self._data)
        self._sync_actuators()

    # ------------------------------------------------------------------ properties

    @property
    def robot(self) -> RobotModel:
        """The robot description the world was built from."""
        return self._robot

    @property
    def actuators(self) -> ActuatorArrayModel:
        """The drives: send commands, power and brakes here, and read the noisy feedback a driver
        reports from their :meth:`~ActuatorArrayModel.measure`."""
        return self._actuators

    @property
    def timestep(self) -> float:
        """MuJoCo integration step, s."""
        return self._timestep

    @property
    def time(self) -> float:
        """Simulated time, s (0 after :meth:`reset`)."""
        return float(self._data.time)

    @property
    def mjcf(self) -> str:
        """The generated MJCF text (save it to look at the robot in MuJoCo's viewer)."""
        return self._mjcf

    @property
    def mujoco_model(self) -> mujoco.MjModel:
        """MuJoCo's compiled model (for viewers and experiments; the world owns it)."""
        return self._model

    @property
    def mujoco_data(self) -> mujoco.MjData:
        """MuJoCo's state (e.g. ``xfrc_applied`` to push the robot; the world owns it)."""
        return self._data

    @property
    def feet(self) -> tuple[str, ...]:
        """Foot link names in leg order (the order of :meth:`foot_contacts`)."""
        return self._feet

    @property
    def imu_names(self) -> tuple[str, ...]:
        """Names of the robot's IMUs (sensor mounts of kind ``imu``)."""
        return tuple(self._imus)

    # ------------------------------------------------------------------ state

    def reset(
        self,
        base_height: float | None = None,
        joint_positions: npt.ArrayLike | Mapping[str, float] | None = None,
        *,
        orientation: npt.ArrayLike | None = None,
    ) -> None:
        """Place the robot at rest and restart time at 0.

        Args:
            base_height: height of a floating base's origin above the floor, m (default 0).
            joint_positions: actuated joint positions (rad or m) in actuator order, or a
                ``{joint: position}`` mapping naming every actuated joint (e.g.
                ``model.pose("home")``); default all zero.
            orientation: a floating base's orientation (w, x, y, z), default upright; normalised.

        Everything is checked before anything changes (:class:`ValidationError` naming joint,
        index, field, value and expectation). The drives keep their command, power, brakes and
        temperatures: they belong to the driver, not to the physics.
        """
        q = self._checked_positions(joint_positions)
        height = 0.0 if base_height is None else float(base_height)
        if not math.isfinite(height):
            raise NonFiniteError(_WORLD, "base_height", height, "a finite height in m")
        quat = np.array((1.0, 0.0, 0.0, 0.0))
        if orientation is not None:
            quat = np.array(orientation, dtype=np.float64)
            norm = float(np.linalg.norm(quat)) if quat.shape == (4,) else math.nan
            if not (math.isfinite(norm) and norm > 1e-9):
                raise ValidationError(
                    _WORLD, "orientation", orientation, "a non-zero finite quaternion (w, x, y, z)"
                )
            quat /= norm
        if self._free_qpos is None and (base_height is not None or orientation is not None):
            raise ValidationError(
                _WORLD,
                "base_height, orientation",
                (base_height, orientation),
                f"nothing: the base of {self._robot.name!r} is {self._robot.base_mount.value}, "
                "not floating",
            )
        m, d = self._model, self._data
        mujoco.mj_resetData(m, d)
        if self._free_qpos is not None:
            a = self._free_qpos
            d.qpos[a : a + 3] = (0.0, 0.0, height)
            d.qpos[a + 3 : a + 7] = quat
        d.qpos[self._qpos_index] = q
        mujoco.mj_forward(m, d)
        self._sync_actuators()

    def _checked_positions(
        self, positions: npt.ArrayLike | Mapping[str, float] | None
    ) -> FloatArray:
        names = self._robot.actuator_order
        n = len(names)
        if positions is None:
            q = np.zeros(n)
        elif isinstance(positions, Mapping):
            for name in positions:
                if name not in names:
                    raise UnknownJointError(name, names)
            missing = [name for name in names if name not in positions]
            if missing:
                raise LengthMismatchError(
                    _WORLD,
                    "joint_positions",
                    sorted(positions),
                    f"a position for every actuated joint; missing {missing}",
                )
            q = np.array([positions[name] for name in names], dtype=np.float64)
        else:
            q = np.array(positions, dtype=np.float64)
            if q.shape != (n,):
                raise LengthMismatchError(
                    _WORLD, "joint_positions", q.shape, f"one position per actuated joint ({n})"
                )
        bad = ~np.isfinite(q)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise NonFiniteError(
                _WORLD, "joint_positions", float(q[i]), "a finite position",
                joint=names[i], index=i,
            )
        outside = (q < self._lower) | (q > self._upper)
        if outside.any():
            i = int(np.flatnonzero(outside)[0])
            raise LimitError(
                _WORLD, "joint_positions", float(q[i]),
                f"a position in [{self._lower[i]}, {self._upper[i]}]",
                joint=names[i], index=i,
            )
        return q

    def _sync_actuators(self) -> None:
        d = self._data
        self._actuators.set_state(d.qpos[self._qpos_index], d.qvel[self._dof_index])

    def step(self, dt: float) -> None:
        """Advance by ``dt`` seconds, a whole number of timesteps (drives act every substep).

        Commands, power and brakes set on :attr:`actuators` are held over the whole call.
        """
        substeps = self._substeps_for.get(dt)
        if substeps is None:
            substeps = self._substeps(dt)
        if self._actuators.drive_state_version != self._drive_state_seen:
            self._copy_drive_state()
        if self._engine_clamp:
            self._step_engine_clamp(substeps)
        else:
            self._step_actuate(substeps)

    def _step_actuate(self, substeps: int) -> None:
        """Each substep's torques from :meth:`ActuatorArrayModel.actuate`, written to ``ctrl``."""
        m, d, h = self._model, self._data, self._timestep
        qpos, qvel, ctrl = d.qpos, d.qvel, d.ctrl
        qi, di, ci = self._qpos_index, self._dof_index, self._ctrl_index
        drives = self._actuators
        actuate = drives.actuate
        step1, step2 = mujoco.mj_step1, mujoco.mj_step2
        for _ in range(substeps):
            ctrl[ci] = actuate(qpos[qi], qvel[di], h)
            step2(m, d)
            if drives.drive_state_version != self._drive_state_seen:
                self._copy_drive_state()  # a protection changed: from the next substep
            step1(m, d)
        drives.set_state(qpos[qi], qvel[di])

    def _step_engine_clamp(self, substeps: int) -> None:
        """:attr:`ActuatorArrayModel.drive_law` into ``ctrl``, MuJoCo's clamp (module
        docstring); a substep with a joint in its roll-off band takes the numpy law instead."""
        m, d, h = self._model, self._data, self._timestep
        drives = self._actuators
        law = drives.drive_law
        offset, kp, kd, bound = law.offset, law.kp, law.kd, law.speed_sq_bound
        # Views into MuJoCo's arrays: after mj_step2, q and v are the substep's final state.
        q, v, ctrl, force = self._q_view, self._v_view, self._ctrl_view, self._force_view
        term = self._term
        multiply, subtract = np.multiply, np.subtract
        step1, step2 = mujoco.mj_step1, mujoco.mj_step2
        to_supervision = drives.substeps_to_supervision
        due = to_supervision(h)  # the supervision runs after this many substeps
        pending = 0  # substeps not yet reported to the drives
        synced = True  # the drives hold the current state
        for _ in range(substeps):
            if v.dot(v) < bound:
                multiply(kp, q, out=ctrl)  # the law as actuate computes it, op by op
                subtract(offset, ctrl, out=ctrl)
                multiply(kd, v, out=term)
                ctrl -= term
                step2(m, d)
                pending += 1
                if pending == due:
                    drives.applied(q, v, force, h, pending)
                    pending = 0
                    due = to_supervision(h)
                    synced = True
                    if drives.drive_state_version != self._drive_state_seen:
                        self._copy_drive_state()  # a protection changed: from the next substep
            else:  # a joint in its roll-off band: the torque bounds depend on its speed
                if pending:
                    drives.applied(q, v, force, h, pending)
                    pending = 0
                ctrl[:] = drives.actuate(q, v, h)
                step2(m, d)
                due = to_supervision(h)
                synced = False
                if drives.drive_state_version != self._drive_state_seen:
                    self._copy_drive_state()
            step1(m, d)
        if pending:
            drives.applied(q, v, force, h, pending)
        elif not synced:
            drives.set_state(q, v)

    def _copy_drive_state(self) -> None:
        """The drives' dry friction and available torque into MuJoCo's model."""
        drives = self._actuators
        m, limit = self._model, drives.drive_law.torque_max
        m.dof_frictionloss[self._dof_index] = drives.dry_friction
        force_range = m.actuator_forcerange
        ci = self._ctrl_index
        force_range[ci, 0] = -limit
        force_range[ci, 1] = limit
        self._drive_state_seen = drives.drive_state_version

    def _substeps(self, dt: float) -> int:
        count = round(dt / self._timestep) if math.isfinite(dt) else 0
        if count < 1 or abs(count * self._timestep - dt) > _STEP_TOLERANCE * max(dt, 1.0):
            raise LimitError(
                _WORLD, "dt", dt, f"a whole number (>= 1) of timesteps of {self._timestep} s"
            )
        if len(self._substeps_for) < 16:
            self._substeps_for[dt] = count
        return count

    # ------------------------------------------------------------------ readings

    def joint_positions(self) -> FloatArray:
        """True actuated joint positions in actuator order, rad or m (a copy)."""
        return np.array(self._data.qpos[self._qpos_index], dtype=np.float64)

    def joint_velocities(self) -> FloatArray:
        """True actuated joint velocities in actuator order, rad/s or m/s (a copy)."""
        return np.array(self._data.qvel[self._dof_index], dtype=np.float64)

    def joint_efforts(self) -> FloatArray:
        """Motor torques applied over the last substep in actuator order, N·m (a copy)."""
        return np.array(self._actuators.motor_torques, dtype=np.float64)

    def imu(self, name: str | None = None) -> ImuSample:
        """The reading of IMU ``name`` (default: the robot's first IMU); see :class:`ImuSample`."""
        if name is None:
            if not self._imus:
                raise ValidationError(
                    _WORLD, "imu", None, f"an IMU sensor mount on robot {self._robot.name!r}"
                )
            name = next(iter(self._imus))
        slices = self._imus.get(name)
        if slices is None:
            raise ValidationError(_WORLD, "imu", name, f"one of {list(self._imus)}")
        data = self._data.sensordata
        return ImuSample(
            time=float(self._data.time),
            orientation=np.array(data[slices[0]]),
            angular_velocity=np.array(data[slices[1]]),
            linear_acceleration=np.array(data[slices[2]]),
        )

    def base_pose(self) -> BasePose:
        """Ground-truth pose and velocity of the root link (see :class:`BasePose`)."""
        m, d, body = self._model, self._data, self._root_body
        v6 = self._velocity6
        mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_BODY, body, v6, 0)
        linear = v6[3:].copy()
        mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_BODY, body, v6, 1)
        return BasePose(
            time=float(d.time),
            position=np.array(d.xpos[body]),
            orientation=np.array(d.xquat[body]),
            linear_velocity=linear,
            angular_velocity=v6[:3].copy(),
        )

    def foot_contacts(self) -> BoolArray:
        """Per leg (order of :attr:`feet`): is any geom of that foot in a MuJoCo contact?"""
        contacts = np.zeros(len(self._feet), dtype=np.bool_)
        ncon = int(self._data.ncon)
        if ncon:
            legs = self._geom_leg[self._data.contact.geom[:ncon].ravel()]
            contacts[legs[legs >= 0]] = True
        return contacts
