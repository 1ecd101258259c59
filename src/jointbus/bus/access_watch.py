"""Who the access rules deny: a peer announcing a publisher or client it may not use, reported once.

Where it sits: :mod:`jointbus.bus`, owned by :class:`jointbus.bus.zenoh_transport.ZenohTransport`
when its session holds access rules (``ZenohAccessControl`` in the config's options) that
:class:`jointbus.bus.access_roles.AccessPolicy` can read. It is told every remote graph entity
(:mod:`jointbus.bus.ros_graph`) and the certificate name of every link.

Why from the graph: Zenoh drops a denied message inside its router and tells the application
nothing (the Python wheels count no drops and log them at ``trace`` level only). But a ROS 2 or
jointbus peer announces what it does before doing it: an ``MP`` token for each publisher, an ``SC``
token for each service client. A token whose data key the rules would drop *from that peer*
(``put`` for a publisher, ``query`` for a client, evaluated as Zenoh does, by the certificate
common name of the peer's link) is therefore a denied publication or call, reported once per
session, action and name as an :class:`~jointbus.bus.events.AccessDeniedEvent`: to one local
subscriber of that topic (the first that reports its events: a runtime node puts it on its status
topic) or the local server of that service. A process with neither leaves the report to the
session that announces one (the graph shows it; every process of a robot holds the rules, and on
the robot's host its processes are linked to the same peers), and logs it as a warning only when
no session announces a subscriber or server of that name. Why: each process of a robot checks the
same announcement, and the demo's console printed one denial three times — the bridge's status
report, the control process's warning and the launcher's. A raw Zenoh session that puts without
announcing anything is still dropped by Zenoh, but not reported.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Final, Literal, cast

import zenoh

from jointbus.bus.access_roles import AccessPolicy
from jointbus.bus.events import AccessDeniedEvent
from jointbus.bus.names import data_key
from jointbus.bus.ros_graph import GraphEntity
from jointbus.bus.zenoh_security import ACCESS_CONTROL_KEY

if TYPE_CHECKING:
    from jointbus.bus.zenoh_transport import ZenohTransport

__all__ = ["AccessWatch", "policy_of"]

_LOG = logging.getLogger("jointbus.bus.access")
#: What a graph entity kind announces: (Zenoh message checked, how the report says it).
_ACTIONS: Final[dict[str, tuple[str, Literal["publishes", "calls"]]]] = {
    "MP": ("put", "publishes"),
    "SC": ("query", "calls"),
}
#: The graph entity that reports a denied one: a topic's subscriber, a service's server.
_OWNER_KIND: Final = {"MP": "MS", "SC": "SS"}


def policy_of(options: tuple[tuple[str, str], ...]) -> AccessPolicy | None:
    """The access policy among a Zenoh config's options (the last block wins), if readable."""
    texts = [value for key, value in options if key == ACCESS_CONTROL_KEY]
    if not texts:
        return None
    policy = AccessPolicy.parse(texts[-1])
    if policy is None:
        _LOG.warning(
            "the access rules are not JSON after their comment lines: Zenoh enforces them, but "
            "denied peers cannot be reported (rules from `jointbus security rules` can)"
        )
    return policy


