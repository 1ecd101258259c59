"""Zenoh access control: who may command the robot, by the role its certificate names.

What a user relies on: ``examples/zenoh_acl.json5`` (made by ``jointbus security rules``) loaded
into the robot's session (with mutual TLS, so a peer's certificate common name is proven) lets the
controller host publish ``/hb50/joint_command`` and call the actuator services, while a monitor
host — holding a valid certificate of the same CA, role *observer* — can watch the robot's
telemetry but neither its joint commands nor its service calls (power, e-stop, brakes, home) reach
the robot. The same setup without the rules delivers the monitor's commands, so it is the rules
that stop them.

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

from jointbus import drivers
from jointbus.bus import (
    MAB_RT,
    RELIABLE,
    AccessDeniedEvent,
    Bus,
    PublicationDeniedEvent,
    QosEvent,
    ServiceDeniedError,
    ServiceError,
    ZenohConfigError,
    data_key,
)
from jointbus.bus.zenoh_security import ZenohAccessControl, secure
from jointbus.bus.zenoh_transport import ROUTE_SETTLE_S
from jointbus.codec.type_hash import rihs01_of
from jointbus.drivers.bus.array_names import ArrayNames
from jointbus.messages import jointbus_msgs
from jointbus.messages.actarray import ActuatorReply, BrakesRequest, PowerRequest
from jointbus.messages.base import Message
from jointbus.messages.std_msgs import String
from jointbus.nodes.array import ArrayNode
from jointbus.robots.hb50.messages import JointCommand, Status
from jointbus.runtime import LivelinessMonitor, Node

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl CLI")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "zenoh_acl.json5"
ORDER = ("a_j0", "a_j1")


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    # The example: controller.hb50 a controller, teleop.hb50 an operator, monitor.hb50 an observer.
    return make_pki(tmp_path_factory.mktemp("pki"), ("robot", "controller", "teleop", "monitor"))


def command(source: str, position: float) -> JointCommand:
    return JointCommand.hold(ORDER, (position, -position), 10.0, 1.0, source_node=source)


class Site:
    """A robot bus subscribed to joint commands, a controller bus and a monitor bus."""

    def __init__(self, pki: Pki, access_control: ZenohAccessControl | None) -> None:
        port = free_port()
        self.port = port
        self.pki = pki
        self.robot = Bus(
            name="robot", zenoh=secure(listener(port), pki.tls["robot"], access_control)
        )
        self.events: list[QosEvent] = []
        self.robot.on_qos_event(self.events.append)
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
    assert wait_until(lambda: good_pub.remote_matched)
    # The robot does not tell an observer about its command subscribers: nothing is sent ...
    assert not rogue_pub.remote_matched
    for k in range(5):
        rogue_pub.publish(command("monitor_node", 0.5 + k))
    # ... and what a raw session of the observer puts anyway is dropped at the robot.
    assert guarded.monitor.zenoh is not None and guarded.robot.zenoh is not None
    key = data_key(
        guarded.robot.zenoh.domain_id,
        "/hb50/joint_command",
        JointCommand.TYPE_NAME,
        rihs01_of(JointCommand),
    )
    guarded.monitor.zenoh.session.put(key, command("raw_monitor", 0.7).to_cdr())
    good = command("control_node", 0.1)
    good_pub.publish(good)
    assert wait_until(lambda: len(guarded.commands) == 1)
    time.sleep(0.3)  # anything the monitor sent before would have arrived by now
    assert [c.source_node for c in guarded.commands] == ["control_node"]
    assert guarded.commands[0] == good
    # The robot says who tried, once, by certificate name.
    denied = [e for e in guarded.events if isinstance(e, AccessDeniedEvent)]
    assert [(e.peer, e.action, e.topic, e.roles) for e in denied] == [
        ("monitor.hb50", "publishes", "/hb50/joint_command", ("observer",))
    ]
    assert "access denied: certificate 'monitor.hb50'" in denied[0].describe()


def test_a_publisher_the_rules_deny_is_told_so_and_an_allowed_one_is_not(guarded: Site) -> None:
    """The publishing side of a denial: the observer's publisher sees the robot's subscriber
    announced but never routed to, and — once it has sent something — gets one
    PublicationDeniedEvent naming that subscriber and the certificate that holds the rules; the
    controller's publisher of the same topic gets none."""
    rogue_events: list[QosEvent] = []
    good_events: list[QosEvent] = []
    rogue = guarded.monitor.publisher(
        "/hb50/joint_command", JointCommand, MAB_RT, on_event=rogue_events.append
    )
    good = guarded.controller.publisher(
        "/hb50/joint_command", JointCommand, MAB_RT, on_event=good_events.append
    )
    assert wait_until(lambda: good.remote_matched)
    assert guarded.monitor.zenoh is not None and guarded.controller.zenoh is not None
    assert wait_until(lambda: guarded.monitor.zenoh.publication_denied(rogue, 1.0) is not None)
    assert guarded.controller.zenoh.publication_denied(good, 1.0) is None
    time.sleep(ROUTE_SETTLE_S + 0.5)
    assert rogue_events == []  # nothing sent yet, nothing lost yet: not told
    rogue.publish(command("monitor_node", 0.5))
    good.publish(command("control_node", 0.1))

    def denials(events: list[QosEvent]) -> list[PublicationDeniedEvent]:
        return [e for e in events if isinstance(e, PublicationDeniedEvent)]

    assert wait_until(lambda: bool(denials(rogue_events)), timeout=ROUTE_SETTLE_S + 10.0)
    time.sleep(0.5)
    [denial] = denials(rogue_events)
    assert (denial.topic, denial.holder) == ("/hb50/joint_command", "robot.hb50")
    text = denial.describe()
    assert text.startswith("publication denied: /hb50/joint_command: ")
    assert "certificate 'robot.hb50'" in text and "access rules" in text
    assert denials(good_events) == []
    assert [c.source_node for c in guarded.commands] == ["control_node"]


