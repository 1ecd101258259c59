"""jointbus.runtime — nodes, their heartbeat and lifecycle, timers, rate loops, liveliness, mirrors.

Where it sits: above :mod:`jointbus.bus`, below :mod:`jointbus.drivers` and :mod:`jointbus.nodes`.
Start with :class:`Node` (publishers, subscriptions, timers and rate loops with a lifecycle, a 1 Hz
heartbeat, QoS events and loop diagnostics reported on the status and diagnostics topics),
:class:`LivelinessMonitor` (STALE / OK from heartbeats), :class:`Mirror` (a slower, reliable copy of
a fast topic) and :class:`RateLoop` (fixed-rate loops with timing statistics).
"""

from jointbus.runtime.diagnostics import EVENT_REPORT_INTERVAL_S, LoopDiagnostics, StatusReporter
from jointbus.runtime.heartbeat import (
    DEFAULT_HEARTBEAT_PERIOD_S,
    HEARTBEAT_ALIVE,
    HEARTBEAT_QOS,
    HEARTBEAT_SHUTDOWN,
    Heartbeat,
)
from jointbus.runtime.lifecycle import (
    Lifecycle,
    LifecycleError,
    LifecycleHookError,
    LifecycleState,
    Transition,
)
from jointbus.runtime.liveliness import (
    DEFAULT_LIVELINESS_TIMEOUT_S,
    LivelinessConfigError,
    LivelinessMonitor,
    NodeHealth,
)
from jointbus.runtime.loop_stats import LoopStats, LoopStatsSnapshot
from jointbus.runtime.mirror import DEFAULT_MIRROR_RATE_HZ, Mirror, MirrorConfigError
from jointbus.runtime.node import (
    DEFAULT_NAMESPACE,
    Node,
    NodeClosedError,
    NodeError,
    NodeNameError,
    NodePublisher,
    NodeRateLoop,
    NodeSubscription,
)
from jointbus.runtime.rate_loop import CycleInfo, RateLoop, RateLoopConfigError, RateLoopStateError
from jointbus.runtime.realtime import RealtimeConfig, RealtimeConfigError, RealtimeWarning
from jointbus.runtime.timer import Timer, TimerClosedError, TimerConfigError, TimerThread

__all__ = [
    "DEFAULT_HEARTBEAT_PERIOD_S",
    "DEFAULT_LIVELINESS_TIMEOUT_S",
    "DEFAULT_MIRROR_RATE_HZ",
    "DEFAULT_NAMESPACE",
    "EVENT_REPORT_INTERVAL_S",
    "HEARTBEAT_ALIVE",
    "HEARTBEAT_QOS",
    "HEARTBEAT_SHUTDOWN",
    "CycleInfo",
    "Heartbeat",
    "Lifecycle",
    "LifecycleError",
    "LifecycleHookError",
    "LifecycleState",
    "LivelinessConfigError",
    "LivelinessMonitor",
    "LoopDiagnostics",
    "LoopStats",
    "LoopStatsSnapshot",
    "Mirror",
    "MirrorConfigError",
    "Node",
    "NodeClosedError",
    "NodeError",
    "NodeHealth",
    "NodeNameError",
    "NodePublisher",
    "NodeRateLoop",
    "NodeSubscription",
    "RateLoop",
    "RateLoopConfigError",
    "RateLoopStateError",
    "RealtimeConfig",
    "RealtimeConfigError",
    "RealtimeWarning",
    "StatusReporter",
    "Timer",
    "TimerClosedError",
    "TimerConfigError",
    "TimerThread",
    "Transition",
]
