"""Type stub of the optional compiled core (``_frame_accel.c``); see :mod:`.frame_fields`."""

from typing import Any

def frame_fields(
    position: Any,
    velocity: Any,
    effort: Any,
    temperature: Any,
    state: Any,
    stalled_mask: int,
    comm_flag: int,
    motion_flag: int,
    /,
) -> (
    tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...], bytes, tuple[int, ...]] | None
): ...
