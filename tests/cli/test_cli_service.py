"""``jointbus service list | call`` against a real server in this process, over the default hub."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import zenoh

from jointbus.bus import Bus, ServiceRefused, ZenohConfig
from jointbus.messages.std_msgs import String
from support.cli import free_port, run_cli

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
        "service_type": "jointbus_msgs/srv/StringString",
    } in rows


def test_list_shows_a_ros2_server_of_an_unknown_type_and_only_its_domain(hub: int) -> None:
    """A ROS 2 node's AddTwoInts server (its SS token as rmw_zenoh declares it, on a plain Zenoh
    session) is listed with its service type; another domain lists neither server."""
    config = zenoh.Config()
    config.insert_json5("mode", '"peer"')
    config.insert_json5("scouting/multicast/enabled", "false")
    config.insert_json5("connect/endpoints", f'["tcp/127.0.0.1:{hub}"]')
    ros = zenoh.open(config)
    token = ros.liveliness().declare_token(
        f"@ros2_lv/0/{ros.zid()}/0/10/SS/%/%/add_two_ints_server/%add_two_ints/"
        "example_interfaces::srv::dds_::AddTwoInts_/"
        "RIHS01_e118de6bf5eeb66a2491b5bda11202e7b68f198d6f67922cf30364858239c81a/::,10:,:,:,,"
    )
    try:
        done = run_cli(hub, "service", "list", "--json", "--wait", "1.0")
        other = run_cli(hub, "service", "list", "--json", "--wait", "1.0", "--domain-id", "7")
        text = run_cli(hub, "service", "list", "--wait", "1.0")
    finally:
        token.undeclare()  # type: ignore[no-untyped-call]
        ros.close()  # type: ignore[no-untyped-call]
    assert done.returncode == 0, done.stderr
    assert {
        "name": "/add_two_ints",
        "request_type": "",
        "response_type": "",
        "node": "add_two_ints_server",
        "service_type": "example_interfaces/srv/AddTwoInts",
    } in [json.loads(line) for line in done.stdout.splitlines()]
    assert "/add_two_ints  example_interfaces/srv/AddTwoInts  [add_two_ints_server]" in text.stdout
    assert other.returncode == 0, other.stderr
    assert other.stdout == ""


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
