"""Every message type jointbus knows — the core's, the runtime's and each bundled robot's — by name.

Where it sits: :mod:`jointbus.tools`, above the generic core. Why here: the tools that meet a
message by *name* (``jointbus topic echo``, the recorder, ``jointbus play``, ``plot``, the Foxglove
view, ``jointbus ros2``) must decode every robot's topics, but the core's registries
(:func:`jointbus.messages.registry.default_registry`, :func:`jointbus.runtime.runtime_registry`)
must not import a robot. This layer knows the robots, so it adds their message sets (today Honey
Badger's ``hb50_commons``) to the runtime's registry.
"""

from __future__ import annotations

import functools

from jointbus.messages.registry import TypeRegistry
from jointbus.robots.hb50.messages import HB50_MESSAGE_TYPES
from jointbus.runtime.message_types import runtime_registry

__all__ = ["known_registry"]


@functools.cache
def known_registry() -> TypeRegistry:
    """The runtime's registry plus every bundled robot's message types (built once)."""
    return runtime_registry().with_types(*HB50_MESSAGE_TYPES)
