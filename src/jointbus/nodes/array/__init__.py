"""The array node: one node that serves any actuator array on the bus (``jointbus serve URL``).

Where it sits: :mod:`jointbus.nodes`, above drivers, runtime and bus; it reuses the hb50 bridge's
generic safety components (:mod:`jointbus.robots.hb50.bridge`). :class:`ArrayNode` (:mod:`.node`)
is the server of Player's server/client pair; the ``bus://`` driver (:mod:`jointbus.drivers.bus`) is
the client.
"""

from jointbus.nodes.array.node import DEFAULT_SOURCE, ArrayNode, ArrayNodeConfig

__all__ = ["DEFAULT_SOURCE", "ArrayNode", "ArrayNodeConfig"]
