"""How a bus joins the Zenoh network: loopback peer by default, explicit endpoints, a router.

Where it sits: :mod:`jointbus.bus`, read by :mod:`jointbus.bus.zenoh_transport`. Plain frozen data,
so the CLI and configuration files can build and print it without opening anything.

Default scheme (``ZenohConfig()``), chosen so that ``make demo`` in one terminal and
``jointbus topic echo /hb50/bridge_data`` in another find each other with no configuration and
without touching any network interface but loopback:

1. The first jointbus process on the host becomes the *hub*: it listens on
   ``tcp/127.0.0.1:7447`` (``hub_port``).
2. A later process finds that port taken, so it listens on an ephemeral loopback port
   (``tcp/127.0.0.1:0``) and connects to the hub.
3. Gossip scouting (over existing links, never multicast) tells peers about each other, so they
   form a full mesh and keep talking if the hub exits.
4. When the hub exits, one of the processes that joined it takes over the hub port within about
   a second (:mod:`jointbus.bus.hub_relay`), so a tool started later still finds the others.

On a ROS 2 host ``rmw_zenohd`` owns port 7447: every jointbus process then takes step 2 and joins
that router, as ROS 2 nodes do, and the router routes between both (``docs/ROS2.md``; start the
router first — a jointbus hub is a peer and does not route for others). ``domain_id`` (default:
``ROS_DOMAIN_ID``, else 0) is the ROS domain all keys and graph tokens carry.

Multicast scouting is off unless ``multicast_scouting=True``: a robot should not discover (and be
discovered by) whatever else is on the LAN by accident. Explicit ``listen`` endpoints replace the
scheme (``connect`` endpoints are added to either). For several hosts, either give each peer
``listen``/``connect`` endpoints on the robot's network, or run a Zenoh router (``zenohd``) and use
``ZenohConfig.for_router("tcp/192.168.1.10:7447")`` (client mode: the router routes).

Zenoh's shared-memory transport is off by default: payloads under ~3 KB go over TCP anyway, and a
process that dies without closing its session leaves files in ``/dev/shm``.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from jointbus.bus.errors import BusError, ZenohConfigError
from jointbus.bus.names import check_domain_id, domain_id_from_env

#: The hub's well-known loopback port (Zenoh's and rmw_zenohd's default port: a local router on it
#: also works, since a process that cannot listen there connects to whatever owns it).
DEFAULT_HUB_PORT: Final = 7447
_FAST_RETRY: Final = '{"period_init_ms": 100, "period_max_ms": 500, "period_increase_factor": 2}'
#: How long (µs) a publication waits for room in the queue towards a peer that has stopped reading
#: before Zenoh gives up: best-effort samples are dropped at once (Zenoh's default waits 1 ms
#: each), and a reliable publication waits at most 50 ms before Zenoh closes the link to that
#: peer (its default waits 5 s). Why: a stopped reader — a recorder or monitor under SIGSTOP, a
#: tool on a starved host — fills its queue within seconds, and with the defaults every process
#: publishing to it stalled: a `jointbus record` of every topic stopped for 10 s held the demo's
#: bridge loop at 251 Hz (49.9 % of its cycles skipped, 1 ms of waiting per best-effort sample)
#: and took the robot's state off the bus for 9.7 s (measured 2026-12-04). With these values the
#: same test cost the bridge 0.5 % of the cycles of that 10 s window (one stall of ≈ 50 ms;
#: ``bridge_data`` at 476 Hz for one second) and nothing more — with 100 ms, one 42 ms stall
#: (1.4 %); the stopped reader loses what it missed (its reliable losses are counted and shown, as
#: ``jointbus record`` does) and reconnects when it runs again. 50 ms is half the walking
#: fallback's 100 ms command silence and a fifth of the watchdog's 250 ms. A reader merely slow
#: for a moment is not cut off: the queue (two 64 KiB batches per priority, after the socket's
#: buffer) is full only after it has read nothing for far longer.
DROP_WAIT_US: Final = 0
BLOCK_WAIT_BEFORE_CLOSE_US: Final = 50_000

_ENDPOINT = re.compile(r"(tcp|udp|tls|quic|ws|unixsock-stream|unixpipe)/\S+\Z")


def _split_locator(endpoint: str) -> tuple[str, str, str]:
    """``scheme/address`` and what follows it (``?metadata`` or ``#config``), with the mark."""
    cut = min((i for i in (endpoint.find("?"), endpoint.find("#")) if i >= 0), default=-1)
    if cut < 0:
        return endpoint, "", ""
    return endpoint[:cut], endpoint[cut], endpoint[cut + 1 :]


def _endpoints(name: str, value: object) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, (tuple, list)):
        raise ZenohConfigError(f"{name} must be a list of endpoints, got {value!r}")
    for endpoint in value:
        if not isinstance(endpoint, str) or not _ENDPOINT.match(endpoint):
            raise ZenohConfigError(
                f"{name} endpoint {endpoint!r} is not a Zenoh locator; expected e.g. "
                "'tcp/127.0.0.1:7447'"
            )
    return tuple(value)


