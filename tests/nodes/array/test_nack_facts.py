"""Every NACK of the array node carries its facts as data: joint, field, value and expectation.

A new user (2026-12-06) called ``speed_config`` with ``{joint: 2, speed: -3.0}`` and got a NACK
whose ``field``, ``value`` and ``expected`` were empty (the facts were only in ``detail``'s
text), and for ``joint: 9`` one whose ``joint`` held ``"9"`` — the index as a string. The README
promises every NACK names joint, field, value and expectation; these tests hold every refusal
path of every service of the node to it: each row below is one way a service refuses.

The node runs in lock-step on a fake clock (``run_loop=False``): the service calls are answered
on the service thread as always, and the few states that need cycles (a thermal shutdown, an
impedance stream owning the array) are made by stepping it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jointbus import drivers
from jointbus.bus import MAB_RT, RELIABLE, Bus
from jointbus.drivers.bus.array_names import ArrayNames
from jointbus.drivers.bus.errors_on_wire import error_from_reply
from jointbus.drivers.sim.driver import SimActuatorArray
from jointbus.messages import jointbus_msgs as jm
from jointbus.messages.actarray import ActuatorReply, BrakesRequest, PowerRequest
from jointbus.messages.actarray.commands import (
    MultiCurrentCommand,
    MultiPositionCommand,
    MultiSpeedCommand,
)
from jointbus.messages.base import Message
from jointbus.messages.joint_impedance import JointImpedance
from jointbus.messages.joint_sample import JointSample
from jointbus.messages.joints import Joints
from jointbus.messages.std_msgs import String
from jointbus.nodes.array import ArrayNode
from jointbus.robots.hb50.messages import Status
from jointbus.runtime.timer import TimerThread
from support.runtime import FakeClock

N = ArrayNames("arm6")
NAMES = ("shoulder_pan", "shoulder_lift", "elbow", "wrist_roll", "wrist_pitch", "flange_roll")
ELBOW = 2
FLANGE = 5
#: What a network sender naming an unknown joint of arm6 is told was expected: the wire names a
#: joint by its index only (-1: every joint), so no joint names are offered as an alternative.
JOINT_EXPECTED = f"an index in [0, 5] ({', '.join(NAMES)}), or -1 for every joint"


class Arm:
    """arm6's array node stepped on a fake clock, with a client's view of its services."""

    def __init__(self) -> None:
        self.clock = FakeClock()
        self.timers = TimerThread("nack-timers", clock=self.clock, threaded=False)
        array = drivers.open("sim://arm6?realtime=false&noise=false")
        assert isinstance(array, SimActuatorArray)
        self.array = array
        self.bus = Bus(name="nack-rig")
        self.node = ArrayNode(array, self.bus, namespace="arm6", timers=self.timers, run_loop=False)
        self.status: list[Status] = []
        self.bus.subscribe(N.status, Status, self.status.append, RELIABLE, realtime=True)
        self.period_s = 1.0 / self.node.settings.rate_hz
        self._stream = self.bus.publisher(N.impedance_command, JointImpedance, MAB_RT)
        self.node.start()
        self.cycle()

    def cycle(self, command: JointImpedance | None = None) -> None:
        self.clock.now += round(self.period_s * 1e9)
        if command is not None:
            self._stream.publish(command)
        self.node.cycle(self.clock.now)
        self.timers.run_due()
        self.array.step(self.period_s)

    def flush(self) -> None:
        """Let the node's timers publish what it reported (its status goes out on a timer)."""
        for _ in range(3):
            self.clock.now += 500_000_000
            self.timers.run_due()

    def call(self, name: str, request: Message) -> ActuatorReply:
        reply = self.bus.client(name, type(request), ActuatorReply).call(request)
        assert isinstance(reply, ActuatorReply)
        return reply

    def ok(self, name: str, request: Message) -> None:
        reply = self.call(name, request)
        assert reply.accepted, reply.text
        self.cycle()

    def close(self) -> None:
        self.node.shutdown()
        self.bus.close()
        self.array.close()


