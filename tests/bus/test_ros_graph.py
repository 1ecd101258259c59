"""ROS 2 graph tokens, QoS text and GIDs, byte-checked against rmw_zenoh's documented formats and
against zenoh-ros2-sdk (an independent Python implementation of the same protocol)."""

from __future__ import annotations

import pytest
import xxhash
from hypothesis import given
from hypothesis import strategies as st
from zenoh_ros2_sdk.qos import QosProfile as SdkQos

from jointbus.bus import LATCHED, MAB_RT, RELIABLE, BusError, QosError, QosProfile
from jointbus.bus.discovery import EndpointInfo
from jointbus.bus.qos import Durability, Reliability
from jointbus.bus.ros_graph import (
    endpoint_token,
    gid_of,
    mangle,
    node_token,
    parse_token,
    qos_from_text,
    qos_to_text,
)

_HASH = "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18"
_ZID = "d4b1f2a0c3e5968778695a4b3c2d1e0f"


def test_qos_text_matches_rmw_zenoh_examples() -> None:
    # rmw_zenoh elides every field equal to its default (reliable, volatile, keep last 42, …).
    assert qos_to_text(QosProfile(depth=7)) == "::,7:,:,:,,"
    assert qos_to_text(QosProfile(Reliability.BEST_EFFORT, 5)) == "2::,5:,:,:,,"
    assert qos_to_text(QosProfile(depth=42)) == "::,:,:,:,,"
    assert qos_to_text(MAB_RT) == "2::,1:,:,:,,"
    assert qos_to_text(LATCHED) == ":1:,1:,:,:,,"
    assert (
        qos_to_text(RELIABLE.with_(deadline=0.1, lifespan=2.5))
        == "::,10:0,100000000:2,500000000:,,"
    )


def test_qos_text_decodes_like_zenoh_ros2_sdk() -> None:
    for text in ("2::,5:,:,:,,", ":1:,1:,:,:,,", "::,:,:,:,,", "::,10:1,0:,:,,"):
        ours, theirs = qos_from_text(text), SdkQos.decode(text)
        assert ours.reliable == (theirs.reliability.value == 1)
        assert ours.transient_local == (theirs.durability.value == 1)
    assert qos_from_text("::,:,:,:,,").depth == 42
    assert qos_from_text("::2,:,:,:,,").depth >= 1000  # keep all
    assert qos_from_text("::,10:1,0:,:,,").deadline == 1.0


_profiles = st.builds(
    QosProfile,
    st.sampled_from(list(Reliability)),
    st.integers(1, 5000),
    st.sampled_from(list(Durability)),
    st.one_of(st.none(), st.integers(1, 10**12).map(lambda ns: ns / 1e9)),
    st.one_of(st.none(), st.integers(1, 10**12).map(lambda ns: ns / 1e9)),
)


@given(_profiles)
def test_qos_text_round_trips(qos: QosProfile) -> None:
    assert qos_from_text(qos_to_text(qos)) == qos


@pytest.mark.parametrize(
    "text", ["", "::,:,:,", "9::,:,:,:,,", "::,x:,:,:,,", "::,1:1:,:,,", "::3,1:,:,:,,x"]
)
def test_malformed_qos_text_is_refused(text: str) -> None:
    with pytest.raises(QosError):
        qos_from_text(text)


def test_tokens_have_rmw_zenohs_shape_and_gid() -> None:
    node = node_token(0, _ZID, 3, "bridge")
    assert node == f"@ros2_lv/0/{_ZID}/3/3/NN/%/%/bridge"
    pub = endpoint_token(
        0,
        _ZID,
        node_id=3,
        entity_id=4,
        kind="MP",
        node="bridge",
        topic="/hb50/chatter",
        type_name="std_msgs/msg/String",
        type_hash=_HASH,
        qos=RELIABLE,
    )
    assert pub == (
        f"@ros2_lv/0/{_ZID}/3/4/MP/%/%/bridge/%hb50%chatter/std_msgs::msg::dds_::String_/"
        f"{_HASH}/::,10:,:,:,,"
    )
    digest = xxhash.xxh3_128_intdigest(pub.encode())
    assert gid_of(pub) == digest.to_bytes(16, "little")
    entity = parse_token(pub)
    assert (entity.kind, entity.node, entity.topic, entity.type_name, entity.qos) == (
        "MP",
        "bridge",
        "/hb50/chatter",
        "std_msgs/msg/String",
        RELIABLE,
    )
    info = EndpointInfo.from_token_key(pub)
    assert (info.kind, info.node, info.gid, info.type_hash) == (
        "publisher",
        "bridge",
        int.from_bytes(gid_of(pub), "little"),
        _HASH,
    )