def test_a_watch_only_tools_node_is_no_alarm_and_each_new_attempt_is_reported(
    guarded: Site,
) -> None:
    """A ``jointbus node list`` on an observer host makes a hidden node, whose heartbeat and
    status publishers the rules deny: not reported (a false alarm on every look). A node that is
    not hidden is reported, and so is each new session that tries a command again, even with
    a certificate already reported."""
    robot_node = Node("robot_node", guarded.robot)  # asks its transport to keep those quiet
    LivelinessMonitor(robot_node, hidden=False)  # subscribes to the heartbeats, as the bridge
    told: list[QosEvent] = []  # the observer's side: what its own publishers are told
    guarded.monitor.on_qos_event(told.append)
    try:
        watcher = Node("_jointbus_cli_1", guarded.monitor)
        named = Node("watcher", guarded.monitor)
        rogue = guarded.monitor.publisher("/hb50/joint_command", JointCommand, MAB_RT)
        again = Bus(name="monitor2", zenoh=secure(dialer(guarded.port), guarded.pki.tls["monitor"]))
        try:
            second = again.publisher("/hb50/joint_command", JointCommand, MAB_RT)

            def denied() -> list[tuple[str, str]]:
                return sorted(
                    (e.topic, e.zid)
                    for e in guarded.events
                    if isinstance(e, AccessDeniedEvent) and e.action == "publishes"
                )

            assert guarded.monitor.zenoh is not None and again.zenoh is not None
            first, other = guarded.monitor.zenoh.zid, again.zenoh.zid
            expected = sorted(
                [
                    ("/hb50/heartbeat", first),  # the node that is not hidden
                    ("/hb50/status", first),
                    ("/hb50/joint_command", first),
                    ("/hb50/joint_command", other),  # the same certificate, a new session
                ]
            )
            assert wait_until(lambda: denied() == expected, timeout=20.0), denied()
            time.sleep(0.5)
            assert denied() == expected  # nothing about _jointbus_cli_1, nothing twice
            assert rogue.topic == second.topic

            def told_heartbeats() -> list[str]:
                return sorted(
                    e.endpoint.split("#")[0]
                    for e in told
                    if isinstance(e, PublicationDeniedEvent) and e.topic == "/hb50/heartbeat"
                )

            # The node that is not hidden is told its heartbeat goes nowhere; the tool's is not.
            told_in_time = wait_until(
                lambda: told_heartbeats() == ["watcher"], timeout=4 * ROUTE_SETTLE_S
            )
            assert told_in_time, [(e.endpoint, e.topic) for e in told]
            time.sleep(ROUTE_SETTLE_S)
            assert told_heartbeats() == ["watcher"]
        finally:
            again.close()
            watcher.shutdown()
            named.shutdown()
    finally:
        robot_node.shutdown()


