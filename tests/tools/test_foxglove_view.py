"""The live view: a real WebSocket client speaking the Foxglove protocol against FoxgloveView.

The client is the plain ``websockets`` library with the ``foxglove.sdk.v1`` subprotocol, so these
tests check what Foxglove itself would receive: ``serverInfo``, ``advertise`` (topics, encodings,
schema names and text), and binary message frames (opcode 1, subscription id u32, log time u64,
payload) whose CDR payload decodes back to the published message.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import re
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import websockets
from hypothesis import given, settings
from hypothesis import strategies as st

from jointbus.bus import LATCHED, MAB_RT, RELIABLE, Bus, ZenohConfig
from jointbus.math import Quaternion, Transform
from jointbus.messages.sensor_msgs import JointState
from jointbus.messages.std_msgs import Header, String
from jointbus.messages.tf2_msgs import TFMessage
from jointbus.model import load_robot
from jointbus.model.robot import RobotModel
from jointbus.robots.hb50.messages import BridgeData, Status
from jointbus.tools.foxglove_view import (
    ACCEPTED_SUBPROTOCOLS,
    JOINT_STATES_TOPIC,
    ROBOT_DESCRIPTION_TOPIC,
    TF_STATIC_TOPIC,
    TF_TOPIC,
    FoxgloveView,
    FoxgloveViewError,
    JointFrames,
)

SUBPROTOCOL = "foxglove.sdk.v1"
TIMEOUT = 5.0
NAMES = (
    "fr_j0",
    "fr_j1",
    "fr_j2",
    "fl_j0",
    "fl_j1",
    "fl_j2",
    "rl_j0",
    "rl_j1",
    "rl_j2",
    "rr_j0",
    "rr_j1",
    "rr_j2",
)


@pytest.fixture(scope="module")
def hb50() -> RobotModel:
    return load_robot("hb50")


@pytest.fixture
def bus() -> Iterator[Bus]:
    with Bus(name="foxglove-test") as b:
        yield b


def _view(bus: Bus, robot: RobotModel | None = None) -> FoxgloveView:
    return FoxgloveView(bus, port=0, robot=robot, scan_period_s=0.05)


class Client:
    """A minimal Foxglove WebSocket client over ``websockets``."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.channels: dict[str, dict[str, Any]] = {}
        self.removed: set[int] = set()
        self.binary: list[bytes] = []
        self.server_info: dict[str, Any] | None = None
        self._next_sub = 1
        self.subs: dict[int, int] = {}  # subscription id -> channel id

    async def _recv_one(self, timeout: float) -> None:
        frame = await asyncio.wait_for(self.ws.recv(), timeout)
        if isinstance(frame, bytes):
            self.binary.append(frame)
            return
        msg = json.loads(frame)
        if msg["op"] == "serverInfo":
            self.server_info = msg
        elif msg["op"] == "advertise":
            for channel in msg["channels"]:
                self.channels[channel["topic"]] = channel
        elif msg["op"] == "status":
            # foxglove-sdk 0.30 race: a subscribe sent the instant a channel is advertised may be
            # refused with "Unknown channel ID: N" (the advertisement can reach the client before
            # the channel is in the server's per-client table). Foxglove itself never subscribes
            # that fast; retry, as a client would after the error.
            found = re.search(r"Unknown channel ID: (\d+)", msg.get("message", ""))
            if found:
                await self._send_subscriptions(int(found.group(1)))
        elif msg["op"] == "unadvertise":
            self.removed.update(msg["channelIds"])
            for topic in [t for t, c in self.channels.items() if c["id"] in msg["channelIds"]]:
                del self.channels[topic]

    async def until(self, done: Callable[[], bool], timeout: float = TIMEOUT) -> None:
        """Read frames until ``done()`` (checked at least every 20 ms); fail after ``timeout``."""
        deadline = time.monotonic() + timeout
        while not done():
            if time.monotonic() > deadline:
                raise AssertionError("timed out waiting for the server")
            try:
                await self._recv_one(0.02)
            except TimeoutError:
                continue

    async def subscribe(self, topic: str) -> int:
        sub_id = self._next_sub
        self._next_sub += 1
        channel_id = self.channels[topic]["id"]
        self.subs[sub_id] = channel_id
        await self._send_subscriptions(channel_id)
        return sub_id

    async def _send_subscriptions(self, channel_id: int) -> None:
        subscriptions = [
            {"id": sub, "channelId": channel}
            for sub, channel in self.subs.items()
            if channel == channel_id
        ]
        if subscriptions:
            await self.ws.send(json.dumps({"op": "subscribe", "subscriptions": subscriptions}))

    async def unsubscribe(self, sub_id: int) -> None:
        await self.ws.send(json.dumps({"op": "unsubscribe", "subscriptionIds": [sub_id]}))

    async def message(self, sub_id: int, timeout: float = TIMEOUT) -> tuple[int, bytes]:
        """The next binary message frame of subscription ``sub_id``: (log time ns, payload)."""
        deadline = time.monotonic() + timeout
        while True:
            for i, frame in enumerate(self.binary):
                opcode = frame[0]
                got_sub, log_time = struct.unpack_from("<IQ", frame, 1)
                if opcode == 1 and got_sub == sub_id:
                    del self.binary[i]
                    return log_time, frame[13:]
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"no message for subscription {sub_id}")
            try:
                await self._recv_one(remaining)
            except TimeoutError:
                continue