@pytest.fixture
def arm() -> Iterator[Arm]:
    a = Arm()
    yield a
    a.close()


# ---------------------------------------------------------------- states a refusal needs


def powered(arm: Arm) -> None:
    arm.ok(N.request("power"), PowerRequest(True))


def braked(arm: Arm) -> None:
    powered(arm)
    arm.ok(N.request("brakes"), BrakesRequest(True))


def elbow_drive_off(arm: Arm) -> None:
    powered(arm)
    arm.ok(N.request("joint_power"), jm.ActuatorJointPowerRequest(ELBOW, False))


def estopped(arm: Arm) -> None:
    powered(arm)
    arm.ok(N.estop, String("test stop"))


def flange_overheated(arm: Arm) -> None:
    powered(arm)
    with arm.array.locked() as physics:
        temps = physics.actuators.motor_temperatures.copy()
        temps[FLANGE] = 105.0
        physics.actuators.set_temperatures(motor=temps)
    for _ in range(3):  # the thermal guard sees it and switches the joint's drive off
        arm.cycle()


def streamed(arm: Arm) -> None:
    powered(arm)
    hold = JointImpedance(
        source_node="control_node",
        name=NAMES,
        position=tuple(float(p) for p in arm.array.read_joints().position),
        velocity=(0.0,) * 6,
        effort=(0.0,) * 6,
        kp=(20.0,) * 6,
        kd=(1.0,) * 6,
        brake=(False,) * 6,
    )
    for _ in range(5):
        arm.cycle(hold)


def nothing(arm: Arm) -> None:
    """Power off, as the node starts."""


# ---------------------------------------------------------------- every refusal path


@dataclass(frozen=True)
class Refusal:
    """One way a service refuses: the state it is in, the call, and the facts its NACK names."""

    label: str
    setup: Callable[[Arm], None]
    service: str
    request: Message
    reason: str
    field: str
    value: str  # the value's repr; ``~X``: a measured number within 0.5 of X
    expected: str  # a part of the expectation
    joint: tuple[str, ...] = ()
    index: tuple[int, ...] = ()


def _pos(joint: int, position: float) -> jm.ActuatorPositionCommand:
    return jm.ActuatorPositionCommand(joint=joint, position=position)


def _multi_unchecked(cls: type[Message], field: str, values: tuple[float, ...]) -> Message:
    """A multi-joint command its constructor would refuse (a NaN, a wrong length), as a
    network sender's bytes decode to the server's check (``topic pub --unchecked``)."""
    msg = object.__new__(cls)
    object.__setattr__(msg, field, values)
    return msg


def _joints(names: tuple[str, ...], *samples: JointSample) -> Joints:
    return Joints(names=names, samples=samples)


