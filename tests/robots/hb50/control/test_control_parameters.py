"""The control node's live parameters: tuned over ``/hb50/config_update`` while it controls.

The test plays a perfect bridge, lock-step and without physics: each frame reports the joints at
the targets of the previous command (the estimator needs no more for the motion controller), so
the stand-up ends exactly at the stand pose and every target can be compared with the leg IK's.
Updates and frames travel on the in-process bus and are handled on the node's callback thread.
"""

from __future__ import annotations

import dataclasses
import queue
import time
from collections.abc import Callable, Iterator

import numpy as np
import pytest

from jointbus.bus import LATCHED, MAB_RT, RELIABLE, Bus
from jointbus.messages.geometry_msgs import Quaternion, Twist, Vector3
from jointbus.messages.stamp import Time
from jointbus.messages.std_msgs import Header, String
from jointbus.robots.hb50.control.motion import MotionParams
from jointbus.robots.hb50.control.node import CONTROL_PARAMETERS, ControlNode
from jointbus.robots.hb50.legged.stand_pose import BodyPose, StandPose
from jointbus.robots.hb50.messages import BridgeData, JointCommand, Level, MotionMode, Status
from jointbus.runtime.parameter_messages import ParameterList, ParameterUpdate
from support.hb50_sim import EPOCH, PERIOD, hb50

TIMEOUT = 5.0
MODEL = hb50()
ORDER = MODEL.actuator_order
STAND = StandPose(MODEL)


def wait_until(predicate: Callable[[], bool], timeout: float = TIMEOUT) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.002)
    return predicate()


class Rig:
    """The control node, a perfect bridge feeding it frames, and a tuning client, on one bus."""

    def __init__(self, bus: Bus) -> None:
        self.bus = bus
        # A short stand-up keeps the test quick; the robot file's parameters are the live ones.
        params = MotionParams.from_model(MODEL, {"stand_up_time": 0.2})
        self.node = ControlNode(bus, MODEL, params=params)
        self.commands: queue.Queue[JointCommand] = queue.Queue()
        self.statuses: list[Status] = []
        self.lists: list[ParameterList] = []
        bus.subscribe("/hb50/joint_command", JointCommand, self.commands.put, MAB_RT, realtime=True)
        bus.subscribe("/hb50/status", Status, self.statuses.append, RELIABLE, realtime=True)
        bus.subscribe("/hb50/parameters", ParameterList, self.lists.append, LATCHED, realtime=True)
        self.frames = bus.publisher("/hb50/bridge_data", BridgeData, MAB_RT)
        self.control = bus.publisher("/hb50/control_command", String, RELIABLE)
        self.velocity = bus.publisher("/hb50/velocity_command", Twist, MAB_RT)
        self.updates = bus.publisher("/hb50/config_update", ParameterUpdate, RELIABLE)
        self.joints = STAND.solve(BodyPose(0.14)).tolist()  # lying folded
        self.time = EPOCH
        self._requests = 0
        self.node.start()

    def cycle(self) -> JointCommand:
        """One frame at the joints' positions; the command comes back and the joints follow it."""
        self.time += PERIOD
        n = len(ORDER)
        self.frames.publish(
            BridgeData(
                header=Header(Time.from_ns(round(self.time * 1e9)), "body"),
                orientation=Quaternion(0.0, 0.0, 0.0, 1.0),
                angular_velocity=Vector3(),
                linear_acceleration=Vector3(0.0, 0.0, 9.81),
                joint_name=ORDER,
                joint_position=tuple(self.joints),
                joint_velocity=(0.0,) * n,
                joint_effort=(0.0,) * n,
                joint_temperature=bytes(n),
                joint_status=(0,) * n,
            )
        )
        command = self.commands.get(timeout=TIMEOUT)
        if any(command.kp):
            self.joints = list(command.t_pos)
        return command

    def run(self, seconds: float) -> list[JointCommand]:
        return [self.cycle() for _ in range(round(seconds / PERIOD))]

    def stand(self) -> None:
        self.cycle()
        self.control.publish(String("stand_up"))
        assert wait_until(lambda: self.node.motion.mode is MotionMode.STAND_UP)
        self.run(0.3)
        assert self.node.motion.mode is MotionMode.STAND

    def set(self, name: str, value: str) -> Status:
        """Send ``name = value`` to control_node; its answer on the status topic."""
        self._requests += 1
        request_id = f"req-{self._requests}"
        self.updates.publish(
            ParameterUpdate(node="control_node", name=name, value=value, request_id=request_id)
        )
        request = request_id.encode()
        assert wait_until(lambda: any(s.data == request for s in self.statuses))
        return next(s for s in self.statuses if s.data == request)

    def published(self, name: str) -> float:
        latest = [m for m in self.lists if m.node == "control_node"][-1]
        parameter = latest.get(name)
        assert parameter is not None
        return float(parameter.value)


