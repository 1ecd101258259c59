"""Message types by their ROS 2 type name: the registry, and the generic core's types.

Where it sits: :mod:`jointbus.messages` (the top of that layer: it imports every generic message
module). Tools that meet a message by *name* — ``jointbus topic echo`` decoding a payload it
discovered on Zenoh, the recorder writing schemas, ``jointbus play`` turning stored bytes back into
objects — look the class up in a registry. Following rosbags, the registry is an explicit object
(:class:`TypeRegistry`), not a hidden global; :func:`default_registry` builds the one holding the
generic core's types (standard ROS types, status, Beam Bots, Player, Rock). A robot's own message
set (Honey Badger's ``hb50_commons``) lives above the core and is added with
:meth:`TypeRegistry.with_types` by the layer that knows the robots
(:func:`jointbus.tools.known_types.known_registry`), so the core never imports a robot;
:func:`message_types_in` lists a module's types for that.

Where a Python-facing type and its wire record share a type name (the typed ``JointState``, the
Player single-joint commands), the Python-facing one is registered: its ``from_cdr`` decodes the
record and gives back the type users work with.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from typing import Any, Protocol, Self


class MessageType(Protocol):
    """What a registered type offers (the :class:`~jointbus.messages.base.Message` interface)."""

    TYPE_NAME: str

    @classmethod
    def from_cdr(cls, data: bytes | bytearray | memoryview) -> Self: ...

    @classmethod
    def msgdef(cls) -> str: ...

    def to_cdr(self) -> bytes: ...


class UnknownTypeError(LookupError):
    """A type name that no registered class has; ``known`` lists those that do."""

    def __init__(self, type_name: str, known: Iterable[str]) -> None:
        self.type_name = type_name
        self.known = tuple(sorted(known))
        super().__init__(f"unknown message type {type_name!r}")

    def __str__(self) -> str:
        return str(self.args[0])


class TypeRegistry:
    """Type name → message class. Later registrations of the same name replace earlier ones."""

    def __init__(self, types: Iterable[type[Any]] = ()) -> None:
        self._types: dict[str, type[Any]] = {}
        for cls in types:
            self.register(cls)

    def register(self, cls: type[Any]) -> None:
        name = getattr(cls, "TYPE_NAME", None)
        if not isinstance(name, str) or not hasattr(cls, "from_cdr"):
            raise TypeError(f"{cls!r} is not a message type (needs TYPE_NAME and from_cdr)")
        self._types[name] = cls

    def by_type_name(self, type_name: str) -> type[Any]:
        """The class for ``pkg/msg/Name`` (``pkg/Name`` is accepted too)."""
        cls = self._types.get(type_name)
        if cls is None and type_name.count("/") == 1:
            pkg, name = type_name.split("/")
            cls = self._types.get(f"{pkg}/msg/{name}")
        if cls is None:
            raise UnknownTypeError(type_name, self._types)
        return cls

    def __contains__(self, type_name: object) -> bool:
        return type_name in self._types

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._types))

    def __len__(self) -> int:
        return len(self._types)

    def with_types(self, *types: type[Any]) -> TypeRegistry:
        """A new registry holding these types plus ``types`` (higher layers add their own)."""
        extended = TypeRegistry(self._types.values())
        for cls in types:
            extended.register(cls)
        return extended


def message_types_in(*modules: object) -> list[type[Any]]:
    """The message classes defined in ``modules`` (a ``TYPE_NAME`` and ``from_cdr``), in order."""
    found: list[type[Any]] = []
    for module in modules:
        name = getattr(module, "__name__", None)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and value.__module__ == name
                and isinstance(getattr(value, "TYPE_NAME", None), str)
                and hasattr(value, "from_cdr")
            ):
                found.append(value)
    return found


def _bundled_types() -> list[type[Any]]:
    from jointbus.messages import (
        geometry_msgs,
        joint_impedance,
        joint_limits,
        joint_sample,
        joint_state,
        jointbus_msgs,
        joints,
        nav_msgs,
        sensor_msgs,
        stamp,
        status,
        std_msgs,
        tf2_msgs,
    )
    from jointbus.messages.actarray import commands, data, description, geometry, reply, requests

    # Wire records first, so the Python-facing classes of the same name replace them.
    return message_types_in(
        jointbus_msgs,
        stamp,
        std_msgs,
        geometry_msgs,
        nav_msgs,
        sensor_msgs,
        tf2_msgs,
        status,
        joint_sample,
        joints,
        joint_limits,
        joint_impedance,
        data,
        geometry,
        requests,
        commands,
        reply,
        description,
        joint_state,
    )


@functools.cache
def default_registry() -> TypeRegistry:
    """The registry of the generic core's message types (built once); robots' sets are added
    above the core (:func:`jointbus.tools.known_types.known_registry`)."""
    return TypeRegistry(_bundled_types())
