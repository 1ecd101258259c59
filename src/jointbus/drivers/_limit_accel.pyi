"""Type stub of the limit guard's compiled core (``_limit_accel.c``)."""

import numpy as np
import numpy.typing as npt

_F = npt.NDArray[np.float64]
_B = npt.NDArray[np.bool_]

def apply(
    guarded: _B,
    position: _F,
    velocity: _F,
    p_ref: _F,
    v_ref: _F,
    torque: _F,
    kp: _F,
    kd: _F,
    load: _F | None,
    lower: _F,
    upper: _F,
    vmax: _F,
    decel2: _F,
    gain: _F,
    return_kp: _F,
    period: float,
    limited: _B,
    /,
) -> int: ...

def bounds(
    lower: _F, upper: _F, exact_lower: _F, exact_upper: _F, values: _F, /
) -> int: ...