@pytest.fixture
def rig() -> Iterator[Rig]:
    bus = Bus(name="control-params")
    made = Rig(bus)
    try:
        yield made
    finally:
        made.node.shutdown()
        bus.close()


def test_the_node_publishes_its_share_of_the_robot_files_parameters(rig: Rig) -> None:
    assert wait_until(lambda: any(m.node == "control_node" for m in rig.lists))
    latest = [m for m in rig.lists if m.node == "control_node"][-1]
    walking = (
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
    assert latest.names == ("cmd_vel_lin", "cmd_vel_ang", "stand_height", "kp", "kd", *walking)
    assert [p.value for p in latest.parameters][:5] == [1.0, 1.0, 0.34, 80.0, 3.0]
    assert latest.get("gait_period") is not None and latest.get("gait_period").value == 0.36
    height = latest.get("stand_height")
    assert height is not None and (height.min, height.max, height.unit) == (0.15, 0.42, "m")
    assert "watchdog_time" not in latest.names  # the bridge's


def test_every_motion_parameter_can_be_declared_live() -> None:
    assert set(CONTROL_PARAMETERS) == {f.name for f in dataclasses.fields(MotionParams)}


def test_a_new_stand_height_moves_the_standing_body_there_without_a_jump(rig: Rig) -> None:
    rig.stand()
    before = rig.cycle()
    assert np.allclose(before.t_pos, STAND.solve(BodyPose(0.34)), atol=1e-9)
    answer = rig.set("stand_height", "0.3")
    assert answer.level == Level.OK and answer.reporting_node == "control_node"
    assert answer.status == "param stand_height changed 0.34 → 0.3 m"
    assert rig.published("stand_height") == 0.3
    commands = rig.run(0.5)  # 4 cm at the 0.1 m/s height slew: 0.4 s
    assert rig.node.motion.pose_setpoint.height == pytest.approx(0.30)
    assert np.allclose(commands[-1].t_pos, STAND.solve(BodyPose(0.30)), atol=1e-9)
    steps = np.abs(np.diff([before.t_pos, *(c.t_pos for c in commands)], axis=0)).max()
    assert steps < 0.01  # rad per 2 ms step: the body is lowered, not dropped
    # "stand" re-levels to the new reference height, and the next stand-up rises to it.
    assert rig.node.motion.reference_pose.height == 0.30


def test_new_gains_are_used_from_the_next_command(rig: Rig) -> None:
    rig.stand()
    assert rig.set("kp", "120").level == Level.OK
    assert rig.set("kd", "4.5").level == Level.OK
    command = rig.cycle()
    assert set(command.kp) == {120.0} and set(command.kd) == {4.5}


def test_cmd_vel_lin_and_ang_scale_the_velocity_command(rig: Rig) -> None:
    rig.cycle()
    twist = Twist(Vector3(1.0, 0.0, 1.0), Vector3(0.0, 0.0, 0.5))
    rig.velocity.publish(twist)
    assert wait_until(lambda: rig.node.motion.velocity_command.vx == 1.0)
    assert rig.node.motion.velocity_command.yaw_rate == 0.5
    assert rig.set("cmd_vel_lin", "0.5").level == Level.OK
    assert rig.set("cmd_vel_ang", "2").level == Level.OK
    rig.velocity.publish(twist)
    assert wait_until(lambda: rig.node.motion.velocity_command.vx == 0.5)
    assert rig.node.motion.velocity_command.yaw_rate == 1.0
    assert (rig.published("cmd_vel_lin"), rig.published("cmd_vel_ang")) == (0.5, 2.0)


def test_a_stand_height_the_legs_cannot_stand_at_is_refused_and_changes_nothing(
    rig: Rig,
) -> None:
    rig.stand()
    lists_before = len(rig.lists)
    answer = rig.set("stand_height", "0.4")  # within the file's [0.15, 0.42] m
    assert answer.level == Level.ERROR and answer.reporting_node == "control_node"
    assert "param stand_height refused '0.4'" in answer.status
    assert "standing range [0.22, 0.37] m" in answer.status
    out_of_bounds = rig.set("stand_height", "0.5")
    assert out_of_bounds.level == Level.ERROR and "[0.15, 0.42] m" in out_of_bounds.status
    commands = rig.run(0.1)
    assert rig.node.parameters.get("stand_height") == 0.34
    assert rig.node.motion.params.stand_height == 0.34
    assert np.allclose(commands[-1].t_pos, STAND.solve(BodyPose(0.34)), atol=1e-9)
    assert len(rig.lists) == lists_before  # nothing changed, nothing republished


def test_a_zero_velocity_scale_is_refused(rig: Rig) -> None:
    answer = rig.set("cmd_vel_lin", "0")  # the file allows 0; a scale of 0 would divide by 0
    assert answer.level == Level.ERROR and "cmd_vel_lin" in answer.status
    assert rig.node.parameters.get("cmd_vel_lin") == 1.0
    assert rig.node.motion.scale.cmd_vel_lin == 1.0
