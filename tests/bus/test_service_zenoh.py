"""Services on rmw_zenoh's wire: keys, ``SS``/``SC`` tokens and the attachment on queries and
replies, byte-checked with plain eclipse-zenoh against rmw_zenoh's design (``docs/ROS2.md``), and
calls both ways with zenoh-ros2-sdk's independent service client and server."""

from __future__ import annotations

import struct
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest
import zenoh

from jointbus.bus import Bus, BusError, ServiceRefused, ZenohConfig, attachment
from jointbus.bus.ros_graph import gid_of
from jointbus.bus.service_types import service_type_hash, service_type_name
from jointbus.bus.service_zenoh import service_key
from jointbus.codec.wire import Int64
from jointbus.messages.base import Message
from jointbus.messages.std_msgs import String
from support.bus import free_port, ros2_peer, wait_until

NAME = "/robot/shout"
SRV = "jointbus_msgs/srv/StringString"


def shout(request: String) -> String:
    if request.data == "no":
        raise ServiceRefused(NAME, "will not shout 'no'")
    return String(request.data.upper())


@pytest.fixture
def port() -> int:
    return free_port()


@pytest.fixture
def bus(port: int) -> Iterator[Bus]:
    with Bus(name="robot", zenoh=ZenohConfig(listen=(f"tcp/127.0.0.1:{port}",), domain_id=3)) as b:
        yield b


@pytest.fixture
def ros(port: int) -> Iterator[zenoh.Session]:
    """A plain Zenoh peer, configured as rmw_zenoh configures a ROS 2 node's session."""
    with ros2_peer(port) as session:
        yield session


def _tokens(session: zenoh.Session, kind: str) -> list[str]:
    return sorted(
        str(r.ok.key_expr)
        for r in session.liveliness().get("@ros2_lv/3/**", timeout=1.0)
        if r.ok and f"/{kind}/" in str(r.ok.key_expr)
    )


def test_the_service_type_is_the_composed_srv_with_its_rihs01_hash() -> None:
    assert service_type_name(String, String) == SRV
    digest = service_type_hash(String, String)
    assert service_key(3, NAME, String, String) == (
        f"3/robot/shout/jointbus_msgs::srv::dds_::StringString_/{digest}"
    )


def test_a_server_announces_ss_and_answers_with_the_requests_attachment(
    bus: Bus, ros: zenoh.Session
) -> None:
    bus.serve(NAME, String, String, shout, node="shouter")
    digest = service_type_hash(String, String)
    zid = bus.zenoh.zid  # type: ignore[union-attr]
    assert wait_until(lambda: _tokens(ros, "SS"))
    assert _tokens(ros, "SS") == [
        f"@ros2_lv/3/{zid}/1/2/SS/%/%/shouter/%robot%shout/"
        f"jointbus_msgs::srv::dds_::StringString_/{digest}/::,10:,:,:,,"
    ]
    assert _tokens(ros, "NN") == [f"@ros2_lv/3/{zid}/1/1/NN/%/%/shouter"]
    key = f"3/robot/shout/jointbus_msgs::srv::dds_::StringString_/{digest}"
    client_gid = bytes(range(16))
    before = time.time_ns()
    request_header = struct.pack("<qqB16s", 7, before, 16, client_gid)
    replies = list(
        ros.get(key, payload=String("hi").to_cdr(), attachment=request_header, timeout=5.0)
    )
    assert len(replies) == 1
    sample = replies[0].ok
    assert sample is not None
    assert str(sample.key_expr) == key
    assert sample.payload.to_bytes() == String("HI").to_cdr()
    raw = sample.attachment.to_bytes()  # type: ignore[union-attr]
    number, stamp, size, gid = struct.unpack("<qqB16s", raw)
    assert (len(raw), number, size, gid) == (33, 7, 16, client_gid)
    assert before <= stamp <= time.time_ns()


def test_a_request_without_the_attachment_is_refused_and_the_server_survives(
    bus: Bus, ros: zenoh.Session
) -> None:
    server = bus.serve(NAME, String, String, shout)
    assert wait_until(lambda: _tokens(ros, "SS"))
    key = service_key(3, NAME, String, String)
    replies = list(ros.get(key, payload=String("hi").to_cdr(), timeout=5.0))
    assert len(replies) == 1 and replies[0].err is not None
    assert b"33-byte attachment" in replies[0].err.payload.to_bytes()
    assert server.answered == 0
    header = attachment.pack(1, time.time_ns(), bytes(16))
    replies = list(ros.get(key, payload=String("ok").to_cdr(), attachment=header, timeout=5.0))
    assert replies[0].ok is not None


