"""A served array for the ``bus://`` tests: an array node on its own Zenoh session.

Part of :mod:`support` (``from support.array_server import served``). :func:`served` runs ``url``
behind an :class:`ArrayNode` listening on a free loopback port, so a ``bus://NAME?hub_port=PORT``
client in the same or another process reaches it over real Zenoh, exactly as a client reaches
``jointbus serve``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

from jointbus import drivers
from jointbus.bus import Bus, ZenohConfig
from jointbus.drivers.actuator_array import ActuatorArray
from jointbus.nodes.array import ArrayNode, ArrayNodeConfig
from support.bus import free_port


@dataclass
class Served:
    """A running server: its node, array, bus and the ``bus://`` URL that reaches it."""

    node: ArrayNode
    array: ActuatorArray
    bus: Bus
    port: int
    name: str

    def url(self, **options: str) -> str:
        query = "&".join(f"{k}={v}" for k, v in {"hub_port": str(self.port), **options}.items())
        return f"bus://{self.name}?{query}"


@contextlib.contextmanager
def served(url: str, name: str, config: ArrayNodeConfig | None = None) -> Iterator[Served]:
    """Serve ``url`` as ``/name`` on a free loopback port until the block ends."""
    port = free_port()
    with contextlib.ExitStack() as stack:
        array = stack.enter_context(drivers.open(url))
        bus = stack.enter_context(Bus(name=f"server-{name}", zenoh=ZenohConfig(hub_port=port)))
        node = ArrayNode(array, bus, namespace=name, config=config)
        stack.callback(node.shutdown)
        node.start()
        yield Served(node, array, bus, port, name)
