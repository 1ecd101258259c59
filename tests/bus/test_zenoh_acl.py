"""Zenoh access control: only the named controller hosts can put joint commands into the robot.

What a user relies on: ``examples/zenoh_acl.json5`` loaded into the robot's session (with mutual
TLS, so a peer's certificate common name is proven) lets the controller host publish
``/hb50/joint_command`` to the bridge, while a monitor host — holding a valid certificate of the
same CA — can watch the robot's telemetry but its joint commands never arrive. The same setup
without the rules delivers the monitor's commands, so it is the rules that stop them.

Everything runs on loopback with real jointbus buses; certificates come from
:func:`test_zenoh_tls.make_pki` (the ``openssl`` CLI).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_zenoh_tls import Pki, dialer, free_port, listener, make_pki, wait_until

from jointbus.bus import MAB_RT, RELIABLE, Bus, ZenohConfigError
from jointbus.bus.zenoh_security import ZenohAccessControl, secure
from jointbus.messages.std_msgs import String
from jointbus.robots.hb50.messages import JointCommand

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl CLI")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "zenoh_acl.json5"
ORDER = ("a_j0", "a_j1")


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    # The example names controller.hb50 and teleop.hb50; monitor.hb50 is not a controller.
    return make_pki(tmp_path_factory.mktemp("pki"), ("robot", "controller", "monitor"))


def command(source: str, position: float) -> JointCommand:
    return JointCommand.hold(ORDER, (position, -position), 10.0, 1.0, source_node=source)


class Site:
    """A robot bus subscribed to joint commands, a controller bus and a monitor bus."""

    def __init__(self, pki: Pki, access_control: ZenohAccessControl | None) -> None:
        port = free_port()
        self.robot = Bus(
            name="robot", zenoh=secure(listener(port), pki.tls["robot"], access_control)
        )
        self.commands: list[JointCommand] = []
        self.robot.subscribe(
            "/hb50/joint_command", JointCommand, self.commands.append, MAB_RT, realtime=True
        )
        self.telemetry = self.robot.publisher("/hb50/status_text", String, RELIABLE)
        self.controller = Bus(name="controller", zenoh=secure(dialer(port), pki.tls["controller"]))
        self.monitor = Bus(name="monitor", zenoh=secure(dialer(port), pki.tls["monitor"]))

    def close(self) -> None:
        self.monitor.close()
        self.controller.close()
        self.robot.close()


@pytest.fixture
def guarded(pki: Pki) -> Iterator[Site]:
    site = Site(pki, ZenohAccessControl.from_file(EXAMPLE))
    yield site
    site.close()


def test_only_the_named_controller_can_publish_joint_commands(guarded: Site) -> None:
    rogue_pub = guarded.monitor.publisher("/hb50/joint_command", JointCommand, MAB_RT)
    good_pub = guarded.controller.publisher("/hb50/joint_command", JointCommand, MAB_RT)
    assert wait_until(lambda: good_pub.remote_matched and rogue_pub.remote_matched)
    for k in range(5):
        rogue_pub.publish(command("monitor_node", 0.5 + k))
    good = command("control_node", 0.1)
    good_pub.publish(good)
    assert wait_until(lambda: len(guarded.commands) == 1)
    time.sleep(0.3)  # anything the monitor sent before would have arrived by now
    assert [c.source_node for c in guarded.commands] == ["control_node"]
    assert guarded.commands[0] == good
    assert rogue_pub.stats().remote_sent == 5  # it did put them: Zenoh dropped them at the robot


def test_a_host_that_may_not_command_can_still_watch(guarded: Site) -> None:
    seen: list[String] = []
    guarded.monitor.subscribe("/hb50/status_text", String, seen.append, RELIABLE, realtime=True)
    assert wait_until(lambda: guarded.telemetry.remote_matched)
    guarded.telemetry.publish(String("mode: run"))
    assert wait_until(lambda: seen == [String("mode: run")])


def test_without_the_rules_the_monitor_commands_arrive(pki: Pki) -> None:
    site = Site(pki, None)
    try:
        pub = site.monitor.publisher("/hb50/joint_command", JointCommand, MAB_RT)
        assert wait_until(lambda: pub.remote_matched)
        pub.publish(command("monitor_node", 0.5))
        assert wait_until(lambda: [c.source_node for c in site.commands] == ["monitor_node"])
    finally:
        site.close()


def test_access_control_block_is_checked(tmp_path: Path) -> None:
    with pytest.raises(ZenohConfigError, match="JSON5 object"):
        ZenohAccessControl("enabled: true")
    with pytest.raises(ZenohConfigError, match="not a readable file"):
        ZenohAccessControl.from_file(tmp_path / "missing.json5")
    # The example parses as Zenoh's access_control block (a typo in a key would fail here).
    acl = ZenohAccessControl.from_file(EXAMPLE)
    assert acl.json5_items()[0][0] == "access_control"
    import zenoh

    zenoh.Config().insert_json5(*acl.json5_items()[0])


# -- the loopback default -------------------------------------------------------------------------


def _listening_addresses(port: int) -> set[str]:
    """Local addresses (hex, as /proc/net/tcp[6] lists them) with a socket listening on ``port``."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except FileNotFoundError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.split(":")
            if state == "0A" and int(hex_port, 16) == port:  # 0A = LISTEN
                found.add(address)
    return found


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="needs Linux /proc/net/tcp")
def test_default_bus_listens_on_loopback_only() -> None:
    from jointbus.bus import ZenohConfig
    from jointbus.tools.foxglove_view import DEFAULT_HOST

    for listen, connect in ZenohConfig().attempts():
        assert all("/127.0.0.1:" in e for e in (*listen, *connect))
    assert DEFAULT_HOST == "127.0.0.1"
    port = free_port()
    bus = Bus(name="default", zenoh=ZenohConfig(hub_port=port))
    try:
        assert _listening_addresses(port) == {"0100007F"}  # 127.0.0.1, nothing else
    finally:
        bus.close()
