"""The bridge node: the only node that talks to the actuators (Honey Badger 5.0's ``bridge_node``).

Where it sits: :mod:`jointbus.robots.hb50`, above the generic nodes: it is the generic array node
(:class:`~jointbus.nodes.array.ArrayNode`) plus hb50's message adapter. Each cycle (500 Hz) it
reads the actuator array, publishes ``BridgeData`` and ``BridgeState`` (and the array node's Beam
Bots / Player / Rock topics at 100 Hz while someone listens), and applies the current joint
command. The decisions are made by the generic safety components of :mod:`jointbus.nodes.safety`,
each with its own tests and none reading a clock:

- :class:`CommandCheck` — rejects a command whole (source, order, length, NaN/inf, limits);
- :class:`Arbiter` — which source owns the actuators (default controller or a ≥ 10 Hz custom one);
- :class:`Watchdog` — no valid command for 250 ms → safe mode (damping only);
- :class:`EStopLatch` — latched e-stop, explicit reset, hold of the measured position after it;
- :class:`ReentryRamp` — when commands apply again (after a reset, safe mode, a drive-on, an owner
  change, a brake release), a target far from the measured pose is ramped to from there;
- :class:`ThermalGuard` — temperature WARN, torque derating, drive off at shutdown.

The watchdog time, thermal thresholds and arbitration threshold are live parameters
(:data:`BRIDGE_PARAMETERS`), retuned at the start of a cycle (see :mod:`.node`).

:class:`BridgeNode` (:mod:`.node`) is the array node with hb50's wire types, hardware commands and
live parameters.
"""

from jointbus.robots.hb50.bridge.node import (
    BRIDGE_PARAMETERS,
    HARDWARE_COMMANDS,
    SAFE_KD,
    BridgeConfig,
    BridgeMode,
    BridgeNode,
)

__all__ = [
    "BRIDGE_PARAMETERS",
    "HARDWARE_COMMANDS",
    "SAFE_KD",
    "BridgeConfig",
    "BridgeMode",
    "BridgeNode",
]
