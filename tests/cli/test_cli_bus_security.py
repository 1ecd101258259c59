"""A TLS-only robot from the command line: a robot, a controller, an operator and an observer.

What a user relies on (issue 24): every bus command takes ``--tls-cert``, ``--tls-key``,
``--tls-ca`` and ``--access-rules`` (with their environment variables); a robot started with them
(``jointbus serve ... --listen tls/...``) and the rules of ``jointbus security rules`` is found by
the allowed peers (``topic list``, ``node list``, ``service list``); an observer's calls that
change anything (power, e-stop, brakes, home) are refused with an error that says so, and the
robot reports them on its status by certificate name; a controller's power call and an
operator's e-stop are accepted; a peer whose certificate the robot refuses gets an error saying
so; half-given TLS options are one ``error:`` line.

Each peer is a separate ``jointbus`` process on loopback (127.0.0.1), with certificates made by the
test (:func:`test_zenoh_tls.make_pki`); the robot is ``jointbus serve sim://arm6``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from jointbus.cli.bus_security import SECURITY_ENVIRONMENT, SECURITY_OPTIONS
from support.cli import cli_env, free_port

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bus"))
from test_cli_bus_options import OFFLINE_COMMANDS, _leaf_commands
from test_zenoh_tls import Pki, make_pki

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl CLI")

HOSTS = ("robot", "controller", "teleop", "monitor")


def test_every_bus_joining_command_takes_the_security_options_and_variables() -> None:
    for path, command in _leaf_commands():
        if path in OFFLINE_COMMANDS or path.split()[0] in OFFLINE_COMMANDS:
            continue
        options = {opt: param for param in command.params for opt in param.opts}
        for flag, variable in zip(SECURITY_OPTIONS, SECURITY_ENVIRONMENT, strict=True):
            assert flag in options, f"`jointbus {path}` has no {flag}"
            assert options[flag].envvar == variable, f"`jointbus {path}` {flag} ignores {variable}"
        assert "--listen" in options, f"`jointbus {path}` has no --listen"


class Site:
    """``jointbus serve sim://arm6`` on a TLS-only bus with the rules, and how peers join it."""

    def __init__(self, pki: Pki, folder: Path) -> None:
        self.pki = pki
        self.port = free_port()
        self.endpoint = f"tls/127.0.0.1:{self.port}"
        self.rules = folder / "rules.json5"
        made = self.jointbus(
            "security", "rules", "--robot", "robot.hb50", "--controller", "controller.hb50",
            "--operator", "teleop.hb50", "--observer", "monitor.hb50", host=None,
        )  # fmt: skip
        assert made.returncode == 0, made.stderr
        self.rules.write_text(made.stdout)
        self.robot = subprocess.Popen(
            [sys.executable, "-u", "-m", "jointbus.cli.main", "serve", "sim://arm6",
             "--listen", self.endpoint, "--access-rules", str(self.rules),
             *self.tls("robot")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env(free_port()),
        )  # fmt: skip
        assert self.robot.stdout is not None
        line = self.robot.stdout.readline()
        assert "serving sim://arm6" in line, line + self.robot.stderr.read()

    def tls(self, host: str) -> list[str]:
        files = self.pki.tls[host]
        return ["--tls-cert", str(files.certificate), "--tls-key", str(files.private_key),
                "--tls-ca", str(files.ca)]  # fmt: skip

    def jointbus(self, *args: str, host: str | None) -> subprocess.CompletedProcess[str]:
        join = [] if host is None else ["--connect", self.endpoint, *self.tls(host)]
        return subprocess.run(
            [sys.executable, "-m", "jointbus.cli.main", *args, *join],
            capture_output=True, text=True, timeout=60, env=cli_env(free_port()), check=False,
        )  # fmt: skip

    def close(self) -> None:
        self.robot.terminate()
        try:
            self.robot.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.robot.kill()
            self.robot.wait()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    folder = tmp_path_factory.mktemp("site")
    s = Site(make_pki(folder, HOSTS), folder)
    yield s
    s.close()


CALLS = {
    "power": ("/arm6/actarray/power", "jointbus_msgs/msg/ActuatorPowerRequest", '{"on": false}'),
    "estop": ("/arm6/estop", "std_msgs/msg/String", '{"data": "monitor"}'),
    "brakes": ("/arm6/actarray/brakes", "jointbus_msgs/msg/ActuatorBrakesRequest",
               '{"engaged": true}'),
    "home": ("/arm6/actarray/home", "jointbus_msgs/msg/ActuatorHomeCommand", "{}"),
}  # fmt: skip


def test_allowed_peers_discover_the_robot(site: Site) -> None:
    for host in ("monitor", "controller"):
        topics = site.jointbus("topic", "list", host=host)
        assert topics.returncode == 0, topics.stderr
        assert "/arm6/actarray/data" in topics.stdout
        nodes = site.jointbus("node", "list", host=host)
        assert "array_node" in nodes.stdout, nodes.stderr
        services = site.jointbus("service", "list", host=host)
        assert "/arm6/actarray/power" in services.stdout, services.stderr


@pytest.mark.parametrize("call", list(CALLS))
def test_an_observers_call_is_refused_with_an_error_that_says_so(site: Site, call: str) -> None:
    name, type_name, values = CALLS[call]
    done = site.jointbus(
        "service", "call", name, type_name, values, "--timeout", "1", host="monitor"
    )
    assert done.returncode == 1
    assert "denied" in done.stderr and "robot.hb50" in done.stderr, done.stderr


def test_the_robot_reports_the_refused_observer_on_its_status(site: Site) -> None:
    echo = subprocess.Popen(
        [sys.executable, "-u", "-m", "jointbus.cli.main", "topic", "echo", "/arm6/status",
         "--connect", site.endpoint, *site.tls("controller")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env(free_port()),
    )  # fmt: skip
    try:
        time.sleep(3.0)  # joined and subscribed
        site.jointbus(
            "service", "call", "/arm6/actarray/accel_config",
            "jointbus_msgs/msg/ActuatorAccelConfigRequest", '{"joint": 0, "accel": 1.0}',
            "--timeout", "1",
            host="monitor",
        )  # fmt: skip
        time.sleep(3.0)  # the node's status is rate-limited: one report a second at most
    finally:
        echo.terminate()
        out, err = echo.communicate(timeout=10)
    expected = "access denied: certificate 'monitor.hb50'"
    assert expected in out and "/arm6/actarray/accel_config" in out, out + err


def test_an_observers_publication_is_an_error_that_says_denied(site: Site) -> None:
    """``topic pub`` from a watch-only host: the robot's subscriber is announced, Zenoh routes
    nothing to it — an error naming the certificate that holds the rules, not "published 1"."""
    args = ("topic", "pub", "/arm6/joint_impedance", "jointbus_msgs/msg/JointImpedance",
            "{source_node: teleop}",
            "--once", "--wait-matching", "1")  # fmt: skip
    denied = site.jointbus(*args, host="monitor")
    assert denied.returncode == 1, denied.stdout + denied.stderr
    assert "publication denied: /arm6/joint_impedance" in denied.stderr, denied.stderr
    assert "robot.hb50" in denied.stderr and "nothing sent" in denied.stderr
    allowed = site.jointbus(*args, host="controller")
    assert allowed.returncode == 0, allowed.stderr
    assert "denied" not in allowed.stderr and "published 1 message" in allowed.stderr


def test_the_security_options_on_dds_are_an_error_not_a_silent_unsecured_bus(site: Site) -> None:
    done = site.jointbus("topic", "list", "--rmw", "rmw_cyclonedds_cpp", host="monitor")
    assert done.returncode == 1, done.stdout
    assert "no DDS Security" in done.stderr and "Refusing to join DDS unsecured" in done.stderr


def test_on_dds_the_security_options_are_refused_before_they_are_checked(site: Site) -> None:
    """A user's trial (2026-12-05): with ``--rmw`` on DDS and TLS options without an endpoint
    (or a CA that is no file), the first error was about the TLS options; once those were fixed
    came the one that matters — DDS cannot use them. That one now comes first."""
    dds = ("topic", "list", "--rmw", "rmw_cyclonedds_cpp")
    done = site.jointbus(*dds, *site.tls("monitor"), host=None)  # no --listen / --connect
    assert done.returncode == 1, done.stdout
    assert "Refusing to join DDS unsecured" in done.stderr, done.stderr
    assert "give --listen" not in done.stderr
    done = site.jointbus(*dds, "--tls-ca", "/nonexistent/ca.pem", host=None)
    assert done.returncode == 1, done.stdout
    assert "Refusing to join DDS unsecured" in done.stderr, done.stderr


@pytest.mark.parametrize("scheme", ["tcp", "tls"])
def test_a_host_without_a_certificate_is_told_the_robot_is_tls_only(
    site: Site, scheme: str
) -> None:
    """Not "no topics found" from a running robot: the listener speaks TLS and this host has no
    certificate, and the error says what to give."""
    address = site.endpoint.split("/", 1)[1]
    done = site.jointbus("topic", "list", "--connect", f"{scheme}/{address}", host=None)
    assert done.returncode == 1, done.stdout
    assert "is a TLS-only listener and this host has no certificate" in done.stderr, done.stderr
    assert "--tls-cert" in done.stderr


def test_a_controllers_call_and_an_operators_estop_are_accepted(site: Site) -> None:
    power = site.jointbus(
        "service", "call", *CALLS["power"][:2], '{"on": true}', host="controller"
    )
    assert power.returncode == 0, power.stderr
    assert '"accepted": true' in power.stdout
    estop = site.jointbus("estop", "--namespace", "arm6", host="teleop")
    assert estop.returncode == 0, estop.stderr
    assert "e-stop latched" in estop.stdout
    reset = site.jointbus("estop", "--reset", "--namespace", "arm6", "--timeout", "1",
                          host="teleop")  # fmt: skip
    assert reset.returncode == 1 and "denied" in reset.stderr, reset.stderr
    reset = site.jointbus("estop", "--reset", "--namespace", "arm6", host="controller")
    assert reset.returncode == 0, reset.stderr


def test_a_refused_certificate_and_half_given_options_are_errors(site: Site) -> None:
    rogue = site.jointbus("topic", "list", host="rogue")
    assert rogue.returncode == 1
    assert "refused this host's certificate" in rogue.stderr, rogue.stderr
    half = subprocess.run(
        [sys.executable, "-m", "jointbus.cli.main", "topic", "list", "--connect", site.endpoint,
         "--tls-cert", str(site.pki.tls["monitor"].certificate)],
        capture_output=True, text=True, timeout=60, env=cli_env(free_port()), check=False,
    )  # fmt: skip
    assert half.returncode == 1
    assert half.stderr.startswith("error: ") and "--tls-key and --tls-ca missing" in half.stderr
