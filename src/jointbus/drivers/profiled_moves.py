"""Profiled moves: the jerk-limited position/speed requests both array drivers run host-side.

Where it sits: :mod:`jointbus.drivers`, beside :mod:`.actuator_array`, used by the ``sim://``
(:mod:`.sim.driver`) and ``can://`` (:mod:`.can.driver`) drivers. Neither drive family runs
trajectories itself, so each driver samples a :class:`~.sim.profile.ProfileGenerator` every
control cycle and sends the reference as the drive's position/velocity target. What that takes
apart from the sampling — the generator, a per-joint mode (profiled, current, impedance, …), the
``set_speed``/``set_accel`` requests that change the generator's limits (a limit it refuses is a
``RequestRejected(OUT_OF_RANGE)``), starting a profile from where a joint is when it leaves
another mode, and routing ``position``/``speed`` targets to one joint or all — is the same in
both drivers and lives here once. How a driver samples the reference (feed-forward, gains,
locking, bus exchange) stays in the driver.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

import numpy as np
import numpy.typing as npt

from jointbus.drivers.actuator_array import ActuatorArrayConfig
from jointbus.drivers.errors import RejectReason, RequestRejected
from jointbus.drivers.sim.profile import Joints, ProfileGenerator
from jointbus.messages.errors import LimitError

__all__ = [
    "MODE_CURRENT",
    "MODE_IMPEDANCE",
    "MODE_OFF",
    "MODE_PROFILE",
    "ProfiledMoves",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]

MODE_OFF: Final[int] = 0
"""Joint is not driven (power off)."""
MODE_PROFILE: Final[int] = 1
"""Joint follows the profile generator (``position``/``speed``/``home``, and holding)."""
MODE_CURRENT: Final[int] = 2
"""Joint is driven with a current (torque) command."""
MODE_IMPEDANCE: Final[int] = 3
"""Joint follows impedance targets."""

StartState = Callable[[IntArray], tuple[FloatArray, FloatArray]]
"""Given joint indices, their current position (rad or m) and velocity (rad/s or m/s)."""


class ProfiledMoves:
    """The profile generator of an N-joint array, its per-joint mode, and the move requests.

    The generator starts from the array config's ``config_speeds`` and ``accelerations``
    (``initial_positions``: where the joints are, actuator space, rad or m; ``None``: zeros).
    ``max_jerk`` follows the acceleration limit as ``accel / jerk_time`` (``jerk_time`` in s:
    how long the drive takes to reach full acceleration), at construction and on every
    ``set_accel``. ``mode`` is the driver's to write (``MODE_*``, or its own extra values above
    them); only :meth:`enter_profile` writes ``MODE_PROFILE`` here.
    """

    def __init__(
        self,
        array: ActuatorArrayConfig,
        *,
        jerk_time: float,
        initial_positions: FloatArray | None = None,
    ) -> None:
        self._count = array.count
        self._jerk_time = jerk_time
        accel = np.array(array.accelerations, dtype=np.float64)
        self.profile = ProfileGenerator(
            array.names,
            max_velocity=np.array(array.config_speeds),
            max_acceleration=accel,
            max_jerk=accel / jerk_time,
            initial_positions=initial_positions,
        )
        self.mode = np.full(self._count, MODE_OFF, dtype=np.int8)

    def release(self) -> None:
        """Free the generator's ruckig objects (:meth:`ProfileGenerator.release`): the driver
        is closed and samples it no more. Idempotent."""
        self.profile.release()

    def set_speed(self, indices: IntArray, speeds: FloatArray) -> None:
        """Speed limit (rad/s or m/s) of later moves of one joint or all (``set_speed``)."""
        self._set_limits("set_speed", indices, {"max_velocity": speeds})

    def set_accel(self, indices: IntArray, accels: FloatArray) -> None:
        """Acceleration limit (rad/s² or m/s², and the jerk that follows) (``set_accel``)."""
        jerk = accels / self._jerk_time
        self._set_limits("set_accel", indices, {"max_acceleration": accels, "max_jerk": jerk})

    def _set_limits(self, request: str, indices: IntArray, limits: dict[str, FloatArray]) -> None:
        """Change profile limits of one joint or all; a profile refusal becomes a NACK."""
        try:
            if indices.size == self._count:
                self.profile.set_limits(None, **limits)
            else:
                index = int(indices[0])
                self.profile.set_limits(index, **{k: float(v[0]) for k, v in limits.items()})
        except LimitError as exc:
            raise _refused(request, exc) from None

    def enter_profile(self, indices: IntArray, start: StartState) -> None:
        """Joints coming from another mode start their profile from ``start(switching)``."""
        switching = indices[self.mode[indices] != MODE_PROFILE]
        if switching.size:
            position, velocity = start(switching)
            self.profile.reset_joints(switching.tolist(), position, velocity)
            self.mode[switching] = MODE_PROFILE

    def move_to(self, indices: IntArray, positions: FloatArray, start: StartState) -> None:
        """Profiled move of ``indices`` to ``positions`` (rad or m), ending at rest."""
        self._move("position", self.profile.move_to, indices, positions, start)

    def move_at(self, indices: IntArray, speeds: FloatArray, start: StartState) -> None:
        """Profiled move of ``indices`` at ``speeds`` (rad/s or m/s; 0 stops)."""
        self._move("speed", self.profile.move_at, indices, speeds, start)

    def _move(
        self,
        request: str,
        move: Callable[[Joints, npt.ArrayLike], None],
        indices: IntArray,
        targets: FloatArray,
        start: StartState,
    ) -> None:
        """Enter profile mode, then ``move`` the joints of ``indices`` in one plan: all start
        together, or none does. A move the generator refuses (one that would take longer than
        :data:`~.sim.profile.MAX_MOVE_S`: a speed or acceleration set far too low) is a
        ``RequestRejected(OUT_OF_RANGE)`` naming the joint, and the joints keep their modes."""
        modes = self.mode.copy()
        self.enter_profile(indices, start)
        try:
            move(None if indices.size == self._count else indices.tolist(), targets)
        except LimitError as exc:
            self.mode[:] = modes
            raise _refused(request, exc) from None


def _refused(request: str, exc: LimitError) -> RequestRejected:
    """The NACK of a request the profile generator refused (``OUT_OF_RANGE``), with its facts."""
    return RequestRejected(
        request,
        RejectReason.OUT_OF_RANGE,
        f"{exc.field} = {exc.value!r}; expected {exc.expected}",
        joint=exc.joint,
        index=exc.index,
        field=exc.field,
        value=exc.value,
        expected=exc.expected,
    )
