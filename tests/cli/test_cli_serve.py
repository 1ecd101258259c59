"""``jointbus serve URL``: an array served by its own process, driven with ``bus://`` from here."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jointbus import drivers
from jointbus.drivers.bus.driver import ArrayServerError
from jointbus.drivers.errors import RejectReason, RequestRejected
from jointbus.messages.actarray import ActuatorState
from support.cli import cli_env, free_port, run_cli, start_cli


def _wait_line(proc: object, prefix: str) -> str:
    stdout = proc.stdout  # type: ignore[attr-defined]
    line: str = stdout.readline()
    assert line.startswith(prefix), line
    return line


def test_serve_then_drive_from_another_process_then_server_gone_is_a_typed_error() -> None:
    port = free_port()
    server = start_cli(port, "serve", "sim://arm6?noise=false", "--rate", "200")
    try:
        assert _wait_line(server, "serving sim://arm6?noise=false as /arm6 at 200 Hz")
        with drivers.open(f"bus://arm6?hub_port={port}&timeout=1.0") as arm:
            arm.power(True)
            arm.position("elbow", 0.5)
            deadline = time.monotonic() + 20.0
            while time.monotonic() < deadline:
                elbow = arm.read().actuators[2]
                if not elbow.state & ActuatorState.MOVING and abs(elbow.position - 0.5) < 0.01:
                    break
                time.sleep(0.02)
            assert abs(arm.read().actuators[2].position - 0.5) < 0.01
            # the same services from the command line
            done = run_cli(
                port,
                "service",
                "call",
                "/arm6/actarray/position",
                "jointbus_msgs/msg/ActuatorPositionCommand",
                "{joint: 2, position: 9.0}",
            )
            assert done.returncode == 2, done.stderr  # a NACK
            reply = json.loads(done.stdout)
            assert (reply["accepted"], reply["error"], reply["joint"], reply["index"]) == (
                False,
                "LimitError",
                ["elbow"],
                [2],
            )
            server.send_signal(signal.SIGKILL)
            server.wait(timeout=10.0)
            start = time.monotonic()
            with pytest.raises(ArrayServerError):
                arm.position("elbow", 0.2)
            assert time.monotonic() - start < 1.0 + 1.0  # the 1 s timeout, never a hang
            time.sleep(1.0)
            with pytest.raises(ArrayServerError, match="no data for"):
                arm.read()  # no stale reading passed off as current
    finally:
        server.kill()
        server.wait(timeout=10.0)


def test_serve_stops_cleanly_on_sigterm_and_refuses_a_bad_url() -> None:
    """SIGTERM: exit code 0, ``stopped serving`` and nothing else on stderr — no "nanobind:
    leaked 3 instances!" report of the driver's ruckig planner, which a served array's node kept
    alive to the interpreter's exit now and then (the driver frees it when closed)."""
    port = free_port()
    server = start_cli(port, "serve", "sim://arm6", "--name", "left_arm")
    try:
        assert _wait_line(server, "serving sim://arm6 as /left_arm")
        with drivers.open(f"bus://left_arm?hub_port={port}") as arm:
            with pytest.raises(RequestRejected) as err:
                arm.home()
            assert err.value.reason is RejectReason.POWERED_OFF
        # a script that never closes its bus:// array still exits (README's one-liner)
        one_liner = subprocess.run(
            [
                sys.executable,
                "-c",
                'from jointbus import drivers; arm = drivers.open("bus://left_arm"); '
                "arm.power(True); print(arm.read().motor_power or 'on')",
            ],
            capture_output=True,
            text=True,
            timeout=30.0,
            env=cli_env(port),
            check=False,
        )
        assert one_liner.returncode == 0, one_liner.stderr
        server.send_signal(signal.SIGTERM)
        _, stderr = server.communicate(timeout=10.0)
        assert server.returncode == 0, stderr
    finally:
        server.kill()
        server.wait(timeout=10.0)
    assert "stopped serving /left_arm" in stderr, stderr
    assert "nanobind" not in stderr and "leaked" not in stderr, stderr
    done = run_cli(port, "serve", "sim://nowhere")
    assert done.returncode == 1 and "no simulated robot 'nowhere'" in done.stderr


