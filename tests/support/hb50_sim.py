"""Shared helpers of the control-node tests: the hb50 in MuJoCo, read as BridgeData frames.

Part of :mod:`support` (``from support.hb50_sim import hb50``). The frames are what the bridge would
publish from the simulated drives: noisy joint measurements (the actuator model's seeded noise) and
the MuJoCo IMU, stamped with simulated time.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from jointbus.drivers.sim.actuator_model import ActuatorParams
from jointbus.drivers.sim.mujoco_world import MujocoWorld
from jointbus.messages.geometry_msgs import Quaternion, Vector3
from jointbus.messages.stamp import Time
from jointbus.messages.std_msgs import Header
from jointbus.model.robot import RobotModel
from jointbus.model.yaml_loader import load_robot
from jointbus.robots.hb50.messages import BridgeData, JointCommand

PERIOD = 0.002  # s, the bridge's cycle
#: Simulated time of frame 0 (s): a non-zero epoch, so stamp arithmetic is exercised.
EPOCH = 1000.0


@cache
def hb50() -> RobotModel:
    """The bundled hb50 model (loaded once per test session)."""
    return load_robot("hb50")


def make_world(seed: int = 1, timestep: float | None = None) -> MujocoWorld:
    """The hb50 in MuJoCo with powered MD-series drives (``timestep``: the robot file's by
    default, 2 ms; a 1 kHz cycle needs 1 ms or less, as ``sim://hb50``'s 0.5 ms)."""
    world = MujocoWorld(hb50(), ActuatorParams.hb50(), seed=seed, timestep=timestep)
    world.actuators.set_power(np.ones(len(hb50().actuator_order), dtype=np.bool_))
    return world


def frame(world: MujocoWorld) -> BridgeData:
    """The BridgeData frame the bridge would publish now."""
    model = world.robot
    measured = world.actuators.measure()
    imu = world.imu()
    w, x, y, z = imu.orientation.tolist()
    n = len(model.actuator_order)
    return BridgeData(
        header=Header(Time.from_ns(round((EPOCH + world.time) * 1e9)), "body"),
        orientation=Quaternion(x, y, z, w),
        angular_velocity=Vector3(*imu.angular_velocity.tolist()),
        linear_acceleration=Vector3(*imu.linear_acceleration.tolist()),
        joint_name=model.actuator_order,
        joint_position=tuple(measured.position.tolist()),
        joint_velocity=tuple(measured.velocity.tolist()),
        joint_effort=tuple(measured.torque.tolist()),
        joint_temperature=bytes(n),
        joint_status=(0,) * n,
    )


def apply(world: MujocoWorld, command: JointCommand) -> None:
    """Send a JointCommand to the simulated drives (the bridge's job)."""
    world.actuators.set_command(
        position=command.t_pos,
        velocity=command.t_vel,
        torque=command.t_trq,
        kp=command.kp,
        kd=command.kd,
    )


def lying_world(seed: int = 1) -> MujocoWorld:
    """The robot lying on the floor with its legs folded, as after a sit-down: dropped from the
    folded pose under damping and let settle for 1 s."""
    from jointbus.robots.hb50.legged.stand_pose import BodyPose, StandPose

    world = make_world(seed)
    q_fold = StandPose(hb50()).solve(BodyPose(0.14))
    world.reset(base_height=0.14, joint_positions=q_fold)
    n = len(q_fold)
    world.actuators.set_command(
        position=q_fold,
        velocity=np.zeros(n),
        torque=np.zeros(n),
        kp=np.zeros(n),
        kd=np.full(n, 1.0),
    )
    world.step(1.0)
    return world


def apply_arrays(
    world: MujocoWorld,
    position: np.ndarray,
    velocity: np.ndarray,
    torque: np.ndarray,
    kp: np.ndarray,
    kd: np.ndarray,
) -> None:
    """Send impedance targets (actuator order) to the simulated drives."""
    world.actuators.set_command(position=position, velocity=velocity, torque=torque, kp=kp, kd=kd)
