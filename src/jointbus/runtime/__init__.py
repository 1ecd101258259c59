"""jointbus.runtime — nodes, their heartbeat and lifecycle, timers, rate loops, liveliness, mirrors.

Where it sits: above :mod:`jointbus.bus`, below :mod:`jointbus.drivers` and :mod:`jointbus.nodes`.
Start with :class:`Node` (publishers, subscriptions, timers and rate loops with a lifecycle, a 1 Hz
heartbeat, QoS events and loop diagnostics reported on the status and diagnostics topics),
:class:`LivelinessMonitor` (STALE / OK from heartbeats), :class:`NodeParameters` (live, bounded
parameters), :class:`Mirror` (a slower, reliable copy of a fast topic) and :class:`RateLoop`
(fixed-rate loops with timing statistics).
"""

from jointbus.runtime.diagnostics import (
    EVENT_REPORT_INTERVAL_S,
    EventCount,
    InputTotals,
    LoopDiagnostics,
    StatusReporter,
)
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
from jointbus.runtime.loop_stats import LoopRun, LoopStats, LoopStatsSnapshot
from jointbus.runtime.message_types import RUNTIME_MESSAGE_TYPES, runtime_registry
from jointbus.runtime.mirror import DEFAULT_MIRROR_RATE_HZ, Mirror, MirrorConfigError
from jointbus.runtime.node import (
    DEFAULT_NAMESPACE,
    DuplicateNodeError,
    Node,
    NodeClosedError,
    NodeError,
    NodeNameError,
    NodePublisher,
    NodeRateLoop,
    NodeReservedNameError,
    NodeSubscription,
    ensure_unique_node,
)
from jointbus.runtime.node_health import NODE_HEALTH_TOPIC, NodeHealthEntry, NodeHealthTable
from jointbus.runtime.parameter_messages import (
    Parameter,
    ParameterKind,
    ParameterList,
    ParameterUpdate,
)
from jointbus.runtime.parameters import (
    CONFIG_UPDATE_TOPIC,
    PARAMETERS_TOPIC,
    NodeParameters,
    ParameterChange,
    ParameterRefusedError,
    ParameterStore,
    UnknownParameterError,
    select_specs,
)
from jointbus.runtime.rate_loop import CycleInfo, RateLoop, RateLoopConfigError, RateLoopStateError
from jointbus.runtime.realtime import RealtimeConfig, RealtimeConfigError, RealtimeWarning
from jointbus.runtime.timer import Timer, TimerClosedError, TimerConfigError, TimerThread

__all__ = [
    "CONFIG_UPDATE_TOPIC",
    "DEFAULT_HEARTBEAT_PERIOD_S",
    "DEFAULT_LIVELINESS_TIMEOUT_S",
    "DEFAULT_MIRROR_RATE_HZ",
    "DEFAULT_NAMESPACE",
    "EVENT_REPORT_INTERVAL_S",
    "HEARTBEAT_ALIVE",
    "HEARTBEAT_QOS",
    "HEARTBEAT_SHUTDOWN",
    "NODE_HEALTH_TOPIC",
    "PARAMETERS_TOPIC",
    "RUNTIME_MESSAGE_TYPES",
    "CycleInfo",
    "DuplicateNodeError",
    "EventCount",
    "Heartbeat",
    "InputTotals",
    "Lifecycle",
    "LifecycleError",
    "LifecycleHookError",
    "LifecycleState",
    "LivelinessConfigError",
    "LivelinessMonitor",
    "LoopDiagnostics",
    "LoopRun",
    "LoopStats",
    "LoopStatsSnapshot",
    "Mirror",
    "MirrorConfigError",
    "Node",
    "NodeClosedError",
    "NodeError",
    "NodeHealth",
    "NodeHealthEntry",
    "NodeHealthTable",
    "NodeNameError",
    "NodeParameters",
    "NodePublisher",
    "NodeRateLoop",
    "NodeReservedNameError",
    "NodeSubscription",
    "Parameter",
    "ParameterChange",
    "ParameterKind",
    "ParameterList",
    "ParameterRefusedError",
    "ParameterStore",
    "ParameterUpdate",
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
    "UnknownParameterError",
    "ensure_unique_node",
    "runtime_registry",
    "select_specs",
]