#: ``jointbus serve`` in a process whose array opening is hit by SIGTERM (as a process manager
#: stopping a server that just started does): the driver's open is wrapped to signal its own
#: process once the array is open and powered, and its close to say so.
_SIGTERM_IN_OPEN = """\
import os, signal, sys, time
from jointbus import drivers
real_open = drivers.open
def open_then_sigterm(url):
    array = real_open(url)
    array.power(True)
    real_close = array.close
    def close():
        print("array closed, powered", bool(array.read_joints().motor_power), flush=True)
        real_close()
    array.close = close
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(0.2)  # the signal is handled here on the old code: the process dies
    return array
drivers.open = open_then_sigterm
from jointbus.cli.main import main
sys.argv = ["jointbus", "serve", "sim://arm6", "--name", "early"]
sys.exit(main())
"""


def test_a_sigterm_while_the_array_opens_powers_it_off_and_closes_it() -> None:
    """A SIGTERM in serve's first 1-2 s, before its handler was installed, killed it (exit -15)
    with the array opened — and, on a real bus, powered — never powered off nor closed."""
    result = subprocess.run(
        [sys.executable, "-c", _SIGTERM_IN_OPEN],
        capture_output=True,
        text=True,
        timeout=60.0,
        env=cli_env(free_port()),
        check=False,
    )
    assert result.returncode == 0, (result.returncode, result.stderr)
    assert "array closed, powered False" in result.stdout, result.stdout
    assert "stopped before serving: the array was powered off and closed" in result.stderr
    assert "serving sim://arm6" not in result.stdout


def test_a_second_server_of_the_same_name_is_refused_and_the_first_keeps_serving() -> None:
    port = free_port()
    server = start_cli(port, "serve", "sim://arm6")
    try:
        assert _wait_line(server, "serving sim://arm6 as /arm6")
        with drivers.open(f"bus://arm6?hub_port={port}&timeout=2.0") as arm:
            arm.power(True)
            second = run_cli(port, "serve", "sim://arm6", "--duration", "5", timeout=60.0)
            assert second.returncode == 1, (second.stdout, second.stderr)
            assert "serving" not in second.stdout  # refused before it opened the array
            assert second.stderr.strip().splitlines()[-1].startswith(
                "error: node 'array_node' in namespace /arm6 already runs on the bus "
                f"(hub port {port}, domain "
            ), second.stderr
            assert arm.read().motor_power  # the client still reaches the first server, powered
            other = run_cli(
                port, "serve", "sim://arm6", "--name", "right_arm", "--duration", "1",
                timeout=60.0,
            )
            assert other.returncode == 0, other.stderr  # another name is another array
    finally:
        server.kill()
        server.wait(timeout=10.0)


_ARM3 = """
name: arm3
links: [{name: base}, {name: l1}, {name: l2}, {name: l3}]
joints:
  - {name: j_base, type: revolute, parent: base, child: l1, axis: [0, 0, 1],
     limits: {position: [-2.5, 2.5], velocity: 3.0, effort: 5.0, current: 4.0}}
  - {name: j_shoulder, type: revolute, parent: l1, child: l2, axis: [0, 1, 0],
     limits: {position: [-2.5, 2.5], velocity: 3.0, effort: 5.0, current: 4.0}}
  - {name: j_elbow, type: revolute, parent: l2, child: l3, axis: [0, 1, 0],
     limits: {position: [-2.5, 0.5], velocity: 3.0, effort: 5.0, current: 4.0}}
"""


def test_a_robot_file_is_served_under_the_robots_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "arm3.yaml").write_text(_ARM3)
    monkeypatch.chdir(tmp_path)  # the README's relative form, sim://arm3.yaml
    port = free_port()
    for url in ("sim://arm3.yaml", f"sim://{tmp_path}/arm3.yaml"):
        done = run_cli(port, "serve", url, "--duration", "0.5", timeout=60.0)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(f"serving {url} as /arm3 at 100 Hz"), done.stdout
    # --name still wins over the robot's name
    done = run_cli(port, "serve", "sim://arm3.yaml", "--name", "left", "--duration", "0.5")
    assert done.returncode == 0 and "as /left at" in done.stdout, done.stderr


def test_a_robot_name_that_is_no_namespace_blames_the_file_not_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "arm3.yaml").write_text(_ARM3.replace("name: arm3", "name: arm-3"))
    monkeypatch.chdir(tmp_path)
    port = free_port()
    done = run_cli(port, "serve", "sim://arm3.yaml", "--duration", "0.5")
    assert done.returncode == 1 and "serving" not in done.stdout
    assert done.stderr.startswith("error: ") and done.stderr.endswith("\n"), done.stderr
    assert "--name" in done.stderr  # as the way out, not as the culprit
    assert not done.stderr.startswith("error: --name")
    assert "'arm-3'" in done.stderr and "arm3.yaml" in done.stderr, done.stderr
    # a --name the user did pass is named as the culprit
    bad = run_cli(port, "serve", "sim://arm3.yaml", "--name", "9lives")
    assert bad.returncode == 1 and bad.stderr.startswith("error: --name '9lives': "), bad.stderr
    assert bad.stderr.endswith("\n")
    # a missing file is the driver's file error, before anything joins the bus
    missing = run_cli(port, "serve", "sim://nothere.yaml")
    assert missing.returncode == 1 and "no robot file 'nothere.yaml'" in missing.stderr