def test_anonymous_endpoints_belong_to_a_hidden_node() -> None:
    key = endpoint_token(
        0,
        _ZID,
        node_id=1,
        entity_id=2,
        kind="MS",
        node="",
        topic="/x",
        type_name="std_msgs/msg/String",
        type_hash=_HASH,
        qos=MAB_RT,
    )
    assert "/%/%/_jointbus/%x/" in key
    assert EndpointInfo.from_token_key(key).node == ""


def test_a_ros2_node_token_with_a_namespace_parses() -> None:
    key = (
        f"@ros2_lv/5/{_ZID}/0/10/MS/%/%robot1/listener/%robot1%chatter/"
        f"std_msgs::msg::dds_::String_/{_HASH}/2::,5:,:,:,,"
    )
    entity = parse_token(key)
    assert (entity.domain_id, entity.namespace, entity.node, entity.topic) == (
        5,
        "/robot1",
        "listener",
        "/robot1/chatter",
    )
    assert entity.qos == QosProfile(Reliability.BEST_EFFORT, 5)


@pytest.mark.parametrize(
    ("key", "fragment"),
    [
        ("@jointbus/ep/pub/x", "not a ROS 2 graph token"),
        (f"@ros2_lv/0/{_ZID}/1/1/XX/%/%/n", "unknown entity kind"),
        (f"@ros2_lv/0/{_ZID}/1/2/MP/%/%/n/%x/std_msgs::msg::dds_::String_/{_HASH}", "13"),
        (f"@ros2_lv/a/{_ZID}/1/1/NN/%/%/n", "decimal"),
        (f"@ros2_lv/0/{_ZID}/1/2/MP/%/%/n/%x/String/{_HASH}/::,:,:,:,,", "DDS type"),
        (f"@ros2_lv/0/{_ZID}/1/2/MP/%/%/n/%x/std_msgs::msg::dds_::String_/{_HASH}/bad", "qos"),
    ],
)
def test_malformed_tokens_are_refused_with_the_reason(key: str, fragment: str) -> None:
    with pytest.raises(BusError, match=fragment):
        parse_token(key)


def test_mangling() -> None:
    assert mangle("/") == "%"
    assert mangle("") == "%"
    assert mangle("/a/b") == "%a%b"


@pytest.mark.parametrize(
    ("namespace", "chunk", "parsed"),
    [("", "%", "/"), ("/", "%", "/"), ("arm3", "%arm3", "/arm3"), ("/a/b", "%a%b", "/a/b")],
)
def test_a_nodes_namespace_is_announced_as_rcl_gives_it_to_rmw_zenoh(
    namespace: str, chunk: str, parsed: str
) -> None:
    """rcl hands rmw_zenoh a fully qualified namespace (``/arm3``), mangled ``%arm3`` in the node
    token and in each of its endpoints' tokens; a jointbus ``arm3`` is announced the same."""
    node = node_token(0, _ZID, 3, "array_node", namespace)
    assert node == f"@ros2_lv/0/{_ZID}/3/3/NN/%/{chunk}/array_node"
    pub = endpoint_token(
        0,
        _ZID,
        node_id=3,
        entity_id=4,
        kind="MP",
        node="array_node",
        topic="/arm3/joint_state",
        type_name="std_msgs/msg/String",
        type_hash=_HASH,
        qos=RELIABLE,
        namespace=namespace,
    )
    assert f"/MP/%/{chunk}/array_node/%arm3%joint_state/" in pub
    assert parse_token(node).namespace == parsed and parse_token(pub).namespace == parsed


@pytest.mark.parametrize("namespace", ["arm 3", "3arm", "a//b", "a-b"])
def test_a_namespace_that_is_no_ros_name_is_refused(namespace: str) -> None:
    from jointbus.bus import TopicNameError

    with pytest.raises(TopicNameError):
        node_token(0, _ZID, 3, "array_node", namespace)