class AccessWatch:
    """Decides, for each announced remote publisher and client, whether the rules deny it."""

    def __init__(self, transport: ZenohTransport, policy: AccessPolicy) -> None:
        self._transport = transport
        self._policy = policy
        self._lock = threading.Lock()
        self._reported: set[tuple[str, str, str]] = set()
        self._quiet_for_hidden: frozenset[str] = frozenset()
        #: zid → (certificate common name or None, link protocol), from the link events.
        self._peers: dict[str, tuple[str | None, str]] = {}
        self._listener = transport.session.info.declare_link_events_listener(
            self._on_link, history=True
        )

    def _on_link(self, event: zenoh.LinkEvent) -> None:
        link = event.link
        zid = str(link.zid)
        with self._lock:
            if event.kind == zenoh.SampleKind.DELETE:
                self._peers.pop(zid, None)
            else:
                self._peers[zid] = (link.auth_identifier, str(link.dst).split("/", 1)[0])

    def peer(self, zid: str) -> tuple[str | None, str] | None:
        """``(certificate name, protocol)`` of the link to session ``zid`` (None: no link)."""
        with self._lock:
            known = self._peers.get(zid)
        if known is not None:
            return known
        for link in self._transport.session.info.links():  # an event not yet delivered
            if str(link.zid) == zid:
                return link.auth_identifier, str(link.dst).split("/", 1)[0]
        return None

    def quiet_for_hidden(self, topics: Iterable[str]) -> None:
        """Do not report the denied publishers of ``topics`` that hidden nodes announce (names
        starting with ``_``: command-line tools, as in ROS 2). A runtime node asks this for its
        heartbeat and status topics: a tool's heartbeat and status are its own bookkeeping, not
        commands (the bridge's supervisor does not even watch hidden nodes), so a watch-only
        ``jointbus node list`` or monitor — whose node announces both — takes nothing from the
        robot, and reporting it would be a false alarm. Their commands are still reported."""
        with self._lock:
            self._quiet_for_hidden = self._quiet_for_hidden | frozenset(topics)

    def saw(self, entity: GraphEntity) -> None:
        """A remote graph entity appeared: report it if the rules deny what it announces."""
        action = _ACTIONS.get(entity.kind)
        if action is None:
            return
        if entity.kind == "MP" and entity.node.startswith("_"):
            with self._lock:
                if entity.topic in self._quiet_for_hidden:
                    return
        message, verb = action
        link = self.peer(entity.zid)
        if link is None:
            return  # not a direct link (a router's other clients): that router's rules decide
        certificate, protocol = link
        subjects = self._policy.subjects_of(certificate, protocol, entity.zid)
        if subjects is None:
            return  # matched on what Python cannot see (interfaces, user names)
        key = data_key(self._transport.domain_id, entity.topic, entity.type_name, entity.type_hash)
        if self._policy.allows(subjects, "ingress", message, key):
            return
        with self._lock:
            # Once per session (zid), not per certificate: a second attempt from a new process
            # is news; a program that reconnects is reported per connection.
            once = (entity.zid, verb, entity.topic)
            if once in self._reported:
                return
            self._reported.add(once)
        self._deliver(
            AccessDeniedEvent(entity.topic, "", certificate, entity.zid, verb, tuple(subjects)),
            entity,
        )

    def _deliver(self, event: AccessDeniedEvent, entity: GraphEntity) -> None:
        """Report ``event`` once in this process (see the module docstring): to one local
        subscriber (one that reports its events before one that does not; each node of a
        process that subscribes the topic reported it on its status before) or the local
        server; else nowhere when another session announces a subscriber or server of the name
        (its process reports it), else as a logged warning."""
        bus = self._transport.bus
        if entity.kind == "MP":
            subscribers = bus.local_subscribers(entity.topic)
            if subscribers:
                sub = next((s for s in subscribers if s.on_event is not None), subscribers[0])
                sub._emit(_to(event, sub.label))
                return
        else:
            server = bus.local_server(entity.topic)
            if server is not None:
                server.note_refusal(event.describe())
                return
        owner = _OWNER_KIND[entity.kind]
        for other in self._transport.graph_entities():
            if other.kind == owner and other.topic == entity.topic:
                _LOG.debug("%s (reported by session %s)", event.describe(), other.zid)
                return
        bus._emit(event, None)  # logged as a warning, and to the bus's event hooks

    def close(self) -> None:
        """Stop listening to link events (no error if the session is closed)."""
        with contextlib.suppress(zenoh.ZError):
            cast(Any, self._listener).undeclare()


def _to(event: AccessDeniedEvent, endpoint: str) -> AccessDeniedEvent:
    return AccessDeniedEvent(
        event.topic, endpoint, event.peer, event.zid, event.action, event.roles
    )
