"""Topic names: ROS 2 validation and the documented topic ↔ Zenoh key mapping."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.bus import TopicNameError, key_to_topic, topic_to_key, validate_topic_name

_token = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)


def test_documented_mapping() -> None:
    assert topic_to_key("/hb50/bridge_data") == "jb/hb50/bridge_data"
    assert key_to_topic("jb/hb50/bridge_state_10hz") == "/hb50/bridge_state_10hz"


@given(st.lists(_token, min_size=1, max_size=5))
def test_valid_names_round_trip(tokens: list[str]) -> None:
    name = "/" + "/".join(tokens)
    assert validate_topic_name(name) == name
    assert key_to_topic(topic_to_key(name)) == name


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


def test_keys_outside_the_prefix_are_rejected() -> None:
    with pytest.raises(TopicNameError, match="not under"):
        key_to_topic("other/hb50/x")
