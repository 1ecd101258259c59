"""A ROS 2 participant that is not jointbus — zenoh-ros2-sdk, an independent Python
implementation of rmw_zenoh's protocol — against the running hb50 stack, on a ROS 2 host's
topology: a Zenoh router owns the port (``rmw_zenohd``'s role), the stack joins it, the SDK and
the ``jointbus`` CLI connect to it.

The SDK computes type hashes itself (with rosbags) from ``.msg`` files: it is given the packages
``jointbus ros2 export-msgs`` writes (plus the ROS 2 packages they use), from a local directory.
Its discovery must list our topics with their types and hashes, its subscriber must decode
``/hb50/bridge_data``, its ``geometry_msgs/Twist`` must reach the control node, and its
``JointCommand``s must go through the bridge's arbitration like any source's.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import zenoh
from zenoh_ros2_sdk import message_registry
from zenoh_ros2_sdk.discovery import get_topic_info, get_topic_names_and_types
from zenoh_ros2_sdk.publisher import ROS2Publisher
from zenoh_ros2_sdk.qos import QosProfile as SdkQos
from zenoh_ros2_sdk.qos import QosReliability
from zenoh_ros2_sdk.session import ZenohSession
from zenoh_ros2_sdk.subscriber import ROS2Subscriber

from jointbus.bus import MAB_RT, RELIABLE, ZenohConfig, data_key
from jointbus.bus.ros_graph import endpoint_token
from jointbus.cli.interface_packages import export_packages
from jointbus.codec.type_hash import rihs01_of
from jointbus.messages.geometry_msgs import Twist
from jointbus.robots.hb50.messages import BridgeData, JointCommand, Level, Status
from jointbus.stack import Stack
from support.bus import free_port, wait_until
from support.cli import run_cli

_PACKAGES = ("hb50_commons", "jointbus_msgs", "std_msgs", "geometry_msgs", "builtin_interfaces")
_BEST_EFFORT = SdkQos(reliability=QosReliability.BEST_EFFORT, history_depth=1)


@pytest.fixture(scope="module")
def router() -> Iterator[int]:
    """A Zenoh router where a ROS 2 host runs ``rmw_zenohd`` (there on tcp/7447, here on a free
    port), configured as rmw_zenoh's default router config: loopback, no multicast, gossip on."""
    port = free_port()
    config = zenoh.Config()
    config.insert_json5("mode", '"router"')
    config.insert_json5("listen/endpoints", f'["tcp/127.0.0.1:{port}"]')
    config.insert_json5("scouting/multicast/enabled", "false")
    config.insert_json5("scouting/gossip/enabled", "true")
    config.insert_json5("timestamping/enabled", "true")
    session = zenoh.open(config)
    yield port
    session.close()  # type: ignore[no-untyped-call]


@pytest.fixture(scope="module")
def stack(router: int) -> Iterator[tuple[Stack, int]]:
    """The hb50 stack with the router already owning its hub port: it joins the router (the
    default scheme connects to whatever holds the port), as on a ROS 2 host."""
    # one process: the tests read the control node's own state
    with Stack(zenoh=ZenohConfig(hub_port=router, domain_id=0), layout="inproc") as running:
        assert running.wait_for(lambda s: s.standing, 20.0).standing
        transport = running.bus.zenoh
        assert transport is not None
        assert list(transport.session.info.routers_zid())  # joined the router, no own hub
        yield running, router