REFUSALS: tuple[Refusal, ...] = (
    # ---- the user's two cases
    Refusal(
        "speed_config speed <= 0",
        powered,
        N.request("speed_config"),
        jm.ActuatorSpeedConfigRequest(ELBOW, -3.0),
        "OUT_OF_RANGE",
        "speed",
        "-3.0",
        "a finite number > 0",
        ("elbow",),
        (ELBOW,),
    ),
    Refusal(
        "speed_config unknown index",
        powered,
        N.request("speed_config"),
        jm.ActuatorSpeedConfigRequest(9, 1.0),
        "UNKNOWN_JOINT",
        "joint",
        "9",
        JOINT_EXPECTED,
        (),
        (9,),
    ),
    # ---- speed and acceleration configuration
    Refusal(
        "speed_config above the velocity limit",
        powered,
        N.request("speed_config"),
        jm.ActuatorSpeedConfigRequest(ELBOW, 99.0),
        "OUT_OF_RANGE",
        "speed",
        "99.0",
        "≤ the velocity limit 2.5",
        ("elbow",),
        (ELBOW,),
    ),
    Refusal(
        "speed_config NaN",
        powered,
        N.request("speed_config"),
        jm.ActuatorSpeedConfigRequest(ELBOW, math.nan),
        "INVALID",
        "speed",
        "nan",
        "a finite number > 0",
        ("elbow",),
        (ELBOW,),
    ),
    Refusal(
        "speed_config all joints, 0",
        powered,
        N.request("speed_config"),
        jm.ActuatorSpeedConfigRequest(-1, 0.0),
        "OUT_OF_RANGE",
        "speed",
        "0.0",
        "a finite number > 0",
    ),
    Refusal(
        "accel_config <= 0",
        powered,
        N.request("accel_config"),
        jm.ActuatorAccelConfigRequest(ELBOW, -1.0),
        "OUT_OF_RANGE",
        "accel",
        "-1.0",
        "a finite number > 0",
        ("elbow",),
        (ELBOW,),
    ),
    Refusal(
        "accel_config inf",
        powered,
        N.request("accel_config"),
        jm.ActuatorAccelConfigRequest(ELBOW, math.inf),
        "INVALID",
        "accel",
        "inf",
        "a finite number > 0",
        ("elbow",),
        (ELBOW,),
    ),
    Refusal(
        "accel_config unknown index",
        powered,
        N.request("accel_config"),
        jm.ActuatorAccelConfigRequest(6, 1.0),
        "UNKNOWN_JOINT",
        "joint",
        "6",
        JOINT_EXPECTED,
        (),
        (6,),
    ),
    # ---- one-joint commands
    Refusal(
        "position powered off",
        nothing,
        N.command("position"),
        _pos(ELBOW, 0.2),
        "POWERED_OFF",
        "motor_power",
        "False",
        "power(True)",
        ("elbow",),
        (ELBOW,),
    ),
    Refusal(
        "position beyond the limit",
        powered,
        N.command("position"),
        _pos(ELBOW, 9.0),
        "OUT_OF_RANGE",
        "position",
        "9.0",
        "within [-2.6, 2.6]",
        ("elbow",),
        (ELBOW,),
    ),
    Refusal(
        "position NaN",
        powered,
        N.command("position"),
        _pos(ELBOW, math.nan),
        "INVALID",
        "position",
        "nan",
        "finite",
        ("elbow",),
        (ELBOW,),
    ),
    Refusal(
        "position braked",
        braked,
        N.command("position"),
        _pos(ELBOW, 0.2),
        "BRAKED",
        "brake",
        "True",
        "brakes(False)",
        ("elbow",),
        (ELBOW,),
    ),
    Refusal(
        "position, the joint's drive off",
        elbow_drive_off,
        N.command("position"),
        _pos(ELBOW, 0.2),
        "POWERED_OFF",
        "joint_power",
        "False",
        "joint_power(joint, True)",
        ("elbow",),
        (ELBOW,),
    ),
    Refusal(
        "position e-stopped",
        estopped,
        N.command("position"),
        _pos(ELBOW, 0.2),
        "ESTOPPED",
        "estop",
        "'latched'",
        "estop_reset",
    ),
    Refusal(
        "position while a stream owns the array",
        streamed,
        N.command("position"),
        _pos(ELBOW, 0.2),
        "OWNED",
        "owner",
        "'control_node'",
        "no impedance stream",
    ),
    Refusal(
        "speed powered off",
        nothing,
        N.command("speed"),
        jm.ActuatorSpeedCommand(ELBOW, 0.2),
        "POWERED_OFF",
        "motor_power",
        "False",
        "power(True)",
        ("elbow",),
        (ELBOW,),
    ),
    Refusal(
        "speed NaN",
        powered,
        N.command("speed"),
        jm.ActuatorSpeedCommand(ELBOW, math.nan),
        "INVALID",
        "speed",
        "nan",
        "finite",
        ("elbow",),
        (ELBOW,),
    ),
    Refusal(
        "current powered off",
        nothing,
        N.command("current"),
        jm.ActuatorCurrentCommand(ELBOW, 0.5),
        "POWERED_OFF",
        "motor_power",
        "False",
        "power(True)",
        ("elbow",),
        (ELBOW,),
    ),
    Refusal(
        "current beyond the limit",
        powered,
        N.command("current"),
        jm.ActuatorCurrentCommand(ELBOW, 1e6),
        "OUT_OF_RANGE",
        "current",
        "1000000.0",
        "within [",
        ("elbow",),
        (ELBOW,),
    ),
    Refusal(
        "home braked",
        braked,
        N.command("home"),
        jm.ActuatorHomeCommand(ELBOW),
        "BRAKED",
        "brake",
        "True",
        "brakes(False)",
        ("elbow",),
        (ELBOW,),
    ),
    Refusal(
        "home e-stopped",
        estopped,
        N.command("home"),
        jm.ActuatorHomeCommand(-1),
        "ESTOPPED",
        "estop",
        "'latched'",
        "estop_reset",
    ),
    # ---- multi-joint commands
    Refusal(
        "multi_position powered off",
        nothing,
        N.command("multi_position"),
        MultiPositionCommand((0.0,) * 6),
        "POWERED_OFF",
        "motor_power",
        "False",
        "power(True)",
    ),
    Refusal(
        "multi_position beyond the limit",
        powered,
        N.command("multi_position"),
        MultiPositionCommand((0.0, 0.0, 9.0, 0.0, 0.0, 0.0)),
        "OUT_OF_RANGE",
        "positions",
        "9.0",
        "within [-2.6, 2.6]",
        ("elbow",),
        (ELBOW,),
    ),
    Refusal(
        "multi_position NaN",
        powered,
        N.command("multi_position"),
        _multi_unchecked(MultiPositionCommand, "positions", (0.0, 0.0, math.nan, 0.0, 0.0, 0.0)),
        "INVALID",
        "positions",
        "nan",
        "finite",
        ("elbow",),
        (ELBOW,),
    ),
    Refusal(
        "multi_position wrong length",
        powered,
        N.command("multi_position"),
        MultiPositionCommand((0.0,) * 5),
        "INVALID",
        "positions",
        "(0.0, 0.0, 0.0, 0.0, 0.0)",
        "6",
        ("flange_roll",),  # the first joint without a value
        (5,),
    ),
    Refusal(
        "multi_speed beyond the limit",
        powered,
        N.command("multi_speed"),
        MultiSpeedCommand((0.0, 0.0, 99.0, 0.0, 0.0, 0.0)),
        "OUT_OF_RANGE",
        "speeds",
        "99.0",
        "within [",
        ("elbow",),
        (ELBOW,),
    ),
    Refusal(
        "multi_speed braked",
        braked,
        N.command("multi_speed"),
        MultiSpeedCommand((0.1,) * 6),
        "BRAKED",
        "brake",
        "True",
        "brakes(False)",
        ("shoulder_pan",),
        (0,),
    ),
    Refusal(
        "multi_current wrong length",
        powered,
        N.command("multi_current"),
        _multi_unchecked(MultiCurrentCommand, "currents", (0.0,) * 7),
        "INVALID",
        "currents",
        "(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)",
        "6",
        (),
        (6,),  # the first value too many: no joint of it
    ),
    Refusal(
        "multi_current e-stopped",
        estopped,
        N.command("multi_current"),
        MultiCurrentCommand((0.0,) * 6),
        "ESTOPPED",
        "estop",
        "'latched'",
        "estop_reset",
    ),
    # ---- Rock joints command
    Refusal(
        "joints_command unknown name",
        powered,
        N.joints_command,
        _joints(("wrist",), JointSample.from_position(0.1)),
        "UNKNOWN_JOINT",
        "names[0]",
        "'wrist'",
        "one of the joints shoulder_pan, ",
        ("wrist",),
        (),
    ),
    Refusal(
        "joints_command mixed modes",
        powered,
        N.joints_command,
        _joints(
            ("elbow", "wrist_pitch"),
            JointSample.from_position(0.4),
            JointSample.from_speed(0.1),
        ),
        "INVALID",
        "samples[1]",
        "'mode SPEED'",
        "mode POSITION like samples[0]",
        ("wrist_pitch",),
        (NAMES.index("wrist_pitch"),),  # its index in the array, not in the command
    ),
    Refusal(
        "joints_command beyond the limit",
        powered,
        N.joints_command,
        _joints(("elbow",), JointSample.from_position(9.0)),
        "OUT_OF_RANGE",
        "position",
        "9.0",
        "within [-2.6, 2.6]",
        ("elbow",),
        (ELBOW,),
    ),
    Refusal(
        "joints_command powered off",
        nothing,
        N.joints_command,
        _joints(("elbow",), JointSample.from_position(0.1)),
        "POWERED_OFF",
        "motor_power",
        "False",
        "power(True)",
        ("elbow",),
        (ELBOW,),
    ),
    # ---- requests
    Refusal(
        "power on e-stopped",
        estopped,
        N.request("power"),
        PowerRequest(True),
        "ESTOPPED",
        "estop",
        "'latched'",
        "estop_reset",
    ),
    Refusal(
        "power on over temperature",
        flange_overheated,
        N.request("power"),
        PowerRequest(True),
        "OUT_OF_RANGE",
        "temperature",
        "~105",
        "below 80 °C",
        ("flange_roll",),
        (FLANGE,),
    ),
    Refusal(
        "joint_power on over temperature",
        flange_overheated,
        N.request("joint_power"),
        jm.ActuatorJointPowerRequest(FLANGE, True),
        "OUT_OF_RANGE",
        "temperature",
        "~105",
        "below 80 °C",
        ("flange_roll",),
        (FLANGE,),
    ),
    Refusal(
        "joint_power on e-stopped",
        estopped,
        N.request("joint_power"),
        jm.ActuatorJointPowerRequest(ELBOW, True),
        "ESTOPPED",
        "estop",
        "'latched'",
        "estop_reset",
    ),
    Refusal(
        "joint_power on, array power off",
        nothing,
        N.request("joint_power"),
        jm.ActuatorJointPowerRequest(ELBOW, True),
        "POWERED_OFF",
        "motor_power",
        "False",
        "power(True)",
    ),
    Refusal(
        "joint_power unknown index",
        powered,
        N.request("joint_power"),
        jm.ActuatorJointPowerRequest(-7, False),
        "UNKNOWN_JOINT",
        "joint",
        "-7",
        JOINT_EXPECTED,
        (),
        (-7,),
    ),
    Refusal(
        "estop_reset with nothing latched",
        powered,
        N.estop_reset,
        String("clear"),
        "NOT_LATCHED",
        "estop",
        "'not latched'",
        "latched",
    ),
)


