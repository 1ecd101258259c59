"""``jointbus ros2``: exported interface packages give ROS 2 the same types and hashes, and the
graph command lists a domain's nodes and topics."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from typer.testing import CliRunner

from jointbus.cli.main import _register, app
from jointbus.cli.ros2 import export_packages
from jointbus.codec.type_hash import rihs01_of
from jointbus.messages.hb50 import HB50_MESSAGE_TYPES
from jointbus.messages.registry import default_registry


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ws")
    _register()
    result = CliRunner().invoke(app, ["ros2", "export-msgs", str(out)])
    assert result.exit_code == 0, result.output
    assert "hb50_commons: 6 messages" in result.output
    return out


def test_packages_have_package_xml_cmakelists_and_one_msg_per_type(exported: Path) -> None:
    registry = default_registry().with_types(*HB50_MESSAGE_TYPES)
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
    registry = default_registry().with_types(*HB50_MESSAGE_TYPES)
    for path in files:
        name = f"{path.parent.parent.name}/msg/{path.stem}"
        assert store.hash_rihs01(name) == rihs01_of(registry.by_type_name(name)), name


def test_an_unknown_package_is_refused_and_nothing_written(tmp_path: Path) -> None:
    _register()
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