def run_client(view: FoxgloveView, body: Callable[[Client], Awaitable[None]]) -> None:
    async def main() -> None:
        async with websockets.connect(view.url, subprotocols=[SUBPROTOCOL]) as ws:
            assert ws.subprotocol == SUBPROTOCOL
            await body(Client(ws))

    asyncio.run(main())


def test_server_info_and_advertised_bus_topics(bus: Bus) -> None:
    bus.publisher("/hb50/status", Status, RELIABLE, node="bridge_node")
    bus.publisher("/hb50/joint_states", JointState, RELIABLE, node="control_node")
    with _view(bus) as view:

        async def body(client: Client) -> None:
            await client.until(
                lambda: {"/hb50/status", "/hb50/joint_states"} <= set(client.channels)
            )
            assert client.server_info is not None
            assert client.server_info["name"] == "jointbus"
            status = client.channels["/hb50/status"]
            assert status["encoding"] == "cdr"
            assert status["schemaName"] == "hb50_commons/msg/Status"
            assert status["schemaEncoding"] == "ros2msg"
            assert status["schema"] == Status.msgdef()
            joints = client.channels["/hb50/joint_states"]
            assert joints["schemaName"] == "sensor_msgs/msg/JointState"
            assert joints["schema"] == JointState.msgdef()
            # Without a robot model there are no derived channels.
            assert ROBOT_DESCRIPTION_TOPIC not in client.channels

        run_client(view, body)


def test_subscribed_channel_delivers_cdr_that_decodes_to_the_published_message(bus: Bus) -> None:
    status_pub = bus.publisher("/hb50/status", Status, RELIABLE, node="bridge_node")
    joints_pub = bus.publisher("/hb50/joint_states", JointState, RELIABLE, node="control_node")
    status = Status.warn("bridge_node", "fr_j1 (index 1) is hot: 82 °C", b"\x01\x02")
    joints = JointState(Header.now("body"), NAMES[:3], (0.1, -0.7, 1.4), (0.0, 0.5, -0.5), ())
    with _view(bus) as view:

        async def body(client: Client) -> None:
            await client.until(lambda: "/hb50/joint_states" in client.channels)
            s_sub = await client.subscribe("/hb50/status")
            j_sub = await client.subscribe("/hb50/joint_states")
            await client.until(lambda: len(view.subscribed()) == 2)
            before = time.time_ns()
            status_pub.publish(status)
            joints_pub.publish(joints)
            log_time, payload = await client.message(s_sub)
            assert Status.from_cdr(payload) == status
            assert payload == status.to_cdr()
            assert before <= log_time <= time.time_ns()
            _, payload = await client.message(j_sub)
            assert JointState.from_cdr(payload) == joints

        run_client(view, body)
        assert view.forwarded("/hb50/status") == 1