def _facts_of(status: list[Status], service: str) -> dict[str, Any]:
    method = service.rsplit("/", 1)[-1]
    method = {"joints": "joints_command", "reset": "estop_reset"}.get(method, method)
    reports = [s for s in list(status) if s.status.startswith(f"{method} from a service call")]
    assert reports, [s.status for s in status]
    facts: dict[str, Any] = json.loads(reports[-1].data)
    return facts


@pytest.mark.parametrize("case", REFUSALS, ids=[c.label for c in REFUSALS])
def test_every_refusal_of_every_service_names_field_value_and_expectation(
    arm: Arm, case: Refusal
) -> None:
    case.setup(arm)
    before = arm.array.read_joints().position.copy()
    reply = arm.call(case.service, case.request)
    assert not reply.accepted
    value = reply.value
    if case.value.startswith("~"):
        assert float(value) == pytest.approx(float(case.value[1:]), abs=0.5), value
        value = case.value
    got = (reply.reason, reply.field, value, reply.joint, reply.index)
    assert got == (case.reason, case.field, case.value, case.joint, case.index), reply
    assert case.expected in reply.expected, reply.expected
    # the status report's JSON carries the same facts as the NACK
    arm.flush()
    facts = _facts_of(arm.status, case.service)
    assert (facts["field"], facts["value"], facts["reason"]) == (
        case.field,
        reply.value,
        case.reason,
    )
    assert case.expected in facts["expected"]
    # a bus:// client's error carries them too
    error = error_from_reply(reply)
    assert getattr(error, "field", None) == case.field, error
    assert getattr(error, "expected", None) == reply.expected, error
    assert (arm.array.read_joints().position == before).all()  # nothing moved


