"""Type stub of the optional compiled core (``_leg_accel.c``); see :mod:`.leg_kinematics` and
:mod:`.stance_forces`."""

from collections.abc import Sequence
from typing import Any

_Vec = tuple[float, float, float]

class Legs:
    def __init__(self, rows: Sequence[Sequence[float]], n_joints: int) -> None: ...
    @property
    def count(self) -> int: ...
    def evaluate(
        self, q: Any, qd: Any, tau: Any, singular_det: float, /
    ) -> tuple[list[_Vec], list[_Vec], list[_Vec], list[float]]: ...
    def rates_and_torques(
        self, q: Any, foot_velocities: Any, foot_forces: Any, /
    ) -> tuple[list[float] | None, list[float]]: ...
    def solve_ik(self, targets: Any, /) -> list[_Vec | None]: ...
    def estimate(
        self,
        q: Sequence[float],
        qd: Sequence[float],
        tau: Sequence[float],
        singular_det: float,
        rotation: Sequence[Sequence[float]],
        wx: float,
        wy: float,
        wz: float,
        ax: float,
        ay: float,
        az: float,
        contact_on: float,
        contact_off: float,
        foot_radius: Sequence[float],
        filter: Any,
        dt: float,
        velocity_tau: float,
        out: Any,
        contact: Any,
        /,
    ) -> None: ...

def stance_dual(
    feet: Sequence[Sequence[float]],
    stance: Sequence[bool],
    wrench: Sequence[float],
    regularisation: Sequence[float],
    fz_min: float,
    fz_max: float,
    mu: float,
    /,
) -> list[_Vec]: ...

def walk_plan(
    rotation: Sequence[Sequence[float]],
    foot_position: Any,
    body_linear_velocity: Any,
    body_angular_velocity: Any,
    position: Any,
    height: float,
    stance: Sequence[bool],
    progress: Sequence[float],
    stance_time: float,
    swing_time: float,
    stopped: bool,
    setpoint: Sequence[float],
    dt: float,
    nominal: Sequence[Sequence[float]],
    foot_radius: Sequence[float],
    gains: Sequence[float],
    memory: Any,
    /,
) -> tuple[
    tuple[_Vec, _Vec, _Vec],
    list[_Vec],
    list[_Vec],
    list[_Vec],
    tuple[float, float, float, float, float, float],
]: ...