def test_bus_subscription_exists_only_while_a_client_watches(bus: Bus) -> None:
    pub = bus.publisher("/hb50/status", Status, RELIABLE, node="bridge_node")
    with _view(bus) as view:
        assert view.topics() == ["/hb50/status"]
        assert view.subscribed() == []

        async def body(client: Client) -> None:
            await client.until(lambda: "/hb50/status" in client.channels)
            sub = await client.subscribe("/hb50/status")
            await client.until(lambda: view.subscribed() == ["/hb50/status"])
            assert pub.subscriber_count == 1
            await client.unsubscribe(sub)
            await client.until(lambda: view.subscribed() == [])
            assert pub.subscriber_count == 0

        run_client(view, body)
        pub.publish(Status.ok("bridge_node", "nobody watches"))
        assert view.forwarded("/hb50/status") == 0


def test_topics_appearing_and_disappearing_are_advertised_and_unadvertised(bus: Bus) -> None:
    with _view(bus) as view:

        async def body(client: Client) -> None:
            await client.until(lambda: client.server_info is not None)
            pub = bus.publisher("/hb50/late_topic", String, RELIABLE, node="late_node")
            await client.until(lambda: "/hb50/late_topic" in client.channels)
            channel_id = client.channels["/hb50/late_topic"]["id"]
            sub = await client.subscribe("/hb50/late_topic")
            await client.until(lambda: view.subscribed() == ["/hb50/late_topic"])
            pub.publish(String("hello"))
            _, payload = await client.message(sub)
            assert String.from_cdr(payload) == String("hello")
            pub.close()
            await client.until(lambda: channel_id in client.removed)
            await client.until(lambda: view.subscribed() == [])

        run_client(view, body)


def test_latched_topic_history_reaches_a_new_client(bus: Bus) -> None:
    pub = bus.publisher("/hb50/config", String, LATCHED, node="config_node")
    pub.publish(String("gait: trot"))
    with _view(bus) as view:

        async def body(client: Client) -> None:
            await client.until(lambda: "/hb50/config" in client.channels)
            sub = await client.subscribe("/hb50/config")
            _, payload = await client.message(sub)
            assert String.from_cdr(payload).data == "gait: trot"

        run_client(view, body)


def test_robot_description_topic_and_parameter(bus: Bus, hb50: RobotModel) -> None:
    urdf = hb50.to_urdf()
    with _view(bus, hb50) as view:

        async def body(client: Client) -> None:
            await client.until(lambda: TF_STATIC_TOPIC in client.channels)
            channel = client.channels[ROBOT_DESCRIPTION_TOPIC]
            assert channel["schemaName"] == "std_msgs/msg/String"
            assert channel["encoding"] == "cdr"
            assert client.channels[TF_TOPIC]["schemaName"] == "tf2_msgs/msg/TFMessage"
            assert client.channels[JOINT_STATES_TOPIC]["schemaName"] == (
                "sensor_msgs/msg/JointState"
            )
            sub = await client.subscribe(ROBOT_DESCRIPTION_TOPIC)
            _, payload = await client.message(sub)
            assert String.from_cdr(payload).data == urdf
            await client.ws.send(
                json.dumps(
                    {"op": "getParameters", "parameterNames": ["robot_description"], "id": "q"}
                )
            )
            reply = json.loads(await asyncio.wait_for(_next_text(client), TIMEOUT))
            assert reply["op"] == "parameterValues"
            assert reply["parameters"] == [{"name": "robot_description", "value": urdf}]

        run_client(view, body)


async def _next_text(client: Client) -> str:
    while True:
        frame = await client.ws.recv()
        if isinstance(frame, str) and json.loads(frame)["op"] == "parameterValues":
            return frame


