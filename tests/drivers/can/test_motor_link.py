"""The host side against the simulated firmware on python-can's virtual bus."""

from __future__ import annotations

import math
import threading
import time
import uuid
from collections.abc import Iterator

import can
import numpy as np
import pytest
from can.interfaces.virtual import VirtualBus
from hypothesis import given, settings
from hypothesis import strategies as st

from jointbus.drivers.can.firmware_twin import FirmwareTwin
from jointbus.drivers.can.mit_protocol import (
    MitReply,
    OutOfRangeError,
    SpecialFrame,
    encode_reply,
)
from jointbus.drivers.can.motor_link import (
    CAN_ERR_BUSOFF,
    BusErrorFrame,
    BusOffError,
    CommandShapeError,
    LateReply,
    LinkEvent,
    MotorLink,
    MotorSpec,
    MotorSpecError,
    ReplyTimeout,
    UnexpectedFrame,
    UnknownMotorError,
)
from jointbus.drivers.can.motor_models import bundled_motor_models

MODELS = bundled_motor_models()
MOTORS = (
    MotorSpec("fr_j0", 1, MODELS["md80"]),
    MotorSpec("fr_j1", 2, MODELS["md80"]),
    MotorSpec("fr_j2", 3, MODELS["cheetah"]),
)
TIMEOUT_S = 0.5  # generous: a loaded CI machine must not turn a slow reply into a timeout
ZEROS = np.zeros(3)


def _channel() -> str:
    return f"jointbus-link-{uuid.uuid4().hex}"


@pytest.fixture
def buses() -> Iterator[tuple[can.BusABC, can.BusABC]]:
    channel = _channel()
    host = can.Bus(interface="virtual", channel=channel, receive_own_messages=False)
    motor = can.Bus(interface="virtual", channel=channel, receive_own_messages=False)
    try:
        yield host, motor
    finally:
        host.shutdown()
        motor.shutdown()


@pytest.fixture
def twin(buses: tuple[can.BusABC, can.BusABC]) -> Iterator[FirmwareTwin]:
    """A twin answering on its own thread (stopped before the buses close)."""
    simulated = FirmwareTwin(buses[1], MOTORS)
    simulated.start()
    try:
        yield simulated
    finally:
        simulated.stop()


@pytest.fixture
def stepped_twin(buses: tuple[can.BusABC, can.BusABC]) -> FirmwareTwin:
    """A twin that only answers when told to: lets a test see exactly what was sent."""
    return FirmwareTwin(buses[1], MOTORS)


def _link(bus: can.BusABC, **kwargs: object) -> MotorLink:
    return MotorLink(bus, MOTORS, TIMEOUT_S, **kwargs)  # type: ignore[arg-type]


# ------------------------------------------------------------------ configuration


def test_bad_motor_lists_are_refused(buses: tuple[can.BusABC, can.BusABC]) -> None:
    host, _ = buses
    md80 = MODELS["md80"]
    with pytest.raises(MotorSpecError, match="name already used"):
        MotorLink(host, [MotorSpec("a", 1, md80), MotorSpec("a", 2, md80)], 0.1)
    with pytest.raises(MotorSpecError, match="already used by motor 'a'"):
        MotorLink(host, [MotorSpec("a", 1, md80), MotorSpec("b", 1, md80)], 0.1)
    with pytest.raises(MotorSpecError, match="host id"):
        MotorLink(host, [MotorSpec("a", 0, md80)], 0.1)
    with pytest.raises(MotorSpecError, match="1…255"):
        MotorLink(host, [MotorSpec("a", 300, md80)], 0.1)
    with pytest.raises(MotorSpecError, match="reply_timeout_s"):
        MotorLink(host, [MotorSpec("a", 1, md80)], 0.0)
    with pytest.raises(MotorSpecError):
        MotorLink(host, [], 0.1)


def test_unknown_motor_is_a_typed_error(buses: tuple[can.BusABC, can.BusABC]) -> None:
    link = _link(buses[0])
    with pytest.raises(UnknownMotorError, match="fr_j0, fr_j1, fr_j2"):
        link.enable("rr_j0")
    with pytest.raises(UnknownMotorError, match="0…2"):
        link.command(3, position=0.0, velocity=0.0, kp=0.0, kd=0.0, torque=0.0)
    assert link.index("fr_j2") == 2


# ------------------------------------------------------------------ rejection before sending


