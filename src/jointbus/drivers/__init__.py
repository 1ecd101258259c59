"""jointbus.drivers — the actuator-array device API and its drivers.

Where it sits: above :mod:`jointbus.model` and :mod:`jointbus.messages`, below the bridge node.
:func:`open` turns a URL into a driver — ``sim://arm6`` (the bundled simulated arm),
``sim://path/to/robot.yaml`` (a user's robot file, YAML or URDF), ``can://...`` (MIT-mode CAN
motors) — through :data:`~jointbus.drivers.registry.DEFAULT_REGISTRY`;
every driver is an :class:`ActuatorArray` with Player's ``actarray`` semantics (see
:mod:`jointbus.drivers.actuator_array`). Driver modules are imported only when their scheme is
opened, so importing this package pulls in neither python-can nor the simulator.

Example::

    from jointbus import drivers

    with drivers.open("sim://arm6?realtime=false") as arm:
        arm.power(True)
        arm.position("elbow", 1.0)
        arm.step(2.0)
        print(arm.read().actuators[2].position)
"""

from __future__ import annotations

from jointbus.drivers.actuator_array import (
    ActuatorArray,
    ActuatorArrayConfig,
    ActuatorArrayConfigError,
    ImpedanceTargets,
    JointReading,
    RawReading,
)
from jointbus.drivers.array_state import actuator_states, array_state
from jointbus.drivers.calibration import Calibration
from jointbus.drivers.capabilities import ALL_CAPABILITIES, Capability
from jointbus.drivers.chain_kinematics import ChainKinematics
from jointbus.drivers.errors import (
    DriverClosedError,
    DriverError,
    DriverFileError,
    DriverIOError,
    DriverLoadError,
    DriverNotFoundError,
    DriverURLError,
    MotionTimeoutError,
    RejectReason,
    RequestRejected,
    UnknownArrayJointError,
)
from jointbus.drivers.impedance import ImpedanceCommand
from jointbus.drivers.limits import JointLimits, LimitPolicy, Saturation
from jointbus.drivers.registry import DEFAULT_REGISTRY, DriverRegistry, DriverURL

# The flags of every reading's ``state`` (MOVING, STALE, ...): the message layer's enum, exported
# here too so that a program using the driver API needs one import.
from jointbus.messages.actarray.state import ActuatorState

__all__ = [
    "ALL_CAPABILITIES",
    "DEFAULT_REGISTRY",
    "ActuatorArray",
    "ActuatorArrayConfig",
    "ActuatorArrayConfigError",
    "ActuatorState",
    "Calibration",
    "Capability",
    "ChainKinematics",
    "DriverClosedError",
    "DriverError",
    "DriverFileError",
    "DriverIOError",
    "DriverLoadError",
    "DriverNotFoundError",
    "DriverRegistry",
    "DriverURL",
    "DriverURLError",
    "ImpedanceCommand",
    "ImpedanceTargets",
    "JointLimits",
    "JointReading",
    "LimitPolicy",
    "MotionTimeoutError",
    "RawReading",
    "RejectReason",
    "RequestRejected",
    "Saturation",
    "UnknownArrayJointError",
    "actuator_states",
    "array_state",
    "open",
]


def open(url: str, registry: DriverRegistry | None = None) -> ActuatorArray:
    """Open the actuator array at ``url`` (``sim://arm6``, ``can://socketcan/can0?...``).

    Raises :class:`DriverURLError` for a malformed URL or unknown option,
    :class:`DriverNotFoundError` for an unknown scheme (listing the known ones) and
    :class:`DriverLoadError` when a driver's module fails to import. ``registry`` defaults to
    :data:`DEFAULT_REGISTRY`.
    """
    return (registry or DEFAULT_REGISTRY).open(url)
