"""The 1 Hz heartbeat of every node: ``Status(level=OK, status="alive")`` on ``/<ns>/heartbeat``.

Where it sits: :mod:`jointbus.runtime`, created by :class:`jointbus.runtime.node.Node` for itself
and watched by :class:`jointbus.runtime.liveliness.LivelinessMonitor`. It is given a bus publisher
and the node's timer thread, so it knows nothing of the node class.

The contract (Honey Badger 5.0, seed 001): every node publishes a heartbeat with ``level=OK`` at
least once a second, with Reliable QoS; a missing heartbeat means a lost link or a crashed node.
jointbus adds two things a monitor needs, both inside the seed's message so ROS tools still read it:

- ``data`` carries the node's lifecycle state as ASCII (``b"active"``, ``b"inactive"``, ...): a
  deactivated node is alive (it keeps its heartbeat) but does no work, and a monitor may show that;
- a node that shuts down cleanly sends a last heartbeat with ``status="shutdown"``, so monitors stop
  watching it instead of reporting it STALE a second and a half later.

The first heartbeat goes out at once when the heartbeat starts, so a monitor sees a new node
without waiting a period.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from jointbus.bus import RELIABLE, Publisher, QosProfile
from jointbus.messages.status import Status
from jointbus.runtime.timer import Timer, TimerThread

#: ``status`` text of an ordinary heartbeat.
HEARTBEAT_ALIVE: Final = "alive"
#: ``status`` text of the last heartbeat of a node that shuts down cleanly.
HEARTBEAT_SHUTDOWN: Final = "shutdown"
#: The seed's heartbeat period (s).
DEFAULT_HEARTBEAT_PERIOD_S: Final = 1.0
#: The seed's heartbeat QoS ("Reliable"); keep-last 10 absorbs a burst of nodes starting together.
HEARTBEAT_QOS: Final[QosProfile] = RELIABLE


class Heartbeat:
    """Publishes ``Status.ok(node, "alive")`` every ``period_s`` s on the node's timer thread.

    ``describe_state`` returns the text put in ``data`` (the node's lifecycle state).
    """

    def __init__(
        self,
        publisher: Publisher[Status],
        timers: TimerThread,
        node: str,
        *,
        period_s: float = DEFAULT_HEARTBEAT_PERIOD_S,
        describe_state: Callable[[], str] = lambda: "",
    ) -> None:
        self.publisher = publisher
        self.node = node
        self.period_s = period_s
        self.sent = 0
        self._describe_state = describe_state
        self._timers = timers
        self._timer: Timer = timers.add(period_s, self.beat, name=f"{node}-heartbeat", start=False)

    @property
    def running(self) -> bool:
        """True while heartbeats are being sent."""
        return self._timer.active

    def start(self) -> None:
        """Send one heartbeat now and then one every period."""
        self._timer.start(immediately=True)

    def beat(self) -> None:
        """Publish one heartbeat now (the timer calls this); nothing once the bus is closed."""
        if self.publisher.closed:
            return
        self.publisher.publish(
            Status.ok(self.node, HEARTBEAT_ALIVE, self._describe_state().encode("ascii", "replace"))
        )
        self.sent += 1

    def stop(self, *, farewell: bool = True) -> None:
        """Stop the heartbeats; with ``farewell`` send the ``"shutdown"`` heartbeat first."""
        self._timer.cancel()
        self._timers.wait_idle()  # a beat in flight goes out before the farewell, never after
        if farewell and not self.publisher.closed:
            self.publisher.publish(Status.ok(self.node, HEARTBEAT_SHUTDOWN, b"finalized"))
            self.sent += 1


__all__ = [
    "DEFAULT_HEARTBEAT_PERIOD_S",
    "HEARTBEAT_ALIVE",
    "HEARTBEAT_QOS",
    "HEARTBEAT_SHUTDOWN",
    "Heartbeat",
]
