"""Topic names: ROS 2 validation and the documented topic ↔ Zenoh key mapping (rmw_zenoh's)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.bus import BusError, TopicNameError, data_key, parse_data_key, validate_topic_name
from jointbus.bus.names import (
    DataKey,
    dds_type_name,
    domain_id_from_env,
    ros_type_name,
    topic_selector,
)

_HASH = "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18"

_token = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)


def test_documented_mapping_is_rmw_zenohs() -> None:
    # rmw_zenoh design doc: 0/robot1/chatter/std_msgs::msg::dds_::String_/RIHS01_df66…
    assert data_key(0, "/robot1/chatter", "std_msgs/msg/String", _HASH) == (
        f"0/robot1/chatter/std_msgs::msg::dds_::String_/{_HASH}"
    )
    assert parse_data_key(f"7/hb50/bridge_data/hb50_commons::msg::dds_::BridgeData_/{_HASH}") == (
        DataKey(7, "/hb50/bridge_data", "hb50_commons/msg/BridgeData", _HASH)
    )
    assert topic_selector(0, "/hb50/x") == "0/hb50/x/*/*"


def test_dds_type_names() -> None:
    assert dds_type_name("sensor_msgs/msg/JointState") == "sensor_msgs::msg::dds_::JointState_"
    assert ros_type_name("sensor_msgs::msg::dds_::JointState_") == "sensor_msgs/msg/JointState"
    with pytest.raises(BusError, match="not a ROS type name"):
        dds_type_name("JointState")
    with pytest.raises(BusError, match="not a DDS type name"):
        ros_type_name("sensor_msgs/msg/JointState")


@given(st.lists(_token, min_size=1, max_size=5), st.integers(0, 232))
def test_valid_names_round_trip(tokens: list[str], domain: int) -> None:
    name = "/" + "/".join(tokens)
    assert validate_topic_name(name) == name
    key = data_key(domain, name, "pkg/msg/T", _HASH)
    assert parse_data_key(key) == DataKey(domain, name, "pkg/msg/T", _HASH)


def test_domain_from_the_environment() -> None:
    assert domain_id_from_env({}) == 0
    assert domain_id_from_env({"ROS_DOMAIN_ID": " 42 "}) == 42
    with pytest.raises(BusError, match="not an integer"):
        domain_id_from_env({"ROS_DOMAIN_ID": "x"})
    with pytest.raises(BusError, match=r"\[0, 232\]"):
        domain_id_from_env({"ROS_DOMAIN_ID": "233"})


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("hb50/bridge_data", "does not start with '/'"),
        ("/", "no tokens"),
        ("/hb50/", "ends with '/'"),
        ("/hb50//x", "token 1 is empty"),
        ("/hb50/1x", "token 1 '1x'"),
        ("/hb50/a-b", "token 1 'a-b'"),
        ("/hb50/**", "token 1 '**'"),
        ("/a b", "token 0 'a b'"),
    ],
)
def test_invalid_names_are_rejected_with_the_reason(name: str, fragment: str) -> None:
    with pytest.raises(TopicNameError) as info:
        validate_topic_name(name)
    assert fragment in str(info.value)
    assert info.value.name == name


def test_non_string_name_is_rejected() -> None:
    with pytest.raises(TopicNameError, match="not int"):
        validate_topic_name(5)


def test_keys_that_are_not_data_keys_are_rejected() -> None:
    with pytest.raises(BusError, match="not a data key"):
        parse_data_key("jb/hb50/x")
    with pytest.raises(BusError, match="not a DDS type name"):
        parse_data_key(f"0/hb50/x/NotADdsType/{_HASH}")
