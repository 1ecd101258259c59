"""RIHS01 type hashes (REP 2011) from our ``.msg`` bundles, checked against independent sources:
hashes ROS 2 itself publishes, rosbags' ``Typestore.hash_rihs01`` for every registered jointbus
type, for every type rosbags ships for Jazzy (from rosbags' own ``.msg`` text), and for random
definitions (hypothesis)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rosbags.typesys import Stores, get_types_from_msg, get_typestore

from jointbus.codec.errors import SchemaError
from jointbus.codec.type_hash import (
    is_rihs01,
    qualify_msg_line,
    rihs01,
    rihs01_of,
    rihs01_service,
    type_description_json,
)
from jointbus.messages.registry import default_registry
from jointbus.robots.hb50.messages import HB50_MESSAGE_TYPES

# Published by ROS 2 (rosidl-generated hashes, as seen in rmw_zenoh key expressions).
PUBLISHED = {
    "std_msgs/msg/String": (
        "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18"
    ),
    "sensor_msgs/msg/JointState": (
        "RIHS01_a13ee3a330e346c9d87b5aa18d24e11690752bd33a0350f11c5882bc9179260e"
    ),
    "geometry_msgs/msg/Twist": (
        "RIHS01_9c45bf16fe0983d80e3cfe750d6835843d265a9a6c46bd2e609fcddde6fb8d2a"
    ),
    "std_msgs/msg/Header": (
        "RIHS01_f49fb3ae2cf070f793645ff749683ac6b06203e41c891e17701b1cb597ce6a01"
    ),
    "builtin_interfaces/msg/Time": (
        "RIHS01_b106235e25a4c5ed35098aa0a61a3ee9c9b18d197f398b0e4206cea9acf9c197"
    ),
}
JAZZY = get_typestore(Stores.ROS2_JAZZY)
SEPARATOR = re.compile(r"^={10,}\s*$", re.MULTILINE)


@pytest.mark.parametrize("type_name", sorted(PUBLISHED))
def test_registered_ros_types_hash_as_ros2_publishes(type_name: str) -> None:
    cls = default_registry().with_types(*HB50_MESSAGE_TYPES).by_type_name(type_name)
    assert rihs01_of(cls) == PUBLISHED[type_name]


def test_empty_and_imu_from_their_ros_definitions() -> None:
    assert rihs01("std_msgs/msg/Empty", "") == (
        "RIHS01_20b625256f32d5dbc0d04fee44f43c41e51c70d3502f84b4a08e7a9c26a96312"
    )
    imu, _ = JAZZY.generate_msgdef("sensor_msgs/msg/Imu", ros_version=2)
    assert rihs01("sensor_msgs/msg/Imu", imu) == (
        "RIHS01_7d9a00ff131080897a5ec7e26e315954b8eae3353c3f995c55faf71574000b5b"
    )


def _rosbags_hash(type_name: str, bundle: str) -> str:
    store = get_typestore(Stores.EMPTY)
    store.register(get_types_from_msg(bundle, type_name))
    digest: str = store.hash_rihs01(type_name)
    return digest


@pytest.mark.parametrize("type_name", list(default_registry().with_types(*HB50_MESSAGE_TYPES)))
def test_every_registered_type_hashes_as_rosbags_does(type_name: str) -> None:
    cls = default_registry().with_types(*HB50_MESSAGE_TYPES).by_type_name(type_name)
    ours = rihs01_of(cls)
    assert is_rihs01(ours)
    assert ours == _rosbags_hash(type_name, cls.msgdef())


@pytest.mark.parametrize("type_name", sorted(JAZZY.types))
def test_every_jazzy_type_rosbags_ships_hashes_as_rosbags_does(type_name: str) -> None:
    if "/srv/" in type_name or "/action/" in type_name:
        pytest.skip("services and actions are not messages")
    text, _ = JAZZY.generate_msgdef(type_name, ros_version=2)
    if any(line.split(" ")[0].startswith("char") for line in text.splitlines()):
        pytest.skip("rosbags keeps IDL `char` here, which its .msg text cannot express")
    assert rihs01(type_name, text) == JAZZY.hash_rihs01(type_name)


# ``char`` is left out: rosbags hashes a .msg ``char`` as FieldType CHAR (13), ROS 2 as ``uint8``
# (rosidl_adapter's MSG_TYPE_TO_IDL); see test_msg_char_hashes_as_uint8_like_rosidl.
_PRIMS = [
    "bool",
    "byte",
    "int8",
    "uint8",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "float32",
    "float64",
    "string",
]
_names = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)


@st.composite
def _definitions(draw: Any) -> tuple[str, str]:
    """A random two-type bundle: a main type with primitives, arrays, sequences and constants that
    nests a second random type."""

    def body(nested: str | None) -> str:
        lines = []
        names = draw(st.lists(_names, min_size=0, max_size=6, unique=True))
        for name in names:
            base = nested if nested and draw(st.booleans()) else draw(st.sampled_from(_PRIMS))
            suffix = draw(st.sampled_from(["", "[]", "[3]", "[<=4]"]))
            lines.append(f"{base}{suffix} {name}")
        if draw(st.booleans()):
            lines.insert(0, "int32 LIMIT=7")
        return "\n".join(lines) + "\n"

    inner = body(None)
    outer = body("pkg_b/Inner")
    return outer, inner


@settings(max_examples=60, deadline=None)
@given(_definitions())
def test_random_definitions_hash_as_rosbags_does(definition: tuple[str, str]) -> None:
    outer, inner = definition
    bundle = f"{outer}{'=' * 80}\nMSG: pkg_b/Inner\n{inner}"
    assert rihs01("pkg_a/msg/Outer", bundle) == _rosbags_hash("pkg_a/msg/Outer", bundle)


def test_msg_char_hashes_as_uint8_like_rosidl() -> None:
    assert rihs01("p/msg/A", "char a\n") == rihs01("p/msg/A", "uint8 a\n")
    assert rihs01("p/msg/A", "char a\n") == _rosbags_hash("p/msg/A", "uint8 a\n")


def test_description_json_has_rep2011_shape_and_separators() -> None:
    text = type_description_json("std_msgs/msg/String", "string data\n")
    assert text == (
        '{"type_description": {"type_name": "std_msgs/msg/String", "fields": [{"name": "data", '
        '"type": {"type_id": 17, "capacity": 0, "string_capacity": 0, "nested_type_name": ""}}]}, '
        '"referenced_type_descriptions": []}'
    )


def test_a_bundle_missing_a_nested_type_is_refused() -> None:
    with pytest.raises(SchemaError, match="does not define pkg/msg/Missing"):
        rihs01("pkg/msg/A", "pkg/Missing m\n")


def test_is_rihs01_rejects_malformed_hashes() -> None:
    assert not is_rihs01("RIHS01_" + "0" * 63)
    assert not is_rihs01("RIHS01_" + "G" * 64)
    assert not is_rihs01("TypeHashNotSupported")


# ---- services ---------------------------------------------------------------------------------
def test_a_standard_service_hashes_as_rmw_zenoh_publishes() -> None:
    """example_interfaces/srv/AddTwoInts: the hash in rmw_zenoh's docs/design.md service key."""
    assert (
        rihs01_service(
            "example_interfaces/srv/AddTwoInts",
            ("example_interfaces/msg/AddTwoIntsRequest", "int64 a\nint64 b\n"),
            ("example_interfaces/msg/AddTwoIntsResponse", "int64 sum\n"),
        )
        == "RIHS01_e118de6bf5eeb66a2491b5bda11202e7b68f198d6f67922cf30364858239c81a"
    )


