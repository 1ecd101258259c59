"""Node services: names under the namespace, refusals on the status topic, closed at shutdown."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import pytest

from jointbus.bus import RELIABLE, Bus, ServiceRefused, ServiceUnavailableError
from jointbus.codec.wire import Int64
from jointbus.messages.base import Message
from jointbus.robots.hb50.messages import Level, Status
from jointbus.runtime import Node
from support.runtime import wait_until


@dataclass(frozen=True, slots=True)
class Number(Message):
    """A number (test-local type)."""

    TYPE_NAME: ClassVar[str] = "jointbus_test/msg/Number"
    n: Int64 = 0


def square(request: Number) -> Number:
    if request.n > 1000:
        raise ServiceRefused("", f"n = {request.n}; expected <= 1000")
    return Number(request.n * request.n)


def test_node_service_resolves_under_the_namespace_and_reports_refusals() -> None:
    with Bus(name="test") as bus:
        statuses: list[Status] = []
        bus.subscribe("/arm6/status", Status, statuses.append, RELIABLE, realtime=True)
        node = Node("server", bus, namespace="arm6")
        node.create_service("square", Number, Number, square)
        client = Node("caller", bus, namespace="arm6").create_client("square", Number, Number)
        assert client.name == "/arm6/square"
        assert client.call(Number(12)) == Number(144)
        with pytest.raises(ServiceRefused, match="expected <= 1000"):
            client.call(Number(5000))
        assert wait_until(
            lambda: any(
                s.level == Level.WARN and "n = 5000; expected <= 1000" in s.status for s in statuses
            ),
            timeout=2.0,
        )
        node.shutdown()
        with pytest.raises(ServiceUnavailableError):
            client.call(Number(2))
