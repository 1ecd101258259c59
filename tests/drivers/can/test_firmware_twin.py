"""The simulated motor firmware, stepped, driven with raw frames on python-can's virtual bus."""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterator

import can
import numpy as np
import pytest

from jointbus.drivers.can.firmware_twin import FirmwareTwin
from jointbus.drivers.can.mit_protocol import (
    MitCommand,
    SpecialFrame,
    decode_reply,
    encode_command,
    special_frame,
)
from jointbus.drivers.can.motor_link import MotorSpec
from jointbus.drivers.can.motor_models import bundled_motor_models

MODELS = bundled_motor_models()
MOTORS = (
    MotorSpec("a", 1, MODELS["md80"]),
    MotorSpec("b", 2, MODELS["cheetah"]),
)


@pytest.fixture
def buses() -> Iterator[tuple[can.BusABC, can.BusABC]]:
    channel = f"jointbus-twin-{uuid.uuid4().hex}"
    host = can.Bus(interface="virtual", channel=channel, receive_own_messages=False)
    motor = can.Bus(interface="virtual", channel=channel, receive_own_messages=False)
    try:
        yield host, motor
    finally:
        host.shutdown()
        motor.shutdown()


def _send(bus: can.BusABC, can_id: int, data: bytes) -> None:
    bus.send(can.Message(arbitration_id=can_id, data=data, is_extended_id=False))


def _replies(bus: can.BusABC) -> list[can.Message]:
    out = []
    while (msg := bus.recv(0.0)) is not None:
        out.append(msg)
    return out


def _cmd(spec: MotorSpec, position: float, kp: float, kd: float) -> bytes:
    return encode_command(MitCommand(position, 0.0, kp, kd, 0.0), spec.model.ranges)


def test_every_frame_gets_a_reply_on_the_host_id(buses: tuple[can.BusABC, can.BusABC]) -> None:
    host, motor_bus = buses
    twin = FirmwareTwin(motor_bus, MOTORS)
    _send(host, 1, special_frame(SpecialFrame.ENTER_MOTOR_MODE))
    _send(host, 2, _cmd(MOTORS[1], 0.0, 0.0, 0.0))
    assert twin.process_pending() == 2
    replies = _replies(host)
    assert [m.arbitration_id for m in replies] == [0, 0]
    assert [m.data[0] for m in replies] == [1, 2]
    assert [len(m.data) for m in replies] == [8, 6]  # md80: extended, cheetah: basic
    first = decode_reply(replies[0].data, MOTORS[0].model.ranges, MOTORS[0].model.reply, 1)
    assert first.temperature_c == pytest.approx(25.0, abs=1.0)  # ambient
    assert first.error_code == 0


def test_no_torque_until_motor_mode_is_entered(buses: tuple[can.BusABC, can.BusABC]) -> None:
    host, motor_bus = buses
    twin = FirmwareTwin(motor_bus, MOTORS)
    for _ in range(50):
        _send(host, 1, _cmd(MOTORS[0], 1.0, 50.0, 1.0))
    twin.process_pending()
    assert twin.ignored_commands[0] == 50
    assert not twin.powered[0]
    assert twin.model.motor_torques[0] == 0.0
    assert twin.positions[0] == 0.0
    assert len(_replies(host)) == 50  # it still answers


def test_enter_then_commands_move_the_motor_and_exit_stops_torque(
    buses: tuple[can.BusABC, can.BusABC],
) -> None:
    host, motor_bus = buses
    twin = FirmwareTwin(motor_bus, MOTORS)
    _send(host, 1, special_frame(SpecialFrame.ENTER_MOTOR_MODE))
    twin.process_pending()
    assert twin.powered[0]
    for _ in range(200):  # 200 cycles of 2 ms
        _send(host, 1, _cmd(MOTORS[0], 0.5, 50.0, 1.0))
        twin.process_pending()
    assert twin.positions[0] == pytest.approx(0.5, abs=0.03)
    replies = _replies(host)
    last = decode_reply(replies[-1].data, MOTORS[0].model.ranges, MOTORS[0].model.reply, 1)
    assert last.position == pytest.approx(0.5, abs=0.03)
    assert twin.positions[1] == 0.0  # the other motor was never commanded

    _send(host, 1, special_frame(SpecialFrame.EXIT_MOTOR_MODE))
    _send(host, 1, _cmd(MOTORS[0], -0.5, 50.0, 1.0))
    _send(host, 1, _cmd(MOTORS[0], -0.5, 50.0, 1.0))
    twin.process_pending()
    assert not twin.powered[0]
    assert twin.model.motor_torques[0] == 0.0
    assert twin.positions[0] == pytest.approx(0.5, abs=0.03)


def test_entering_resets_a_stale_command(buses: tuple[can.BusABC, can.BusABC]) -> None:
    host, motor_bus = buses
    twin = FirmwareTwin(motor_bus, MOTORS, initial_positions=[0.3, 0.0])
    _send(host, 1, special_frame(SpecialFrame.ENTER_MOTOR_MODE))
    for _ in range(20):
        _send(host, 1, _cmd(MOTORS[0], 0.3, 50.0, 1.0))
    _send(host, 1, special_frame(SpecialFrame.EXIT_MOTOR_MODE))
    _send(host, 1, special_frame(SpecialFrame.ENTER_MOTOR_MODE))
    twin.process_pending()
    # re-entered with kp = kd = 0 and target = present position: no jump to the old target
    assert twin.model.positions[0] == pytest.approx(0.3, abs=1e-3)


