"""The QoS a bag keeps per topic: rosbag2's ``offered_qos_profiles``, written and read.

Where it sits: :mod:`jointbus.tools`, under :mod:`jointbus.tools.recorder` (which stores it in each
MCAP channel's metadata, where rosbag2's MCAP storage keeps it) and
:mod:`jointbus.tools.bag_reader` (which reads it from our files, ``ros2 bag record``'s MCAP files
and rosbag2 directories). The YAML is written and parsed by rosbags (``dump_qos_v8`` /
``parse_qos``), so ``ros2 bag info`` / ``play`` and rosbags read what jointbus writes.

Why a bag needs it: a latched (transient-local) topic — ``/<ns>/parameters``, ``/tf_static`` — is
published when its value changes, not at a rate; ``jointbus info`` shows ``latched`` for it instead
of a count divided by the bag's duration, and a player can offer it latched again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from rosbags.interfaces import (
    Qos,
    QosDurability,
    QosHistory,
    QosLiveliness,
    QosReliability,
    QosTime,
)
from rosbags.rosbag2.metadata import dump_qos_v8, parse_qos

from jointbus.bus.qos import QosProfile

#: The channel-metadata key (rosbag2's name for it).
OFFERED_QOS_KEY: Final = "offered_qos_profiles"

_UNSPECIFIED: Final = QosTime(0, 0)  # rmw's "default": no deadline / lifespan / lease


def _duration(seconds: float | None) -> QosTime:
    if seconds is None:
        return _UNSPECIFIED
    ns = round(seconds * 1e9)
    return QosTime(ns // 1_000_000_000, ns % 1_000_000_000)


def ros_qos(qos: QosProfile) -> Qos:
    """``qos`` as the rosbags (rmw) profile a rosbag2 bag stores."""
    return Qos(
        QosHistory.KEEP_LAST,
        qos.depth,
        QosReliability.RELIABLE if qos.reliable else QosReliability.BEST_EFFORT,
        QosDurability.TRANSIENT_LOCAL if qos.transient_local else QosDurability.VOLATILE,
        _duration(qos.deadline),
        _duration(qos.lifespan),
        QosLiveliness.AUTOMATIC,
        _UNSPECIFIED,
        False,
    )


def offered_qos_metadata(qos: QosProfile) -> dict[str, str]:
    """The channel metadata of a topic offered with ``qos`` (``{"offered_qos_profiles": YAML}``)."""
    return {OFFERED_QOS_KEY: dump_qos_v8([ros_qos(qos)])}


def latched(profiles: Sequence[Qos]) -> bool:
    """True when a publisher offered the topic transient-local (latched)."""
    return any(p.durability == QosDurability.TRANSIENT_LOCAL for p in profiles)


def latched_in_metadata(metadata: Mapping[str, str]) -> bool:
    """:func:`latched` of an MCAP channel's metadata; False when it records no QoS (or an
    unreadable one: the topic is then shown with a rate, as before)."""
    text = metadata.get(OFFERED_QOS_KEY, "")
    if not text:
        return False
    try:
        return latched(parse_qos(text))
    except Exception:  # rosbags' ReaderError or a malformed entry: no QoS known
        return False


__all__ = [
    "OFFERED_QOS_KEY",
    "latched",
    "latched_in_metadata",
    "offered_qos_metadata",
    "ros_qos",
]
