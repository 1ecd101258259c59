"""The message types the runtime layer defines, and a registry that includes them.

Where it sits: :mod:`jointbus.runtime`. The messages layer's registry cannot list these types (a
lower layer never imports a higher one), so tools that meet messages by name — ``jointbus topic
echo``, the recorder, ``jointbus play`` and ``plot`` — use :func:`runtime_registry`, which adds the
loop diagnostics and parameter messages to every bundled message type.
"""

from __future__ import annotations

import functools
from typing import Any, Final

from jointbus.messages.registry import TypeRegistry, default_registry
from jointbus.runtime.diagnostics import EventCount, InputTotals, LoopDiagnostics
from jointbus.runtime.node_health import NodeHealthEntry, NodeHealthTable
from jointbus.runtime.parameter_messages import Parameter, ParameterList, ParameterUpdate

RUNTIME_MESSAGE_TYPES: Final[tuple[type[Any], ...]] = (
    EventCount,
    InputTotals,
    LoopDiagnostics,
    NodeHealthEntry,
    NodeHealthTable,
    Parameter,
    ParameterList,
    ParameterUpdate,
)


@functools.cache
def runtime_registry() -> TypeRegistry:
    """Every bundled message type plus the runtime's own (built once)."""
    return default_registry().with_types(*RUNTIME_MESSAGE_TYPES)
