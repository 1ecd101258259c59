"""How a bus joins a DDS domain: loopback by default, opened to a network only when told.

Where it sits: :mod:`jointbus.bus`, read by :mod:`jointbus.bus.dds_transport`. Plain frozen data
(no DDS is loaded here), so the CLI can build and print it without joining anything.

DDS discovers its peers by multicast on the host's network unless told otherwise; a robot's bus
should not be found (nor find anything) on the LAN by accident, as jointbus's Zenoh is not. So the
default here is ROS 2's ``LOCALHOST`` discovery range, pinned to the loopback interface:

- **LOCALHOST** (the default when nothing is set, and ``ROS_LOCALHOST_ONLY=1``): Cyclone DDS uses
  the loopback interface only (``127.0.0.1``: every locator it advertises and every address it
  sends to), multicast is off, and participants find each other by unicast discovery on
  ``127.0.0.1`` (participant indices 0–31, as rmw_cyclonedds configures it). Static peers
  (``ROS_STATIC_PEERS``) are added as rmw_cyclonedds adds them; with any given, the interface is not
  pinned (a peer on another host must be reachable).
  Cyclone DDS binds its two unicast receive sockets to the wildcard address when it uses a single
  interface (its ``make_uc_sockets``: per-interface binding only with several), so a program that
  knows the port number can still send to them from another host; nothing is advertised or sent
  beyond loopback (``tests/bus/test_dds_config.py`` checks the process's sockets).
- **SUBNET** (``ROS_AUTOMATIC_DISCOVERY_RANGE=SUBNET``): opens the bus to the network as a stock
  ROS 2 Jazzy machine is — multicast discovery on Cyclone's chosen interface, plus static peers.
- **SYSTEM_DEFAULT**: Cyclone DDS's own defaults, untouched.
- **OFF**: no discovery beyond this process (a domain tag only this process knows), as rmw does.

jointbus's participants have a 1.5 s lease (:data:`LEASE_DURATION_S`; Cyclone's default is 10 s)
in every range but SYSTEM_DEFAULT, so a killed process's nodes leave the graph as fast as over
Zenoh. A user's ``CYCLONEDDS_URI`` (a file URI or XML) is appended after these settings, as
rmw_cyclonedds appends it, so anything it sets wins. The ROS domain is ``domain_id``, else
``ROS_DOMAIN_ID``, else 0.
"""

from __future__ import annotations

import enum
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final
from xml.sax.saxutils import quoteattr

from jointbus.bus.errors import BusError, DdsConfigError
from jointbus.bus.names import check_domain_id, domain_id_from_env
from jointbus.bus.rmw import CYCLONEDDS_RMW, DDS_RMWS

#: ROS 2's discovery range variable (Jazzy and later).
RANGE_ENV: Final = "ROS_AUTOMATIC_DISCOVERY_RANGE"
#: ROS 2's older switch to loopback (Humble; Jazzy still honours it).
LOCALHOST_ONLY_ENV: Final = "ROS_LOCALHOST_ONLY"
#: ROS 2's static peers (``;``-separated host names or addresses).
STATIC_PEERS_ENV: Final = "ROS_STATIC_PEERS"
#: Cyclone DDS's own configuration variable (a file URI or XML).
CYCLONEDDS_URI_ENV: Final = "CYCLONEDDS_URI"
#: The loopback address every default-configured participant uses.
LOOPBACK: Final = "127.0.0.1"
#: Highest participant index unicast discovery probes on a host (rmw_cyclonedds's value): at most
#: this many + 1 participants (processes with a bus) per host and domain find each other.
MAX_AUTO_PARTICIPANT_INDEX: Final = 32
#: The lease of jointbus's participants (s): how long after a process dies without saying goodbye
#: (SIGKILL, power loss) the others drop its endpoints and nodes. Cyclone's default is 10 s, which
#: would refuse a restarted bridge as a namesake of its dead predecessor for that long; 1.5 s
#: matches jointbus's heartbeat timeout and the namesake check's 2 s wait.
LEASE_DURATION_S: Final = 1.5

_PEER = re.compile(r"[A-Za-z0-9_.:\-\[\]]+\Z")


