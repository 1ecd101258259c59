"""``jointbus service list | call`` against a real server in this process, over the default hub."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from cli_support import free_port, run_cli

from jointbus.bus import Bus, ServiceRefused, ZenohConfig
from jointbus.messages.std_msgs import String

NAME = "/cli_test/shout"


def shout(request: String) -> String:
    if not request.data:
        raise ServiceRefused(NAME, "nothing to shout; expected a non-empty data")
    return String(request.data.upper())


@pytest.fixture
def hub() -> Iterator[int]:
    """This process is the hub on a free port and serves NAME as node ``shouter``."""
    port = free_port()
    with Bus(name="cli-service-test", zenoh=ZenohConfig(hub_port=port)) as bus:
        bus.serve(NAME, String, String, shout, node="shouter")
        yield port


def test_list_shows_name_types_and_node(hub: int) -> None:
    done = run_cli(hub, "service", "list", "--json", "--wait", "1.0")
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert {
        "name": NAME,
        "request_type": String.TYPE_NAME,
        "response_type": String.TYPE_NAME,
        "node": "shouter",
    } in rows


def test_call_prints_the_response(hub: int) -> None:
    done = run_cli(hub, "service", "call", NAME, "std_msgs/msg/String", "{data: hello}")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"data": "HELLO"}


def test_a_refused_call_exits_2_with_the_reason(hub: int) -> None:
    done = run_cli(hub, "service", "call", NAME, "std_msgs/msg/String", "{data: ''}")
    assert done.returncode == 2
    assert "refused: nothing to shout; expected a non-empty data" in done.stderr


def test_unknown_service_and_wrong_type_are_one_line_errors(hub: int) -> None:
    done = run_cli(
        hub, "service", "call", "/cli_test/nobody", "std_msgs/msg/String", "--wait", "0.5"
    )
    assert done.returncode == 1 and "no server offers service /cli_test/nobody" in done.stderr
    assert f"looked on hub port {hub}, domain " in done.stderr, done.stderr
    done = run_cli(hub, "service", "call", NAME, "std_msgs/msg/Header", "{frame_id: x}")
    assert done.returncode == 1
    assert f"takes {String.TYPE_NAME}, not std_msgs/msg/Header" in done.stderr


def test_list_with_no_services_says_so_and_where_it_looked() -> None:
    """Issue: against the demo (which offers no service) ``service list`` printed nothing."""
    port = free_port()
    with Bus(name="cli-service-empty", zenoh=ZenohConfig(hub_port=port)) as bus:
        bus.publisher("/cli_test/feed", String)  # a running program, but no service
        for args in ((), ("--json",)):
            done = run_cli(port, "service", "list", "--wait", "0.5", *args)
            assert done.returncode == 0, done.stderr
            assert done.stdout == ""  # stdout stays machine-readable
            assert "no services found" in done.stderr, done.stderr
            assert f"looked on hub port {port}, domain " in done.stderr, done.stderr
