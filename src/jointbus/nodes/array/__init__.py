"""The array node: one node that serves any actuator array on the bus (``jointbus serve URL``).

Where it sits: :mod:`jointbus.nodes`, above drivers, runtime and bus, built from the safety
components of :mod:`jointbus.nodes.safety`. :class:`ArrayNode` (:mod:`.node`) is the server of
Player's server/client pair; the ``bus://`` driver (:mod:`jointbus.drivers.bus`) is the client. A
robot's bridge is this node plus the robot's message adapter (hb50's
:class:`~jointbus.robots.hb50.bridge.BridgeNode`).
"""

from jointbus.nodes.array.node import (
    DEFAULT_SOURCE,
    ArrayNode,
    ArrayNodeConfig,
    ImpedanceInput,
    RefusedSample,
    StreamMode,
)

__all__ = [
    "DEFAULT_SOURCE",
    "ArrayNode",
    "ArrayNodeConfig",
    "ImpedanceInput",
    "RefusedSample",
    "StreamMode",
]
