"""Type stub of the optional compiled core (``_estimate_accel.c``); see
:mod:`.walking_estimator`."""

from typing import Any

_Vec = tuple[float, float, float]

def update(
    state: Any,
    orientation: Any,
    foot_force: Any,
    foot_position: Any,
    foot_velocity: Any,
    foot_radius: Any,
    stance: Any,
    acceleration: Any,
    angular_velocity: Any,
    dt: float,
    contact_force: float,
    accel_variance: float,
    odometry_variance: float,
    height: float,
    /,
) -> tuple[list[bool], tuple[float, float, float], float, _Vec, _Vec] | None: ...
