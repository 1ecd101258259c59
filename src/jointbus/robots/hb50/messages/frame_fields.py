"""BridgeData's per-joint fields computed straight from a driver's joint-space arrays.

Where it sits: :mod:`jointbus.robots.hb50.messages`, used by :meth:`BridgeData.from_joint_arrays`
(which the bridge node calls once per cycle). It depends on numpy only; the optional compiled core
``_frame_accel`` (``_frame_accel.c``, built by ``setup.py`` when a C compiler is present) does the
same in one pass, and :func:`frame_fields_python` is the pure-Python reference it is tested
against. ``JOINTBUS_NO_ACCEL=1`` (as for the codec's core) runs without it.

Why: at 500–1000 Hz the frame is built from float64 arrays of 12 numbers; through the message
constructor that is three ``tolist`` conversions, three float32 rounding passes, and ≈ 10 numpy
calls for the status flags and temperature bytes — each a microsecond of fixed cost
(docs/PERFORMANCE.md, "Where a 500 Hz cycle goes").

What the fields are (the bridge's documented mapping): positions, velocities and efforts rounded to
float32 as the constructor rounds them (NaN = not reported, kept); the temperature as one byte per
joint, whole °C clipped to 0–255, 0 when not reported (NaN); the status word
``COMMUNICATION_ERROR`` where the position is NaN and ``MOTION_ERROR`` where the actuator state
has the ``STALLED`` bit. ``None`` when a value is infinite or beyond float32: such a frame is left
to the constructor, whose error names the joint, the field and the value.
"""

from __future__ import annotations

from typing import Final, NamedTuple

import numpy as np
import numpy.typing as npt

from jointbus import compiled_core
from jointbus.messages.actarray.state import ActuatorState

__all__ = ["ACCELERATED", "FrameFields", "frame_fields", "frame_fields_python"]

_STALLED: Final = int(ActuatorState.STALLED)


class FrameFields(NamedTuple):
    """``BridgeData``'s per-joint fields in the form its constructor leaves them."""

    position: tuple[float, ...]  # rad, float32-rounded
    velocity: tuple[float, ...]  # rad/s
    effort: tuple[float, ...]  # N·m
    temperature: bytes  # °C, one byte per joint
    status: tuple[int, ...]  # JointStatusFlag bits


_CORE: Final = compiled_core.load("jointbus.robots.hb50.messages._frame_accel")
#: Whether the compiled core is built and enabled in this process.
ACCELERATED: Final = _CORE is not None


def frame_fields_python(
    position: npt.NDArray[np.float64],
    velocity: npt.NDArray[np.float64],
    effort: npt.NDArray[np.float64],
    temperature: npt.NDArray[np.float64],
    state: npt.NDArray[np.uint8],
    *,
    comm_flag: int,
    motion_flag: int,
) -> FrameFields | None:
    """The fields in pure Python / numpy (the reference of the compiled core)."""
    n = len(position)
    if not len(velocity) == len(effort) == len(temperature) == len(state) == n:
        raise ValueError(
            f"joint arrays of {[len(a) for a in (position, velocity, effort, temperature, state)]}"
            f" values; expected {n} each (as position)"
        )
    with np.errstate(over="ignore", invalid="ignore"):
        rounded = np.array((position, velocity, effort), dtype=np.float64).astype(np.float32)
    if np.isinf(rounded).any():
        return None
    p, v, e = rounded.tolist()
    t = np.asarray(temperature, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        degrees = np.clip(np.rint(np.where(np.isnan(t), 0.0, t)), 0, 255).astype(np.uint8)
    status = np.zeros(n, dtype=np.int64)
    status[np.isnan(np.asarray(position, dtype=np.float64))] |= comm_flag
    status[(np.asarray(state, dtype=np.uint8) & _STALLED) != 0] |= motion_flag
    return FrameFields(tuple(p), tuple(v), tuple(e), degrees.tobytes(), tuple(status.tolist()))


def frame_fields(
    position: npt.NDArray[np.float64],
    velocity: npt.NDArray[np.float64],
    effort: npt.NDArray[np.float64],
    temperature: npt.NDArray[np.float64],
    state: npt.NDArray[np.uint8],
    *,
    comm_flag: int,
    motion_flag: int,
) -> FrameFields | None:
    """The fields (module docstring): the compiled core when built, else the reference.

    ``comm_flag`` / ``motion_flag``: the status bits to set (``BridgeData`` passes its
    ``JointStatusFlag`` values; this module sits below it).

    The core takes 1-D C-contiguous float64 arrays (``uint8`` for ``state``), as
    :meth:`~jointbus.drivers.ActuatorArray.read_joints` returns them; anything else goes through
    the reference."""
    if _CORE is not None:
        try:
            fields = _CORE.frame_fields(
                position, velocity, effort, temperature, state, _STALLED, comm_flag, motion_flag
            )
        except (TypeError, ValueError):  # another format or layout (numpy: ValueError), or
            # other lengths: the reference converts, or raises its own error
            pass
        else:
            return None if fields is None else FrameFields(*fields)
    return frame_fields_python(
        position, velocity, effort, temperature, state, comm_flag=comm_flag, motion_flag=motion_flag
    )
