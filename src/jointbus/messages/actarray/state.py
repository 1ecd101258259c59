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
    actuator cannot move) and ``IDLE`` and ``UNPOWERED`` (an actuator without power is not
    idling, ready to move: it is limp): :class:`~jointbus.messages.actarray.data.ActuatorData`
    rejects all three combinations. ``UNPOWERED``, ``LIMITED`` and ``STALE`` are jointbus's
    additions to Player's four (the next free bits; Player carried power only array-wide, as
    ``motor_state``, had no limit supervisor and no client that could tell a reading's age);
    ``LIMITED`` and ``STALE`` combine with every other flag.
    """

    IDLE = 1
    MOVING = 2
    BRAKED = 4
    STALLED = 8
    UNPOWERED = 16
    """The drive stage is off: the actuator produces no torque (it may still be MOVING under an
    external force, or BRAKED)."""
    LIMITED = 32
    """The drive is holding the actuator back at its position range or speed limit: a command
    (a speed, a current, an impedance target velocity) asked it to go further or faster, and the
    drive decelerated it to stop at the limit instead, as a real drive's limit supervisor does
    (jointbus's addition, the next free bit). It combines with the motion flags: ``MOVING |
    LIMITED`` while it brakes, ``IDLE | LIMITED`` once it is held at the limit — for as long as
    the command asks for more: once it ends (a speed or current of 0, a served array's command
    watchdog) the joint, resting at the limit, is ``IDLE``."""
    STALE = 64
    """The reading is older than its source's rate promises: the values (and the other flags)
    are the last ones received, not the actuator's state now — a ``bus://`` client whose server
    published nothing for more than a few of its periods (it may have died). The reader is told
    as soon as it knows, rather than handed an old state as if it were current."""


class ActuatorType(enum.IntEnum):
    """How an actuator moves, which fixes its units: m for ``LINEAR``, rad for ``ROTARY``."""

    LINEAR = 1
    ROTARY = 2


__all__ = ["ActuatorState", "ActuatorType"]
