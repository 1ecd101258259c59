"""The simulator's ground truth as nav_msgs/Odometry: the true pose, the twist in the base frame."""

from __future__ import annotations

import itertools
import math

import mujoco
import numpy as np
import pytest

from jointbus.bus import MAB_RT, RELIABLE, Bus
from jointbus.drivers.sim.actuator_model import ActuatorParams
from jointbus.drivers.sim.mujoco_world import MujocoWorld
from jointbus.messages.nav_msgs import Odometry
from jointbus.model.yaml_loader import load_robot
from jointbus.nodes.ground_truth import GroundTruthPublisher, odometry_of

HB50 = load_robot("hb50")


def _flying_world() -> MujocoWorld:
    """The hb50 thrown: yawed by 90° and pitched, moving forward in its own frame."""
    world = MujocoWorld(HB50, ActuatorParams.hb50(), seed=0)
    half = math.pi / 4  # yaw 90°
    world.reset(base_height=1.0, orientation=(math.cos(half), 0.0, 0.0, math.sin(half)))
    d = world.mujoco_data
    d.qvel[0:3] = (0.0, 2.0, 0.0)  # world +y = the yawed body's +x
    d.qvel[3:6] = (0.0, 0.0, 0.5)
    mujoco.mj_forward(world.mujoco_model, d)
    world.step(0.002)
    return world


def test_pose_is_the_world_pose_and_twist_is_in_the_base_frame() -> None:
    world = _flying_world()
    truth = world.base_pose()
    odom = odometry_of(truth, "body", epoch_ns=5_000_000_000)
    assert odom.header.frame_id == "world" and odom.child_frame_id == "body"
    assert odom.header.stamp.to_ns() == 5_000_000_000 + round(truth.time * 1e9)
    p = odom.pose.pose.position
    assert (p.x, p.y, p.z) == tuple(truth.position.tolist())
    q = odom.pose.pose.orientation
    assert (q.w, q.x, q.y, q.z) == pytest.approx(tuple(truth.orientation.tolist()))
    # moving along world +y with the body yawed by +90°: forward in the base frame
    v = odom.twist.twist.linear
    assert v.x == pytest.approx(2.0, abs=0.02)
    assert abs(v.y) < 0.02
    assert odom.twist.twist.angular.z == pytest.approx(0.5, abs=0.01)
    assert Odometry.from_cdr(odom.to_cdr()) == odom


def test_publisher_sends_each_step_on_the_namespaced_topic() -> None:
    world = _flying_world()
    got: list[Odometry] = []
    with Bus(name="gt-test") as bus:
        bus.subscribe("/hb50/sim/ground_truth", Odometry, got.append, MAB_RT, realtime=True)
        pub = GroundTruthPublisher(bus, world, namespace="hb50")
        for _ in range(5):
            world.step(0.002)
            pub.publish()
        # its graph node is in the robot's namespace: ROS 2 lists /hb50/sim_ground_truth
        infos = [e for e in bus.local_endpoints() if e.kind == "publisher"]
        assert {(i.namespace, i.node) for i in infos} == {("/hb50", "sim_ground_truth")}
    assert len(got) == 5
    stamps = [m.header.stamp.to_ns() for m in got]
    assert np.diff(stamps).tolist() == [2_000_000] * 4  # one message per 2 ms physics step
    assert got[-1].pose.pose.position.z == pytest.approx(float(world.base_pose().position[2]))
    assert got[-1].child_frame_id == HB50.root


def test_the_10hz_copy_carries_every_nth_step_and_nothing_is_built_unobserved() -> None:
    """A launcher that shows the true height once a second reads the 10 Hz reliable copy; with no
    subscriber to either topic the simulator's process builds nothing."""
    world = _flying_world()
    with Bus(name="gt-10hz") as bus:
        pub = GroundTruthPublisher(bus, world, namespace="hb50")
        world.step(0.002)
        assert pub.publish() is None  # nobody listens: not even built
        slow: list[Odometry] = []
        bus.subscribe("/hb50/sim/ground_truth_10hz", Odometry, slow.append, RELIABLE, realtime=True)
        built = []
        for _ in range(149):
            world.step(0.002)
            built.append(pub.publish())
    assert len(slow) == 3 and sum(m is not None for m in built) == 3
    stamps = [m.header.stamp.to_ns() for m in slow]
    assert np.diff(stamps).tolist() == [100_000_000] * 2  # every 50th 2 ms step: 10 Hz


def test_the_10hz_copy_keeps_10_hz_of_simulated_time_when_calls_step_several_slots() -> None:
    """A bridge loop that drops slots steps them in its next cycle (a call covering 4–10 ms): the
    copy was every 50th call, and a loop that dropped a third of its cycles sent it at 6.45 Hz
    (a new user's trial, 2026-12-05). It now goes once per 0.1 s of simulated time."""
    world = _flying_world()
    with Bus(name="gt-10hz-skips") as bus:
        pub = GroundTruthPublisher(bus, world, namespace="hb50")
        slow: list[Odometry] = []
        bus.subscribe("/hb50/sim/ground_truth_10hz", Odometry, slow.append, RELIABLE, realtime=True)
        pub.publish()  # t = 2 ms: the first copy
        for k in range(300):  # 1 s of simulated time in calls of 2 and 4 ms (a third dropped)
            world.step(0.004 if k % 2 else 0.002)
            pub.publish()
    assert world.time == pytest.approx(0.902, abs=1e-9)  # from the first 2 ms step
    stamps_s = [m.header.stamp.to_ns() / 1e9 for m in slow]
    assert len(stamps_s) == 10, stamps_s  # the first, then every 0.1 s of simulated time to 0.9
    assert all(abs(b - a - 0.1) < 0.0041 for a, b in itertools.pairwise(stamps_s)), stamps_s
