"""The rate of a run of messages: ``(n − 1) / (t_last − t_first)``, shared by every tool.

Where it sits: :mod:`jointbus.tools` (knows no bus, no file format); ``jointbus topic list`` /
``topic hz`` (:mod:`jointbus.cli.topic`) apply it to the arrivals they saw, ``jointbus info``
(:mod:`jointbus.tools.bag_info`) to each topic's first and last message in a bag.

Why this measure and not ``count / window``: n messages span n − 1 intervals, and the window
(a listening time, a whole bag's duration) is not the topic's: a 20 Hz stream that ran 10 s of a
22 s recording is 20 Hz, not 200 / 22 = 9.1 Hz. Fewer than two messages (or two at one instant)
have no interval, so there is no rate to show: ``None``, never ``0``.
"""

from __future__ import annotations

__all__ = ["interval_rate"]


def interval_rate(count: int, first_ns: int, last_ns: int) -> float | None:
    """Hz of ``count`` messages from ``first_ns`` to ``last_ns`` (ns, one clock); ``None`` for
    fewer than two messages or no time between the first and the last."""
    if count >= 2 and last_ns > first_ns:
        return (count - 1) / ((last_ns - first_ns) / 1e9)
    return None
