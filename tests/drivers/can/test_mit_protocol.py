"""MIT-mode frame format: fixed byte strings, range edges, half-LSB round trips, typed errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from jointbus.drivers.can.mit_protocol import (
    COMMAND_FIELDS,
    CommandRangeTable,
    FrameError,
    MitCommand,
    MitReply,
    MotorRanges,
    OutOfRangeError,
    ReplyLayout,
    ReplyTable,
    ReservedFrameError,
    SpecialFrame,
    decode_command,
    decode_replies,
    decode_reply,
    encode_command,
    encode_commands,
    encode_replies,
    encode_reply,
    special_frame,
)

CHEETAH = MotorRanges(-12.5, 12.5, -65.0, 65.0, 0.0, 500.0, 0.0, 5.0, -18.0, 18.0)
BASIC = ReplyLayout()
EXTENDED = ReplyLayout(has_temperature_and_error=True, temperature_offset_c=-40.0)


def _is_nearest_code(code: int, x: float, lo: float, hi: float, bits: int) -> bool:
    """Independent oracle: ``code`` is a nearest integer to the exact scaled value (ties: any)."""
    exact = (x - lo) / (hi - lo) * ((1 << bits) - 1)
    return abs(code - exact) <= 0.5 + 1e-9


# ------------------------------------------------------------------ fixed bytes


def test_command_bytes_match_hand_packed_layout() -> None:
    # p = 0 rad -> 32768 (0x8000) ; v = 0 -> 2048 (0x800) ; kp = 500 -> 0xFFF ;
    # kd = 0 -> 0x000 ; t = 18 -> 0xFFF
    data = encode_command(MitCommand(0.0, 0.0, 500.0, 0.0, 18.0), CHEETAH)
    assert data == bytes.fromhex("80 00 80 0F FF 00 0F FF")


def test_command_bit_layout_of_each_field() -> None:
    # every field at its minimum is all zeros
    assert encode_command(MitCommand(-12.5, -65.0, 0.0, 0.0, -18.0), CHEETAH) == bytes(8)
    # one field at a time at full scale lights exactly its bits
    assert encode_command(MitCommand(12.5, -65.0, 0.0, 0.0, -18.0), CHEETAH) == bytes.fromhex(
        "FF FF 00 00 00 00 00 00"
    )
    assert encode_command(MitCommand(-12.5, 65.0, 0.0, 0.0, -18.0), CHEETAH) == bytes.fromhex(
        "00 00 FF F0 00 00 00 00"
    )
    assert encode_command(MitCommand(-12.5, -65.0, 500.0, 0.0, -18.0), CHEETAH) == bytes.fromhex(
        "00 00 00 0F FF 00 00 00"
    )
    assert encode_command(MitCommand(-12.5, -65.0, 0.0, 5.0, -18.0), CHEETAH) == bytes.fromhex(
        "00 00 00 00 00 FF F0 00"
    )
    assert encode_command(MitCommand(-12.5, -65.0, 0.0, 0.0, 18.0), CHEETAH) == bytes.fromhex(
        "00 00 00 00 00 00 0F FF"
    )


def test_reply_bytes_decode_to_expected_values() -> None:
    # id 3, p code 0xFFFF (12.5 rad), v code 0x000 (-65 rad/s), t code 0xFFF (18 N·m)
    reply = decode_reply(bytes.fromhex("03 FF FF 00 0F FF"), CHEETAH, BASIC)
    assert reply.motor_id == 3
    assert reply.position == 12.5
    assert reply.velocity == -65.0
    assert reply.torque == 18.0
    assert math.isnan(reply.temperature_c)
    assert reply.error_code is None


def test_extended_reply_carries_temperature_and_error() -> None:
    reply = MitReply(7, 0.0, 0.0, 0.0, temperature_c=25.0, error_code=0x12)
    data = encode_reply(reply, CHEETAH, EXTENDED)
    assert len(data) == 8
    assert data[6] == 65  # 25 °C + 40
    assert data[7] == 0x12
    back = decode_reply(data, CHEETAH, EXTENDED)
    assert back.temperature_c == 25.0
    assert back.error_code == 0x12


# ------------------------------------------------------------------ edges and LSB


@pytest.mark.parametrize("field", COMMAND_FIELDS)
def test_range_edges_map_to_zero_and_full_scale(field: str) -> None:
    lo, hi = CHEETAH.bounds(field)
    mins = {f: CHEETAH.bounds(f)[0] for f in COMMAND_FIELDS}
    at_min = decode_command(encode_command(MitCommand(**mins), CHEETAH), CHEETAH)
    assert isinstance(at_min, MitCommand)
    assert getattr(at_min, field) == lo
    at_max_values = dict(mins, **{field: hi})
    at_max = decode_command(encode_command(MitCommand(**at_max_values), CHEETAH), CHEETAH)
    assert isinstance(at_max, MitCommand)
    assert getattr(at_max, field) == pytest.approx(hi, abs=1e-12)


def test_lsb_sizes_are_documented_values() -> None:
    assert CHEETAH.lsb("position") == pytest.approx(25.0 / 65535)
    assert CHEETAH.lsb("velocity") == pytest.approx(130.0 / 4095)
    assert CHEETAH.lsb("kp") == pytest.approx(500.0 / 4095)
    assert CHEETAH.lsb("kd") == pytest.approx(5.0 / 4095)
    assert CHEETAH.lsb("torque") == pytest.approx(36.0 / 4095)


def _in(lo: float, hi: float) -> st.SearchStrategy[float]:
    return st.floats(min_value=lo, max_value=hi, allow_nan=False, allow_infinity=False)


@given(
    p=_in(-12.5, 12.5), v=_in(-65.0, 65.0), kp=_in(0.0, 500.0), kd=_in(0.0, 5.0),
    t=_in(-18.0, 18.0),
)
def test_command_round_trip_within_half_lsb(
    p: float, v: float, kp: float, kd: float, t: float
) -> None:
    command = MitCommand(p, v, kp, kd, t)
    try:
        data = encode_command(command, CHEETAH)
    except ReservedFrameError:
        assume(False)
        raise
    back = decode_command(data, CHEETAH)
    assert isinstance(back, MitCommand)
    for field in COMMAND_FIELDS:
        tolerance = CHEETAH.lsb(field) * 0.5 * (1 + 1e-9)
        assert abs(getattr(back, field) - getattr(command, field)) <= tolerance, field


@given(p=_in(-12.5, 12.5), v=_in(-65.0, 65.0), t=_in(-18.0, 18.0))
def test_codes_match_independent_oracle(p: float, v: float, t: float) -> None:
    data = encode_command(MitCommand(p, v, 0.0, 0.0, t), CHEETAH)
    assert _is_nearest_code(data[0] << 8 | data[1], p, -12.5, 12.5, 16)
    assert _is_nearest_code(data[2] << 4 | data[3] >> 4, v, -65.0, 65.0, 12)
    assert _is_nearest_code((data[6] & 0xF) << 8 | data[7], t, -18.0, 18.0, 12)


@given(
    motor_id=st.integers(0, 255), p=_in(-12.5, 12.5), v=_in(-65.0, 65.0), t=_in(-18.0, 18.0),
    temp=st.integers(-40, 215), error=st.integers(0, 255),
)
def test_reply_round_trip_within_half_lsb(
    motor_id: int, p: float, v: float, t: float, temp: int, error: int
) -> None:
    reply = MitReply(motor_id, p, v, t, float(temp), error)
    back = decode_reply(encode_reply(reply, CHEETAH, EXTENDED), CHEETAH, EXTENDED, motor_id)
    assert back.motor_id == motor_id
    assert abs(back.position - p) <= CHEETAH.lsb("position") * 0.5 * (1 + 1e-9)
    assert abs(back.velocity - v) <= CHEETAH.lsb("velocity") * 0.5 * (1 + 1e-9)
    assert abs(back.torque - t) <= CHEETAH.lsb("torque") * 0.5 * (1 + 1e-9)
    assert back.temperature_c == temp
    assert back.error_code == error


@given(
    st.lists(
        st.tuples(_in(-12.5, 12.5), _in(-65.0, 65.0), _in(0.0, 499.0), _in(0.0, 5.0),
                  _in(-18.0, 18.0)),
        min_size=1, max_size=12,
    )
)
def test_vectorised_encoder_equals_scalar_encoder(rows: list[tuple[float, ...]]) -> None:
    table = CommandRangeTable([CHEETAH] * len(rows))
    frames = encode_commands(np.array(rows, dtype=np.float64).T.copy(), table)
    for i, row in enumerate(rows):
        assert frames[i].tobytes() == encode_command(MitCommand(*row), CHEETAH)


# ------------------------------------------------------------------ errors


@pytest.mark.parametrize(
    ("field", "value"),
    [("position", 12.6), ("velocity", -65.1), ("kp", -0.001), ("kd", 5.01), ("torque", math.nan),
     ("torque", math.inf)],
)
def test_out_of_range_is_rejected_not_clamped(field: str, value: float) -> None:
    values = {"position": 0.0, "velocity": 0.0, "kp": 1.0, "kd": 0.1, "torque": 0.0}
    values[field] = value
    with pytest.raises(OutOfRangeError) as info:
        encode_command(MitCommand(**values), CHEETAH)
    assert info.value.field == field
    assert (info.value.low, info.value.high) == CHEETAH.bounds(field)
    assert field in str(info.value)


@given(st.floats(allow_nan=True).filter(lambda x: not -18.0 <= x <= 18.0))
def test_any_torque_outside_range_raises(value: float) -> None:
    with pytest.raises(OutOfRangeError):
        encode_command(MitCommand(0.0, 0.0, 0.0, 0.0, value), CHEETAH)


def test_vectorised_encoder_names_first_offender() -> None:
    table = CommandRangeTable([CHEETAH] * 3)
    values = np.zeros((5, 3))
    values[2, 1] = 600.0  # kp of motor 1
    values[4, 2] = 99.0  # torque of motor 2
    with pytest.raises(OutOfRangeError) as info:
        encode_commands(values, table)
    assert (info.value.field, info.value.motor_index, info.value.value) == ("kp", 1, 600.0)


def test_command_that_reads_as_special_frame_is_refused() -> None:
    # all fields at full scale, torque code 0xFFC
    torque = -18.0 + 36.0 * 0xFFC / 0xFFF
    with pytest.raises(ReservedFrameError):
        encode_command(MitCommand(12.5, 65.0, 500.0, 5.0, torque), CHEETAH)
    with pytest.raises(ReservedFrameError):
        encode_commands(np.array([[12.5], [65.0], [500.0], [5.0], [torque]]),
                        CommandRangeTable([CHEETAH]))
    # full scale everywhere (torque 0xFFF) is an ordinary command
    assert encode_command(MitCommand(12.5, 65.0, 500.0, 5.0, 18.0), CHEETAH) == b"\xff" * 8


@pytest.mark.parametrize("length", [0, 5, 7, 9])
def test_command_of_wrong_length_is_a_frame_error(length: int) -> None:
    with pytest.raises(FrameError):
        decode_command(bytes(length), CHEETAH)


def test_reply_length_and_id_are_checked() -> None:
    good = encode_reply(MitReply(5, 0.0, 0.0, 0.0), CHEETAH, BASIC)
    with pytest.raises(FrameError):
        decode_reply(good + b"\x00\x00", CHEETAH, BASIC)
    with pytest.raises(FrameError):
        decode_reply(good, CHEETAH, EXTENDED)
    with pytest.raises(FrameError):
        decode_reply(good, CHEETAH, BASIC, expected_motor_id=6)
    assert decode_reply(good, CHEETAH, BASIC, expected_motor_id=5).motor_id == 5


def test_reply_temperature_outside_byte_is_rejected() -> None:
    with pytest.raises(OutOfRangeError) as info:
        encode_reply(MitReply(1, 0.0, 0.0, 0.0, temperature_c=-41.0), CHEETAH, EXTENDED)
    assert info.value.field == "temperature"


def test_bad_ranges_are_refused() -> None:
    with pytest.raises(ValueError, match="kp"):
        MotorRanges(-1, 1, -1, 1, 5.0, 5.0, 0, 1, -1, 1)
    with pytest.raises(ValueError, match="position"):
        MotorRanges(-math.inf, 1, -1, 1, 0, 1, 0, 1, -1, 1)


# ------------------------------------------------------------------ special frames


@pytest.mark.parametrize(
    ("kind", "raw"),
    [
        (SpecialFrame.ENTER_MOTOR_MODE, "FF FF FF FF FF FF FF FC"),
        (SpecialFrame.EXIT_MOTOR_MODE, "FF FF FF FF FF FF FF FD"),
        (SpecialFrame.ZERO_POSITION, "FF FF FF FF FF FF FF FE"),
    ],
)
def test_special_frames_round_trip(kind: SpecialFrame, raw: str) -> None:
    assert special_frame(kind) == bytes.fromhex(raw)
    assert decode_command(special_frame(kind), CHEETAH) is kind


_REPLY_RANGES = [CHEETAH, MotorRanges(-4.0, 4.0, -20.0, 20.0, 0.0, 100.0, 0.0, 2.0, -6.0, 6.0)]
_REPLY_LAYOUTS = [BASIC, EXTENDED]


@given(
    st.lists(
        st.tuples(
            st.floats(0.0, 1.0), st.floats(0.0, 1.0), st.floats(0.0, 1.0),
            st.integers(-40, 215), st.integers(0, 255),
        ),
        min_size=2, max_size=2,
    )
)
def test_vectorised_replies_equal_scalar_replies(
    rows: list[tuple[float, float, float, int, int]],
) -> None:
    table = ReplyTable(_REPLY_RANGES, _REPLY_LAYOUTS)
    replies = []
    for i, (fp, fv, ft, temp, err) in enumerate(rows):
        r = _REPLY_RANGES[i]
        replies.append(MitReply(
            i + 1,
            r.p_min + fp * (r.p_max - r.p_min),
            r.v_min + fv * (r.v_max - r.v_min),
            r.t_min + ft * (r.t_max - r.t_min),
            float(temp),
            err,
        ))
    pvt = np.array([[x.position for x in replies], [x.velocity for x in replies],
                    [x.torque for x in replies]])
    frames = encode_replies(
        np.array([1, 2]), pvt, np.array([x.temperature_c for x in replies]),
        np.array([x.error_code for x in replies]), table,
    )
    for i, reply in enumerate(replies):
        scalar = encode_reply(reply, _REPLY_RANGES[i], _REPLY_LAYOUTS[i])
        assert frames[i, : len(scalar)].tobytes() == scalar
    decoded, temperature = decode_replies(frames, np.array([0, 1]), table)
    for i in range(2):
        scalar_back = decode_reply(
            frames[i, : table.length[i]].tobytes(), _REPLY_RANGES[i], _REPLY_LAYOUTS[i]
        )
        assert decoded[:, i].tolist() == pytest.approx(
            [scalar_back.position, scalar_back.velocity, scalar_back.torque], abs=1e-12
        )
    assert math.isnan(temperature[0])
    assert temperature[1] == replies[1].temperature_c


def test_vectorised_reply_encoder_refuses_out_of_range() -> None:
    table = ReplyTable(_REPLY_RANGES, _REPLY_LAYOUTS)
    pvt = np.zeros((3, 2))
    pvt[2, 1] = 7.0  # torque of motor 1 beyond ±6 N·m
    with pytest.raises(OutOfRangeError) as info:
        encode_replies(np.array([1, 2]), pvt, np.array([25.0, 25.0]), np.array([0, 0]), table)
    assert (info.value.field, info.value.motor_index) == ("torque", 1)
