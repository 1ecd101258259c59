"""The safety components of every node that owns actuators: pure, clock-injected decisions.

Where it sits: :mod:`jointbus.nodes`, below the nodes that use them — the generic array node
(:mod:`jointbus.nodes.array`, ``jointbus serve``) and Honey Badger's bridge
(:mod:`jointbus.robots.hb50.bridge`). None reads a clock or talks to the bus, so each is tested on
its own and both nodes share one implementation of every rule:

- :class:`CommandCheck` — rejects an impedance command whole (source, order, length, NaN/inf,
  limits, brakes), and turns an accepted one into the device API's joint-space
  :class:`~jointbus.drivers.impedance.ImpedanceCommand` (the wire message's field names are an
  :class:`ImpedanceFields`), which every component below takes and returns;
- :class:`Arbiter` — which source owns the actuators (the default one, or a custom one at ≥ 10 Hz);
- :class:`Watchdog` — no valid command for 250 ms → safe mode (damping only);
- :class:`EStopLatch` — latched e-stop, explicit reset;
- :class:`ReentryRamp` — when commands apply again (after a reset, safe mode, a drive-on, an owner
  change, a brake release), a target far from the measured pose is ramped to from there;
- :class:`ThermalGuard` — temperature WARN, torque derating, drive off at shutdown.
"""

from jointbus.nodes.safety.arbiter import Arbiter, OwnerChanged, RateMeasure
from jointbus.nodes.safety.command_check import (
    JOINT_IMPEDANCE_FIELDS,
    CommandCheck,
    CommandRejected,
    ImpedanceFields,
    JointOrderError,
    SourceNotAllowedError,
)
from jointbus.nodes.safety.estop import EStopLatch, EStopReset, EStopTriggered
from jointbus.nodes.safety.reentry import ReentryEngaged, ReentryFinished, ReentryRamp
from jointbus.nodes.safety.thermal_guard import ThermalEvent, ThermalGuard, ThermalLevel
from jointbus.nodes.safety.watchdog import (
    SafeModeEntered,
    SafeModeLeft,
    Watchdog,
    WatchdogEvent,
    safe_command,
)

__all__ = [
    "JOINT_IMPEDANCE_FIELDS",
    "Arbiter",
    "CommandCheck",
    "CommandRejected",
    "EStopLatch",
    "EStopReset",
    "EStopTriggered",
    "ImpedanceFields",
    "JointOrderError",
    "OwnerChanged",
    "RateMeasure",
    "ReentryEngaged",
    "ReentryFinished",
    "ReentryRamp",
    "SafeModeEntered",
    "SafeModeLeft",
    "SourceNotAllowedError",
    "ThermalEvent",
    "ThermalGuard",
    "ThermalLevel",
    "Watchdog",
    "WatchdogEvent",
    "safe_command",
]
