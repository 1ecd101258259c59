"""The impedance-mode ("MIT mode") CAN frame format: pure encode/decode, no I/O.

Where it sits: :mod:`jointbus.drivers.can`, the bottom of the CAN driver. :mod:`.motor_link`
(host side) and :mod:`.firmware_twin` (simulated motor side) both speak through this module, so
the two ends of every test share one definition of the bytes — and the tests pin that definition
to hand-written byte strings so a shared mistake cannot hide.

The layout is the one of the open Cheetah/MIT motor-controller firmware, which many hobby and
research actuators copy. All multi-byte fields are packed big-endian, most significant bits first:

command frame, host → motor, arbitration id = motor id, 8 bytes::

    byte  0        1        2        3        4        5        6        7
          pppppppp pppppppp vvvvvvvv vvvvKKKK KKKKKKKK dddddddd ddddtttt tttttttt
          position 16 bit | velocity 12 | kp 12 | kd 12 | torque (feed-forward) 12

reply frame, motor → host (arbitration id = the host id, usually 0), 6 or 8 bytes::

    byte  0        1        2        3        4        5        [6]      [7]
          motor id pppppppp pppppppp vvvvvvvv vvvvtttt tttttttt  temp     error
          position 16 bit | velocity 12 | torque 12 | temperature byte | error byte

The temperature and error bytes exist only on firmwares that send them; whether a model does is
data (:class:`ReplyLayout`), not code.

Special frames (arbitration id = motor id): ``FF FF FF FF FF FF FF FC`` enter motor mode,
``… FD`` exit motor mode, ``… FE`` set the present position as zero.

Quantisation. Each field maps its range ``[lo, hi]`` linearly onto the unsigned integers
``0 … 2**bits − 1``: ``lo`` is code 0 and ``hi`` is full scale. One least-significant bit (LSB) is
``(hi − lo) / (2**bits − 1)``; for the generic Cheetah ranges that is 381 µrad of position
(±12.5 rad over 16 bit), 31.8 mrad/s of velocity (±65 rad/s), 0.122 N·m/rad of kp (0…500),
1.22 mN·m·s/rad of kd (0…5) and 8.79 mN·m of torque (±18 N·m over 12 bit). Encoding *rounds* to
the nearest code (the reference firmware truncates; rounding halves the worst-case error and is
indistinguishable on the wire), so ``decode(encode(x))`` is within half an LSB of ``x``.

Values outside ``[lo, hi]`` (and NaN or infinity) raise :class:`OutOfRangeError`; nothing is ever
clamped silently, because a clamped torque or gain is a different command from the one the
controller computed. A command whose bytes would coincide with a special frame (every field at
full scale with the torque code in 0xFFC…0xFFE) raises :class:`ReservedFrameError`: the motor
would read it as enter/exit/zero, not as a command.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Final

import numpy as np
import numpy.typing as npt

__all__ = [
    "COMMAND_FIELDS",
    "COMMAND_FRAME_LENGTH",
    "FIELD_BITS",
    "FIELD_UNITS",
    "CommandRangeTable",
    "FrameError",
    "MitCommand",
    "MitProtocolError",
    "MitReply",
    "MotorRanges",
    "OutOfRangeError",
    "ReplyLayout",
    "ReplyTable",
    "ReservedFrameError",
    "SpecialFrame",
    "decode_command",
    "decode_replies",
    "decode_reply",
    "encode_command",
    "encode_commands",
    "encode_replies",
    "encode_reply",
    "float_to_uint",
    "special_frame",
    "uint_to_float",
]

#: Bits per field of the command frame, in frame order.
FIELD_BITS: Final[dict[str, int]] = {
    "position": 16,
    "velocity": 12,
    "kp": 12,
    "kd": 12,
    "torque": 12,
}
#: SI unit of each field, for error messages and documentation.
FIELD_UNITS: Final[dict[str, str]] = {
    "position": "rad",
    "velocity": "rad/s",
    "kp": "N·m/rad",
    "kd": "N·m·s/rad",
    "torque": "N·m",
    "temperature": "°C",
    "error_code": "",
}
#: Command fields in frame order.
COMMAND_FIELDS: Final[tuple[str, ...]] = ("position", "velocity", "kp", "kd", "torque")
COMMAND_FRAME_LENGTH: Final[int] = 8
_SPECIAL_PREFIX: Final[bytes] = b"\xff" * 7
_FULL12: Final[int] = (1 << 12) - 1
_FULL16: Final[int] = (1 << 16) - 1


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------


class MitProtocolError(Exception):
    """Base class of the MIT-protocol errors."""


class OutOfRangeError(MitProtocolError, ValueError):
    """A value outside the range its field can carry on the wire (or NaN/infinite).

    Attributes: ``field``, ``value``, ``low``, ``high``, ``unit`` and, when raised for a
    particular motor, ``motor_name`` and ``motor_index`` (position in the link's motor list).
    """

    def __init__(
        self,
        field: str,
        value: float,
        low: float,
        high: float,
        *,
        motor_name: str | None = None,
        motor_index: int | None = None,
        model: str | None = None,
    ) -> None:
        self.field = field
        self.value = value
        self.low = low
        self.high = high
        self.unit = FIELD_UNITS.get(field, "")
        self.motor_name = motor_name
        self.motor_index = motor_index
        self.model = model
        where = ""
        if motor_name is not None:
            where = f"motor {motor_name!r} (index {motor_index}): "
        model_text = f" of model {model!r}" if model is not None else ""
        unit = f" {self.unit}" if self.unit else ""
        super().__init__(
            f"{where}field {field!r} = {value!r} is outside the wire range "
            f"[{low:g}, {high:g}]{unit}{model_text}; nothing was sent"
        )


class ReservedFrameError(MitProtocolError, ValueError):
    """A command whose 8 bytes equal an enter/exit/zero special frame (see module docstring)."""


class FrameError(MitProtocolError, ValueError):
    """Received bytes that are not a valid frame of the expected kind (length, id, content)."""


# --------------------------------------------------------------------------------------------
# Ranges and layouts (data, per motor model)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MotorRanges:
    """The wire ranges of one motor model: what code 0 and full scale mean for each field.

    Units: position rad, velocity rad/s, kp N·m/rad, kd N·m·s/rad, torque N·m. These are the
    *encoding* ranges the firmware was built with, not joint limits; joint limits live above the
    drivers and are normally narrower.
    """

    p_min: float
    p_max: float
    v_min: float
    v_max: float
    kp_min: float
    kp_max: float
    kd_min: float
    kd_max: float
    t_min: float
    t_max: float

    def __post_init__(self) -> None:
        for field, (low, high) in zip(COMMAND_FIELDS, self.pairs(), strict=True):
            if not (math.isfinite(low) and math.isfinite(high)):
                raise ValueError(f"MotorRanges: {field} range [{low}, {high}] is not finite")
            if not low < high:
                raise ValueError(f"MotorRanges: {field} range [{low}, {high}] must have min < max")

    def pairs(self) -> tuple[tuple[float, float], ...]:
        """``(min, max)`` per command field, in frame order (position, velocity, kp, kd, torque)."""
        return (
            (self.p_min, self.p_max),
            (self.v_min, self.v_max),
            (self.kp_min, self.kp_max),
            (self.kd_min, self.kd_max),
            (self.t_min, self.t_max),
        )

    def bounds(self, field: str) -> tuple[float, float]:
        """``(min, max)`` of one field by name (``"position"``, ``"velocity"``, ``"kp"``, …)."""
        try:
            return self.pairs()[COMMAND_FIELDS.index(field)]
        except ValueError:
            raise KeyError(
                f"unknown field {field!r}; expected one of {', '.join(COMMAND_FIELDS)}"
            ) from None

    def lsb(self, field: str) -> float:
        """Size of one least-significant bit of ``field`` in its SI unit."""
        low, high = self.bounds(field)
        return (high - low) / ((1 << FIELD_BITS[field]) - 1)


@dataclass(frozen=True, slots=True)
class ReplyLayout:
    """Which reply frame a model sends.

    ``has_temperature_and_error``: the 8-byte variant with a temperature byte (byte 6) and an
    error byte (byte 7) after the standard 6 bytes. ``temperature_offset_c``: the temperature in
    °C is ``byte + temperature_offset_c`` (1 °C per LSB), so a firmware that sends "°C + 40"
    has offset −40.
    """

    has_temperature_and_error: bool = False
    temperature_offset_c: float = 0.0

    def __post_init__(self) -> None:
        if not math.isfinite(self.temperature_offset_c):
            raise ValueError(
                f"ReplyLayout: temperature_offset_c = {self.temperature_offset_c} is not finite"
            )

    @property
    def length(self) -> int:
        """Reply frame length in bytes (6, or 8 with temperature and error)."""
        return 8 if self.has_temperature_and_error else 6


# --------------------------------------------------------------------------------------------
# Frames as values
# --------------------------------------------------------------------------------------------


class SpecialFrame(Enum):
    """The three mode frames; the value is the last byte after seven ``0xFF``."""

    ENTER_MOTOR_MODE = 0xFC
    EXIT_MOTOR_MODE = 0xFD
    ZERO_POSITION = 0xFE


@dataclass(frozen=True, slots=True)
class MitCommand:
    """One impedance command: τ = torque + kp·(position − p) + kd·(velocity − v).

    Units: position rad, velocity rad/s, kp N·m/rad, kd N·m·s/rad, torque N·m.
    """

    position: float
    velocity: float
    kp: float
    kd: float
    torque: float


@dataclass(frozen=True, slots=True)
class MitReply:
    """One motor reply. ``temperature_c`` is NaN and ``error_code`` ``None`` when not sent.

    Units: position rad, velocity rad/s, torque N·m, temperature °C.
    """

    motor_id: int
    position: float
    velocity: float
    torque: float
    temperature_c: float = math.nan
    error_code: int | None = None


# --------------------------------------------------------------------------------------------
# Scalar fixed point
# --------------------------------------------------------------------------------------------


def float_to_uint(field: str, value: float, low: float, high: float, bits: int) -> int:
    """Map ``value`` in ``[low, high]`` to the nearest code in ``0 … 2**bits − 1``.

    Raises :class:`OutOfRangeError` (naming ``field``) for values outside the range or not finite.
    """
    if not low <= value <= high:  # also False for NaN
        raise OutOfRangeError(field, value, low, high)
    full = (1 << bits) - 1
    return round((value - low) * full / (high - low))


def uint_to_float(code: int, low: float, high: float, bits: int) -> float:
    """Inverse of :func:`float_to_uint`: code 0 is exactly ``low``, full scale ``high``."""
    return low + (high - low) * (code / ((1 << bits) - 1))


# --------------------------------------------------------------------------------------------
# Command frames
# --------------------------------------------------------------------------------------------


def special_frame(kind: SpecialFrame) -> bytes:
    """The 8 bytes of an enter/exit/zero frame."""
    return _SPECIAL_PREFIX + bytes((kind.value,))


def _pack_command(p: int, v: int, kp: int, kd: int, t: int) -> bytes:
    return bytes(
        (
            p >> 8,
            p & 0xFF,
            v >> 4,
            ((v & 0xF) << 4) | (kp >> 8),
            kp & 0xFF,
            kd >> 4,
            ((kd & 0xF) << 4) | (t >> 8),
            t & 0xFF,
        )
    )


def _is_special(data: bytes | bytearray) -> bool:
    return data[:7] == _SPECIAL_PREFIX and data[7] in (0xFC, 0xFD, 0xFE)


def encode_command(command: MitCommand, ranges: MotorRanges) -> bytes:
    """Encode one command into its 8 bytes.

    Raises :class:`OutOfRangeError` for any field outside ``ranges`` (checked in frame order, the
    first offender is named) and :class:`ReservedFrameError` if the bytes would read as a
    special frame.
    """
    p = float_to_uint("position", command.position, ranges.p_min, ranges.p_max, 16)
    v = float_to_uint("velocity", command.velocity, ranges.v_min, ranges.v_max, 12)
    kp = float_to_uint("kp", command.kp, ranges.kp_min, ranges.kp_max, 12)
    kd = float_to_uint("kd", command.kd, ranges.kd_min, ranges.kd_max, 12)
    t = float_to_uint("torque", command.torque, ranges.t_min, ranges.t_max, 12)
    data = _pack_command(p, v, kp, kd, t)
    if _is_special(data):
        raise ReservedFrameError(
            f"command {command} encodes to {data.hex(' ')}, which motors read as "
            f"{SpecialFrame(data[7]).name}; lower any field by one LSB"
        )
    return data


def decode_command(data: bytes | bytearray, ranges: MotorRanges) -> MitCommand | SpecialFrame:
    """Decode 8 command bytes into a :class:`MitCommand` or the :class:`SpecialFrame` they are.

    Raises :class:`FrameError` if the frame is not exactly 8 bytes.
    """
    if len(data) != COMMAND_FRAME_LENGTH:
        raise FrameError(
            f"command frame has {len(data)} bytes ({bytes(data).hex(' ')}); expected 8"
        )
    if _is_special(data):
        return SpecialFrame(data[7])
    p = (data[0] << 8) | data[1]
    v = (data[2] << 4) | (data[3] >> 4)
    kp = ((data[3] & 0xF) << 8) | data[4]
    kd = (data[5] << 4) | (data[6] >> 4)
    t = ((data[6] & 0xF) << 8) | data[7]
    return MitCommand(
        position=uint_to_float(p, ranges.p_min, ranges.p_max, 16),
        velocity=uint_to_float(v, ranges.v_min, ranges.v_max, 12),
        kp=uint_to_float(kp, ranges.kp_min, ranges.kp_max, 12),
        kd=uint_to_float(kd, ranges.kd_min, ranges.kd_max, 12),
        torque=uint_to_float(t, ranges.t_min, ranges.t_max, 12),
    )


class CommandRangeTable:
    """The ranges of N motors as arrays, to validate and encode a whole command set at once.

    Built once per link: validating 5×N values with numpy and finding the first offender only
    when something is wrong keeps the per-cycle cost flat in N.
    """

    __slots__ = ("_full", "high", "low", "ranges")

    def __init__(self, ranges: Sequence[MotorRanges]) -> None:
        if not ranges:
            raise ValueError("CommandRangeTable needs at least one motor")
        self.ranges: tuple[MotorRanges, ...] = tuple(ranges)
        pairs = np.array([r.pairs() for r in self.ranges], dtype=np.float64)  # (N, 5, 2)
        #: shape (5, N): per field, per motor
        self.low: npt.NDArray[np.float64] = np.ascontiguousarray(pairs[:, :, 0].T)
        self.high: npt.NDArray[np.float64] = np.ascontiguousarray(pairs[:, :, 1].T)
        bits = np.array([FIELD_BITS[f] for f in COMMAND_FIELDS], dtype=np.float64)
        self._full: npt.NDArray[np.float64] = ((2.0**bits) - 1.0)[:, None]

    def __len__(self) -> int:
        return len(self.ranges)

    def first_violation(self, values: npt.NDArray[np.float64]) -> tuple[int, int] | None:
        """``(field_index, motor_index)`` of the first out-of-range or non-finite value, or None.

        ``values`` has shape (5, N) in :data:`COMMAND_FIELDS` order. "First" is motor-major
        (lowest motor index, then frame order), matching a reader scanning the motor list.
        """
        ok = (values >= self.low) & (values <= self.high)  # NaN compares False
        if ok.all():
            return None
        bad_field, bad_motor = np.nonzero(~ok)
        k = int(np.lexsort((bad_field, bad_motor))[0])
        return int(bad_field[k]), int(bad_motor[k])


def encode_commands(
    values: npt.NDArray[np.float64], table: CommandRangeTable
) -> npt.NDArray[np.uint8]:
    """Encode N commands at once into an (N, 8) ``uint8`` array, one frame per row.

    ``values`` has shape (5, N) in :data:`COMMAND_FIELDS` order. Validates everything first:
    raises :class:`OutOfRangeError` for the first offender (see
    :meth:`CommandRangeTable.first_violation`) and :class:`ReservedFrameError` for a row that
    would read as a special frame.
    """
    violation = table.first_violation(values)
    if violation is not None:
        field_index, motor = violation
        raise OutOfRangeError(
            COMMAND_FIELDS[field_index],
            float(values[field_index, motor]),
            float(table.low[field_index, motor]),
            float(table.high[field_index, motor]),
            motor_index=motor,
        )
    codes = np.rint((values - table.low) * table._full / (table.high - table.low)).astype(np.uint32)
    p, v, kp, kd, t = codes
    out = np.empty((codes.shape[1], 8), dtype=np.uint8)
    out[:, 0] = p >> 8
    out[:, 1] = p & 0xFF
    out[:, 2] = v >> 4
    out[:, 3] = ((v & 0xF) << 4) | (kp >> 8)
    out[:, 4] = kp & 0xFF
    out[:, 5] = kd >> 4
    out[:, 6] = ((kd & 0xF) << 4) | (t >> 8)
    out[:, 7] = t & 0xFF
    special = (p == _FULL16) & (v == _FULL12) & (kp == _FULL12) & (kd == _FULL12)
    special &= (t >= 0xFFC) & (t <= 0xFFE)
    if special.any():
        motor = int(np.argmax(special))
        raise ReservedFrameError(
            f"index {motor}: command encodes to {out[motor].tobytes().hex(' ')}, which motors "
            f"read as {SpecialFrame(int(out[motor, 7])).name}; lower any field by one LSB"
        )
    return out


# --------------------------------------------------------------------------------------------
# Reply frames
# --------------------------------------------------------------------------------------------


def encode_reply(reply: MitReply, ranges: MotorRanges, layout: ReplyLayout) -> bytes:
    """Encode a motor reply (the firmware side; used by the simulated firmware and tests).

    Raises :class:`OutOfRangeError` for a value the frame cannot carry — a caller that wants the
    firmware's saturating behaviour clips explicitly first. Temperature and error code are only
    written (and only checked) when ``layout`` has those bytes.
    """
    if not 0 <= reply.motor_id <= 0xFF:
        raise OutOfRangeError("motor_id", reply.motor_id, 0, 0xFF)
    p = float_to_uint("position", reply.position, ranges.p_min, ranges.p_max, 16)
    v = float_to_uint("velocity", reply.velocity, ranges.v_min, ranges.v_max, 12)
    t = float_to_uint("torque", reply.torque, ranges.t_min, ranges.t_max, 12)
    head = bytes((reply.motor_id, p >> 8, p & 0xFF, v >> 4, ((v & 0xF) << 4) | (t >> 8), t & 0xFF))
    if not layout.has_temperature_and_error:
        return head
    offset = layout.temperature_offset_c
    temp = float_to_uint("temperature", reply.temperature_c, offset, offset + 255.0, 8)
    error = 0 if reply.error_code is None else reply.error_code
    if not 0 <= error <= 0xFF:
        raise OutOfRangeError("error_code", error, 0, 0xFF)
    return head + bytes((temp, error))


def decode_reply(
    data: bytes | bytearray,
    ranges: MotorRanges,
    layout: ReplyLayout,
    expected_motor_id: int | None = None,
) -> MitReply:
    """Decode a reply frame.

    Raises :class:`FrameError` if the length does not match ``layout`` or, when
    ``expected_motor_id`` is given, if byte 0 names another motor.
    """
    if len(data) != layout.length:
        raise FrameError(
            f"reply frame has {len(data)} bytes ({bytes(data).hex(' ')}); expected {layout.length}"
        )
    if expected_motor_id is not None and data[0] != expected_motor_id:
        raise FrameError(
            f"reply frame is from motor id {data[0]} ({bytes(data).hex(' ')}); "
            f"expected motor id {expected_motor_id}"
        )
    p = (data[1] << 8) | data[2]
    v = (data[3] << 4) | (data[4] >> 4)
    t = ((data[4] & 0xF) << 8) | data[5]
    temperature = math.nan
    error: int | None = None
    if layout.has_temperature_and_error:
        temperature = data[6] + layout.temperature_offset_c
        error = data[7]
    return MitReply(
        motor_id=data[0],
        position=uint_to_float(p, ranges.p_min, ranges.p_max, 16),
        velocity=uint_to_float(v, ranges.v_min, ranges.v_max, 12),
        torque=uint_to_float(t, ranges.t_min, ranges.t_max, 12),
        temperature_c=temperature,
        error_code=error,
    )


class ReplyTable:
    """Reply ranges and layouts of N motors as arrays, to encode or decode many replies at once.

    The host decodes a whole cycle's replies in one go and the simulated firmware encodes a whole
    cycle's answers in one go; per-frame Python work is what limits frames per second.
    """

    __slots__ = ("extended", "high", "length", "low", "temperature_offset_c")

    def __init__(self, ranges: Sequence[MotorRanges], layouts: Sequence[ReplyLayout]) -> None:
        if not ranges or len(ranges) != len(layouts):
            raise ValueError(
                f"ReplyTable needs one layout per motor ({len(ranges)} ranges, "
                f"{len(layouts)} layouts)"
            )
        pairs = np.array([r.pairs() for r in ranges], dtype=np.float64)[:, (0, 1, 4), :]
        #: shape (3, N): position, velocity, torque per motor
        self.low: npt.NDArray[np.float64] = np.ascontiguousarray(pairs[:, :, 0].T)
        self.high: npt.NDArray[np.float64] = np.ascontiguousarray(pairs[:, :, 1].T)
        self.extended: npt.NDArray[np.bool_] = np.array(
            [layout.has_temperature_and_error for layout in layouts], dtype=np.bool_
        )
        self.temperature_offset_c: npt.NDArray[np.float64] = np.array(
            [layout.temperature_offset_c for layout in layouts], dtype=np.float64
        )
        self.length: tuple[int, ...] = tuple(layout.length for layout in layouts)


_REPLY_FULL: Final = np.array([[float(_FULL16)], [float(_FULL12)], [float(_FULL12)]])


def decode_replies(
    frames: npt.NDArray[np.uint8], motors: npt.NDArray[np.intp], table: ReplyTable
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Decode k reply frames at once; the vectorised twin of :func:`decode_reply`.

    ``frames`` is (k, 8) ``uint8`` (6-byte replies padded), ``motors`` the table index of each
    row. Lengths and ids are the caller's to check (it has already matched each frame to its
    motor). Returns ``(pvt, temperature_c)``: ``pvt`` (3, k) position rad, velocity rad/s,
    torque N·m; ``temperature_c`` (k,) NaN for motors without the extended layout. Error bytes
    are ``frames[:, 7]`` where the layout is extended.
    """
    f = frames.astype(np.int64)
    codes = np.empty((3, f.shape[0]), dtype=np.float64)
    codes[0] = (f[:, 1] << 8) | f[:, 2]
    codes[1] = (f[:, 3] << 4) | (f[:, 4] >> 4)
    codes[2] = ((f[:, 4] & 0xF) << 8) | f[:, 5]
    low = table.low[:, motors]
    pvt = low + (table.high[:, motors] - low) * (codes / _REPLY_FULL)
    temperature = np.where(
        table.extended[motors], f[:, 6] + table.temperature_offset_c[motors], np.nan
    )
    return pvt, temperature


def encode_replies(
    motor_ids: npt.NDArray[np.int64],
    pvt: npt.NDArray[np.float64],
    temperature_c: npt.NDArray[np.float64],
    error_code: npt.NDArray[np.int64],
    table: ReplyTable,
) -> npt.NDArray[np.uint8]:
    """Encode N replies (one per motor of ``table``) into an (N, 8) ``uint8`` array.

    The vectorised twin of :func:`encode_reply`, with the same refusal to clamp: any value
    outside its range raises :class:`OutOfRangeError` naming the motor index. ``pvt`` is (3, N)
    position, velocity, torque. Rows of basic-layout motors use only their first 6 bytes.
    """
    ok = (pvt >= table.low) & (pvt <= table.high)
    if not ok.all():
        field_index, motor = (int(x[0]) for x in np.nonzero(~ok))
        raise OutOfRangeError(
            ("position", "velocity", "torque")[field_index],
            float(pvt[field_index, motor]),
            float(table.low[field_index, motor]),
            float(table.high[field_index, motor]),
            motor_index=motor,
        )
    temp_code = np.where(table.extended, temperature_c - table.temperature_offset_c, 0.0)
    bad = ~((temp_code >= 0.0) & (temp_code <= 255.0))
    if bad.any():
        motor = int(np.argmax(bad))
        offset = float(table.temperature_offset_c[motor])
        raise OutOfRangeError(
            "temperature", float(temperature_c[motor]), offset, offset + 255.0, motor_index=motor
        )
    if ((error_code < 0) | (error_code > 0xFF)).any():
        motor = int(np.argmax((error_code < 0) | (error_code > 0xFF)))
        raise OutOfRangeError("error_code", int(error_code[motor]), 0, 0xFF, motor_index=motor)
    if ((motor_ids < 0) | (motor_ids > 0xFF)).any():
        motor = int(np.argmax((motor_ids < 0) | (motor_ids > 0xFF)))
        raise OutOfRangeError("motor_id", int(motor_ids[motor]), 0, 0xFF, motor_index=motor)
    codes = np.rint((pvt - table.low) * _REPLY_FULL / (table.high - table.low)).astype(np.int64)
    p, v, t = codes
    out = np.zeros((codes.shape[1], 8), dtype=np.uint8)
    out[:, 0] = motor_ids
    out[:, 1] = p >> 8
    out[:, 2] = p & 0xFF
    out[:, 3] = v >> 4
    out[:, 4] = ((v & 0xF) << 4) | (t >> 8)
    out[:, 5] = t & 0xFF
    out[:, 6] = np.where(table.extended, np.rint(temp_code), 0)
    out[:, 7] = np.where(table.extended, error_code, 0)
    return out
