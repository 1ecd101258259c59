"""The robots ``sim://`` opens: the bundled ones by name, and a user's own YAML or URDF file by
path (issue 11 item 15: a user's robot needed the simulator's internals), with typed errors for
files that are missing or cannot describe an actuator array."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from jointbus import drivers
from jointbus.drivers import DriverFileError, DriverURLError
from jointbus.drivers.sim.driver import SimActuatorArray
from jointbus.model.errors import RobotFileError

PAN_TILT = """\
name: pan_tilt
links:
  - {name: base, mass: 0.5}
  - {name: yoke, mass: 0.2}
  - {name: head, mass: 0.3}
joints:
  - name: pan
    type: revolute
    parent: base
    child: yoke
    axis: [0, 0, 1]
    limits: {position: [-2.5, 2.5], velocity: 3.0, effort: 5.0, current: 4.0}
  - name: tilt
    type: revolute
    parent: yoke
    child: head
    origin: {xyz: [0, 0, 0.05]}
    axis: [0, 1, 0]
    limits: {position: [-1.2, 1.2], velocity: 3.0, effort: 5.0, current: 4.0}
"""

PAN_TILT_URDF = """\
<robot name="pan_tilt">
  <link name="base"/>
  <link name="yoke"/>
  <link name="head"><visual><geometry><mesh filename="head.stl"/></geometry></visual></link>
  <joint name="pan" type="revolute">
    <parent link="base"/><child link="yoke"/><axis xyz="0 0 1"/>
    <limit lower="-2.5" upper="2.5" effort="5" velocity="3"/>
  </joint>
  <joint name="tilt" type="revolute">
    <parent link="yoke"/><child link="head"/><origin xyz="0 0 0.05"/><axis xyz="0 1 0"/>
    <limit lower="-1.2" upper="1.2" effort="5" velocity="3"/>
  </joint>
</robot>
"""

STEPPING = "realtime=false&noise=false"


def open_sim(url: str) -> SimActuatorArray:
    array = drivers.open(url)
    assert isinstance(array, SimActuatorArray)
    return array


def check_pan_tilt(array: SimActuatorArray) -> None:
    """The file's joints, limits and a move that reaches its target."""
    with array:
        assert array.names == ("pan", "tilt")
        assert [lim.position_max for lim in array.config.limits] == [2.5, 1.2]
        assert [lim.velocity_max for lim in array.config.limits] == [3.0, 3.0]
        array.power(True)
        array.positions([0.8, -0.4])
        reading = array.wait_until_still(None, timeout=10.0)
        np.testing.assert_allclose(reading.position, [0.8, -0.4], atol=0.02)


def test_a_yaml_robot_opens_by_relative_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "robots").mkdir()
    (tmp_path / "robots" / "pan_tilt.yaml").write_text(PAN_TILT, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    check_pan_tilt(open_sim(f"sim://robots/pan_tilt.yaml?{STEPPING}"))
    monkeypatch.chdir(tmp_path / "robots")
    check_pan_tilt(open_sim(f"sim://pan_tilt.yaml?{STEPPING}"))


def test_a_yaml_robot_opens_by_absolute_path(tmp_path: Path) -> None:
    path = tmp_path / "pan_tilt.yml"
    path.write_text(PAN_TILT, encoding="utf-8")
    check_pan_tilt(open_sim(f"sim://{path}?{STEPPING}"))  # sim:///tmp/…/pan_tilt.yml


def test_a_urdf_robot_opens_by_path_its_meshes_left_out(tmp_path: Path) -> None:
    path = tmp_path / "pan_tilt.urdf"
    path.write_text(PAN_TILT_URDF, encoding="utf-8")
    check_pan_tilt(open_sim(f"sim://{path}?{STEPPING}"))


def test_a_robot_file_runs_in_real_time_by_default(tmp_path: Path) -> None:
    path = tmp_path / "pan_tilt.yaml"
    path.write_text(PAN_TILT, encoding="utf-8")
    with open_sim(f"sim://{path}") as array:
        assert array.realtime


def test_a_missing_robot_file_is_a_typed_error_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DriverFileError) as info:
        drivers.open("sim://robots/nowhere.yaml")
    assert info.value.path == str(tmp_path / "robots" / "nowhere.yaml")
    assert "no robot file 'robots/nowhere.yaml'" in str(info.value)
    assert isinstance(info.value, DriverURLError)


@pytest.mark.parametrize(
    ("text", "name", "says"),
    [
        (PAN_TILT.replace("position: [-1.2, 1.2], ", ""), "bad.yaml", "joints[1].limits"),
        (PAN_TILT.replace("name: tilt", "name: pan"), "twice.yaml", "pan"),
        ("name: [unclosed\n", "broken.yaml", "valid YAML"),
        (PAN_TILT_URDF.replace('lower="-2.5"', 'lower="left"'), "bad.urdf", "'left'"),
        (PAN_TILT, "pan_tilt.txt", "'.txt'"),
    ],
)
def test_a_robot_file_that_cannot_be_simulated_names_file_and_fault(
    tmp_path: Path, text: str, name: str, says: str
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DriverFileError) as info:
        drivers.open(f"sim://{path}")
    assert str(path) in str(info.value)
    assert says in str(info.value)
    if name.endswith((".yaml", ".urdf")):
        assert isinstance(info.value.__cause__, RobotFileError)


def test_a_robot_without_a_finite_range_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "spinner.yaml"
    path.write_text(
        "name: spinner\nlinks: [{name: a}, {name: b}]\n"
        "joints: [{name: wheel, type: continuous, parent: a, child: b, axis: [0, 0, 1]}]\n",
        encoding="utf-8",
    )
    with pytest.raises(DriverFileError, match=r"joint 'wheel' \(index 0\).*finite range"):
        drivers.open(f"sim://{path}")


def test_an_unknown_bundled_name_lists_names_and_files() -> None:
    with pytest.raises(DriverURLError, match="available: arm6, hb50, rover, or a robot file"):
        drivers.open("sim://arm7")