def _expected_local(robot: RobotModel, joint_name: str, q: float) -> Transform:
    """Parent link → child link of a revolute joint: origin, then rotation about the axis."""
    joint = robot.joint(joint_name)
    return joint.origin @ Transform(rotation=Quaternion.from_axis_angle(joint.axis, q))


def test_joint_states_and_transforms_follow_bridge_data(bus: Bus, hb50: RobotModel) -> None:
    pub = bus.publisher("/hb50/bridge_data", BridgeData, MAB_RT, node="bridge_node")
    positions = (0.05, 0.7, -1.4, -0.05, -0.7, 1.4, 0.05, -0.7, 1.4, -0.05, 0.7, math.nan)
    data = BridgeData(
        Header.now("body"),
        joint_name=NAMES,
        joint_position=positions,
        joint_velocity=(0.0,) * 12,
        joint_effort=(1.0,) * 12,
        joint_temperature=bytes([30] * 12),
        joint_status=(0,) * 12,
    )
    with _view(bus, hb50) as view:

        async def body(client: Client) -> None:
            await client.until(lambda: TF_STATIC_TOPIC in client.channels)
            tf_sub = await client.subscribe(TF_TOPIC)
            js_sub = await client.subscribe(JOINT_STATES_TOPIC)
            static_sub = await client.subscribe(TF_STATIC_TOPIC)
            _, payload = await client.message(static_sub)
            static = TFMessage.from_cdr(payload)
            assert {t.child_frame_id for t in static.transforms} == {
                "fr_foot",
                "fl_foot",
                "rl_foot",
                "rr_foot",
            }
            await client.until(lambda: pub.subscriber_count == 1)
            pub.publish(data)
            _, payload = await client.message(js_sub)
            state = JointState.from_cdr(payload)
            assert state.name == NAMES
            assert state.position[:11] == pytest.approx(positions[:11], abs=1e-6)
            assert math.isnan(state.position[11])
            assert state.header.stamp == data.header.stamp
            _, payload = await client.message(tf_sub)
            tf = TFMessage.from_cdr(payload)
            by_child = {t.child_frame_id: t for t in tf.transforms}
            assert set(by_child) == {hb50.joint(n).child for n in NAMES}
            for name, q in zip(NAMES, data.joint_position, strict=True):  # float32-rounded
                stamped = by_child[hb50.joint(name).child]
                assert stamped.header.frame_id == hb50.joint(name).parent
                expected = _expected_local(hb50, name, 0.0 if math.isnan(q) else q)
                got = stamped.transform
                assert (got.translation.x, got.translation.y, got.translation.z) == pytest.approx(
                    (expected.translation.x, expected.translation.y, expected.translation.z),
                    abs=1e-9,
                ), name
                rotation = Quaternion(
                    got.rotation.w, got.rotation.x, got.rotation.y, got.rotation.z
                )
                assert rotation.angle_to(expected.rotation) < 1e-9, name

        run_client(view, body)


def _listening_addresses(port: int) -> set[str]:
    """Local IPv4/IPv6 addresses (hex, as the kernel prints them) listening on ``port``."""
    found: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        path = Path(table)
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            fields = line.split()
            address, port_hex = fields[1].split(":")
            if int(port_hex, 16) == port and fields[3] == "0A":  # 0A = LISTEN
                found.add(address)
    return found


def test_binds_loopback_only_by_default(bus: Bus) -> None:
    with _view(bus) as view:
        assert view.host == "127.0.0.1"
        assert _listening_addresses(view.port) == {"0100007F"}  # 127.0.0.1, little-endian hex
    deadline = time.monotonic() + TIMEOUT  # the SDK releases the socket shortly after stop()
    while _listening_addresses(view.port) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _listening_addresses(view.port) == set()


