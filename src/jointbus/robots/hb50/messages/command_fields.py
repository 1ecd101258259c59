"""JointCommand's five float fields computed straight from a controller's arrays.

Where it sits: :mod:`jointbus.robots.hb50.messages`, used by
:meth:`JointCommand.from_joint_arrays` (which the control node calls once per frame). It depends on
numpy only; the optional compiled core ``_command_accel`` (``_command_accel.c``, built by
``setup.py`` when a C compiler is present) does the same in one pass, and
:func:`command_fields_python` is the pure-Python reference it is tested against.
``JOINTBUS_NO_ACCEL=1`` (as for the other cores) runs without it.

Why: at 500–1000 Hz the command is built from five float64 arrays of 12 numbers; in Python that
is a concatenate, two list conversions, a float32 rounding pass, a finiteness sum and five slices:
6.2–6.4 µs alone against the core's 1.5 µs, and ``JointCommand.from_joint_arrays`` 8.5–8.7 µs
against 4.4–5.5 µs (2026-12-07, this project's VM, best of 5 × 50 000, two alternated pairs).
Inside the running control process, where its caches are cold, the Python version read 31 µs a
frame (thread CPU time, walking).

What the fields are: ``kp``, ``kd`` (N·m/rad, N·m·s/rad), ``t_pos`` (rad), ``t_vel`` (rad/s),
``t_trq`` (N·m), each value rounded to float32 as the constructor rounds it. ``None`` when a value
is NaN, infinite or beyond float32, or a gain is below zero: such a command is left to the
constructor, whose error names the joint, the field and the value.
"""

from __future__ import annotations

import math
from array import array
from typing import Final

import numpy as np
import numpy.typing as npt

from jointbus import compiled_core

__all__ = ["ACCELERATED", "CommandFields", "command_fields", "command_fields_python"]

#: kp, kd, t_pos, t_vel, t_trq: five tuples of float32-rounded floats.
CommandFields = tuple[
    tuple[float, ...], tuple[float, ...], tuple[float, ...], tuple[float, ...], tuple[float, ...]
]

_CORE: Final = compiled_core.load("jointbus.robots.hb50.messages._command_accel")
#: Whether the compiled core is built and enabled in this process.
ACCELERATED: Final = _CORE is not None


def command_fields_python(
    kp: npt.NDArray[np.float64],
    kd: npt.NDArray[np.float64],
    t_pos: npt.NDArray[np.float64],
    t_vel: npt.NDArray[np.float64],
    t_trq: npt.NDArray[np.float64],
) -> CommandFields | None:
    """The fields in Python (the reference of the compiled core): arrays of one length ``n``."""
    n = len(kp)
    if not len(kd) == len(t_pos) == len(t_vel) == len(t_trq) == n:
        lengths = [len(a) for a in (kp, kd, t_pos, t_vel, t_trq)]
        raise ValueError(f"command arrays of {lengths} values; expected {n} each (as kp)")
    # rounded to float32 in one C call; a value beyond float32 rounds to infinity, so a finite
    # sum means every value is finite and in range
    values = array("f", np.concatenate((kp, kd, t_pos, t_vel, t_trq)).tolist()).tolist()
    if not math.isfinite(sum(values)) or (n and min(values[: 2 * n]) < 0.0):
        return None
    return (
        tuple(values[0:n]),
        tuple(values[n : 2 * n]),
        tuple(values[2 * n : 3 * n]),
        tuple(values[3 * n : 4 * n]),
        tuple(values[4 * n :]),
    )


def command_fields(
    kp: npt.NDArray[np.float64],
    kd: npt.NDArray[np.float64],
    t_pos: npt.NDArray[np.float64],
    t_vel: npt.NDArray[np.float64],
    t_trq: npt.NDArray[np.float64],
) -> CommandFields | None:
    """The fields (module docstring): the compiled core when built, else the reference.

    The core takes 1-D C-contiguous float64 arrays; anything else goes through the reference."""
    if _CORE is not None:
        try:
            fields: CommandFields | None = _CORE.command_fields(kp, kd, t_pos, t_vel, t_trq)
        except (TypeError, ValueError):  # another format or layout (numpy: ValueError), or
            # other lengths: the reference converts, or raises its own error
            pass
        else:
            return fields
    return command_fields_python(kp, kd, t_pos, t_vel, t_trq)
