"""Tools find the runtime's own messages by name, through the runtime registry."""

from __future__ import annotations

from jointbus.messages.registry import default_registry
from jointbus.robots.hb50.messages import Status
from jointbus.runtime.message_types import RUNTIME_MESSAGE_TYPES, runtime_registry


def test_runtime_types_are_added_to_every_bundled_type() -> None:
    registry = runtime_registry()
    for cls in RUNTIME_MESSAGE_TYPES:
        assert registry.by_type_name(cls.TYPE_NAME) is cls
        assert cls.TYPE_NAME not in default_registry()  # the lower layer's registry is unchanged
    assert registry.by_type_name(Status.TYPE_NAME) is Status
    assert len(registry) == len(default_registry()) + len(RUNTIME_MESSAGE_TYPES)


def test_a_parameter_list_decodes_by_name() -> None:
    cls = runtime_registry().by_type_name("jointbus_msgs/msg/ParameterList")
    msg = cls()
    assert cls.from_cdr(msg.to_cdr()) == msg
