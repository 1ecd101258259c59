"""The simulator's ground truth as nav_msgs/Odometry: the true pose, the twist in the base frame."""

from __future__ import annotations

import itertools
import math
import time

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


class _Clock:
    """A monotonic clock (ns) the test moves: the publisher's wall-clock pacing without sleeping."""

    def __init__(self) -> None:
        self.ns = 1_000_000_000

    def __call__(self) -> int:
        return self.ns


def test_the_10hz_copy_goes_every_tenth_of_a_second_and_nothing_is_built_unobserved() -> None:
    """A launcher that shows the true height once a second reads the 10 Hz reliable copy; with no
    subscriber to either topic the simulator's process builds nothing."""
    world = _flying_world()
    clock = _Clock()
    with Bus(name="gt-10hz") as bus:
        pub = GroundTruthPublisher(bus, world, namespace="hb50", clock=clock)
        world.step(0.002)
        assert pub.publish() is None  # nobody listens: not even built
        slow: list[Odometry] = []
        bus.subscribe("/hb50/sim/ground_truth_10hz", Odometry, slow.append, RELIABLE, realtime=True)
        built = []
        for _ in range(150):  # 2 ms steps, 2 ms apart: real time
            clock.ns += 2_000_000
            world.step(0.002)
            built.append(pub.publish())
    # 0.1, 0.2 and 0.3 s of the clock after the first (unobserved) call: calls 50, 100 and 150
    assert len(slow) == 3 and sum(m is not None for m in built) == 3
    stamps = [m.header.stamp.to_ns() for m in slow]
    assert np.diff(stamps).tolist() == [100_000_000] * 2


def test_the_10hz_copy_keeps_10_hz_when_the_loop_drops_slots() -> None:
    """A bridge loop that drops slots steps them in its next cycle (a call covering 4–10 ms): the
    copy was every 50th call, and a loop that dropped a third of its cycles sent it at 6.45 Hz
    (a new user's trial, 2026-12-05). It goes once per 0.1 s of the clock."""
    world = _flying_world()
    clock = _Clock()
    with Bus(name="gt-10hz-skips") as bus:
        pub = GroundTruthPublisher(bus, world, namespace="hb50", clock=clock)
        slow: list[Odometry] = []
        bus.subscribe("/hb50/sim/ground_truth_10hz", Odometry, slow.append, RELIABLE, realtime=True)
        pub.publish()  # the first copy
        for k in range(300):  # 0.9 s in calls 2 and 4 ms apart, each stepping its slots
            dt = 0.004 if k % 2 else 0.002
            clock.ns += round(dt * 1e9)
            world.step(dt)
            pub.publish()
    assert world.time == pytest.approx(0.902, abs=1e-9)  # from the first 2 ms step
    stamps_s = [m.header.stamp.to_ns() / 1e9 for m in slow]
    assert len(stamps_s) == 10, stamps_s  # the first, then every 0.1 s to 0.9 s
    assert all(abs(b - a - 0.1) < 0.0041 for a, b in itertools.pairwise(stamps_s)), stamps_s


def test_the_10hz_copy_keeps_the_wall_clocks_10_hz_when_the_simulator_is_slower() -> None:
    """A run at real-time factor 0.84 recorded the copy at 8.40 Hz beside the bridge's 10.0 Hz
    mirrors (a new user's trial, 2026-12-05): it was paced by simulated time. Here 2 ms steps
    come 2.5 ms apart (real-time factor 0.8): 10 copies a second of the clock, not 8, each the
    world as the step of its call left it."""
    world = _flying_world()
    clock = _Clock()
    with Bus(name="gt-10hz-slow") as bus:
        pub = GroundTruthPublisher(
            bus, world, namespace="hb50", epoch_ns=7_000_000_000, clock=clock
        )
        slow: list[Odometry] = []
        fast: list[Odometry] = []
        bus.subscribe("/hb50/sim/ground_truth_10hz", Odometry, slow.append, RELIABLE, realtime=True)
        bus.subscribe("/hb50/sim/ground_truth", Odometry, fast.append, MAB_RT, realtime=True)
        sent_at: list[int] = []  # clock time of each copy
        for _ in range(400):  # 1 s of the clock (the first call at 0), 0.8 s of simulated time
            copies = len(slow)
            pub.publish()
            if len(slow) > copies:
                sent_at.append(clock.ns)
                assert slow[-1] is fast[-1]  # the copy is this step's message, not an old one
                assert slow[-1].header.stamp.to_ns() == 7_000_000_000 + round(world.time * 1e9)
                assert slow[-1].pose.pose.position.z == float(world.base_pose().position[2])
            clock.ns += 2_500_000
            world.step(0.002)
    assert world.time == pytest.approx(0.802, abs=1e-9)
    assert len(slow) == 10, [m.header.stamp.to_ns() for m in slow]
    assert np.diff(sent_at).tolist() == [100_000_000] * 9  # every 0.1 s of the clock


def test_the_10hz_copy_follows_the_real_clock_not_a_faster_simulator() -> None:
    """On the real monotonic clock: a world stepped far faster than real time (1 s of simulated
    time in 100 calls, no sleep) gets at most one copy per 0.1 s of the clock since the first
    call, not one per 0.1 s of simulated time (the 11 it got when paced by simulated time)."""
    world = _flying_world()
    with Bus(name="gt-10hz-real") as bus:
        pub = GroundTruthPublisher(bus, world, namespace="hb50")
        slow: list[Odometry] = []
        bus.subscribe("/hb50/sim/ground_truth_10hz", Odometry, slow.append, RELIABLE, realtime=True)
        started = time.monotonic()
        pub.publish()
        for _ in range(100):
            world.step(0.01)
            pub.publish()
        elapsed_s = time.monotonic() - started
    assert world.time == pytest.approx(1.002, abs=1e-9)
    assert 1 <= len(slow) <= elapsed_s / 0.1 + 1, (len(slow), elapsed_s)