@dataclass(frozen=True, slots=True)
class ZenohConfig:
    """Zenoh session settings of a bus (see the module docstring for the default scheme).

    ``options`` are extra ``(key, json5 value)`` pairs passed to ``zenoh.Config.insert_json5``
    last, for settings this class does not name. ``domain_id`` is the ROS domain (``None``: from
    ``ROS_DOMAIN_ID``, default 0); only participants of the same domain see each other.
    ``hub_relay``: whether a process that joined another jointbus process's hub as a peer takes
    over the hub port once that process has left (:mod:`jointbus.bus.hub_relay`); a launcher's
    children leave it to the launcher (:meth:`for_sibling`), their loops being real-time.
    """

    listen: tuple[str, ...] | None = None
    connect: tuple[str, ...] = ()
    router: str | None = None
    multicast_scouting: bool = False
    gossip_scouting: bool = True
    shared_memory: bool = False
    hub_port: int = DEFAULT_HUB_PORT
    options: tuple[tuple[str, str], ...] = field(default=())
    domain_id: int | None = None
    hub_relay: bool = True

    def __post_init__(self) -> None:
        if self.listen is not None:
            object.__setattr__(self, "listen", _endpoints("listen", self.listen))
        object.__setattr__(self, "connect", _endpoints("connect", self.connect))
        if self.router is not None:
            _endpoints("router", [self.router])
        if self.domain_id is not None:
            try:
                check_domain_id(self.domain_id)
            except BusError as exc:
                raise ZenohConfigError(f"domain_id: {exc}") from None
        if type(self.hub_port) is not int or not 1 <= self.hub_port <= 65535:
            raise ZenohConfigError(f"hub_port must be an int in [1, 65535], got {self.hub_port!r}")
        for flag in ("multicast_scouting", "gossip_scouting", "shared_memory", "hub_relay"):
            if type(getattr(self, flag)) is not bool:
                raise ZenohConfigError(f"{flag} must be a bool, got {getattr(self, flag)!r}")
        for option in self.options:
            if not (
                isinstance(option, tuple)
                and len(option) == 2
                and all(isinstance(x, str) for x in option)
            ):
                raise ZenohConfigError(
                    f"options entries are (key, json5) str pairs, got {option!r}"
                )

    def to_json(self) -> str:
        """These settings as JSON text (:meth:`from_json` reads them back): how a launcher hands
        its Zenoh settings to the processes it starts."""
        return json.dumps(
            {
                "listen": None if self.listen is None else list(self.listen),
                "connect": list(self.connect),
                "router": self.router,
                "multicast_scouting": self.multicast_scouting,
                "gossip_scouting": self.gossip_scouting,
                "shared_memory": self.shared_memory,
                "hub_port": self.hub_port,
                "options": [list(option) for option in self.options],
                "domain_id": self.domain_id,
                "hub_relay": self.hub_relay,
            }
        )

    @classmethod
    def from_json(cls, text: str) -> ZenohConfig:
        """Settings from :meth:`to_json`'s text (ZenohConfigError if they are not valid)."""
        try:
            fields = json.loads(text)
        except ValueError as exc:
            raise ZenohConfigError(f"Zenoh settings are not JSON: {exc}") from None
        if not isinstance(fields, dict):
            raise ZenohConfigError(f"Zenoh settings {text!r}: expected a JSON object")
        listen = fields.pop("listen", None)
        try:
            return cls(
                listen=None if listen is None else tuple(listen),
                connect=tuple(fields.pop("connect", ())),
                options=tuple(tuple(option) for option in fields.pop("options", ())),
                **fields,
            )
        except TypeError as exc:
            raise ZenohConfigError(f"Zenoh settings {text!r}: {exc}") from None

    @classmethod
    def for_router(cls, endpoint: str, **kwargs: Any) -> ZenohConfig:
        """Client mode through a Zenoh router at ``endpoint`` (multi-host deployments)."""
        return cls(router=endpoint, **kwargs)

    @classmethod
    def loopback(
        cls, listen_port: int | None = None, connect_ports: tuple[int, ...] = ()
    ) -> ZenohConfig:
        """Peer on 127.0.0.1 with explicit ports (``listen_port=None``: an ephemeral one)."""
        return cls(
            listen=(f"tcp/127.0.0.1:{listen_port or 0}",),
            connect=tuple(f"tcp/127.0.0.1:{p}" for p in connect_ports),
        )

    @property
    def domain(self) -> int:
        """The ROS domain id keys and tokens use: ``domain_id``, else ``ROS_DOMAIN_ID``, else 0
        (raises ZenohConfigError for a malformed ``ROS_DOMAIN_ID``)."""
        if self.domain_id is not None:
            return self.domain_id
        try:
            return domain_id_from_env()
        except BusError as exc:
            raise ZenohConfigError(str(exc)) from None

    @property
    def mode(self) -> Literal["peer", "client"]:
        """``client`` with a router, else ``peer``."""
        return "client" if self.router is not None else "peer"

    @property
    def where(self) -> str:
        """Where a session with these settings looks for the others, for every message that must
        say where it looked ("nothing there" errors, duplicate-node refusals): ``hub port 7447,
        domain 0``, ``router tcp/10.0.0.2:7447, domain 3``, plus any ``connect`` endpoints."""
        if self.router is not None:
            parts = [f"router {self.router}"]
        elif self.listen is not None:
            parts = [f"listening on {', '.join(self.listen)}"] if self.listen else []
        else:
            parts = [f"hub port {self.hub_port}"]
        if self.connect:
            parts.append(f"connect {', '.join(self.connect)}")
        try:
            parts.append(f"domain {self.domain}")
        except ZenohConfigError:
            parts.append("domain unreadable (ROS_DOMAIN_ID)")
        return ", ".join(parts)

    def for_sibling(self) -> ZenohConfig:
        """Settings for another process of the same program on this host (a launcher's child),
        when these settings name explicit ``listen`` endpoints: the first process holds them, so
        a second listening there fails ("Address already in use"). The sibling listens on the
        same hosts with the same scheme (TLS stays TLS) at ephemeral ports — reachable wherever
        the first is, so gossip gives remote peers a direct link to it too — and connects to the
        first's endpoints. A router's settings already let several processes share them:
        returned unchanged. In the default scheme the sibling joins the hub port as the first
        does, but leaves taking over that port (``hub_relay``) to the first. Raises
        :class:`ZenohConfigError` for a listen endpoint without a ``host:port`` to move (a Unix
        socket path)."""
        if self.router is None and self.listen is None:
            return dataclasses.replace(self, hub_relay=False)
        if self.router is not None or not self.listen:
            return self
        moved = []
        for endpoint in self.listen:
            locator, sep, rest = _split_locator(endpoint)
            scheme, _, address = locator.partition("/")
            host, colon, port = address.rpartition(":")
            if not colon or not host or not port.isdigit():
                raise ZenohConfigError(
                    f"listen endpoint {endpoint!r} has no host:port: the processes of one program "
                    "cannot share it; give host:port endpoints or run everything in one process"
                )
            moved.append(f"{scheme}/{host}:0{sep}{rest}")
        connect = (*self.connect, *(e for e in self.listen if e not in self.connect))
        return dataclasses.replace(self, listen=tuple(moved), connect=connect)

    @property
    def hub_endpoint(self) -> str:
        """The default scheme's hub locator."""
        return f"tcp/127.0.0.1:{self.hub_port}"

    def attempts(self) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
        """``(listen, connect)`` pairs to try in order (the default scheme has two)."""
        if self.router is not None:
            return [((), (self.router, *self.connect))]
        if self.listen is not None:
            return [(self.listen, self.connect)]
        return [
            ((self.hub_endpoint,), self.connect),
            (("tcp/127.0.0.1:0",), (*self.connect, self.hub_endpoint)),
        ]

    def json5_items(
        self, listen: tuple[str, ...], connect: tuple[str, ...]
    ) -> list[tuple[str, str]]:
        """The ``insert_json5`` pairs of one attempt (exposed for tests and ``--verbose``)."""
        items = [
            ("mode", json.dumps(self.mode)),
            ("scouting/multicast/enabled", json.dumps(self.multicast_scouting)),
            ("scouting/gossip/enabled", json.dumps(self.gossip_scouting)),
            ("transport/shared_memory/enabled", json.dumps(self.shared_memory)),
            # rmw_zenoh's session default: zenoh-ext's transient-local caches of best-effort
            # publishers order their samples by timestamp and refuse to start without it.
            ("timestamping/enabled", "true"),
            ("listen/endpoints", json.dumps(list(listen))),
            ("connect/endpoints", json.dumps(list(connect))),
            # Zenoh's default retries a lost link after 1 s, 2 s, then every 4 s, so a peer or
            # router back after a few seconds was found up to 3.9 s later (measured). 100 ms
            # doubling to 500 ms keeps recovery within 0.5 s of the restart: the 2 s bound.
            ("connect/retry", _FAST_RETRY),
            # a peer that stops reading must not stall the publishers (DROP_WAIT_US)
            (
                "transport/link/tx/queue/congestion_control/drop/wait_before_drop",
                json.dumps(DROP_WAIT_US),
            ),
            (
                "transport/link/tx/queue/congestion_control/block/wait_before_close",
                json.dumps(BLOCK_WAIT_BEFORE_CLOSE_US),
            ),
        ]
        items.extend(self.options)
        return items


__all__ = ["DEFAULT_HUB_PORT", "ZenohConfig"]
