"""Quality-of-service policies with ROS 2's vocabulary, the named profiles, and compatibility.

Where it sits: :mod:`jointbus.bus`, below publishers and subscribers; it is plain data (no threads,
no transport) so the runtime and CLI can name and print profiles without touching a bus.

The policies mean what they mean in ROS 2, so a ROS user can read a jointbus QoS without a manual:

- **reliability** — ``BEST_EFFORT``: a message may be lost (on the wire, or overwritten in a full
  subscriber queue) and the publisher never waits; ``RELIABLE``: the transport does not lose
  messages (Zenoh reliable channel, congestion control *block*). In both cases the subscriber keeps
  the last ``depth`` messages (ROS 2's KEEP_LAST); see :mod:`jointbus.bus.subscriber` for what
  happens when a reliable queue overflows (oldest overwritten, counted as ``overflow``,
  reported).
- **depth** — history depth: the subscriber queue length, and for a transient-local publisher the
  number of messages kept for late joiners.
- **durability** — ``VOLATILE``: a subscriber only sees messages published after it joined;
  ``TRANSIENT_LOCAL``: a late-joining transient-local subscriber first receives the publisher's
  last ``depth`` messages (a "latched" topic).
- **deadline** (s) — the longest expected gap between messages; a missed deadline is reported to
  the subscriber (and publisher) as an event, once per elapsed period.
- **lifespan** (s) — how long a message stays valid; older messages are dropped (and counted)
  instead of delivered.

Compatibility (checked when a publisher and a subscriber meet, as ROS 2 does): a best-effort
publisher cannot serve a reliable subscriber, a volatile publisher cannot serve a transient-local
subscriber, and a publisher offering a longer (or no) deadline cannot serve a subscriber that
requests a shorter one. Incompatible pairs exchange no messages and both sides get an event.
A subscription that names no QoS is :data:`SUBSCRIPTION_DEFAULT` (best effort), which every
publisher can serve.
"""

from __future__ import annotations

import enum
import math
import re
from dataclasses import dataclass, field
from typing import Final

from jointbus.bus.errors import QosError

#: Largest history depth accepted; a bound keeps a typo (1e9) from allocating a giant queue.
MAX_DEPTH: Final = 1_000_000


class Reliability(enum.Enum):
    """Whether the transport may lose messages (ROS 2 ``ReliabilityPolicy``)."""

    BEST_EFFORT = "best_effort"
    RELIABLE = "reliable"


class Durability(enum.Enum):
    """Whether late joiners receive earlier messages (ROS 2 ``DurabilityPolicy``)."""

    VOLATILE = "volatile"
    TRANSIENT_LOCAL = "transient_local"


def _check_duration(policy: str, value: object) -> None:
    if value is None:
        return
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise QosError(policy, value, "a finite duration > 0 s, or None for no limit")
    if not math.isfinite(value) or value <= 0:
        raise QosError(policy, value, "a finite duration > 0 s, or None for no limit")


@dataclass(frozen=True, slots=True)
class QosProfile:
    """A complete QoS: reliability, history depth, durability, deadline and lifespan (s).

    ``name`` is for display only (``MAB_RT``, ...); it does not take part in compatibility.
    """

    reliability: Reliability = Reliability.RELIABLE
    depth: int = 10
    durability: Durability = Durability.VOLATILE
    deadline: float | None = None
    lifespan: float | None = None
    name: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.reliability, Reliability):
            raise QosError(
                "reliability", self.reliability, "a Reliability (BEST_EFFORT or RELIABLE)"
            )
        if not isinstance(self.durability, Durability):
            raise QosError(
                "durability", self.durability, "a Durability (VOLATILE or TRANSIENT_LOCAL)"
            )
        if type(self.depth) is not int or not 1 <= self.depth <= MAX_DEPTH:
            raise QosError("depth", self.depth, f"an int in [1, {MAX_DEPTH}]")
        _check_duration("deadline", self.deadline)
        _check_duration("lifespan", self.lifespan)
        if type(self.name) is not str:
            raise QosError("name", self.name, "a str")

    @property
    def reliable(self) -> bool:
        """True for ``RELIABLE``."""
        return self.reliability is Reliability.RELIABLE

    @property
    def transient_local(self) -> bool:
        """True for ``TRANSIENT_LOCAL`` durability."""
        return self.durability is Durability.TRANSIENT_LOCAL

    @property
    def deadline_ns(self) -> int:
        """Deadline in ns, 0 for none."""
        return 0 if self.deadline is None else max(1, round(self.deadline * 1e9))

    @property
    def lifespan_ns(self) -> int:
        """Lifespan in ns, 0 for none."""
        return 0 if self.lifespan is None else max(1, round(self.lifespan * 1e9))

    def with_(
        self,
        *,
        reliability: Reliability | None = None,
        depth: int | None = None,
        durability: Durability | None = None,
        deadline: float | None = None,
        lifespan: float | None = None,
    ) -> QosProfile:
        """A copy with some policies changed (name cleared); ``None`` keeps the current value."""
        return QosProfile(
            self.reliability if reliability is None else reliability,
            self.depth if depth is None else depth,
            self.durability if durability is None else durability,
            self.deadline if deadline is None else deadline,
            self.lifespan if lifespan is None else lifespan,
        )

    def to_token(self) -> str:
        """Compact text used in discovery keys, e.g. ``R10V_0_0`` (deadline and lifespan in ns)."""
        return (
            f"{'R' if self.reliable else 'B'}{self.depth}{'T' if self.transient_local else 'V'}"
            f"_{self.deadline_ns}_{self.lifespan_ns}"
        )

    @classmethod
    def from_token(cls, token: str) -> QosProfile:
        """Inverse of :meth:`to_token`; raises QosError for text it did not produce."""
        match = _TOKEN.fullmatch(token)
        if match is None:
            raise QosError("token", token, "text like 'R10V_0_0'")
        deadline_ns = int(match["deadline"])
        lifespan_ns = int(match["lifespan"])
        return cls(
            Reliability.RELIABLE if match["rel"] == "R" else Reliability.BEST_EFFORT,
            int(match["depth"]),
            Durability.TRANSIENT_LOCAL if match["dur"] == "T" else Durability.VOLATILE,
            deadline_ns / 1e9 if deadline_ns else None,
            lifespan_ns / 1e9 if lifespan_ns else None,
        )

    def describe(self) -> str:
        """Human-readable summary, e.g. ``MAB_RT (best_effort, depth 1, volatile)``."""
        parts = [self.reliability.value, f"depth {self.depth}", self.durability.value]
        if self.deadline is not None:
            parts.append(f"deadline {self.deadline:g} s")
        if self.lifespan is not None:
            parts.append(f"lifespan {self.lifespan:g} s")
        text = ", ".join(parts)
        return f"{self.name} ({text})" if self.name else text


