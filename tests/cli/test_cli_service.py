"""``jointbus service list | call`` against a real server in this process, over the default hub."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import zenoh

from jointbus.bus import Bus, ServiceRefused, ZenohConfig
from jointbus.messages.actarray import ActuatorState
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
    # Nothing runs in domain 7: "nothing there" exits 1 (issue 20, item 12), saying where.
    assert other.returncode == 1, other.stderr
    assert other.stdout == ""
    assert "nothing runs there" in other.stderr and "domain 7" in other.stderr


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


def test_call_help_names_a_real_service() -> None:
    """Issue 12 item 9: the example was ``/arm6/power``; the node serves
    ``/arm6/actarray/power``."""
    text = run_cli(free_port(), "service", "call", "--help").stdout
    assert "/arm6/actarray/power" in text and "/arm6/power" not in text


def test_a_bad_speed_config_is_refused_naming_the_joint() -> None:
    """Issue 12 item 9: ``speed: -1.0`` for joint 2 was refused by the CLI as
    ``ActuatorSpeedConfigRequest: index 2: field 'speed' = -1.0`` — no joint name. The server,
    which knows the names, refuses it whole and names the joint (name and index)."""
    from support.array_server import served

    with served("sim://arm6?noise=false", "arm6") as server:
        before = server.array.config_speeds.copy()
        result = run_cli(
            server.port,
            "service", "call", "/arm6/actarray/speed_config",
            "jointbus_msgs/msg/ActuatorSpeedConfigRequest", '{joint: 2, speed: -1.0}',
        )  # fmt: skip
        assert result.returncode == 2, result.stderr  # a NACK
        reply = json.loads(result.stdout)
        assert reply["accepted"] is False and reply["reason"], reply
        assert (reply["joint"], reply["index"]) == (["elbow"], [2])
        assert "'elbow' (index 2)" in reply["text"] and "speed = -1.0" in reply["text"]
        assert (server.array.config_speeds == before).all()  # nothing changed


def test_a_nack_exits_2_with_its_reason_and_an_ack_exits_0() -> None:
    """Issue 12 (CLI 3): a limit NACK exited 0 with an empty ``reason``."""
    from support.array_server import served

    with served("sim://arm6?noise=false", "arm6") as server:
        position = (
            "service", "call", "/arm6/actarray/position",
            "jointbus_msgs/msg/ActuatorPositionCommand",
        )  # fmt: skip
        off = run_cli(server.port, *position, '{"joint": 2, "position": 0.2}')
        assert off.returncode == 2, off.stderr
        assert json.loads(off.stdout)["reason"] == "POWERED_OFF"
        assert off.stderr.startswith("refused: POWERED_OFF: ") and off.stderr.endswith("\n")
        on = run_cli(
            server.port,
            "service", "call", "/arm6/actarray/power",
            "jointbus_msgs/msg/ActuatorPowerRequest", '{"on": true}',
        )  # fmt: skip
        assert on.returncode == 0, on.stderr
        assert json.loads(on.stdout)["accepted"] is True
        limit = run_cli(server.port, *position, '{"joint": 2, "position": 9.0}')
        assert limit.returncode == 2, limit.stderr
        reply = json.loads(limit.stdout)
        assert (reply["accepted"], reply["reason"], reply["field"]) == (
            False,
            "OUT_OF_RANGE",
            "position",
        )
        assert (reply["joint"], reply["index"]) == (["elbow"], [2])
        assert "refused: OUT_OF_RANGE: " in limit.stderr and "'elbow' (index 2)" in limit.stderr
        assert not server.array.read().actuators[2].state & ActuatorState.MOVING


def _help_examples() -> list[tuple[str, list[str]]]:
    """Every example command line in a ``--help`` text of the CLI (``jointbus ...`` lines of an
    ``Example`` paragraph, with ``\\`` continuations), as (command path, argv)."""
    import shlex

    from jointbus.cli import main

    found: list[tuple[str, list[str]]] = []

    def walk(command: object, path: str) -> None:
        text = getattr(command, "help", None) or ""
        for paragraph in text.split("\n\n"):
            if paragraph.lstrip().startswith("Example"):
                line = paragraph.split("\n", 1)[1].replace("\\\n", " ")
                argv = shlex.split(line)
                assert argv[0] == "jointbus", line
                found.append((path, argv[1:]))
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, f"{path} {name}")

    walk(main.command_tree(), "jointbus")
    return found


def test_every_help_example_command_runs() -> None:
    """Issue 12 (CLI 4): the ``service call`` help showed ``'{on: true}'``, which the CLI
    refuses (YAML 1.1 reads a bare ``on`` as true). Each example is run against a served arm6."""
    from support.array_server import served

    examples = _help_examples()
    assert [path for path, _ in examples] == ["jointbus service call"]  # all there are
    with served("sim://arm6?noise=false", "arm6") as server:
        for path, argv in examples:
            done = run_cli(server.port, *argv)
            assert done.returncode == 0, (path, argv, done.stderr)


def test_every_type_and_values_example_in_a_help_text_builds_its_message() -> None:
    """The e.g. of a TYPE argument and of a VALUES argument of one command build a message."""
    import re

    from jointbus.cli import main
    from jointbus.cli.topic import resolve_type
    from jointbus.cli.values import build_message, parse_values

    checked = []

    def example(command: object, metavar: str) -> str | None:
        for param in getattr(command, "params", []):
            if param.metavar == metavar and param.help:
                match = re.search(r"e\.g\. ('[^']*'|\S+?)\.?( |$)", param.help)
                if match:
                    return str(match.group(1)).strip("'")
        return None

    def walk(command: object, path: str) -> None:
        type_name, values = example(command, "TYPE"), example(command, "VALUES")
        if type_name and values:
            msg_type = resolve_type(type_name)
            build_message(msg_type.facing, parse_values(values))
            checked.append(path)
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, f"{path} {name}")

    walk(main.command_tree(), "jointbus")
    assert sorted(checked) == ["jointbus service call", "jointbus topic pub"]
