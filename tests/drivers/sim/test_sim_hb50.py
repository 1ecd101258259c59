"""``sim://hb50``: the quadruped in MuJoCo behind the driver API — where it starts, that the
home-pose impedance command stands it, that its IMU reads gravity, and that a seed repeats a run.

The stand-up is what ``make demo``'s control node does: power on, ramp the impedance targets from
the measured joints to the home pose over 1 s, hold (kp 80 N·m/rad, kd 3 N·m·s/rad).
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np
import pytest

from jointbus import drivers
from jointbus.drivers import DriverClosedError
from jointbus.drivers.actuator_array import ImuReading
from jointbus.drivers.impedance import ImpedanceCommand
from jointbus.drivers.sim.robots import HB50_LYING_HEIGHT, MujocoSimArray
from jointbus.model.yaml_loader import load_robot

HB50 = load_robot("hb50")
HOME = np.array([HB50.pose("home")[name] for name in HB50.actuator_order])
URL = "sim://hb50?realtime=false&seed=1"
CYCLE = 0.002  # s, the bridge's 500 Hz
G = 9.81  # m/s²


def open_hb50(url: str = URL) -> MujocoSimArray:
    robot = drivers.open(url)
    assert isinstance(robot, MujocoSimArray)
    return robot


def stand_up(robot: MujocoSimArray, ramp: float = 1.0, hold: float = 1.0) -> None:
    """Power on, ramp the home-pose impedance command in over ``ramp`` s, hold ``hold`` s."""
    robot.power(True)
    start = robot.read_joints().position
    steps = round((ramp + hold) / CYCLE)
    for i in range(steps):
        fraction = min(1.0, (i + 1) * CYCLE / ramp)
        target = start + fraction * (HOME - start)
        robot.impedance(ImpedanceCommand.hold(target, 80.0, 3.0))
        robot.step(CYCLE)


@pytest.fixture(scope="module")
def standing() -> Iterator[MujocoSimArray]:
    with open_hb50() as robot:
        stand_up(robot)
        yield robot


def test_url_opens_twelve_joints_in_hb50_actuator_order() -> None:
    with open_hb50() as robot:
        assert robot.names == HB50.actuator_order
        assert robot.count == 12
        assert not robot.realtime
        assert robot.world.robot.name == "hb50"
        data = robot.read()
        assert [a.position for a in data.actuators] == pytest.approx(
            robot.read_joints().position.tolist(), abs=0.01
        )


def test_starts_lying_folded_at_rest_with_power_off() -> None:
    with open_hb50() as robot:
        assert not robot.read_joints().motor_power
        pose = robot.world.base_pose()
        assert pose.position[2] == pytest.approx(HB50_LYING_HEIGHT, abs=0.005)
        folded = np.abs(robot.world.joint_positions()[2::3])
        assert (folded > 2.5).all()  # every knee folded
        before = robot.world.joint_positions()
        robot.step(0.5)
        # Nothing moves until a command arrives: the start pose is where the unpowered robot rests.
        assert np.abs(robot.world.joint_positions() - before).max() < 0.02
        assert abs(robot.world.base_pose().position[2] - pose.position[2]) < 0.002


def test_motion_is_refused_until_power_is_on() -> None:
    with open_hb50() as robot:
        command = ImpedanceCommand.hold(HOME, 80.0, 3.0)
        with pytest.raises(drivers.RequestRejected) as info:
            robot.impedance(command)
        assert info.value.reason is drivers.RejectReason.POWERED_OFF


def test_home_pose_impedance_command_stands_it(standing: MujocoSimArray) -> None:
    pose = standing.world.base_pose()
    assert abs(pose.position[2] - 0.34) <= 0.1 * 0.34, pose.position
    assert standing.world.foot_contacts().all()
    assert np.linalg.norm(pose.linear_velocity) < 0.02  # settled, not passing through
    assert 2.0 * np.arccos(min(1.0, abs(pose.orientation[0]))) < 0.05  # upright
    np.testing.assert_allclose(standing.read_joints().position, HOME, atol=0.1)


def _assert_gravity(imu: ImuReading | None) -> None:
    assert imu is not None
    np.testing.assert_allclose(imu.linear_acceleration, [0.0, 0.0, G], atol=0.2)
    np.testing.assert_allclose(imu.angular_velocity, 0.0, atol=0.05)
    # Level: the orientation's z axis is the world's.
    w, x, y, z = imu.orientation
    assert abs(w) ** 2 + z**2 == pytest.approx(1.0, abs=0.01)
    assert x**2 + y**2 < 1e-3


def test_imu_reads_gravity_at_rest_lying_and_standing(standing: MujocoSimArray) -> None:
    with open_hb50() as robot:
        robot.step(0.2)
        lying = robot.imu()
        _assert_gravity(lying)
        assert lying is not None and lying.time == pytest.approx(robot.time)
    _assert_gravity(standing.imu())


def test_imu_is_none_without_one_and_refused_after_close() -> None:
    with drivers.open("sim://arm6?realtime=false") as arm:
        assert arm.imu() is None
    robot = open_hb50()
    robot.close()
    with pytest.raises(DriverClosedError):
        robot.imu()


def _run(url: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    with open_hb50(url) as robot:
        stand_up(robot, ramp=0.5, hold=0.1)
        reading = robot.read_joints()
        imu = robot.imu()
        assert imu is not None
        return reading.position, reading.velocity, imu.linear_acceleration


def test_same_seed_same_run_bit_for_bit() -> None:
    first = _run(URL)
    again = _run(URL)
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)
    other = _run("sim://hb50?realtime=false&seed=2")
    assert not np.array_equal(first[0], other[0])  # the sensor noise is the seed's


def test_rate_option_sets_the_mujoco_timestep() -> None:
    with open_hb50() as robot:
        assert robot.world.timestep == pytest.approx(0.0005)
    with open_hb50("sim://hb50?realtime=false&rate=3000") as robot:
        assert robot.world.timestep == pytest.approx(0.002 / 6)


def test_realtime_mode_advances_by_itself() -> None:
    with open_hb50("sim://hb50?seed=1") as robot:
        assert robot.realtime
        before = robot.time
        time.sleep(0.1)
        assert robot.time > before
        assert robot.imu() is not None


@pytest.mark.parametrize("slots", [1, 2, 3, 4, 5, 6])
def test_a_1_khz_bridge_catching_up_steps_whole_timesteps(slots: int) -> None:
    """A 1 kHz bridge that dropped slots steps them too (1 ms each, up to 6 in one call). 5 ms
    were once cut into three equal 1.67 ms control steps, which split MuJoCo's 0.5 ms timestep:
    refused, and the bridge's loop stopped."""
    with open_hb50() as robot:
        start = robot.time
        robot.step(0.001 * slots)
        assert robot.time - start == pytest.approx(0.001 * slots, abs=1e-9)