def test_a_process_watching_the_status_without_a_node_raises_no_alarm_for_tools(
    guarded: Site,
) -> None:
    """A user's trial (2026-12-06): a watch-only ``node list`` beside the demo logged "access
    denied … publishes /hb50/status" and "/hb50/heartbeat" on the robot's console — from the
    demo's launcher, which watches the status with no node of its own, so nothing had asked
    its session to keep a tool's bookkeeping quiet. It asks now
    (:func:`~jointbus.runtime.node.quiet_tools_bookkeeping`, as every node does)."""
    from jointbus.runtime.node import quiet_tools_bookkeeping

    launcher = guarded.robot  # no node on it, as the launcher's bus
    launcher.subscribe("/hb50/status", Status, None, RELIABLE)  # what the launcher watches
    quiet_tools_bookkeeping(launcher, "hb50")
    watcher = Node("_jointbus_cli_7", guarded.monitor)  # node list's hidden node
    # a node that is not hidden, in a session of its own (reports are once per session)
    other = Bus(name="monitor2", zenoh=secure(dialer(guarded.port), guarded.pki.tls["monitor"]))
    named = Node("watcher", other)
    try:

        def denied() -> list[tuple[str, str]]:
            return sorted(
                (e.topic, e.zid)
                for e in guarded.events
                if isinstance(e, AccessDeniedEvent) and e.action == "publishes"
            )

        assert other.zenoh is not None
        expected = [("/hb50/heartbeat", other.zenoh.zid), ("/hb50/status", other.zenoh.zid)]
        assert wait_until(lambda: denied() == expected, timeout=20.0), denied()
        time.sleep(0.5)
        assert denied() == expected  # nothing about _jointbus_cli_7's session
    finally:
        watcher.shutdown()
        named.shutdown()
        other.close()


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


# -- services: an observer switches nothing off ------------------------------------------------

N = ArrayNames("arm6")
#: The calls a watch-only certificate must never get through (issue 24 item 3): each would move
#: the robot or drop it.
DANGEROUS: tuple[tuple[str, Message], ...] = (
    (N.request("power"), PowerRequest(on=False)),
    (N.estop, String("monitor stop")),
    (N.request("brakes"), BrakesRequest(engaged=True)),
    (N.command("home"), jointbus_msgs.ActuatorHomeCommand()),
)


class ServedRobot:
    """A simulated arm served by the array node on a TLS-only bus with the example rules."""

    def __init__(self, pki: Pki, access_control: ZenohAccessControl | None) -> None:
        port = free_port()
        self.array = drivers.open("sim://arm6?noise=false")
        self.bus = Bus(name="robot", zenoh=secure(listener(port), pki.tls["robot"], access_control))
        self.node = ArrayNode(self.array, self.bus, namespace="arm6")
        self.status: list[Status] = []
        self.bus.subscribe(N.status, Status, self.status.append, RELIABLE, realtime=True)
        self.node.start()
        self.array.power(True)
        self.port = port
        self.tls = pki.tls
        self.peers: list[Bus] = []

    def peer(self, host: str) -> Bus:
        bus = Bus(name=host, zenoh=secure(dialer(self.port), self.tls[host]))
        self.peers.append(bus)
        return bus

    def powered(self) -> bool:
        return bool(self.array.read().motor_power)

    def close(self) -> None:
        for bus in self.peers:
            bus.close()
        self.node.shutdown()
        self.bus.close()
        self.array.close()


