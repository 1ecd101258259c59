"""Shared helpers of the runtime tests: a fake clock, manually stepped nodes, bus test helpers.

Part of :mod:`support`. It re-exports ``free_port`` and ``wait_until`` from :mod:`support.bus` (one
copy of each helper in the tree).
"""

from __future__ import annotations

from jointbus.bus import Bus
from jointbus.runtime import Node, TimerThread
from support.bus import free_port, wait_until  # type: ignore[import-not-found, unused-ignore]

NS_PER_S = 1_000_000_000


class FakeClock:
    """A monotonic clock (ns) that moves only when a test advances it."""

    def __init__(self, start_ns: int = 1_000 * NS_PER_S) -> None:
        self.now = start_ns

    def __call__(self) -> int:
        return self.now


class SteppedWorld:
    """Nodes whose timers run only when the test steps the shared fake clock (no threads).

    In-process delivery to realtime subscriptions is synchronous, so after :meth:`advance` every
    timer due so far has run and every realtime callback has seen its messages.
    """

    def __init__(self, bus: Bus) -> None:
        self.bus = bus
        self.clock = FakeClock()
        self.nodes: list[Node] = []

    def node(self, name: str, **kwargs: object) -> Node:
        timers = TimerThread(f"{name}-timers", clock=self.clock, threaded=False)
        node = Node(name, self.bus, timers=timers, **kwargs)  # type: ignore[arg-type]
        self.nodes.append(node)
        return node

    def run_due(self) -> None:
        for node in self.nodes:
            if not node.timers.closed:
                node.timers.run_due()

    def advance(self, seconds: float, step_s: float = 0.01) -> None:
        """Move the clock forward by ``seconds`` in steps of ``step_s``, running due timers."""
        end = self.clock.now + round(seconds * NS_PER_S)
        step = round(step_s * NS_PER_S)
        while self.clock.now < end:
            self.clock.now = min(end, self.clock.now + step)
            self.run_due()

    def close(self) -> None:
        for node in self.nodes:
            node.shutdown()


__all__ = ["NS_PER_S", "FakeClock", "SteppedWorld", "free_port", "wait_until"]