@pytest.mark.parametrize(
    ("field", "motor", "value"),
    [("position", 0, 13.0), ("velocity", 1, -30.0), ("kp", 2, 501.0), ("kd", 0, -0.1),
     ("torque", 1, 24.5), ("torque", 2, math.nan)],
)
def test_out_of_range_rejects_whole_command_and_sends_nothing(
    buses: tuple[can.BusABC, can.BusABC], stepped_twin: FirmwareTwin,
    field: str, motor: int, value: float,
) -> None:
    link = _link(buses[0])
    arrays = {name: np.zeros(3) for name in ("position", "velocity", "kp", "kd", "torque")}
    arrays[field][motor] = value
    with pytest.raises(OutOfRangeError) as info:
        link.command_all(**arrays)
    error = info.value
    assert (error.field, error.motor_index, error.motor_name) == (field, motor, MOTORS[motor].name)
    assert error.value == value or (math.isnan(value) and math.isnan(error.value))
    assert (error.low, error.high) == MOTORS[motor].model.ranges.bounds(field)
    assert MOTORS[motor].name in str(error)
    assert stepped_twin.process_pending() == 0  # the twin saw zero frames
    assert link.frames_sent == 0


@settings(max_examples=30, deadline=None)
@given(
    motor=st.integers(0, 2),
    torque=st.floats(allow_nan=False).filter(lambda t: abs(t) > 24.0),
)
def test_any_out_of_range_torque_sends_nothing(motor: int, torque: float) -> None:
    channel = _channel()
    host = can.Bus(interface="virtual", channel=channel, receive_own_messages=False)
    listener = can.Bus(interface="virtual", channel=channel, receive_own_messages=False)
    try:
        link = MotorLink(host, MOTORS, TIMEOUT_S)
        torques = np.zeros(3)
        torques[motor] = torque
        with pytest.raises(OutOfRangeError) as info:
            link.command_all(position=ZEROS, velocity=ZEROS, kp=ZEROS, kd=ZEROS, torque=torques)
        assert info.value.motor_index == motor
        assert listener.recv(0.0) is None
    finally:
        host.shutdown()
        listener.shutdown()


def test_single_command_out_of_range_names_motor(
    buses: tuple[can.BusABC, can.BusABC], stepped_twin: FirmwareTwin
) -> None:
    link = _link(buses[0])
    with pytest.raises(OutOfRangeError) as info:
        link.command("fr_j1", position=0.0, velocity=0.0, kp=600.0, kd=0.0, torque=0.0)
    assert (info.value.motor_name, info.value.motor_index, info.value.field) == ("fr_j1", 1, "kp")
    assert info.value.model == "md80"
    assert stepped_twin.process_pending() == 0


def test_wrong_array_length_sends_nothing(
    buses: tuple[can.BusABC, can.BusABC], stepped_twin: FirmwareTwin
) -> None:
    link = _link(buses[0])
    with pytest.raises(CommandShapeError, match="'kd'"):
        link.command_all(position=ZEROS, velocity=ZEROS, kp=ZEROS, kd=np.zeros(2), torque=ZEROS)
    assert stepped_twin.process_pending() == 0


# ------------------------------------------------------------------ modes and feedback


def test_enable_disable_zero(buses: tuple[can.BusABC, can.BusABC], twin: FirmwareTwin) -> None:
    link = _link(buses[0])
    feedback = link.enable("fr_j1")
    assert feedback.addressed.tolist() == [False, True, False]
    assert not feedback.any_timed_out
    assert math.isnan(feedback.position[0])
    assert link.enabled.tolist() == [False, True, False]
    assert twin.powered.tolist() == [False, True, False]

    link.enable()
    assert twin.powered.tolist() == [True, True, True]
    link.disable(0)
    assert twin.powered.tolist() == [False, True, True]
    assert link.enabled.tolist() == [False, True, True]
    assert twin.special_frames_received[SpecialFrame.EXIT_MOTOR_MODE] == 1


def test_zero_resets_reported_position(buses: tuple[can.BusABC, can.BusABC]) -> None:
    host, motor_bus = buses
    with FirmwareTwin(motor_bus, MOTORS, initial_positions=[0.7, -0.3, 1.1]):
        link = _link(host)
        before = link.enable()
        assert before.position == pytest.approx([0.7, -0.3, 1.1], abs=0.01)
        after = link.zero()
        assert after.position == pytest.approx([0.0, 0.0, 0.0], abs=0.01)


def test_feedback_carries_temperature_and_error_where_the_model_sends_them(
    buses: tuple[can.BusABC, can.BusABC], twin: FirmwareTwin
) -> None:
    twin.set_error_code(2, 0x05)
    link = _link(buses[0])
    feedback = link.enable()
    assert feedback.temperature_c[:2] == pytest.approx([25.0, 25.0], abs=1.0)
    assert math.isnan(feedback.temperature_c[2])  # cheetah replies have no temperature
    assert feedback.error_code == (0, 5, None)
    single = link.command(2, position=0.0, velocity=0.0, kp=0.0, kd=0.0, torque=0.0)
    assert single.name == "fr_j2"
    assert single.error_code is None
    assert not single.timed_out