_TOKEN = re.compile(r"(?P<rel>[RB])(?P<depth>\d+)(?P<dur>[VT])_(?P<deadline>\d+)_(?P<lifespan>\d+)")


def incompatibilities(offered: QosProfile, requested: QosProfile) -> tuple[str, ...]:
    """Why a publisher offering ``offered`` cannot serve a subscriber requesting ``requested``.

    Empty when it can.
    """
    reasons: list[str] = []
    if requested.reliable and not offered.reliable:
        reasons.append("reliability: best-effort publisher, reliable subscriber")
    if requested.transient_local and not offered.transient_local:
        reasons.append("durability: volatile publisher, transient-local subscriber")
    if requested.deadline is not None and (
        offered.deadline is None or offered.deadline > requested.deadline
    ):
        offered_text = "none" if offered.deadline is None else f"{offered.deadline:g} s"
        reasons.append(
            f"deadline: publisher offers {offered_text}, "
            f"subscriber requests {requested.deadline:g} s"
        )
    return tuple(reasons)


#: The seed's ``mabRT``: the newest sample only, never waits, never replays. For 500 Hz state and
#: command topics where a late message is worse than a lost one.
MAB_RT: Final = QosProfile(Reliability.BEST_EFFORT, 1, Durability.VOLATILE, name="MAB_RT")
#: ROS 2's default profile: reliable, keep last 10, volatile. Status, 10 Hz mirrors.
RELIABLE: Final = QosProfile(Reliability.RELIABLE, 10, Durability.VOLATILE, name="RELIABLE")
#: A latched topic: reliable, keep last 1, transient-local (robot description, configuration).
LATCHED: Final = QosProfile(Reliability.RELIABLE, 1, Durability.TRANSIENT_LOCAL, name="LATCHED")
#: What a subscription asks for when it names no QoS (``Bus.subscribe``,
#: ``Node.create_subscription``): best effort, keep last 10, volatile — ROS 2's sensor-data
#: reliability with RELIABLE's depth. A best-effort subscriber receives from best-effort *and*
#: reliable publishers, so a default subscription hears the 500 Hz MAB_RT topics too; a RELIABLE
#: one hears nothing from them (an incompatible pair, as in ROS 2, where
#: ``rclpy.qos.qos_profile_sensor_data`` is the usual answer). What it gives up: a full queue
#: overwrites its oldest message as ``dropped``, not reported, and on DDS a sample published just
#: as the two sides discover each other may be missed (DDS discovery is asymmetric and best effort
#: is not retransmitted); subscribe with RELIABLE where every message of a reliable topic must
#: arrive or be accounted for — a one-shot command, a parameter update.
SUBSCRIPTION_DEFAULT: Final = QosProfile(
    Reliability.BEST_EFFORT, 10, Durability.VOLATILE, name="SUBSCRIPTION_DEFAULT"
)

#: Profiles by name, for configuration files and the CLI.
PROFILES: Final[dict[str, QosProfile]] = {
    p.name: p for p in (MAB_RT, RELIABLE, LATCHED, SUBSCRIPTION_DEFAULT)
}


def profile(name: str) -> QosProfile:
    """The named profile (``MAB_RT``, ``RELIABLE``, ``LATCHED``); raises QosError otherwise."""
    try:
        return PROFILES[name]
    except KeyError:
        raise QosError("profile", name, f"one of {', '.join(PROFILES)}") from None


__all__ = [
    "LATCHED",
    "MAB_RT",
    "PROFILES",
    "RELIABLE",
    "SUBSCRIPTION_DEFAULT",
    "Durability",
    "QosProfile",
    "Reliability",
    "incompatibilities",
    "profile",
]