@pytest.fixture(scope="module")
def sdk(stack: tuple[Stack, int], tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """The SDK's process-wide session and message registry, pointed at our hub and at the
    exported packages (never at the internet)."""
    _, port = stack
    messages = tmp_path_factory.mktemp("ros2_msgs")
    export_packages(messages, _PACKAGES)
    message_registry._registry = None
    message_registry.get_registry(str(messages))
    ZenohSession._instance = None
    ZenohSession.get_instance("127.0.0.1", port)
    yield port
    session = ZenohSession._instance
    if session is not None:
        session.session.close()
    ZenohSession._instance = None
    message_registry._registry = None


def test_sdk_discovery_lists_jointbus_topics_types_and_hashes(sdk: int) -> None:
    topics: dict[str, list[str]] = {}

    def listed() -> bool:
        topics.update(get_topic_names_and_types(domain_id=0, router_port=sdk))
        return "/hb50/bridge_data" in topics

    assert wait_until(listed, timeout=10.0)
    assert topics["/hb50/bridge_data"] == ["hb50_commons/msg/BridgeData"]
    assert topics["/hb50/joint_command"] == ["hb50_commons/msg/JointCommand"]
    # The SDK's discovery is one 0.5 s liveliness query; through the router it is sometimes
    # partial right after the SDK's session opened: ask until the publisher is in.
    found: list[Any] = []

    def bridge_listed() -> bool:
        found[:] = [get_topic_info("/hb50/bridge_data", domain_id=0, router_port=sdk, verbose=True)]
        return found[0] is not None and found[0].publisher_count == 1

    assert wait_until(bridge_listed, timeout=10.0)
    info = found[0]
    (publisher,) = info.publishers
    assert publisher.node_name == "bridge_node"
    assert publisher.type_hash == rihs01_of(BridgeData)
    assert publisher.qos.startswith("2::,1:")  # best effort, depth 1: MAB_RT


def test_sdk_subscriber_decodes_bridge_data(stack: tuple[Stack, int], sdk: int) -> None:
    got: list[Any] = []
    sub = ROS2Subscriber(
        "/hb50/bridge_data",
        "hb50_commons/msg/BridgeData",
        got.append,
        domain_id=0,
        router_port=sdk,
        qos=_BEST_EFFORT,
        node_name="sdk_listener",
    )
    try:
        assert sub.type_hash == rihs01_of(BridgeData)  # the SDK's own hash from the .msg files
        assert wait_until(lambda: len(got) >= 20, timeout=10.0)
    finally:
        sub.close()
    frame = got[-1]
    assert list(frame.joint_name) == [row.name for row in stack[0].summary().joints]
    assert len(frame.joint_position) == 12
    assert frame.header.stamp.sec > 0


def test_sdk_twist_reaches_the_control_node(stack: tuple[Stack, int], sdk: int) -> None:
    running, _ = stack
    control = running.control
    assert control is not None
    pub = ROS2Publisher(
        "/hb50/velocity_command",
        "geometry_msgs/msg/Twist",
        domain_id=0,
        router_port=sdk,
        qos=_BEST_EFFORT,
        node_name="sdk_teleop",
    )
    try:
        store = ZenohSession.get_instance().store
        vector = store.types["geometry_msgs/msg/Vector3"]
        deadline = time.monotonic() + 10.0
        while control.motion.velocity_command.vx <= 0.0 and time.monotonic() < deadline:
            pub.publish(linear=vector(x=0.5, y=0.0, z=0.0), angular=vector(x=0.0, y=0.0, z=0.0))
            time.sleep(0.05)
        assert control.motion.velocity_command.vx > 0.0
    finally:
        pub.close()


def test_sdk_joint_commands_take_over_through_arbitration(
    stack: tuple[Stack, int], sdk: int
) -> None:
    running, _ = stack
    frames: list[Any] = []
    sub = ROS2Subscriber(
        "/hb50/bridge_data",
        "hb50_commons/msg/BridgeData",
        frames.append,
        domain_id=0,
        router_port=sdk,
        qos=_BEST_EFFORT,
    )
    pub = ROS2Publisher(
        "/hb50/joint_command",
        "hb50_commons/msg/JointCommand",
        domain_id=0,
        router_port=sdk,
        qos=_BEST_EFFORT,
        node_name="sdk_controller",
    )
    try:
        assert wait_until(lambda: bool(frames), timeout=10.0)
        store = ZenohSession.get_instance().store
        header_t, time_t = (
            store.types["std_msgs/msg/Header"],
            store.types["builtin_interfaces/msg/Time"],
        )
        hold = np.asarray(frames[-1].joint_position, dtype=np.float32)  # hold where it stands
        names = list(frames[-1].joint_name)
        n = len(names)

        def command() -> None:
            now = time.time_ns()
            pub.publish(
                header=header_t(stamp=time_t(sec=now // 10**9, nanosec=now % 10**9), frame_id=""),
                source_node="sdk_controller",
                name=names,
                kp=np.full(n, 80.0, np.float32),
                ki=np.zeros(n, np.float32),
                kd=np.full(n, 3.0, np.float32),
                t_pos=hold,
                t_vel=np.zeros(n, np.float32),
                t_trq=np.zeros(n, np.float32),
                brake=np.zeros(n, np.bool_),
            )

        deadline = time.monotonic() + 10.0
        while running.summary().owner != "sdk_controller" and time.monotonic() < deadline:
            command()
            time.sleep(0.01)  # 100 Hz, well above the 10 Hz takeover rate
        assert running.summary().owner == "sdk_controller"
        for _ in range(20):
            command()
            time.sleep(0.01)
        assert running.summary().owner == "sdk_controller"
    finally:
        pub.close()
        sub.close()
    # Silent: control returns to the control node (the bridge's 100 ms fallback).
    assert running.wait_for(lambda s: s.owner == "control_node", 5.0).owner == "control_node"
    assert JointCommand.TYPE_NAME == "hb50_commons/msg/JointCommand"


def test_jointbus_lists_ros2_participants(stack: tuple[Stack, int], sdk: int) -> None:
    """``jointbus topic list`` / ``node list`` / ``ros2 graph`` show a ROS 2 node and its topic."""
    running, port = stack
    pub = ROS2Publisher(
        "/ros_side/chatter",
        "std_msgs/msg/String",
        domain_id=0,
        router_port=sdk,
        node_name="ros_talker",
    )
    try:
        assert wait_until(
            lambda: any(t.name == "/ros_side/chatter" for t in running.bus.discover(0.3)), 10.0
        )
        (topic,) = [t for t in running.bus.discover(0.5) if t.name == "/ros_side/chatter"]
        (publisher,) = topic.publishers
        assert (topic.type_name, publisher.node, publisher.local) == (
            "std_msgs/msg/String",
            "ros_talker",
            False,
        )
        topics = run_cli(port, "topic", "list", timeout=90.0)
        assert "/ros_side/chatter" in topics.stdout, topics.stderr
        nodes = run_cli(port, "node", "list", timeout=90.0)
        assert "ros_talker" in nodes.stdout, nodes.stderr
        graph = run_cli(port, "ros2", "graph", "--domain-id", "0", timeout=90.0)
        assert graph.returncode == 0, graph.stderr
        assert "/ros_talker" in graph.stdout
        assert "/ros_side/chatter [std_msgs/msg/String]" in graph.stdout
        assert f"/hb50/bridge_data [hb50_commons/msg/BridgeData] {rihs01_of(BridgeData)}" in (
            graph.stdout
        )
    finally:
        pub.close()


def test_bad_ros2_input_is_reported_once_on_the_status_topic(
    stack: tuple[Stack, int], sdk: int
) -> None:
    """Samples without rmw_zenoh's attachment and a publisher announcing another type hash, on a
    topic the control node subscribes to: each reported once on /hb50/status, never a crash, the
    mistyped one never decoded."""
    running, _ = stack
    reports: list[Status] = []
    running.bus.subscribe(
        "/hb50/status", Status, reports.append, RELIABLE.with_(depth=1000), realtime=True
    )
    session = ZenohSession.get_instance().session
    key = data_key(0, "/hb50/velocity_command", Twist.TYPE_NAME, rihs01_of(Twist))
    wrong = f"RIHS01_{'0' * 64}"
    token = endpoint_token(
        0,
        str(session.zid()),
        node_id=90,
        entity_id=91,
        kind="MP",
        node="old_teleop",
        topic="/hb50/velocity_command",
        type_name=Twist.TYPE_NAME,
        type_hash=wrong,
        qos=MAB_RT,
    )
    alive = session.liveliness().declare_token(token)
    plain = session.declare_publisher(key)
    try:
        for _ in range(20):
            plain.put(Twist().to_cdr())  # no attachment: a plain Zenoh put
            time.sleep(0.01)

        def texts(fragment: str) -> list[str]:
            return [r.status for r in reports if fragment in r.status]

        assert wait_until(lambda: bool(texts("no attachment")), timeout=5.0)
        assert wait_until(lambda: bool(texts("type mismatch on /hb50/velocity_command")), 5.0)
        time.sleep(1.0)
        assert len(texts("no attachment")) == 1
        assert len(texts("type mismatch on /hb50/velocity_command")) == 1
        assert wrong in texts("type mismatch")[0]
        assert all(r.level == Level.WARN for r in reports if "no attachment" in r.status)
    finally:
        plain.undeclare()
        alive.undeclare()
    assert running.control is not None and running.summary().motion_mode is not None