def test_the_refusals_cover_every_service_of_the_node() -> None:
    called = {c.service for c in REFUSALS}
    acked = {N.command(m) for m in ("position", "speed", "home", "current")}
    acked |= {N.command(m) for m in ("multi_position", "multi_speed", "multi_current")}
    acked |= {N.request(m) for m in ("power", "joint_power", "speed_config", "accel_config")}
    acked |= {N.joints_command, N.estop_reset}
    # brakes and estop refuse nothing but a closed driver (DRIVER_FAULT: no input to name)
    assert acked <= called, acked - called


# ---------------------------------------------------------------- properties

#: The services that take a Player joint index, with a request naming ``joint``.
BY_INDEX: dict[str, Callable[[int], Message]] = {
    N.command("position"): lambda j: jm.ActuatorPositionCommand(j, 0.1),
    N.command("speed"): lambda j: jm.ActuatorSpeedCommand(j, 0.1),
    N.command("current"): lambda j: jm.ActuatorCurrentCommand(j, 0.1),
    N.command("home"): jm.ActuatorHomeCommand,
    N.request("joint_power"): lambda j: jm.ActuatorJointPowerRequest(j, False),
    N.request("speed_config"): lambda j: jm.ActuatorSpeedConfigRequest(j, 1.0),
    N.request("accel_config"): lambda j: jm.ActuatorAccelConfigRequest(j, 1.0),
}