class DiscoveryRange(enum.Enum):
    """ROS 2's ``ROS_AUTOMATIC_DISCOVERY_RANGE`` values."""

    LOCALHOST = "LOCALHOST"
    SUBNET = "SUBNET"
    SYSTEM_DEFAULT = "SYSTEM_DEFAULT"
    OFF = "OFF"


def range_from_env(environ: Mapping[str, str] | None = None) -> DiscoveryRange:
    """The discovery range the environment asks for: LOCALHOST when ``ROS_LOCALHOST_ONLY=1`` (it
    wins over the range, as in rcl), else ``ROS_AUTOMATIC_DISCOVERY_RANGE``, else LOCALHOST
    (jointbus's default: only an explicit range opens the bus). Raises DdsConfigError for an
    unknown range."""
    env = os.environ if environ is None else environ
    raw = env.get(RANGE_ENV, "").strip().upper()
    if not raw or env.get(LOCALHOST_ONLY_ENV, "").strip() == "1":
        return DiscoveryRange.LOCALHOST
    try:
        return DiscoveryRange(raw)
    except ValueError:
        choices = ", ".join(r.value for r in DiscoveryRange)
        raise DdsConfigError(f"{RANGE_ENV}={raw!r}: expected one of {choices}") from None


def peers_from_env(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """``ROS_STATIC_PEERS`` split on ``;`` (empty entries dropped)."""
    env = os.environ if environ is None else environ
    return tuple(p.strip() for p in env.get(STATIC_PEERS_ENV, "").split(";") if p.strip())


@dataclass(frozen=True, slots=True)
class DdsConfig:
    """DDS settings of a bus (see the module docstring for what each range does).

    ``None`` fields come from the environment when the bus joins: ``domain_id`` from
    ``ROS_DOMAIN_ID`` (default 0), ``discovery_range`` from ``ROS_AUTOMATIC_DISCOVERY_RANGE``
    (default LOCALHOST), ``static_peers`` from ``ROS_STATIC_PEERS``, ``user_config`` from
    ``CYCLONEDDS_URI``. ``rmw`` names the middleware the other side runs (``rmw_cyclonedds_cpp`` or
    a Fast DDS one): the wire is the same, the name is shown in ``where``.
    """

    domain_id: int | None = None
    discovery_range: DiscoveryRange | None = None
    static_peers: tuple[str, ...] | None = None
    user_config: str | None = None
    rmw: str = CYCLONEDDS_RMW

    def __post_init__(self) -> None:
        if self.domain_id is not None:
            try:
                check_domain_id(self.domain_id)
            except BusError as exc:
                raise DdsConfigError(f"domain_id: {exc}") from None
        if self.discovery_range is not None and not isinstance(
            self.discovery_range, DiscoveryRange
        ):
            raise DdsConfigError(
                f"discovery_range must be a DiscoveryRange, got {self.discovery_range!r}"
            )
        if self.static_peers is not None:
            peers: object = self.static_peers
            if isinstance(peers, str) or not isinstance(peers, tuple | list):
                raise DdsConfigError(f"static_peers must be a tuple, got {self.static_peers!r}")
            for peer in self.static_peers:
                if not isinstance(peer, str) or not _PEER.match(peer):
                    raise DdsConfigError(
                        f"static peer {peer!r} is not a host name or address, e.g. 192.168.1.10"
                    )
            object.__setattr__(self, "static_peers", tuple(self.static_peers))
        if self.user_config is not None and not isinstance(self.user_config, str):
            raise DdsConfigError(f"user_config must be a str, got {self.user_config!r}")
        if self.rmw not in DDS_RMWS:
            raise DdsConfigError(f"rmw must be one of {', '.join(DDS_RMWS)}, got {self.rmw!r}")

    @property
    def domain(self) -> int:
        """The ROS domain id: ``domain_id``, else ``ROS_DOMAIN_ID``, else 0."""
        if self.domain_id is not None:
            return self.domain_id
        try:
            return domain_id_from_env()
        except BusError as exc:
            raise DdsConfigError(str(exc)) from None

    @property
    def range(self) -> DiscoveryRange:
        """The discovery range in force (``discovery_range``, else the environment's)."""
        return self.discovery_range or range_from_env()

    @property
    def peers(self) -> tuple[str, ...]:
        """The static peers in force (``static_peers``, else ``ROS_STATIC_PEERS``)."""
        return self.static_peers if self.static_peers is not None else peers_from_env()

    @property
    def user_uri(self) -> str:
        """The user's Cyclone DDS configuration appended last (``user_config``, else
        ``CYCLONEDDS_URI``; empty for none)."""
        if self.user_config is not None:
            return self.user_config
        return os.environ.get(CYCLONEDDS_URI_ENV, "").strip()

    @property
    def loopback_only(self) -> bool:
        """True when the bus uses the loopback interface alone (LOCALHOST without static peers,
        or OFF) and no user configuration could change that."""
        pinned = (self.range is DiscoveryRange.LOCALHOST and not self.peers) or (
            self.range is DiscoveryRange.OFF
        )
        return pinned and not self.user_uri

    @property
    def where(self) -> str:
        """Where a bus with these settings looks for the others, for "nothing there" errors and
        duplicate-node refusals: ``DDS domain 0 (rmw_cyclonedds_cpp, loopback)``."""
        try:
            domain = f"domain {self.domain}"
        except DdsConfigError:
            domain = "domain unreadable (ROS_DOMAIN_ID)"
        try:
            scope = {
                DiscoveryRange.LOCALHOST: "loopback",
                DiscoveryRange.SUBNET: "subnet",
                DiscoveryRange.SYSTEM_DEFAULT: "Cyclone DDS defaults",
                DiscoveryRange.OFF: "this process only",
            }[self.range]
        except DdsConfigError:
            scope = f"{RANGE_ENV} unreadable"
        if self.peers:
            scope += f", peers {' '.join(self.peers)}"
        if self.user_uri:
            scope += f", {CYCLONEDDS_URI_ENV}"
        return f"DDS {domain} ({self.rmw}, {scope})"

    def xml(self) -> str:
        """The Cyclone DDS configuration a bus joins its domain with: this config's fragment, then
        the user's ``CYCLONEDDS_URI`` (comma-separated, as Cyclone DDS reads a list)."""
        discovery_range = self.range
        peers = self.peers
        general = ""
        discovery = ""
        if discovery_range is DiscoveryRange.LOCALHOST:
            if not peers:
                general = (
                    f"<Interfaces><NetworkInterface address={quoteattr(LOOPBACK)}/></Interfaces>"
                )
            general += "<AllowMulticast>false</AllowMulticast>"
            discovery = self._unicast_discovery((LOOPBACK, *peers))
        elif discovery_range is DiscoveryRange.SUBNET:
            discovery = self._unicast_discovery(peers)
        elif discovery_range is DiscoveryRange.OFF:
            general = (
                f"<Interfaces><NetworkInterface address={quoteattr(LOOPBACK)}/></Interfaces>"
                "<AllowMulticast>false</AllowMulticast>"
            )
            discovery = (
                f"<LeaseDuration>{LEASE_DURATION_S:g} s</LeaseDuration>"
                "<ParticipantIndex>none</ParticipantIndex>"
                f"<Tag>ros_discovery_off_{os.getpid()}</Tag>"
            )
        own = ""
        if general or discovery:
            own = (
                "<CycloneDDS><Domain>"
                + (f"<General>{general}</General>" if general else "")
                + (f"<Discovery>{discovery}</Discovery>" if discovery else "")
                + "</Domain></CycloneDDS>"
            )
        user = self.user_uri
        return ",".join(part for part in (own, user) if part)

    @staticmethod
    def _unicast_discovery(peers: tuple[str, ...]) -> str:
        text = (
            f"<LeaseDuration>{LEASE_DURATION_S:g} s</LeaseDuration>"
            "<ParticipantIndex>auto</ParticipantIndex>"
            f"<MaxAutoParticipantIndex>{MAX_AUTO_PARTICIPANT_INDEX}</MaxAutoParticipantIndex>"
        )
        if peers:
            text += (
                "<Peers>"
                + "".join(f"<Peer address={quoteattr(p)}/>" for p in dict.fromkeys(peers))
                + "</Peers>"
            )
        return text


__all__ = [
    "CYCLONEDDS_URI_ENV",
    "LEASE_DURATION_S",
    "LOCALHOST_ONLY_ENV",
    "LOOPBACK",
    "MAX_AUTO_PARTICIPANT_INDEX",
    "RANGE_ENV",
    "STATIC_PEERS_ENV",
    "DdsConfig",
    "DiscoveryRange",
    "peers_from_env",
    "range_from_env",
]
