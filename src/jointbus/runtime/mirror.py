"""Mirror: republish a fast topic at a lower rate with another QoS (the seed's ``*_10hz`` topics).

Where it sits: :mod:`jointbus.runtime`, on top of :class:`jointbus.runtime.node.Node`; the bridge
mirrors ``/hb50/bridge_state`` to ``/hb50/bridge_state_10hz`` and the control node
``/hb50/robot_state`` to ``/hb50/robot_state_10hz``.

Why: the 500 Hz topics use ``MAB_RT`` (best effort, newest sample only), right for control and
wrong for a UI on Wi-Fi, a logger or a lossy link, which want fewer messages that all arrive. The
seed answers with a 10 Hz Reliable copy of each fast topic; a mirror builds one from any topic.

How: the mirror subscribes to the source with a *realtime* callback that only keeps a reference to
the newest message (no queue, no thread hop, no copy — messages are immutable), and a timer on the
node's timer thread republishes that message every ``1 / rate_hz`` s **only if a new one arrived
since the last republish**, so a silent source yields a silent mirror (a subscriber's deadline then
tells the truth) instead of the same stale sample repeated. The message is republished as is,
stamps included: a mirror is a decimated copy, not a new measurement.

The source subscription asks for ``MAB_RT`` by default, which every publisher can serve (a reliable
request would be incompatible with a best-effort 500 Hz publisher). The mirror is a managed part of
its node: it stops on deactivate and resumes on activate.
"""

from __future__ import annotations

import math
from typing import Generic

from jointbus.bus import MAB_RT, RELIABLE, QosProfile
from jointbus.bus.endpoint import MsgT
from jointbus.runtime.node import Node, NodePublisher, NodeSubscription
from jointbus.runtime.timer import Timer

#: The seed's mirror rate (Hz).
DEFAULT_MIRROR_RATE_HZ = 10.0


class MirrorConfigError(ValueError):
    """A mirror parameter out of range (names the field, the value and what was expected)."""

    def __init__(self, field: str, value: object, expected: str) -> None:
        self.field = field
        self.value = value
        self.expected = expected
        super().__init__(f"Mirror {field} = {value!r} is invalid: expected {expected}")


class Mirror(Generic[MsgT]):
    """Republishes the newest ``msg_type`` message of ``src_topic`` on ``dst_topic`` at ``rate_hz``.

    ``qos`` is the mirror's QoS (default RELIABLE, the seed's), ``src_qos`` the QoS requested from
    the source (default MAB_RT). Counters: ``received`` source messages, ``republished`` messages.
    """

    def __init__(
        self,
        node: Node,
        src_topic: str,
        msg_type: type[MsgT],
        dst_topic: str,
        *,
        rate_hz: float = DEFAULT_MIRROR_RATE_HZ,
        qos: QosProfile | str = RELIABLE,
        src_qos: QosProfile | str = MAB_RT,
    ) -> None:
        if isinstance(rate_hz, bool) or not isinstance(rate_hz, int | float):
            raise MirrorConfigError("rate_hz", rate_hz, "a rate in Hz")
        if not (math.isfinite(rate_hz) and 0 < rate_hz <= 1000):
            raise MirrorConfigError("rate_hz", rate_hz, "a rate in (0, 1000] Hz")
        src, dst = node.topic(src_topic), node.topic(dst_topic)
        if src == dst:
            raise MirrorConfigError("dst_topic", dst_topic, f"a topic other than the source {src}")
        self.node = node
        self.rate_hz = float(rate_hz)
        self.received = 0
        self.republished = 0
        # (newest message, its arrival count): one tuple, so the timer never pairs a message with
        # another one's count; the count (not identity) says "new": a source may resend an object.
        self._latest: tuple[MsgT, int] | None = None
        self._sent = 0
        self.publisher: NodePublisher[MsgT] = node.create_publisher(dst, msg_type, qos)
        try:
            self.subscription: NodeSubscription[MsgT] = node.create_subscription(
                src, msg_type, self._on_message, src_qos, realtime=True
            )
        except BaseException:
            self.publisher.close()
            raise
        self._timer: Timer = node.create_timer(
            1.0 / self.rate_hz, self.republish, name=f"mirror {src} -> {dst}"
        )

    @property
    def src_topic(self) -> str:
        """The fast topic."""
        return self.subscription.topic

    @property
    def dst_topic(self) -> str:
        """The mirrored topic."""
        return self.publisher.topic

    def _on_message(self, msg: MsgT) -> None:
        self.received = count = self.received + 1
        self._latest = (msg, count)

    def republish(self) -> bool:
        """Publish the newest source message if it was not published yet (the timer calls this)."""
        latest = self._latest
        if latest is None or latest[1] == self._sent:
            return False
        msg, self._sent = latest
        self.publisher.publish(msg)
        self.republished += 1
        return True

    def close(self) -> None:
        """Stop mirroring and undeclare both endpoints. Idempotent."""
        self._timer.cancel()
        self.subscription.close()
        self.publisher.close()


__all__ = ["DEFAULT_MIRROR_RATE_HZ", "Mirror", "MirrorConfigError"]