#: The driver call each of BY_INDEX's requests becomes, as its refusals name it.
BY_INDEX_REQUEST: dict[str, str] = {
    N.command("position"): "position",
    N.command("speed"): "speed",
    N.command("current"): "current",
    N.command("home"): "home",
    N.request("joint_power"): "joint_power",
    N.request("speed_config"): "set_speed",
    N.request("accel_config"): "set_accel",
}

_SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@_SETTINGS
@given(
    service=st.sampled_from(sorted(BY_INDEX)),
    joint=st.integers(-(2**31), 2**31 - 1).filter(lambda j: not -1 <= j <= 5),
)
def test_an_unknown_index_is_named_as_given_with_what_was_expected(
    arm: Arm, service: str, joint: int
) -> None:
    if not arm.array.read_joints().motor_power:
        powered(arm)
    reply = arm.call(service, BY_INDEX[service](joint))
    assert (reply.accepted, reply.reason, reply.error) == (
        False,
        "UNKNOWN_JOINT",
        "UnknownJointError",
    )
    assert (reply.joint, reply.index) == ((), (joint,))  # no joint has that index: no name
    assert (reply.field, reply.value, reply.expected) == ("joint", str(joint), JOINT_EXPECTED)
    assert reply.request == BY_INDEX_REQUEST[service]  # joint_power's read "index"


@_SETTINGS
@given(
    which=st.sampled_from(("speed_config", "accel_config")),
    joint=st.integers(-1, 5),
    value=st.one_of(
        st.floats(max_value=0.0),
        st.just(math.nan),
        st.sampled_from((math.inf, -math.inf)),
        st.floats(min_value=100.0, allow_infinity=False),  # above every arm6 velocity limit
    ),
)
def test_a_refused_configuration_names_its_field_and_value(
    arm: Arm, which: str, joint: int, value: float
) -> None:
    if which == "accel_config" and value > 0 and math.isfinite(value):
        value = -value  # any positive finite acceleration is accepted
    request: Message
    if which == "speed_config":
        request = jm.ActuatorSpeedConfigRequest(joint, value)
    else:
        request = jm.ActuatorAccelConfigRequest(joint, value)
    field = "speed" if which == "speed_config" else "accel"
    reply = arm.call(N.request(which), request)
    assert not reply.accepted
    assert reply.reason == ("OUT_OF_RANGE" if math.isfinite(value) else "INVALID"), reply
    assert (reply.field, reply.value) == (field, repr(value)), reply
    assert reply.expected, reply
    if joint >= 0:
        assert (reply.joint, reply.index) == ((NAMES[joint],), (joint,))