def test_a_call_announces_sc_and_matches_replies_by_sequence_number_and_gid(
    bus: Bus, ros: zenoh.Session
) -> None:
    key = service_key(3, NAME, String, String)
    seen: list[bytes] = []

    def answer(query: zenoh.Query) -> None:
        header = query.attachment.to_bytes()  # type: ignore[union-attr]
        seen.append(header)
        seq, _, _, gid = struct.unpack("<qqB16s", header)
        text = String.from_cdr(query.payload.to_bytes()).data  # type: ignore[union-attr]
        # First a reply for another request (another sequence number): not this call's answer.
        query.reply(key, String("stale").to_cdr(), attachment=attachment.pack(seq + 100, 0, gid))
        query.reply(key, String(text * 2).to_cdr(), attachment=attachment.pack(seq, 1, gid))

    queryable = ros.declare_queryable(key, answer, complete=True)
    # Announced as rmw_zenoh announces a server, after its queryable.
    server_token = ros.liveliness().declare_token(
        f"@ros2_lv/3/{ros.zid()}/0/10/SS/%/%/ros_shouter/%robot%shout/"
        f"jointbus_msgs::srv::dds_::StringString_/{service_type_hash(String, String)}/::,10:,:,:,,"
    )
    client = bus.client(NAME, String, String, timeout_s=5.0)
    assert wait_until(client.available, timeout=10.0)
    before = time.time_ns()
    assert client.call(String("ab")) == String("abab")
    assert client.call(String("c")) == String("cc")
    (token,) = _tokens(ros, "SC")
    zid = bus.zenoh.zid  # type: ignore[union-attr]
    assert token.startswith(f"@ros2_lv/3/{zid}/")
    assert token.endswith(
        f"/SC/%/%/_jointbus/%robot%shout/jointbus_msgs::srv::dds_::StringString_/"
        f"{service_type_hash(String, String)}/::,10:,:,:,,"
    )
    for seq, header in enumerate(seen, start=1):
        number, stamp, size, gid = struct.unpack("<qqB16s", header)
        assert (len(header), number, size, gid) == (33, seq, 16, gid_of(token))
        assert before <= stamp <= time.time_ns()
    server_token.undeclare()  # type: ignore[no-untyped-call]
    queryable.undeclare()  # type: ignore[no-untyped-call]


# ---- zenoh-ros2-sdk's service client and server ----------------------------------------------
@pytest.fixture
def sdk(port: int) -> Iterator[int]:
    """The SDK's process-wide session, pointed at the bus's listening port."""
    from zenoh_ros2_sdk.session import ZenohSession

    ZenohSession._instance = None
    ZenohSession.get_instance("127.0.0.1", port)
    yield port
    session = ZenohSession._instance
    if session is not None:
        session.session.close()
    ZenohSession._instance = None


def test_zenoh_ros2_sdks_client_calls_a_jointbus_service(bus: Bus, sdk: int) -> None:
    from zenoh_ros2_sdk import ROS2ServiceClient

    bus.serve(NAME, String, String, shout, node="shouter")
    client: Any = ROS2ServiceClient(
        NAME,
        SRV,
        request_definition="string data",
        response_definition="string data",
        domain_id=3,
        router_port=sdk,
        timeout=5.0,
    )
    try:
        assert client.type_hash == service_type_hash(String, String)  # its own hash computation
        response = None
        deadline = time.monotonic() + 10.0
        while response is None and time.monotonic() < deadline:
            response = client.call(data="hello")
        assert response is not None and response.data == "HELLO"
    finally:
        client.close()


def test_a_jointbus_client_calls_zenoh_ros2_sdks_server(bus: Bus, sdk: int) -> None:
    from zenoh_ros2_sdk import ROS2ServiceServer

    server: Any = ROS2ServiceServer(
        NAME,
        SRV,
        callback=lambda request: type(request)(data=request.data[::-1]),
        request_definition="string data",
        response_definition="string data",
        domain_id=3,
        router_port=sdk,
    )
    try:
        client = bus.client(NAME, String, String, timeout_s=5.0)
        assert wait_until(client.available, timeout=10.0)
        assert client.call(String("jointbus")) == String("subtnioj")
        listed = [s for s in bus.services() if s.name == NAME]
        assert [(s.service_type, s.request_type, s.response_type) for s in listed] == [
            (SRV, String.TYPE_NAME, String.TYPE_NAME)
        ]
    finally:
        server.close()