def test_closed_loop_moves_motors_to_target(
    buses: tuple[can.BusABC, can.BusABC], twin: FirmwareTwin
) -> None:
    link = _link(buses[0])
    link.enable()
    target = np.array([0.5, -0.4, 1.0])
    kp, kd = np.full(3, 50.0), np.full(3, 1.0)
    first = link.command_all(position=target, velocity=ZEROS, kp=kp, kd=kd, torque=ZEROS)
    assert np.abs(first.position).max() < 0.05  # still at the start
    for _ in range(250):  # 0.5 s of 2 ms cycles
        feedback = link.command_all(position=target, velocity=ZEROS, kp=kp, kd=kd, torque=ZEROS)
        assert not feedback.any_timed_out
    assert feedback.position == pytest.approx(target, abs=0.03)
    assert twin.positions == pytest.approx(target, abs=0.03)
    assert link.timeout_counts.tolist() == [0, 0, 0]


# ------------------------------------------------------------------ timeouts and stray frames


def test_missing_reply_flags_that_motor_and_others_still_report(
    buses: tuple[can.BusABC, can.BusABC], twin: FirmwareTwin
) -> None:
    seen: list[LinkEvent] = []
    link = _link(buses[0], on_event=seen.append)
    link.enable()
    twin.drop_replies(2, True)
    for count in (1, 2):
        feedback = link.command_all(position=ZEROS, velocity=ZEROS, kp=ZEROS, kd=ZEROS,
                                    torque=ZEROS)
        assert feedback.timed_out.tolist() == [False, True, False]
        assert math.isnan(feedback.position[1])
        assert not math.isnan(feedback.position[0])
        assert not math.isnan(feedback.position[2])
        assert feedback.events == (ReplyTimeout(1, "fr_j1", 2, count),)
    assert link.timeout_counts.tolist() == [0, 2, 0]
    assert seen == [ReplyTimeout(1, "fr_j1", 2, 1), ReplyTimeout(1, "fr_j1", 2, 2)]
    twin.drop_replies(2, False)
    recovered = link.command_all(position=ZEROS, velocity=ZEROS, kp=ZEROS, kd=ZEROS,
                                 torque=ZEROS)
    assert not recovered.any_timed_out


def test_silent_bus_times_out_every_motor(
    buses: tuple[can.BusABC, can.BusABC], twin: FirmwareTwin
) -> None:
    link = _link(buses[0])
    twin.set_silent(True)
    feedback = link.enable()
    assert feedback.timed_out.all()
    assert link.enabled.tolist() == [False, False, False]  # not acknowledged
    assert [type(e) for e in feedback.events] == [ReplyTimeout] * 3


class DescheduledHost(VirtualBus):  # type: ignore[misc]
    """python-can's virtual bus, whose first receive after a send starts ``pause`` s late: the
    host thread descheduled right after sending, as on a loaded machine."""

    pause = 0.05

    def __init__(self, channel: str) -> None:
        super().__init__(channel=channel, receive_own_messages=False)
        self._just_sent = False

    def send(self, msg: can.Message, timeout: float | None = None) -> None:
        super().send(msg, timeout)
        self._just_sent = True

    def _recv_internal(self, timeout: float | None) -> tuple[can.Message | None, bool]:
        if self._just_sent:
            self._just_sent = False
            time.sleep(self.pause)
        result: tuple[can.Message | None, bool] = super()._recv_internal(timeout)
        return result


def test_replies_queued_while_the_host_was_descheduled_are_not_timeouts() -> None:
    """Issue 11 item 16: past the deadline the link gave up without looking at replies that had
    arrived in time — a loaded host, not a silent motor."""
    channel = _channel()
    host = DescheduledHost(channel)
    motor_bus = can.Bus(interface="virtual", channel=channel, receive_own_messages=False)
    twin = FirmwareTwin(motor_bus, MOTORS)
    try:
        with twin:
            link = MotorLink(host, MOTORS, 0.002)  # far shorter than the 50 ms pause
            feedback = link.enable()
            assert not feedback.timed_out.any()
            assert link.timeout_counts.tolist() == [0, 0, 0]
    finally:
        host.shutdown()
        motor_bus.shutdown()