def _sdk_service_hash(service_type: str, request: type[Any], response: type[Any]) -> str:
    """zenoh-ros2-sdk's independent service hash from the two ``.msg`` bundles."""
    from zenoh_ros2_sdk.utils import compute_service_type_hash

    dependencies: dict[str, str] = {}
    mains: list[str] = []
    for cls in (request, response):
        parts = SEPARATOR.split(cls.msgdef())
        mains.append(_qualified(parts[0], cls.TYPE_NAME.split("/")[0]))
        for chunk in parts[1:]:
            head, _, text = chunk.strip("\n").partition("\n")
            pkg, name = head[5:].strip().split("/")
            dependencies[f"{pkg}/msg/{name}"] = _qualified(text, pkg)
    digest: str = compute_service_type_hash(
        service_type, mains[0] or "# empty", mains[1] or "# empty", dependencies
    )
    return digest


def _qualified(text: str, package: str) -> str:
    """Bare nested type names of a ``.msg`` text prefixed with its package (as a ``.srv`` of
    another package must write them)."""
    return "\n".join(qualify_msg_line(line, package) for line in text.splitlines())


@pytest.mark.parametrize(
    ("request_name", "response_name"),
    [
        ("std_msgs/msg/String", "jointbus_msgs/msg/ActuatorReply"),
        ("jointbus_msgs/msg/ActuatorPowerRequest", "jointbus_msgs/msg/ActuatorReply"),
        ("jointbus_msgs/msg/ActuatorGeometryRequest", "jointbus_msgs/msg/ArrayGeometry"),
        ("hb50_commons/msg/JointCommand", "std_msgs/msg/String"),
    ],
)
def test_a_message_pair_service_hashes_as_zenoh_ros2_sdk_does(
    request_name: str, response_name: str
) -> None:
    registry = default_registry().with_types(*HB50_MESSAGE_TYPES)
    request, response = registry.by_type_name(request_name), registry.by_type_name(response_name)
    service_type = "jointbus_msgs/srv/Pair"
    ours = rihs01_service(
        service_type,
        (request.TYPE_NAME, request.msgdef()),
        (response.TYPE_NAME, response.msgdef()),
    )
    assert is_rihs01(ours)
    assert ours == _sdk_service_hash(service_type, request, response)


def test_a_service_type_name_must_be_pkg_srv_name() -> None:
    with pytest.raises(SchemaError, match="pkg/srv/Name"):
        rihs01_service("jointbus_msgs/msg/Pair", ("a/msg/A", ""), ("a/msg/B", ""))
