"""The type registry finds every bundled message by name and decodes what it finds."""

from __future__ import annotations

import pytest

from jointbus.messages.joint_state import JointState
from jointbus.messages.registry import TypeRegistry, UnknownTypeError, default_registry
from jointbus.robots.hb50.messages import Status


def test_every_registered_type_round_trips_its_definition_name() -> None:
    registry = default_registry()
    assert len(registry) >= 40
    for name in registry:
        cls = registry.by_type_name(name)
        assert cls.TYPE_NAME == name
        assert cls.msgdef().strip()


def test_python_facing_class_wins_over_its_wire_record() -> None:
    assert default_registry().by_type_name("jointbus_msgs/msg/JointState") is JointState


def test_short_ros_spelling_is_accepted_and_decodes() -> None:
    cls = default_registry().by_type_name("hb50_commons/Status")
    msg = Status.ok("me", "alive")
    assert cls.from_cdr(msg.to_cdr()) == msg


def test_unknown_type_is_a_typed_error_listing_known_ones() -> None:
    registry = TypeRegistry([Status])
    with pytest.raises(UnknownTypeError) as info:
        registry.by_type_name("nav_msgs/msg/Odometry")
    assert info.value.known == ("hb50_commons/msg/Status",)


def test_non_message_is_refused() -> None:
    with pytest.raises(TypeError):
        TypeRegistry([int])
