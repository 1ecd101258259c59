"""Type stub of the optional compiled core (``_robot_state_accel.c``); see :mod:`.robot_state`."""

from typing import Any

def bind(
    vector3: type, point: type, pose: type, twist: type, leg_state: type, robot_state: type, /
) -> None: ...
def build(
    header: Any,
    leg_names: tuple[str, ...],
    contact: Any,
    foot_position: Any,
    foot_velocity: Any,
    foot_force: Any,
    position: Any,
    orientation: Any,
    body_linear_velocity: Any,
    body_angular_velocity: Any,
    world_linear_velocity: Any,
    world_angular_velocity: Any,
    motion_mode: Any,
    motion_type: Any,
    motion_gait: Any,
    /,
) -> Any: ...
