"""``jointbus info``: what a bag holds, in the layout of ``ros2 bag info``.

Where it sits: :mod:`jointbus.tools`, over :mod:`jointbus.tools.bag_reader`. :func:`bag_info`
gathers the facts into a :class:`BagInfo` (tests and other tools use it); :func:`format_bag_info`
prints them the way ROS users know, adding each topic's rate and, for a file cut short by a crash,
a ``State`` line saying it was recovered from its complete chunks.

A topic's rate is its own: ``(n − 1) / (t_last − t_first)`` over its n messages
(:func:`~jointbus.tools.message_rate.interval_rate`, the measure ``jointbus topic list`` uses),
timed by when the publisher sent the first and the last (the MCAP publish times;
:meth:`~jointbus.tools.bag_reader.Bag.sent_spans`), else by their log times — when the recorder
received them: a demo's recorder received the first frame 0.195 s late and the rest on time, and
its 500 Hz ``bridge_data`` read 513.38 Hz by log times, 497.7 Hz by send times (a new user's trial,
2026-12-07). Not the count over the whole bag's duration — a 20 Hz stream that ran 10 s of a 22 s
recording read 9.10 Hz that way. A topic with fewer than two messages has no rate (``-``); one the
bag records as transient-local is published on change, not at a rate (``latched``). Each topic's
first and last log time come from :meth:`~jointbus.tools.bag_reader.Bag.topic_spans` (an MCAP
file's message indexes; the summary holds only counts).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from jointbus.tools.bag_reader import Bag, open_bag
from jointbus.tools.message_rate import interval_rate


@dataclass(frozen=True, slots=True)
class TopicSummary:
    """One topic: type, message count, serialisation and rate.

    ``rate_hz``: ``(n − 1) / (t_last − t_first)`` of its messages' send times, else their log
    times (Hz; the module docstring says why); ``None`` with
    fewer than two messages (``jointbus info`` prints ``-``) or when ``latched``: the bag records
    it as offered transient-local, published when its value changes (``info`` prints
    ``latched``).
    """

    name: str
    type_name: str
    count: int
    serialization: str
    rate_hz: float | None
    latched: bool = False


@dataclass(frozen=True, slots=True)
class BagInfo:
    """The facts ``jointbus info`` prints; times in ns since the Unix epoch."""

    path: Path
    files: tuple[Path, ...]
    size_bytes: int
    storage: str
    start_ns: int
    end_ns: int
    message_count: int
    topics: tuple[TopicSummary, ...]
    truncated: bool

    @property
    def duration_s(self) -> float:
        """Seconds from the first to the last message."""
        return max(0, self.end_ns - self.start_ns) / 1e9


def summarize(bag: Bag) -> BagInfo:
    """The :class:`BagInfo` of an open bag."""
    spans = bag.topic_spans() if any(not t.latched for t in bag.topics) else {}

    sent = bag.sent_spans(spans)

    def rate(name: str, latched: bool) -> float | None:
        if latched or name not in spans:
            return None
        span = spans[name]
        times = sent.get(name)
        return interval_rate(span.messages, *times) if times is not None else interval_rate(*span)

    return BagInfo(
        path=bag.path,
        files=tuple(bag.files),
        size_bytes=bag.size_bytes,
        storage=bag.storage,
        start_ns=bag.start_ns,
        end_ns=bag.end_ns,
        message_count=bag.message_count,
        topics=tuple(
            TopicSummary(
                t.name, t.type_name, t.count, t.serialization, rate(t.name, t.latched), t.latched
            )
            for t in bag.topics
        ),
        truncated=bag.truncated,
    )


def bag_info(path: str | Path) -> BagInfo:
    """Open ``path`` (MCAP file, rosbag2 directory or ``.db3``) and summarise it; BagError."""
    with open_bag(path) as bag:
        return summarize(bag)


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.1f} {unit}" if unit != "B" else f"{n} B"
        value /= 1024
    return f"{n} B"  # pragma: no cover


def _time(ns: int) -> str:
    stamp = dt.datetime.fromtimestamp(ns / 1e9, tz=dt.UTC).astimezone()
    return f"{stamp:%b %d %Y %H:%M:%S}.{(ns // 1_000_000) % 1000:03d} ({ns / 1e9:.9f})"


def _rate_cell(topic: TopicSummary) -> str:
    """``    50.00 Hz``; ``latched`` (as wide) for a transient-local topic, not a rate; ``-`` for
    a topic with fewer than two messages (no interval to measure)."""
    if topic.latched:
        return f"{'latched':>12}"
    if topic.rate_hz is None:
        return f"{'-':>12}"
    return f"{topic.rate_hz:9.2f} Hz"


def format_bag_info(info: BagInfo) -> str:
    """The text ``jointbus info`` prints."""
    label = 19
    lines = [
        f"{'Files:':<{label}}" + ", ".join(p.name for p in info.files),
        f"{'Bag size:':<{label}}{_size(info.size_bytes)}",
        f"{'Storage id:':<{label}}{info.storage}",
    ]
    if info.truncated:
        lines.append(
            f"{'State:':<{label}}truncated (no summary: the recorder stopped without closing the "
            "file; every complete chunk was recovered)"
        )
    lines.append(f"{'Duration:':<{label}}{info.duration_s:.3f}s")
    if info.message_count:
        lines.append(f"{'Start:':<{label}}{_time(info.start_ns)}")
        lines.append(f"{'End:':<{label}}{_time(info.end_ns)}")
    lines.append(f"{'Messages:':<{label}}{info.message_count}")
    if not info.topics:
        lines.append(f"{'Topic information:':<{label}}")
    name_w = max((len(t.name) for t in info.topics), default=0)
    type_w = max((len(t.type_name) for t in info.topics), default=0)
    count_w = max((len(str(t.count)) for t in info.topics), default=0)
    for i, t in enumerate(info.topics):
        head = "Topic information:" if i == 0 else ""
        lines.append(
            f"{head:<{label}}Topic: {t.name:<{name_w}} | Type: {t.type_name:<{type_w}} | "
            f"Count: {t.count:>{count_w}} | Rate: {_rate_cell(t)} | "
            f"Serialization Format: {t.serialization}"
        )
    return "\n".join(lines)


__all__ = ["BagInfo", "TopicSummary", "bag_info", "format_bag_info", "summarize"]
