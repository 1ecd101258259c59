"""Namesakes: is a node of the same fully qualified name already alive on the bus?

Where it sits: :mod:`jointbus.runtime`, on top of :mod:`jointbus.bus` (its local topic table and
the ROS 2 graph of :mod:`jointbus.bus.ros_graph`); :class:`jointbus.runtime.node.Node` asks it
before it announces anything, and refuses to start when the answer is yes.

Why: two bridges on one robot publish ``/hb50/bridge_data`` twice, two control nodes command one
robot, a second ``jointbus serve sim://arm6`` answers ``bus://arm6`` clients meant for the first.
Nothing on the wire tells their subscribers apart by node name, so the only safe place to stop the
mistake is the second node's start.

What counts as the same node (a *namesake*):

- a jointbus node: a publisher of ``/<namespace>/heartbeat`` owned by a node of the same name
  (every :class:`~jointbus.runtime.node.Node` has one from construction to shutdown), in this
  process (the bus's topic table) or in another (its ``MP`` graph token);
- a ROS 2 node of the same name in namespace ``/<namespace>`` (its ``NN`` graph token, which a
  jointbus node announces in its namespace too; only a non-empty namespace is compared this way).

Restarts: a SIGKILLed process's graph tokens disappear only when Zenoh notices the closed link,
0.1–1.5 s later. A namesake seen in another process is therefore watched for up to
:data:`NAMESAKE_VANISH_S`; only one still alive then is reported. A node starting with no namesake
pays one graph query: :data:`NAMESAKE_DISCOVERY_S` at most, ≈ 0.2 s (the graph settle time of
:meth:`jointbus.bus.zenoh_transport.ZenohTransport.graph`).
"""

from __future__ import annotations

import time
from typing import Final

from jointbus.bus import Bus
from jointbus.bus.ros_graph import GraphEntity, node_name_of

#: How long a node waits for a namesake in another process to leave the network (s): longer than
#: the 1.5 s a SIGKILLed process's tokens take to disappear at worst, so a restart is not refused.
NAMESAKE_VANISH_S: Final = 2.0
#: Upper bound of one look at the graph (s).
NAMESAKE_DISCOVERY_S: Final = 0.5


def _is_namesake(entity: GraphEntity, node: str, namespace: str, heartbeat_topic: str) -> bool:
    if entity.kind == "MP":
        return entity.node == node and entity.topic == heartbeat_topic
    if entity.kind == "NN" and namespace:
        return entity.node == node and entity.namespace == f"/{namespace}"
    return False


def remote_namesakes(bus: Bus, name: str, namespace: str, heartbeat_topic: str) -> list[str]:
    """Participant ids (sorted: Zenoh session ids, DDS participant GUIDs) of other processes that
    run a node ``name`` in ``namespace`` now (one graph query, see the module docstring); empty
    without a network."""
    transport = bus.transport
    if transport is None:
        return []
    node = node_name_of(name)
    return sorted(
        {
            e.zid
            for e in transport.graph(NAMESAKE_DISCOVERY_S)
            if _is_namesake(e, node, namespace, heartbeat_topic)
        }
    )


def local_namesake(bus: Bus, name: str, heartbeat_topic: str) -> bool:
    """True when a node ``name`` with that heartbeat topic already runs on ``bus`` (this
    process)."""
    return any(p.node == name and not p.closed for p in bus.local_publishers(heartbeat_topic))


def live_namesakes(
    bus: Bus,
    name: str,
    namespace: str,
    heartbeat_topic: str,
    *,
    vanish_s: float = NAMESAKE_VANISH_S,
) -> list[str]:
    """Where a node ``name`` in ``namespace`` still runs after waiting up to ``vanish_s`` s for
    namesakes in other processes to leave (a restart): ``"this process"`` and/or ``"Zenoh
    session <zid>"`` entries; empty when the name is free."""
    if local_namesake(bus, name, heartbeat_topic):
        return ["this process"]
    found = remote_namesakes(bus, name, namespace, heartbeat_topic)
    deadline = time.monotonic() + vanish_s
    while found and time.monotonic() < deadline:
        time.sleep(0.05)
        found = remote_namesakes(bus, name, namespace, heartbeat_topic)
    transport = bus.transport
    noun = transport.PEER_NOUN if transport is not None else "session"
    return [f"{noun} {zid}" for zid in found]


__all__ = [
    "NAMESAKE_DISCOVERY_S",
    "NAMESAKE_VANISH_S",
    "live_namesakes",
    "local_namesake",
    "remote_namesakes",
]