def test_a_server_announced_before_its_queryable_is_waited_for_not_unavailable(
    bus: Bus, ros: zenoh.Session
) -> None:
    """zenoh-ros2-sdk declares a server's token before its queryable: a call in between waits for
    the queryable (within its timeout) instead of reporting no server."""
    key = service_key(3, NAME, String, String)
    token = ros.liveliness().declare_token(
        f"@ros2_lv/3/{ros.zid()}/0/10/SS/%/%/late/%robot%shout/"
        f"jointbus_msgs::srv::dds_::StringString_/{service_type_hash(String, String)}/::,10:,:,:,,"
    )
    client = bus.client(NAME, String, String, timeout_s=10.0)
    assert wait_until(client.available, timeout=10.0)

    def answer(query: zenoh.Query) -> None:
        header = query.attachment.to_bytes()  # type: ignore[union-attr]
        seq, _, _, gid = struct.unpack("<qqB16s", header)
        query.reply(key, String("late").to_cdr(), attachment=attachment.pack(seq, 0, gid))

    queryables: list[Any] = []
    timer = threading.Timer(
        0.5, lambda: queryables.append(ros.declare_queryable(key, answer, complete=True))
    )
    timer.start()
    try:
        assert client.call(String("x")) == String("late")
    finally:
        timer.join()
        for queryable in queryables:
            queryable.undeclare()
        token.undeclare()  # type: ignore[no-untyped-call]


# ---- a standard ROS 2 service type: example_interfaces/srv/AddTwoInts --------------------------
ADD_TWO_INTS = "example_interfaces/srv/AddTwoInts"
ADD_TWO_INTS_HASH = "RIHS01_e118de6bf5eeb66a2491b5bda11202e7b68f198d6f67922cf30364858239c81a"


@dataclass(frozen=True, slots=True)
class AddTwoIntsRequest(Message):
    """The fields of AddTwoInts' request, as a jointbus message."""

    TYPE_NAME: ClassVar[str] = "jointbus_test/msg/AddTwoIntsRequest"
    a: Int64 = 0
    b: Int64 = 0


@dataclass(frozen=True, slots=True)
class AddTwoIntsResponse(Message):
    """The fields of AddTwoInts' response."""

    TYPE_NAME: ClassVar[str] = "jointbus_test/msg/AddTwoIntsResponse"
    sum: Int64 = 0


def test_a_ros2_service_type_gives_rmw_zenohs_published_key() -> None:
    assert service_key(2, "/add_two_ints", AddTwoIntsRequest, AddTwoIntsResponse, ADD_TWO_INTS) == (
        f"2/add_two_ints/example_interfaces::srv::dds_::AddTwoInts_/{ADD_TWO_INTS_HASH}"
    )
    with Bus() as local, pytest.raises(BusError, match="expected a ROS service type"):
        local.client("/x", AddTwoIntsRequest, AddTwoIntsResponse, service_type="a/msg/B")


def test_jointbus_calls_and_serves_add_two_ints_with_zenoh_ros2_sdk(bus: Bus, sdk: int) -> None:
    from zenoh_ros2_sdk import ROS2ServiceClient, ROS2ServiceServer

    definitions = {"request_definition": "int64 a\nint64 b", "response_definition": "int64 sum"}
    ros_server: Any = ROS2ServiceServer(
        "/add_two_ints",
        ADD_TWO_INTS,
        callback=lambda request: AddResponse(sum=request.a + request.b),
        domain_id=3,
        router_port=sdk,
        **definitions,
    )
    AddResponse = ros_server.response_msg_class
    bus.serve(
        "/add_two_ints_jb",
        AddTwoIntsRequest,
        AddTwoIntsResponse,
        lambda r: AddTwoIntsResponse(r.a * r.b),
        service_type=ADD_TWO_INTS,
    )
    ros_client: Any = ROS2ServiceClient(
        "/add_two_ints_jb", ADD_TWO_INTS, domain_id=3, router_port=sdk, timeout=5.0, **definitions
    )
    try:
        assert ros_server.type_hash == ros_client.type_hash == ADD_TWO_INTS_HASH
        client = bus.client(
            "/add_two_ints",
            AddTwoIntsRequest,
            AddTwoIntsResponse,
            timeout_s=5.0,
            service_type=ADD_TWO_INTS,
        )
        assert wait_until(client.available, timeout=10.0)
        assert client.call(AddTwoIntsRequest(2, 40)) == AddTwoIntsResponse(42)
        response = None
        deadline = time.monotonic() + 10.0
        while response is None and time.monotonic() < deadline:
            response = ros_client.call(a=6, b=7)
        assert response is not None and response.sum == 42
    finally:
        ros_client.close()
        ros_server.close()