def test_late_and_unknown_replies_are_reported_not_taken_for_answers(
    buses: tuple[can.BusABC, can.BusABC], twin: FirmwareTwin
) -> None:
    host, motor_bus = buses
    link = _link(host)
    md80 = MODELS["md80"]
    stale = encode_reply(MitReply(1, 3.0, 0.0, 0.0, 25.0, 0), md80.ranges, md80.reply)
    motor_bus.send(can.Message(arbitration_id=0, data=stale, is_extended_id=False))
    stranger = encode_reply(MitReply(9, 0.0, 0.0, 0.0, 25.0, 0), md80.ranges, md80.reply)
    motor_bus.send(can.Message(arbitration_id=0, data=stranger, is_extended_id=False))
    feedback = link.enable()
    assert feedback.events[0] == LateReply(0, "fr_j0", 1)
    assert isinstance(feedback.events[1], UnexpectedFrame)
    assert feedback.position[0] == pytest.approx(0.0, abs=0.01)  # the real answer, not 3.0
    assert not feedback.any_timed_out


# ------------------------------------------------------------------ bus failures


class _ErrorStateBus(VirtualBus):
    """A controller that reports the ERROR (bus-off) state."""

    @property  # type: ignore[misc]
    def state(self) -> can.BusState:
        return can.BusState.ERROR


class _RefusingBus(VirtualBus):
    """Accepts ``accept`` frames, then fails like a controller that has gone bus-off."""

    accept = 1

    def send(self, msg: can.Message, timeout: float | None = None) -> None:
        if self.accept <= 0:
            raise can.CanOperationError("Transmit buffer full / bus-off")
        self.accept -= 1
        super().send(msg, timeout)


def test_bus_in_error_state_raises_and_sends_nothing() -> None:
    channel = _channel()
    host = _ErrorStateBus(channel=channel, receive_own_messages=False)
    listener = can.Bus(interface="virtual", channel=channel, receive_own_messages=False)
    try:
        with pytest.raises(BusOffError):
            MotorLink(host, MOTORS, TIMEOUT_S).enable()
        assert listener.recv(0.0) is None
    finally:
        host.shutdown()
        listener.shutdown()


def test_refused_send_raises_bus_off_with_count() -> None:
    channel = _channel()
    host = _RefusingBus(channel=channel, receive_own_messages=False)
    listener = can.Bus(interface="virtual", channel=channel, receive_own_messages=False)
    try:
        with pytest.raises(BusOffError) as info:
            MotorLink(host, MOTORS, TIMEOUT_S).enable()
        assert info.value.sent == 1
        assert "fr_j1" in str(info.value)
        assert isinstance(info.value.__cause__, can.CanOperationError)
    finally:
        host.shutdown()
        listener.shutdown()


def test_bus_off_error_frame_before_sending(
    buses: tuple[can.BusABC, can.BusABC], stepped_twin: FirmwareTwin
) -> None:
    host, motor_bus = buses
    link = _link(host)
    motor_bus.send(can.Message(is_error_frame=True, arbitration_id=CAN_ERR_BUSOFF, data=bytes(8)))
    with pytest.raises(BusOffError, match="nothing was sent"):
        link.enable()
    assert stepped_twin.process_pending() == 0


def test_bus_off_error_frame_while_collecting(buses: tuple[can.BusABC, can.BusABC]) -> None:
    host, motor_bus = buses
    link = _link(host)

    def controller() -> None:
        # answer motor 1 normally, then report bus-off instead of the other replies
        first = motor_bus.recv(2.0)
        assert first is not None
        md80 = MODELS["md80"]
        reply = encode_reply(MitReply(1, 0.25, 0.0, 0.0, 30.0, 0), md80.ranges, md80.reply)
        motor_bus.send(can.Message(arbitration_id=0, data=reply, is_extended_id=False))
        motor_bus.send(
            can.Message(is_error_frame=True, arbitration_id=CAN_ERR_BUSOFF, data=bytes(8))
        )

    thread = threading.Thread(target=controller)
    thread.start()
    try:
        with pytest.raises(BusOffError) as info:
            link.enable()
    finally:
        thread.join()
    partial = info.value.feedback
    assert partial is not None
    assert partial.position[0] == pytest.approx(0.25, abs=1e-3)
    assert any(isinstance(e, BusErrorFrame) and e.bus_off for e in partial.events)


def test_non_bus_off_error_frame_is_an_event(
    buses: tuple[can.BusABC, can.BusABC], twin: FirmwareTwin
) -> None:
    host, motor_bus = buses
    link = _link(host)
    motor_bus.send(can.Message(is_error_frame=True, arbitration_id=0x004, data=bytes(8)))
    feedback = link.enable()
    assert feedback.events == (BusErrorFrame(0x004, bytes(8), False),)
    assert not feedback.any_timed_out


def test_closed_bus_is_a_bus_off_error(buses: tuple[can.BusABC, can.BusABC]) -> None:
    host, _ = buses
    link = _link(host)
    host.shutdown()
    with pytest.raises(BusOffError):
        link.enable()