@pytest.fixture
def served_robot(pki: Pki) -> Iterator[ServedRobot]:
    robot = ServedRobot(pki, ZenohAccessControl.from_file(EXAMPLE))
    yield robot
    robot.close()


def _types(request: Message) -> tuple[type[Message], type[Message]]:
    return type(request), ActuatorReply


@pytest.mark.parametrize(("service", "request_"), DANGEROUS, ids=[d[0] for d in DANGEROUS])
def test_an_observer_cannot_call_a_service_that_changes_anything(
    served_robot: ServedRobot, service: str, request_: Message
) -> None:
    monitor = served_robot.peer("monitor")
    client = monitor.client(service, *_types(request_), timeout_s=1.0)
    assert wait_until(client.available)  # it sees the server in the graph ...
    with pytest.raises(ServiceDeniedError, match="denied") as denied:  # ... but cannot call it
        client.call(request_)
    assert "robot.hb50" in str(denied.value)  # whose rules said no
    assert served_robot.powered()
    assert not served_robot.node.estopped
    # The robot reports the refused caller on its status, by certificate name, once.
    expected = "access denied: certificate 'monitor.hb50'"
    assert wait_until(
        lambda: any(expected in s.status and service in s.status for s in served_robot.status)
    )
    time.sleep(0.3)
    assert len([s for s in served_robot.status if expected in s.status]) == 1


def test_an_observer_can_call_a_read_only_service(served_robot: ServedRobot) -> None:
    from jointbus.messages.actarray import ArrayGeometry, GeometryRequest

    monitor = served_robot.peer("monitor")
    client = monitor.client(N.request("get_geometry"), GeometryRequest, ArrayGeometry)
    assert wait_until(client.available)
    assert len(client.call(GeometryRequest(), 3.0).actuators) == 6


def test_a_controller_switches_the_power_and_an_operator_latches_the_estop(
    served_robot: ServedRobot,
) -> None:
    operator = served_robot.peer("teleop")
    power = operator.client(N.request("power"), PowerRequest, ActuatorReply, timeout_s=1.0)
    assert wait_until(power.available)
    with pytest.raises(ServiceError):  # an operator switches no power
        power.call(PowerRequest(on=False))
    assert served_robot.powered()
    controller = served_robot.peer("controller")
    power = controller.client(N.request("power"), PowerRequest, ActuatorReply, timeout_s=3.0)
    assert wait_until(power.available)
    assert power.call(PowerRequest(on=False)).accepted
    assert not served_robot.powered()
    assert power.call(PowerRequest(on=True)).accepted
    estop = operator.client(N.estop, String, ActuatorReply, timeout_s=3.0)
    assert estop.call(String("operator stop")).accepted
    assert served_robot.node.estopped
    reset = operator.client(N.estop_reset, String, ActuatorReply, timeout_s=1.0)
    with pytest.raises(ServiceError):  # re-arming is a controller's
        reset.call(String(""))
    assert served_robot.node.estopped


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


def _listening_sockets() -> set[str]:
    """Local addresses of the listening TCP sockets this process holds."""
    import os

    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:
                found.add(fields[1])
    return found


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="needs Linux /proc/net/tcp")
def test_an_empty_listen_list_listens_nowhere(pki: Pki) -> None:
    """``listen=()`` (a host that only dials the robot) opens no listening socket at all — not
    Zenoh's every-interface default of a configuration without the key (docs/SECURITY.md §1)."""
    from jointbus.bus import ZenohConfig

    before = _listening_sockets()
    bus = Bus(name="dialer", zenoh=secure(dialer(free_port()), pki.tls["monitor"]))
    plain = Bus(name="plain", zenoh=ZenohConfig(listen=(), connect=()))
    try:
        assert _listening_sockets() == before
    finally:
        plain.close()
        bus.close()
