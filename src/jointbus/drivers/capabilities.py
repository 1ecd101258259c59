"""What an actuator-array driver can do: the requests and commands it accepts.

Where it sits: :mod:`jointbus.drivers`, below :mod:`~jointbus.drivers.actuator_array`. Player let a
driver NACK any request it did not implement; jointbus says up front what a driver supports
(:meth:`ActuatorArray.capabilities`), and the base class refuses everything else with
:class:`~jointbus.drivers.errors.RequestRejected` (reason ``UNSUPPORTED``) before any driver code
runs, so "unsupported" looks the same from every driver.

The members map one-to-one to the public methods of the API: a single capability covers a
command's single-joint and multi-joint forms (``POSITION`` covers ``position`` and ``positions``).
"""

from __future__ import annotations

import enum

__all__ = ["ALL_CAPABILITIES", "Capability"]


class Capability(enum.Enum):
    """One request or command family of the actuator-array API; the value is the method name."""

    POWER = "power"
    """Request: motor power of the whole array on/off."""
    JOINT_POWER = "joint_power"
    """Request: the drive stage of one joint off (limp, no torque) or on again."""
    BRAKES = "brakes"
    """Request: engage/release the brakes of every actuator that has one."""
    SPEED_CONFIG = "set_speed"
    """Request: configured speed of later moves (rad/s or m/s)."""
    ACCEL_CONFIG = "set_accel"
    """Request: configured acceleration of later moves (rad/s² or m/s²)."""
    POSITION = "position"
    """Commands ``position`` / ``positions``: profiled moves to a position."""
    SPEED = "speed"
    """Commands ``speed`` / ``speeds``: profiled moves at a speed."""
    HOME = "home"
    """Command ``home``: move to the home position of the geometry."""
    CURRENT = "current"
    """Commands ``current`` / ``currents``: drive with a current (A)."""
    IMPEDANCE = "impedance"
    """Command ``impedance``: Honey Badger's per-joint kp, kd, position, velocity, torque, brake."""


ALL_CAPABILITIES: frozenset[Capability] = frozenset(Capability)
"""Every capability (a driver that implements the whole API)."""