def test_close_stops_the_server_and_releases_the_bus(bus: Bus) -> None:
    pub = bus.publisher("/hb50/status", Status, RELIABLE, node="bridge_node")
    view = _view(bus)

    async def body(client: Client) -> None:
        await client.until(lambda: "/hb50/status" in client.channels)
        await client.subscribe("/hb50/status")
        await client.until(lambda: pub.subscriber_count == 1)

    run_client(view, body)
    view.close()
    view.close()  # idempotent
    assert view.closed
    assert pub.subscriber_count == 0

    async def refused() -> None:
        # The SDK releases its listener asynchronously: a connection attempted in that moment is
        # accepted and dropped; it must never get a session, and soon be refused outright.
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            try:
                async with websockets.connect(
                    view.url, subprotocols=[SUBPROTOCOL], open_timeout=2
                ) as ws:
                    frame = await asyncio.wait_for(ws.recv(), 2)
                    raise AssertionError(f"the server still serves after close(): {frame!r}")
            except websockets.exceptions.InvalidMessage:
                await asyncio.sleep(0.05)
            except OSError:
                return  # refused: the port is closed
        raise AssertionError("the port still accepts connections after close()")

    asyncio.run(refused())


def test_bad_options_are_refused(bus: Bus) -> None:
    with pytest.raises(FoxgloveViewError, match="port"):
        FoxgloveView(bus, port=70000)
    with pytest.raises(FoxgloveViewError, match="scan_period_s"):
        FoxgloveView(bus, port=0, scan_period_s=0)
    with _view(bus) as view, pytest.raises(FoxgloveViewError, match=str(view.port)):
        FoxgloveView(bus, port=view.port)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_topics_of_another_process_over_zenoh_are_shown() -> None:
    """A topic published on another bus reaches the view through Zenoh (type from the registry)."""
    endpoint = f"tcp/127.0.0.1:{_free_port()}"
    robot_bus = Bus(name="robot", zenoh=ZenohConfig(listen=(endpoint,)))
    viewer_bus = Bus(
        name="viewer", zenoh=ZenohConfig(listen=("tcp/127.0.0.1:0",), connect=(endpoint,))
    )
    try:
        pub = robot_bus.publisher("/hb50/status", Status, RELIABLE, node="bridge_node")
        report = Status.error("bridge_node", "rejected command from user_node")
        with _view(viewer_bus) as view:

            async def body(client: Client) -> None:
                await client.until(lambda: "/hb50/status" in client.channels)
                assert client.channels["/hb50/status"]["schemaName"] == Status.TYPE_NAME
                sub = await client.subscribe("/hb50/status")
                await client.until(lambda: pub.remote_matched)
                pub.publish(report)
                _, payload = await client.message(sub)
                assert Status.from_cdr(payload) == report

            run_client(view, body)
    finally:
        viewer_bus.close()
        robot_bus.close()


def test_runtime_topics_of_another_process_are_served_too() -> None:
    """``/hb50/diagnostics`` and ``/hb50/parameters`` (runtime message types) are not skipped."""
    from jointbus.bus import LATCHED
    from jointbus.runtime.diagnostics import LoopDiagnostics
    from jointbus.runtime.parameter_messages import ParameterList

    endpoint = f"tcp/127.0.0.1:{_free_port()}"
    robot_bus = Bus(name="robot", zenoh=ZenohConfig(listen=(endpoint,)))
    viewer_bus = Bus(
        name="viewer", zenoh=ZenohConfig(listen=("tcp/127.0.0.1:0",), connect=(endpoint,))
    )
    try:
        diagnostics = robot_bus.publisher(
            "/hb50/diagnostics", LoopDiagnostics, RELIABLE, node="bridge_node"
        )
        robot_bus.publisher("/hb50/parameters", ParameterList, LATCHED, node="bridge_node")
        report = LoopDiagnostics(node="bridge_node", loop="bridge", rate_hz=500.0, cycles=7)
        with _view(viewer_bus) as view:

            async def body(client: Client) -> None:
                await client.until(
                    lambda: {"/hb50/diagnostics", "/hb50/parameters"} <= set(client.channels)
                )
                channel = client.channels["/hb50/diagnostics"]
                assert channel["schemaName"] == LoopDiagnostics.TYPE_NAME
                assert channel["schema"] == LoopDiagnostics.msgdef()
                assert client.channels["/hb50/parameters"]["schema"] == ParameterList.msgdef()
                sub = await client.subscribe("/hb50/diagnostics")
                await client.until(lambda: diagnostics.remote_matched)
                diagnostics.publish(report)
                _, payload = await client.message(sub)
                assert LoopDiagnostics.from_cdr(payload).to_cdr() == report.to_cdr()  # NaN fields

            run_client(view, body)
    finally:
        viewer_bus.close()
        robot_bus.close()