def _start_ignoring_sigint(port: int, *args: str) -> subprocess.Popen[str]:
    """``jointbus ARGS`` as a script's background job starts it: SIGINT inherited *ignored*."""
    return subprocess.Popen(
        [sys.executable, "-u", "-m", "jointbus.cli.main", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(port),
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),  # noqa: PLW1509
    )


def test_serve_prints_the_nodes_warnings_and_errors_and_stops_on_sigint_from_a_script() -> None:
    """Issue 20, item 15: ``serve`` printed no WARN / ERROR line (the demo does), and started in
    the background from a script it ignored SIGINT; it stops cleanly on it now (power off)."""
    port = free_port()
    server = _start_ignoring_sigint(port, "serve", "sim://arm6?noise=false")
    try:
        assert _wait_line(server, "serving sim://arm6?noise=false as /arm6")
        with (
            drivers.open(f"bus://arm6?hub_port={port}&timeout=2.0") as arm,
            pytest.raises(RequestRejected),
        ):
            arm.position("elbow", 0.5)  # powered off: refused, and reported on status
        server.send_signal(signal.SIGINT)
        _out, err = server.communicate(timeout=20.0)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(timeout=10.0)
    assert server.returncode == 0, err
    refused = [line for line in err.splitlines() if " ERROR array_node: " in line]
    assert refused, err
    assert "position" in refused[0] and "elbow" in refused[0] and "POWERED_OFF" in refused[0]
    assert re.match(r"\d\d:\d\d:\d\d ERROR array_node: ", refused[0]), refused[0]
    assert err.rstrip().endswith("stopped serving /arm6"), err


def test_any_command_started_with_sigint_ignored_still_stops_on_it() -> None:
    """The same inherited ignore for a command that relies on Ctrl-C (``topic hz`` runs until
    interrupted): main() installs the default handler explicitly."""
    port = free_port()
    hz = _start_ignoring_sigint(port, "topic", "hz", "/nothing/here")
    try:
        assert hz.stderr is not None
        assert "does not appear to be published" in hz.stderr.readline()
        hz.send_signal(signal.SIGINT)
        assert hz.wait(timeout=20.0) == 0
    finally:
        if hz.poll() is None:
            hz.kill()
            hz.wait(timeout=10.0)


def test_a_can_array_is_served_with_the_nodes_cycle_as_its_period() -> None:
    """``serve can://…`` at 100 Hz with the driver's 2 ms default period: its limit guard looked
    2 ms ahead of impedance commands that each stood for the node's 10 ms cycle. Without
    ``period`` in the URL the node's cycle is used, and the first line says so; a URL that
    gives another period keeps it, and the line names the mismatch. A motor twin runs on the
    clock, so the line no longer tells its user to start it with the node's period (it did
    while the twin stepped one period per frame)."""
    from jointbus.cli.serve import url_at_rate
    from jointbus.drivers.can.driver import CanActuatorArray
    from jointbus.drivers.can.twin_server import TwinServer

    url = "can://virtual/served_period?robot=hb50&model=md80"
    opened, note = url_at_rate(url, 100.0)
    assert opened == url + "&period=0.01"
    assert note == " (period=0.01 s: the node's cycle, the limit guard's horizon)"
    with TwinServer.from_url(opened, noise=False), drivers.open(opened) as array:
        assert isinstance(array, CanActuatorArray)
        assert array.can_config.period_s == pytest.approx(0.01)
    assert url_at_rate("can://virtual/x?model=md80&robot=hb50", 500.0)[0].endswith("period=0.002")
    kept, mismatch = url_at_rate(url + "&period=0.002", 100.0)
    assert kept == url + "&period=0.002"
    assert "period=0.002 s, but the node writes a command every 0.01 s" in mismatch
    assert url_at_rate(url + "&period=0.01", 100.0) == (url + "&period=0.01", "")
    assert url_at_rate("sim://arm6?noise=false", 100.0) == ("sim://arm6?noise=false", "")
