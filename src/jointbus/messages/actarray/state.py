"""Actuator state flags and actuator types of an actuator array (Player ``actarray``).

Where it sits: :mod:`jointbus.messages.actarray`, the lowest module of the package; used by
:mod:`~.data` (per-actuator state) and :mod:`~.geometry` (actuator type), and by the driver API
of :mod:`jointbus.drivers`. The numeric values are Player's (``PLAYER_ACTARRAY_ACTSTATE_*``,
``PLAYER_ACTARRAY_TYPE_*``) and are the wire values, so they must never be renumbered.
"""

from __future__ import annotations

import enum


class ActuatorState(enum.IntFlag):
    """What an actuator is doing; flags combine (``BRAKED | STALLED``).

    ``IDLE`` and ``MOVING`` exclude each other, and so do ``MOVING`` and ``BRAKED`` (a braked
    actuator cannot move): :class:`~jointbus.messages.actarray.data.ActuatorData` rejects both
    combinations.
    """

    IDLE = 1
    MOVING = 2
    BRAKED = 4
    STALLED = 8


class ActuatorType(enum.IntEnum):
    """How an actuator moves, which fixes its units: m for ``LINEAR``, rad for ``ROTARY``."""

    LINEAR = 1
    ROTARY = 2


__all__ = ["ActuatorState", "ActuatorType"]