def test_a_client_offering_only_the_old_subprotocol_is_refused_as_documented(bus: Bus) -> None:
    """foxglove-sdk accepts ``foxglove.sdk.v1`` only (README, "Record, replay, look", says which
    clients work); this test fails, and the README must change, the day the SDK accepts the old
    name too."""
    with _view(bus) as view:

        async def connect_old() -> None:
            old = [websockets.Subprotocol("foxglove.websocket.v1")]
            async with websockets.connect(view.url, subprotocols=old):
                pass

        with pytest.raises(websockets.InvalidStatus) as refused:
            asyncio.run(connect_old())
        assert refused.value.response.status_code == 400
        reason = bytes(refused.value.response.body or b"")
        assert reason == b"Missing expected sec-websocket-protocol header"


def test_a_refused_client_is_reported_on_our_side_naming_the_accepted_subprotocols(
    bus: Bus,
) -> None:
    """Issue 20, item 22: a foxglove.websocket.v1 client got only "HTTP 400 … Missing expected
    sec-websocket-protocol header". The answer cannot name what the server accepts, so the view
    reports each refusal, naming the client and the subprotocols, and a client offering the
    accepted one is not reported."""
    refused: list[str] = []
    with FoxgloveView(bus, port=0, scan_period_s=0.05, on_client_refused=refused.append) as view:

        async def connect(protocol: str) -> None:
            async with websockets.connect(
                view.url, subprotocols=[websockets.Subprotocol(protocol)]
            ):
                pass

        with pytest.raises(websockets.InvalidStatus):
            asyncio.run(connect("foxglove.websocket.v1"))
        asyncio.run(connect(SUBPROTOCOL))
        deadline = time.monotonic() + TIMEOUT
        while not refused and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.3)
    assert len(refused) == 1, refused
    assert re.match(r"Foxglove client 127\.0\.0\.1:\d+ refused \(HTTP 400\)", refused[0])
    assert ACCEPTED_SUBPROTOCOLS == ("foxglove.sdk.v1", "foxglove.sdk.v1.1")
    assert "foxglove.sdk.v1 or foxglove.sdk.v1.1" in refused[0]
    assert "foxglove.websocket.v1" in refused[0]


