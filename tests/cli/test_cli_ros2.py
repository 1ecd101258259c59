"""``jointbus ros2``: exported interface packages give ROS 2 the same types and hashes, and the
graph command lists a domain's nodes and topics."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from typer.testing import CliRunner

from jointbus import drivers
from jointbus.bus import Bus, ZenohConfig
from jointbus.bus.service_types import service_type_hash, service_type_name
from jointbus.cli.interface_packages import (
    JOINTBUS_PACKAGES,
    SERVICE_PAIRS,
    export_packages,
    own_definition,
)
from jointbus.cli.main import app
from jointbus.codec.type_hash import qualify_msg_line, rihs01_of
from jointbus.messages.registry import default_registry
from jointbus.nodes.array import ArrayNode
from jointbus.stack import Stack
from jointbus.tools.known_types import known_registry
from support.array_server import served
from support.bus import wait_until


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ws")
    result = CliRunner().invoke(app, ["ros2", "export-msgs", str(out)])
    assert result.exit_code == 0, result.output
    assert "hb50_commons: 6 messages" in result.output
    return out


def test_packages_have_package_xml_cmakelists_and_one_msg_per_type(exported: Path) -> None:
    registry = known_registry()
    for package in ("hb50_commons", "jointbus_msgs"):
        root = exported / package
        xml = ET.parse(root / "package.xml").getroot()
        assert xml.findtext("name") == package
        assert xml.findtext("member_of_group") == "rosidl_interface_packages"
        cmake = (root / "CMakeLists.txt").read_text()
        expected = sorted(n.rsplit("/", 1)[1] for n in registry if n.startswith(f"{package}/"))
        assert sorted(p.stem for p in (root / "msg").glob("*.msg")) == expected
        for name in expected:
            assert f'"msg/{name}.msg"' in cmake
        depends = {d.text for d in xml.findall("depend")}
        assert "std_msgs" in depends
        assert f"DEPENDENCIES {' '.join(sorted(depends))}" in cmake


def test_exported_definitions_hash_like_jointbus_in_rosbags(exported: Path) -> None:
    """rosbags parses the exported .msg files (ROS 2's own types from its Jazzy store) and gets
    the hashes jointbus puts on the wire."""
    store = get_typestore(Stores.ROS2_JAZZY)
    files = sorted(exported.glob("*/msg/*.msg"))
    for path in files:
        name = f"{path.parent.parent.name}/msg/{path.stem}"
        store.register(get_types_from_msg(path.read_text(), name))
    registry = known_registry()
    for path in files:
        name = f"{path.parent.parent.name}/msg/{path.stem}"
        assert store.hash_rihs01(name) == rihs01_of(registry.by_type_name(name)), name


def test_every_type_a_running_stack_and_served_array_put_on_the_wire_is_exported(
    exported: Path,
) -> None:
    """What a ROS 2 machine needs to decode everything it sees: every jointbus-only type on the
    wire — in the graph tokens of the running hb50 stack and of a served arm, publishers,
    subscribers and services alike (parameters, loop diagnostics and config updates included) —
    has an exported file that rosbags hashes to the hash in the token."""
    store = get_typestore(Stores.ROS2_JAZZY)
    for path in sorted(exported.glob("*/msg/*.msg")):
        name = f"{path.parent.parent.name}/msg/{path.stem}"
        store.register(get_types_from_msg(path.read_text(), name))
    with (
        served("sim://arm6?noise=false", "arm6") as server,
        Stack(zenoh=ZenohConfig(hub_port=server.port), start_command=None, realtime=None) as _stack,
        Bus(name="observer", zenoh=ZenohConfig(hub_port=server.port)) as observer,
    ):
        wanted = {"/hb50/bridge_data", "/hb50/parameters", "/arm6/diagnostics"}
        assert wait_until(lambda: wanted <= {t.name for t in observer.discover(0.3)}, 10.0)
        endpoints = [e for t in observer.discover(0.5) for e in (*t.publishers, *t.subscribers)]
        services = observer.services(0.5)
    on_wire = {(e.type_name, e.type_hash) for e in endpoints if not e.local}
    ours = {(n, h) for n, h in on_wire if n.split("/", 1)[0] in JOINTBUS_PACKAGES}
    names = {n for n, _ in ours}
    assert {
        "jointbus_msgs/msg/ParameterList",
        "jointbus_msgs/msg/LoopDiagnostics",
        "jointbus_msgs/msg/ParameterUpdate",
        "hb50_commons/msg/BridgeData",
        "jointbus_msgs/msg/JointState",
    } <= names, sorted(names)
    for type_name, type_hash in sorted(ours):
        package, _, short = type_name.split("/")
        assert (exported / package / "msg" / f"{short}.msg").is_file(), type_name
        assert store.hash_rihs01(type_name) == type_hash, type_name
    offered = {(s.service_type, s.type_hash) for s in services if not s.local}
    assert offered
    for service_type, _hash in offered:
        short = service_type.rsplit("/", 1)[1]
        assert (exported / "jointbus_msgs" / "srv" / f"{short}.srv").is_file(), service_type


def test_an_unknown_package_is_refused_and_nothing_written(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["ros2", "export-msgs", str(tmp_path), "-p", "hb50_commons", "-p", "nope_msgs"]
    )
    assert result.exit_code == 1
    assert "no registered type is in package 'nope_msgs'" in result.output
    assert list(tmp_path.iterdir()) == []


def test_export_of_one_package(tmp_path: Path) -> None:
    written = export_packages(tmp_path, ["hb50_commons"])
    assert list(written) == ["hb50_commons"]
    assert "hb50_commons/msg/BridgeData" in written["hb50_commons"]
    assert not (tmp_path / "jointbus_msgs").exists()


def test_every_service_a_served_array_offers_is_exported_as_a_srv(exported: Path) -> None:
    """The .srv files cover what the array node really serves (no pair missing)."""
    array = drivers.open("sim://arm6?noise=false")
    bus = Bus(name="export")
    node = ArrayNode(array, bus, namespace="arm6")
    try:
        offered = {info.service_type for info in bus.services()}
    finally:
        node.shutdown()
        bus.close()
        array.close()
    root = exported / "jointbus_msgs"
    files = {f"jointbus_msgs/srv/{p.stem}" for p in (root / "srv").glob("*.srv")}
    assert offered and offered <= files
    cmake = (root / "CMakeLists.txt").read_text()
    for name in files:
        assert f'"srv/{name.rsplit("/", 1)[1]}.srv"' in cmake
    assert "service_msgs" in {d.text for d in ET.parse(root / "package.xml").findall("depend")}


def test_exported_srv_files_hash_like_the_service_keys(exported: Path) -> None:
    """zenoh-ros2-sdk hashes each exported .srv (with the exported .msg files as its nested
    types) to the hash jointbus puts in the service's key."""
    from zenoh_ros2_sdk.utils import compute_service_type_hash

    registry = default_registry()
    # The SDK resolves a bare nested name against the service's package: write them in full.
    texts = {
        f"{p.parent.parent.name}/msg/{p.stem}": "\n".join(
            qualify_msg_line(line, p.parent.parent.name) for line in p.read_text().splitlines()
        )
        for p in exported.glob("*/msg/*.msg")
    }
    jazzy = get_typestore(Stores.ROS2_JAZZY)
    for request_name, response_name in SERVICE_PAIRS:
        request = registry.by_type_name(request_name)
        response = registry.by_type_name(response_name)
        service = service_type_name(request, response)
        # The SDK takes every type it is given as referenced: give it exactly the nested ones,
        # from the exported files (ROS 2's own from rosbags' Jazzy store).
        dependencies = {}
        for cls in (request, response):
            for head in re.findall(r"^MSG: (\S+)$", cls.msgdef(), re.MULTILINE):
                package, short = head.split("/")
                name = f"{package}/msg/{short}"
                dependencies[name] = texts.get(name) or own_definition(
                    jazzy.generate_msgdef(name, ros_version=2)[0]
                )
        path = exported / "jointbus_msgs" / "srv" / f"{service.rsplit('/', 1)[1]}.srv"
        request_text, response_text = path.read_text().split("\n---\n")
        digest = compute_service_type_hash(service, request_text, response_text, dependencies)
        assert digest == service_type_hash(request, response), service


def test_nodes_are_announced_in_their_namespace_so_two_arrays_are_two_ros_nodes() -> None:
    """Two arrays served as ``arm3`` and ``arm4`` on one hub: ROS 2 (a plain Zenoh liveliness
    query, as rmw_zenoh's graph cache makes) sees ``/arm3/array_node`` and
    ``/arm4/array_node`` — namespace ``/arm3`` mangled ``%arm3`` in the node's and its
    endpoints' tokens — and ``jointbus ros2 graph`` lists both, not one ``/array_node``."""
    from jointbus.bus.ros_graph import parse_token
    from support.bus import free_port, ros2_peer

    port = free_port()
    arrays = [drivers.open("sim://arm6?noise=false") for _ in range(2)]
    buses = [Bus(name=f"server-{ns}", zenoh=ZenohConfig(hub_port=port)) for ns in ("arm3", "arm4")]
    nodes = [
        ArrayNode(array, bus, namespace=ns)
        for array, bus, ns in zip(arrays, buses, ("arm3", "arm4"), strict=True)
    ]
    try:
        for node in nodes:
            node.start()
        with ros2_peer(port) as ros:

            def tokens() -> list[str]:
                replies = ros.liveliness().get("@ros2_lv/0/**", timeout=1.0)
                return [str(r.ok.key_expr) for r in replies if r.ok is not None]

            assert wait_until(lambda: sum("/NN/" in t for t in tokens()) >= 2, 5.0)
            entities = [parse_token(t) for t in tokens()]
        named = {(e.namespace, e.node) for e in entities if e.kind == "NN"}
        assert {("/arm3", "array_node"), ("/arm4", "array_node")} <= named
        assert ("/", "array_node") not in named
        for e in entities:
            if e.node == "array_node" and e.kind != "NN":  # its endpoints carry it too
                assert e.namespace == "/" + e.topic.split("/")[1], e.key
                assert f"/%/%{e.topic.split('/')[1]}/array_node" in e.key
        result = CliRunner().invoke(app, ["ros2", "graph", "--hub-port", str(port)])
        assert result.exit_code == 0, result.output
        listed = result.output.split("topics:")[0].split()
        assert "/arm3/array_node" in listed and "/arm4/array_node" in listed, result.output
        assert "/array_node" not in listed
    finally:
        for node in nodes:
            node.shutdown()
        for bus in buses:
            bus.close()
        for array in arrays:
            array.close()


def test_graph_with_nothing_running_exits_1_and_says_where_it_looked() -> None:
    """Issue 20, item 12: "nothing there" is exit 1 for every command."""
    from support.cli import free_port, run_cli

    port = free_port()
    result = run_cli(port, "ros2", "graph", "--timeout", "0.3")
    assert result.returncode == 1, result.stdout
    assert "no ROS 2 graph found" in result.stderr
    assert f"looked on hub port {port}" in result.stderr


#: Hashes ROS 2 itself publishes (shared/notes/rmw-zenoh.md; String, JointState, Twist, Header
#: reproduced with rosbags): the standard packages written by --with-deps must give these.
_ROS2_HASHES = {
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


def test_with_deps_writes_the_standard_interfaces_and_prints_every_types_hash(
    tmp_path: Path,
) -> None:
    """Issue 20, item 24: an offline ROS 2 client (zenoh-ros2-sdk without a network) also needs
    the standard interfaces the robot sends, and a hash per type to check against the wire. An
    *empty* rosbags store (no ROS 2 types of its own) parses every written file to the hash
    printed, which for ROS 2's types is ROS 2's."""
    result = CliRunner().invoke(app, ["ros2", "export-msgs", str(tmp_path), "--with-deps"])
    assert result.exit_code == 0, result.output
    packages = {p.name for p in tmp_path.iterdir()}
    assert {
        "builtin_interfaces",
        "std_msgs",
        "geometry_msgs",
        "sensor_msgs",
        "nav_msgs",
        "tf2_msgs",
        "hb50_commons",
        "jointbus_msgs",
    } <= packages
    printed = dict(line.split() for line in result.output.splitlines() if line.startswith("  "))
    store = get_typestore(Stores.EMPTY)
    files = sorted(tmp_path.glob("*/msg/*.msg"))
    for path in files:
        name = f"{path.parent.parent.name}/msg/{path.stem}"
        store.register(get_types_from_msg(path.read_text(), name))
    for path in files:
        name = f"{path.parent.parent.name}/msg/{path.stem}"
        assert printed[name] == store.hash_rihs01(name), name
    for name, known in _ROS2_HASHES.items():
        assert printed[name] == known, name
    assert "nav_msgs/msg/Odometry" in printed and "tf2_msgs/msg/TFMessage" in printed
    services = [n for n in printed if "/srv/" in n]
    assert services and all(printed[n].startswith("RIHS01_") for n in services)
    plain = CliRunner().invoke(app, ["ros2", "export-msgs", str(tmp_path / "own")])
    assert {p.name for p in (tmp_path / "own").iterdir()} == {"hb50_commons", "jointbus_msgs"}
    assert "RIHS01_" in plain.output
