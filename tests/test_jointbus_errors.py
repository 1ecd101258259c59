"""``jointbus.errors.Refused`` (``src/jointbus/errors.py``; the basename ``test_errors.py`` is
the message layer's): one base that catches every refusal, from every layer.

A user who wants "whatever the robot refused, and nothing else" writes one ``except Refused``,
whether the message class, the driver, a service's server, a parameter store or the bridge's
command check refused — and the old bases still catch what they caught.
"""

from __future__ import annotations

import math

import pytest

from jointbus import drivers
from jointbus.bus import (
    Bus,
    ServiceRefused,
    ServiceTimeoutError,
    ServiceUnavailableError,
    ZenohConfig,
)
from jointbus.drivers import RejectReason, RequestRejected
from jointbus.drivers.errors import DriverClosedError, DriverError, MotionTimeoutError
from jointbus.drivers.limits import JointLimits
from jointbus.errors import Refused
from jointbus.messages.errors import (
    LengthMismatchError,
    LimitError,
    NonFiniteError,
    UnknownJointError,
)
from jointbus.model.parameters import ParameterSpec, ParameterType
from jointbus.model.yaml_loader import load_robot
from jointbus.nodes.safety.command_check import CommandCheck, CommandRejected
from jointbus.robots.hb50.bridge.unchecked_command import HB50_COMMAND_FIELDS
from jointbus.robots.hb50.messages import JointCommand
from jointbus.runtime.parameters import ParameterRefusedError, ParameterStore
from support.bus import Count, Reading


def test_a_driver_refusal_and_a_message_refusal_share_one_base() -> None:
    with drivers.open("sim://arm6?realtime=false") as arm:
        before = arm.read_joints().position.copy()
        caught: list[Refused] = []
        for call in (
            lambda: arm.position("elbow", 0.5),  # powered off: the driver NACKs
            lambda: arm.position("elbow", math.nan),  # NaN: the message rules refuse
            lambda: arm.position("elbow", 99.0),  # beyond the joint's limits
            lambda: arm.positions([0.0, 0.0]),  # one value per joint expected
            lambda: arm.position("elbw", 0.0),  # no such joint
        ):
            with pytest.raises(Refused) as info:
                call()
            caught.append(info.value)
        kinds = [type(e) for e in caught]
        assert issubclass(kinds[0], RequestRejected)
        assert caught[0].reason is RejectReason.POWERED_OFF  # type: ignore[attr-defined]
        assert issubclass(kinds[1], NonFiniteError)
        assert issubclass(kinds[2], LimitError)
        assert issubclass(kinds[3], LengthMismatchError)
        assert issubclass(kinds[4], UnknownJointError)
        # nothing moved, and the refusals still are what they were before
        arm.step(0.1)
        assert arm.read_joints().position == pytest.approx(before, abs=1e-3)
        assert isinstance(caught[0], DriverError)
        assert all(isinstance(e, ValueError) for e in caught[1:4])


def test_a_bridge_command_refusal_is_a_refusal() -> None:
    robot = load_robot("hb50")
    order = robot.actuator_order
    limits = JointLimits(order, robot.limits_for(order))
    check = CommandCheck(order, limits, fields=HB50_COMMAND_FIELDS)
    knees_too_far = [9.0 if name.endswith("_j2") else 0.0 for name in order]  # rad
    command = JointCommand.hold(list(order), knees_too_far, kp=80.0, kd=3.0, source_node="x")
    with pytest.raises(Refused) as info:
        check.check(command)
    assert isinstance(info.value, CommandRejected) and isinstance(info.value, ValueError)
    assert info.value.source_node == "x"


def test_a_service_refusal_and_a_parameter_refusal_are_refusals() -> None:
    def refuse(request: Count) -> Reading:
        raise ServiceRefused("/t/double", f"value {request.value} is negative")

    with Bus() as bus:
        bus.serve("/t/double", Count, Reading, refuse)
        with pytest.raises(Refused) as info:
            bus.client("/t/double", Count, Reading).call(Count(-1))
        assert isinstance(info.value, ServiceRefused)

    store = ParameterStore([ParameterSpec("gain", ParameterType.FLOAT, 1.0, 0.0, 10.0)])

    def veto(_change: object) -> None:
        raise ValueError("not while moving")

    store.on_change(veto)
    with pytest.raises(Refused) as refused:
        store.set("gain", 2.0)
    assert isinstance(refused.value, ParameterRefusedError)
    assert store.get("gain") == 1.0


def test_failures_that_say_nothing_about_the_input_are_not_refusals() -> None:
    # a timeout, a missing server, a closed driver, a slow move: retrying may work, nothing
    # was refused on its merits
    for error in (
        ServiceTimeoutError("/t/x", 1.0),
        ServiceUnavailableError("/t/x"),
        DriverClosedError("closed"),
        MotionTimeoutError(1.0, ["elbow"], [2], [0.1], [0.5], linear=[False]),
    ):
        assert not isinstance(error, Refused), type(error).__name__
    with Bus(zenoh=ZenohConfig.loopback(None)) as bus, pytest.raises(ServiceUnavailableError):
        bus.client("/nobody/here", Count, Reading, timeout_s=0.2).call(Count(1))
