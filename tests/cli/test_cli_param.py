"""``jointbus param list | get | set`` run as a user runs them, against nodes in another process.

As a script, ``python test_cli_param.py HUB_PORT`` is the *robot*: it becomes the Zenoh hub on
HUB_PORT and runs ``bridge_node`` and ``control_node`` with their share of the hb50 robot file's
parameters (:class:`jointbus.runtime.parameters.NodeParameters`); the bridge prints
``applied NAME VALUE`` whenever its change callback applies a new value, so a test sees the change
reach the node's own code. It prints ``ready`` and lives until stdin closes.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Final

import pytest

BRIDGE_NAMES: Final = ("watchdog_time", "thermal_warn", "arbitration_threshold", "kd")
CONTROL_NAMES: Final = ("stand_height", "cmd_vel_lin", "cmd_vel_ang", "kp", "kd")


class Robot:
    """The robot process and the lines it printed."""

    def __init__(self, port: int, proc: subprocess.Popen[str]) -> None:
        self.port = port
        self.proc = proc
        self.lines: list[str] = []
        self._pump = threading.Thread(target=self._read, daemon=True)
        self._pump.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))


@pytest.fixture(scope="module")
def robot() -> Iterator[Robot]:
    from support.cli import cli_env, free_port, stop

    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-u", __file__, str(port)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=cli_env(port),
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if line != "ready":
        proc.kill()
        proc.wait()
        raise RuntimeError(f"robot process did not start: {line!r}")
    yield Robot(port, proc)
    stop(proc)


def param(robot: Robot, *args: str) -> subprocess.CompletedProcess[str]:
    from support.cli import run_cli

    return run_cli(robot.port, "param", *args)


def _rows(stdout: str) -> dict[tuple[str, str], dict[str, str]]:
    """The table's rows by (node, name), each as {column: cell}, cut at the header's columns."""
    header, *lines = stdout.splitlines()
    columns = header.split()
    assert columns == ["NODE", "NAME", "VALUE", "UNIT", "RANGE", "TYPE", "DESCRIPTION"]
    starts = [header.index(c) for c in columns]
    rows: dict[tuple[str, str], dict[str, str]] = {}
    for line in lines:
        cells = {
            c: line[a:b].strip()
            for c, a, b in zip(columns, starts, [*starts[1:], len(line)], strict=True)
        }
        rows[cells["NODE"], cells["NAME"]] = cells
    return rows


def test_list_shows_every_nodes_parameters_with_value_unit_and_range(robot: Robot) -> None:
    result = param(robot, "list")
    assert result.returncode == 0, result.stderr
    rows = _rows(result.stdout)
    assert {name for node, name in rows if node == "bridge_node"} == set(BRIDGE_NAMES)
    assert {name for node, name in rows if node == "control_node"} == set(CONTROL_NAMES)
    warn = rows["bridge_node", "thermal_warn"]
    assert (warn["VALUE"], warn["UNIT"], warn["RANGE"], warn["TYPE"]) == (
        "80.0",
        "°C",
        "[0.0, 140.0]",
        "float",
    )
    assert "WARN status" in warn["DESCRIPTION"]
    watchdog = rows["bridge_node", "watchdog_time"]["DESCRIPTION"]
    # what the bridge does (tests/robots/hb50/bridge: safe mode applies kp = 0, kd = safe_kd)
    assert "damping" in watchdog and "drives stay on" in watchdog and "off" not in watchdog
    height = rows["control_node", "stand_height"]
    assert (height["VALUE"], height["UNIT"], height["RANGE"]) == ("0.34", "m", "[0.15, 0.42]")

    only = param(robot, "list", "control_node", "--json")
    assert only.returncode == 0, only.stderr
    records = json.loads(only.stdout)
    assert {r["node"] for r in records} == {"control_node"}
    cmd_vel = next(r for r in records if r["name"] == "cmd_vel_lin")
    assert (cmd_vel["value"], cmd_vel["min"], cmd_vel["max"], cmd_vel["unit"]) == (
        1.0,
        0.0,
        2.0,
        "m/s",
    )
    assert cmd_vel["type"] == "float" and "speed" in cmd_vel["description"]


def test_get_prints_the_value_and_names_what_is_missing(robot: Robot) -> None:
    result = param(robot, "get", "bridge_node", "arbitration_threshold")
    assert (result.returncode, result.stdout.strip()) == (0, "10.0"), result.stderr

    unknown = param(robot, "get", "bridge_node", "warp_speed")
    assert unknown.returncode == 1
    assert "no parameter 'warp_speed'" in unknown.stderr and "watchdog_time" in unknown.stderr

    absent = param(robot, "get", "arm_node", "kp", "--wait", "1")
    assert absent.returncode == 1
    assert "no parameters from node 'arm_node'" in absent.stderr
    assert f"looked on hub port {robot.port}, domain " in absent.stderr, absent.stderr
    assert "bridge_node" in absent.stderr and "control_node" in absent.stderr


def test_list_with_nothing_there_says_where_it_looked_and_exits_1() -> None:
    """As ``get`` / ``set`` (and the README's every "nothing there" error): an empty listing from
    the wrong port must not pass for a robot without parameters."""
    from support.cli import free_port, run_cli

    port = free_port()
    for extra in ((), ("--json",)):
        result = run_cli(port, "param", "list", "--wait", "0.5", *extra)
        assert result.returncode == 1, (extra, result.stderr)
        assert "no parameters on /hb50/parameters within 0.5 s" in result.stderr, result.stderr
        assert f"looked on hub port {port}, domain " in result.stderr, result.stderr
        assert result.stdout == ""


def test_set_changes_the_value_in_the_running_node(robot: Robot) -> None:
    result = param(robot, "set", "bridge_node", "watchdog_time", "0.5")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "param watchdog_time changed 0.25 → 0.5 s"
    assert "applied watchdog_time 0.5" in robot.lines  # the node's own callback ran

    after = param(robot, "get", "bridge_node", "watchdog_time")
    assert (after.returncode, after.stdout.strip()) == (0, "0.5"), after.stderr


def test_an_out_of_bounds_set_is_refused_with_the_nodes_reason(robot: Robot) -> None:
    result = param(robot, "set", "control_node", "kd", "60")
    assert result.returncode == 1
    error = result.stderr.strip()
    assert error.startswith("error: param kd refused '60'")
    assert "[0.0, 50.0] N·m·s/rad" in error
    assert result.stdout == ""

    after = param(robot, "get", "control_node", "kd")
    assert after.stdout.strip() == "3.0"  # unchanged; the bridge's kd is a different parameter


# ---- the robot process ---------------------------------------------------------------------------
def _robot(hub_port: int) -> int:
    from jointbus.bus import Bus, ZenohConfig
    from jointbus.model import load_robot
    from jointbus.runtime import Node
    from jointbus.runtime.parameter_messages import format_value
    from jointbus.runtime.parameters import NodeParameters, ParameterChange, select_specs

    specs = load_robot("hb50").parameters
    with (
        Bus(name="robot", zenoh=ZenohConfig(hub_port=hub_port)) as bus,
        Node("bridge_node", bus) as bridge,
        Node("control_node", bus) as control,
    ):
        bridge_params = NodeParameters(bridge, select_specs(specs, BRIDGE_NAMES))
        NodeParameters(control, select_specs(specs, CONTROL_NAMES))

        def applied(change: ParameterChange) -> None:
            print(f"applied {change.name} {format_value(change.new)}", flush=True)

        bridge_params.on_change(applied)
        bridge.start()
        control.start()
        print("ready", flush=True)
        sys.stdin.read()  # the parent closes stdin (clean end) or kills us
    return 0


@pytest.mark.parametrize("robot_name", ["hb50", "arm6", "rover"])
def test_every_robot_describes_the_watchdog_as_the_bridge_acts(robot_name: str) -> None:
    from jointbus.model import load_robot

    spec = next(p for p in load_robot(robot_name).parameters if p.name == "watchdog_time")
    assert "safe mode" in spec.description and "damping" in spec.description
    assert "switched off" not in spec.description and "power is cut" not in spec.description


if __name__ == "__main__":
    sys.exit(_robot(int(sys.argv[1])))



def test_a_served_array_is_running_and_offers_no_parameters() -> None:
    """Issue 12 (CLI 5): while ``jointbus serve`` ran, ``param list --namespace arm3`` said
    "is a jointbus program running there?". The array node runs and has no live parameters (its
    settings are fixed at start): the CLI says exactly that, and an empty list is no error."""
    from support.array_server import served
    from support.cli import run_cli

    with served("sim://arm6?noise=false", "arm6") as server:
        for extra in ((), ("--json",)):
            done = run_cli(
                server.port, "param", "list", "--namespace", "arm6", "--wait", "1", *extra
            )
            assert done.returncode == 0, done.stderr
            assert done.stdout == ("[]\n" if extra else "")
            assert "node array_node runs there but offers no live parameters" in done.stderr
            assert "is a jointbus program running there" not in done.stderr
            assert done.stderr.endswith("\n")
        got = run_cli(
            server.port, "param", "get", "array_node", "rate", "--namespace", "arm6", "--wait", "1"
        )
        assert got.returncode == 1
        assert got.stderr.startswith(
            "error: node 'array_node' runs in /arm6 but offers no live parameters"
        ), got.stderr