def test_zero_position_makes_present_position_zero(buses: tuple[can.BusABC, can.BusABC]) -> None:
    host, motor_bus = buses
    twin = FirmwareTwin(motor_bus, MOTORS, initial_positions=[1.2, -0.4])
    _send(host, 2, special_frame(SpecialFrame.ZERO_POSITION))
    twin.process_pending()
    reply = decode_reply(_replies(host)[0].data, MOTORS[1].model.ranges, MOTORS[1].model.reply, 2)
    assert reply.position == pytest.approx(0.0, abs=0.01)
    assert twin.positions[1] == pytest.approx(0.0)
    assert twin.model.positions[1] == pytest.approx(-0.4)
    # commands are relative to the new zero: target 0.2 means true -0.2
    _send(host, 2, special_frame(SpecialFrame.ENTER_MOTOR_MODE))
    for _ in range(200):
        _send(host, 2, _cmd(MOTORS[1], 0.2, 50.0, 1.0))
        twin.process_pending()
    assert twin.model.positions[1] == pytest.approx(-0.2, abs=0.03)
    assert twin.special_frames_received[SpecialFrame.ZERO_POSITION] == 1


def test_one_step_per_command_cycle(buses: tuple[can.BusABC, can.BusABC]) -> None:
    host, motor_bus = buses
    twin = FirmwareTwin(motor_bus, MOTORS)
    for spec in MOTORS:
        _send(host, spec.can_id, special_frame(SpecialFrame.ENTER_MOTOR_MODE))
    for _ in range(10):
        for spec in MOTORS:
            _send(host, spec.can_id, _cmd(spec, 0.0, 1.0, 0.1))
    twin.process_pending()
    # the 10th cycle's commands are held, not yet stepped
    assert twin.cycles == 9
    assert twin.model.time == pytest.approx(9 * 0.002)


def test_dropped_replies_and_silence(buses: tuple[can.BusABC, can.BusABC]) -> None:
    host, motor_bus = buses
    twin = FirmwareTwin(motor_bus, MOTORS)
    twin.drop_replies(2, True)
    _send(host, 1, special_frame(SpecialFrame.ENTER_MOTOR_MODE))
    _send(host, 2, special_frame(SpecialFrame.ENTER_MOTOR_MODE))
    twin.process_pending()
    assert [m.data[0] for m in _replies(host)] == [1]
    assert twin.powered[1]  # it acted on the frame, only the reply was lost

    twin.drop_replies(2, False)
    twin.set_silent(True)
    _send(host, 1, special_frame(SpecialFrame.EXIT_MOTOR_MODE))
    twin.process_pending()
    assert _replies(host) == []
    assert twin.powered[0]  # silent: the frame had no effect
    twin.set_silent(False)
    _send(host, 2, special_frame(SpecialFrame.EXIT_MOTOR_MODE))
    twin.process_pending()
    assert [m.data[0] for m in _replies(host)] == [2]


def test_error_code_injection_and_malformed_frames(
    buses: tuple[can.BusABC, can.BusABC],
) -> None:
    host, motor_bus = buses
    twin = FirmwareTwin(motor_bus, MOTORS)
    twin.set_error_code(1, 0x21)
    _send(host, 1, special_frame(SpecialFrame.ENTER_MOTOR_MODE))
    _send(host, 1, b"\x01\x02\x03")  # short frame: ignored, no reply
    _send(host, 7, _cmd(MOTORS[0], 0.0, 0.0, 0.0))  # no such motor: ignored
    twin.process_pending()
    replies = _replies(host)
    assert len(replies) == 1
    assert decode_reply(
        replies[0].data, MOTORS[0].model.ranges, MOTORS[0].model.reply
    ).error_code == 0x21
    assert twin.malformed_frames == 1
    with pytest.raises(ValueError, match="can_id 9"):
        twin.drop_replies(9, True)


def test_replies_saturate_at_the_wire_range(buses: tuple[can.BusABC, can.BusABC]) -> None:
    host, motor_bus = buses
    twin = FirmwareTwin(motor_bus, MOTORS, initial_positions=[20.0, 0.0])  # beyond ±12.5 rad
    _send(host, 1, special_frame(SpecialFrame.ENTER_MOTOR_MODE))
    twin.process_pending()
    reply = decode_reply(_replies(host)[0].data, MOTORS[0].model.ranges, MOTORS[0].model.reply)
    assert reply.position == 12.5


def test_same_seed_same_frames_same_bytes() -> None:
    runs = []
    for _ in range(2):
        channel = f"jointbus-twin-{uuid.uuid4().hex}"
        host = can.Bus(interface="virtual", channel=channel, receive_own_messages=False)
        motor_bus = can.Bus(interface="virtual", channel=channel, receive_own_messages=False)
        try:
            twin = FirmwareTwin(motor_bus, MOTORS, seed=7)
            for spec in MOTORS:
                _send(host, spec.can_id, special_frame(SpecialFrame.ENTER_MOTOR_MODE))
            for k in range(30):
                for spec in MOTORS:
                    _send(host, spec.can_id, _cmd(spec, math.sin(k / 5), 30.0, 0.5))
            twin.process_pending()
            runs.append(b"".join(bytes(m.data) for m in _replies(host)))
        finally:
            host.shutdown()
            motor_bus.shutdown()
    assert runs[0] == runs[1]
    assert len(runs[0]) == 31 * (8 + 6)


def test_thread_mode_answers_and_stops(buses: tuple[can.BusABC, can.BusABC]) -> None:
    host, motor_bus = buses
    with FirmwareTwin(motor_bus, MOTORS) as twin:
        _send(host, 2, special_frame(SpecialFrame.ENTER_MOTOR_MODE))
        reply = host.recv(2.0)
        assert reply is not None
        assert reply.data[0] == 2
        assert twin.powered[1]
    assert np.array_equal(twin.powered, [False, True])