def test_the_view_says_it_listens_before_its_first_scan(
    bus: Bus, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 20, item 22: "Foxglove live view on ws://…" came > 25 s after the port listened,
    because it was printed after the first scan of the bus. ``on_listening`` comes when the port
    accepts connections, before a (here deliberately slow) scan."""
    slow_scan_s = 1.5
    topics = bus.topics

    def slow_topics() -> Any:  # what a scan of an in-process bus asks
        time.sleep(slow_scan_s)
        return topics()

    monkeypatch.setattr(bus, "topics", slow_topics)
    heard: list[tuple[str, float, bool]] = []

    def listening(url: str) -> None:
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=2.0):
            heard.append((url, time.monotonic(), True))

    view = FoxgloveView(bus, port=0, scan_period_s=10.0, on_listening=listening)
    returned = time.monotonic()
    try:
        assert [(u, ok) for u, _t, ok in heard] == [(view.url, True)]
        assert returned - heard[0][1] >= slow_scan_s * 0.9
    finally:
        view.close()


def test_cli_serves_the_robot_description_of_the_chosen_robot() -> None:
    """``jointbus foxglove`` in a child process: prints its URL and serves the model's URDF."""
    port = _free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jointbus.cli.main",
            "foxglove",
            "--port",
            str(port),
            "--robot",
            "hb50",
            "--duration",
            "20",
            "--listen",
            "tcp/127.0.0.1:0",
            "--connect",
            f"tcp/127.0.0.1:{_free_port()}",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert f"ws://127.0.0.1:{port}" in line, line

        async def main() -> None:
            url = f"ws://127.0.0.1:{port}"
            async with websockets.connect(url, subprotocols=[SUBPROTOCOL]) as ws:
                client = Client(ws)
                await client.until(lambda: ROBOT_DESCRIPTION_TOPIC in client.channels)
                sub = await client.subscribe(ROBOT_DESCRIPTION_TOPIC)
                _, payload = await client.message(sub)
                assert String.from_cdr(payload).data == load_robot("hb50").to_urdf()
            old = [websockets.Subprotocol("foxglove.websocket.v1")]
            with contextlib.suppress(websockets.InvalidStatus):
                async with websockets.connect(url, subprotocols=old):
                    pass

        asyncio.run(main())
        time.sleep(0.5)
    finally:
        proc.terminate()
        _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "foxglove.sdk.v1" in line  # the accepted subprotocol, in the first line
    refusals = [x for x in err.splitlines() if "warning: Foxglove client 127.0.0.1:" in x]
    assert len(refusals) == 1 and "foxglove.sdk.v1 or foxglove.sdk.v1.1" in refusals[0], err
    assert "handshake failed" not in err  # the SDK's bare line, replaced by ours


def test_a_bus_tf_topic_replaces_the_derived_one_while_it_has_a_publisher(
    bus: Bus, hb50: RobotModel
) -> None:
    with _view(bus, hb50) as view:

        async def body(client: Client) -> None:
            await client.until(lambda: TF_TOPIC in client.channels)
            derived_id = client.channels[TF_TOPIC]["id"]
            pub = bus.publisher(TF_TOPIC, TFMessage, RELIABLE, node="control_node")
            await client.until(lambda: derived_id in client.removed and TF_TOPIC in client.channels)
            # now a bus topic (the client may hear the advertisement just before the view's
            # table holds the entry: the channel is made, then recorded)
            await client.until(lambda: view.topics() == [TF_TOPIC])
            sub = await client.subscribe(TF_TOPIC)
            await client.until(lambda: pub.subscriber_count == 1)
            sent = TFMessage()
            pub.publish(sent)
            _, payload = await client.message(sub)
            assert TFMessage.from_cdr(payload) == sent
            bus_id = client.channels[TF_TOPIC]["id"]
            pub.close()
            await client.until(lambda: bus_id in client.removed and TF_TOPIC in client.channels)
            assert client.channels[TF_TOPIC]["id"] not in (derived_id, bus_id)
            assert view.topics() == []

        run_client(view, body)


@settings(max_examples=60)
@given(st.lists(st.floats(-math.pi, math.pi), min_size=12, max_size=12))
def test_joint_frames_match_origin_then_rotation_about_the_axis(q: list[float]) -> None:
    """Every joint angle, including half turns (where ``w`` of the quaternion is near 0)."""
    robot = load_robot("hb50")
    frames = JointFrames(robot)
    frames.update(NAMES, q)
    by_child = {f.child: f for f in frames.moving()}
    for name, angle in zip(NAMES, q, strict=True):
        frame = by_child[robot.joint(name).child]
        expected = _expected_local(robot, name, angle)
        assert frame.parent == robot.joint(name).parent
        t = expected.translation
        assert frame.translation == pytest.approx((t.x, t.y, t.z), abs=1e-12)
        x, y, z, w = frame.rotation
        assert math.isclose(x * x + y * y + z * z + w * w, 1.0, abs_tol=1e-12)
        assert Quaternion(w, x, y, z).angle_to(expected.rotation) < 1e-9, name


def test_a_client_sees_the_walking_robot_move_in_the_odom_frame() -> None:
    """Issue 13, "Foxglove shows it walking": the whole stack (stepping MuJoCo simulator, bridge,
    control node) on one bus, the view beside it, a WebSocket client on ``/tf``. While a forward
    velocity command is held, the ``odom → body`` transform the client receives (the control
    node's estimate) moves forward, straight, as the simulator's ground truth does.

    Only the direction is compared with the truth (leg odometry drifts). The stack stamps a
    stepped simulator's frames with simulated time, so the odometry integrates the time the
    physics ran; with wall-clock stamps it ran ahead of the truth on a loaded host (skipped
    cycles: 1.69 m against 0.95 m in one run here)."""
    from jointbus.messages.geometry_msgs import Twist, Vector3
    from jointbus.messages.nav_msgs import Odometry
    from jointbus.stack import Stack

    truths: list[Odometry] = []
    with Stack(zenoh=None, realtime=None) as stack:
        stack.wait_for(lambda s: s.standing and s.owner == "control_node", 20.0)
        stack.bus.subscribe(
            "/hb50/sim/ground_truth", Odometry, truths.append, MAB_RT, realtime=True
        )
        command = stack.bus.publisher("/hb50/velocity_command", Twist, MAB_RT)
        forward = Twist(Vector3(0.5, 0.0, 1.0), Vector3())
        with _view(stack.bus, stack.model) as view:
            seen: list[tuple[float, float, float]] = []  # odom → body x, y (m); truth x (m)

            async def body(client: Client) -> None:
                await client.until(lambda: TF_TOPIC in client.channels)
                await client.until(lambda: TF_TOPIC in view.topics())  # the control node's
                sub = await client.subscribe(TF_TOPIC)
                deadline = time.monotonic() + 4.0
                while time.monotonic() < deadline:
                    command.publish(forward)  # held: 20 Hz, as teleop sends it
                    with contextlib.suppress(AssertionError):
                        _, payload = await client.message(sub, timeout=0.05)
                        for t in TFMessage.from_cdr(payload).transforms:
                            if (t.header.frame_id, t.child_frame_id) == ("odom", "body"):
                                tr = t.transform.translation
                                seen.append((tr.x, tr.y, truths[-1].pose.pose.position.x))

            run_client(view, body)
        stack.command("stand")
    assert len(seen) >= 10, seen  # the control node's /tf at 10 Hz reached the client
    moved = seen[-1][0] - seen[0][0]
    truth_moved = seen[-1][2] - seen[0][2]
    assert moved > 0.3, seen  # ≈ 0.46 m/s for the last ≈ 3.5 s, slower on a loaded host
    assert truth_moved > 0.2, seen  # the robot itself walked forward
    assert abs(seen[-1][1] - seen[0][1]) < 0.25 * moved  # straight ahead


def test_topics_of_another_process_on_dds_reach_a_client() -> None:
    """``jointbus foxglove`` on DDS (``RMW_IMPLEMENTATION=rmw_cyclonedds_cpp``): a topic published
    by another participant is advertised, and its messages reach the WebSocket client."""
    from jointbus.bus import DdsConfig
    from support.dds_peer import free_domain

    domain = free_domain()
    with (
        Bus(name="robot", dds=DdsConfig(domain_id=domain)) as robot,
        Bus(name="viewer", dds=DdsConfig(domain_id=domain)) as viewer,
    ):
        status_pub = robot.publisher("/hb50/status", Status, RELIABLE, node="bridge_node")
        status = Status.warn("bridge_node", "over DDS", b"")
        with _view(viewer) as view:

            async def body(client: Client) -> None:
                await client.until(lambda: "/hb50/status" in client.channels)
                sub = await client.subscribe("/hb50/status")
                await client.until(lambda: len(view.subscribed()) == 1)
                deadline = time.monotonic() + TIMEOUT
                while not status_pub.remote_matched and time.monotonic() < deadline:
                    await asyncio.sleep(0.02)
                status_pub.publish(status)
                _, payload = await client.message(sub)
                assert Status.from_cdr(payload) == status

            run_client(view, body)
