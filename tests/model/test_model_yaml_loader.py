"""YAML robot files: the bundled robots load, and bad files give errors naming file and key."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import pytest
import yaml

from jointbus.messages.joint_kind import JointKind
from jointbus.model.errors import RobotFileError
from jointbus.model.joint import JointType
from jointbus.model.link import Box, Capsule, Cylinder, Sphere
from jointbus.model.yaml_loader import bundled_robots, load_robot, loads_robot

MINIMAL = textwrap.dedent(
    """\
    name: pendulum
    links:
      - name: base
      - name: arm
        mass: 1.0
        inertia: {ixx: 0.01, iyy: 0.01, izz: 0.001}
        collisions:
          - {shape: cylinder, radius: 0.02, length: 0.5, origin: {xyz: [0, 0, -0.25]}}
    joints:
      - name: hinge
        type: revolute
        parent: base
        child: arm
        axis: [0, 1, 0]
        limits: {position: [-1.5, 1.5], velocity: 3.0, effort: 2.0}
    """
)


def _edit(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new)


def _error(text: str) -> RobotFileError:
    with pytest.raises(RobotFileError) as err:
        loads_robot(text, source="test.yaml")
    return err.value


def test_bundled_robots_are_listed_and_load() -> None:
    assert set(bundled_robots()) >= {"hb50", "arm6", "rover"}
    for name in ("hb50", "arm6", "rover"):
        assert load_robot(name).name == name


def test_load_by_path(tmp_path: Path) -> None:
    path = tmp_path / "pendulum.yaml"
    path.write_text(MINIMAL)
    model = load_robot(path)
    assert model.actuator_order == ("hinge",)  # default: actuated joints in file order
    assert model.base_mount is JointType.FIXED
    hinge = model.joint("hinge")
    assert hinge.limits.position_min == -1.5 and hinge.limits.effort_max == 2.0
    assert math.isinf(hinge.limits.current_max)
    assert model.link("arm").collisions[0].origin.translation.z == -0.25


def test_missing_file_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(RobotFileError, match=r"nope\.yaml") as err:
        load_robot(tmp_path / "nope.yaml")
    assert "bundled robot name" in str(err.value)


def test_every_section_of_the_schema_is_read() -> None:
    model = load_robot("hb50")
    assert model.base_mount is JointType.FLOATING and model.root == "body"
    assert model.joint("fr_j0").dynamics.armature == 0.0094
    assert model.sensor("imu").origin.translation.x == 0.0693
    assert model.simulation.position_noise == 6.4e-4
    assert model.parameter("kp").default == 80.0
    shapes = {type(c.shape) for link in model.links for c in link.collisions}
    assert shapes == {Box, Capsule, Sphere}
    arm = load_robot("arm6")
    elbow = arm.joint("elbow").actuator
    assert elbow is not None and elbow.home == 1.5
    soft = arm.joint("shoulder_lift").limits.soft
    assert soft is not None and soft.k_position == 10.0
    assert {type(c.shape) for link in arm.links for c in link.collisions} >= {Cylinder, Capsule}


@pytest.mark.parametrize(
    ("old", "new", "key", "expected"),
    [
        (
            "limits: {position: [-1.5, 1.5]",
            "limits: {position: [-1.5]",
            "joints[0].limits.position",
            "[min, max]",
        ),
        (
            "limits: {position: [-1.5, 1.5]",
            "limits: {position: [-1.5, abc]",
            "joints[0].limits.position[1]",
            "a number",
        ),
        (
            "limits: {position: [-1.5, 1.5]",
            "limits: {position: [1.5, -1.5]",
            "joints[0].limits.position",
            "min ≤ max",
        ),
        ("velocity: 3.0", "velocity: -3.0", "joints[0].limits.velocity", "≥ 0"),
        ("type: revolute", "type: hinge", "joints[0].type", "one of"),
        ("axis: [0, 1, 0]", "axis: [0, 0, 0]", "joints[0].axis", "non-zero"),
        ("axis: [0, 1, 0]", "axis: [0, 1]", "joints[0].axis", "[x, y, z]"),
        ("mass: 1.0", "mass: -1.0", "links[1].mass", "≥ 0"),
        ("mass: 1.0", "mass: heavy", "links[1].mass", "a number"),
        ("radius: 0.02", "radius: 0.0", "links[1].collisions[0].radius", "> 0"),
        ("shape: cylinder", "shape: cone", "links[1].collisions[0].shape", "'box'"),
        ("izz: 0.001", "izz: 0.5", "links[1].inertia", "triangle"),
        ("child: arm", "child: elbow", "joints[0]", "not a link"),
        ("parent: base", "parent: arm", "joints[0].child", "other than the parent"),
        (
            "    limits: {position: [-1.5, 1.5], velocity: 3.0, effort: 2.0}\n",
            "",
            "joints[0].limits",
            "position range",
        ),
        ("name: pendulum\n", "", "name", "required"),
        ("axis: [0, 1, 0]", "axsi: [0, 1, 0]", "joints[0].axsi", "one of the keys"),
    ],
)
def test_bad_values_name_the_file_and_key_path(old: str, new: str, key: str, expected: str) -> None:
    err = _error(_edit(MINIMAL, old, new))
    assert err.source == "test.yaml"
    assert err.key == key
    assert expected in str(err)
    assert str(err).startswith(f"test.yaml: {key}")


def test_duplicate_keys_are_refused_with_their_line() -> None:
    text = MINIMAL + "poses:\n  home: {hinge: 0.1, hinge: 0.2}\n"
    err = _error(text)
    assert err.value == "hinge"
    assert "line 17" in err.key  # the second "hinge"


def test_yaml_syntax_errors_give_the_line() -> None:
    err = _error(MINIMAL + "joints: [\n")
    assert "valid YAML" in str(err) and "line" in err.key


def test_tree_problems_are_reported_with_the_section_and_index() -> None:
    err = _error(MINIMAL + "actuator_order: [hinge, hinge]\n")
    assert err.key == "actuator_order[1]" and "repeats" in str(err)
    err = _error(MINIMAL + "actuator_order: [wrist]\n")
    assert err.key == "actuator_order[0]" and "'wrist'" in str(err)
    err = _error(_edit(MINIMAL, "  - name: arm\n", "  - name: base\n"))
    assert err.key == "links" and "defined twice" in str(err)


def test_poses_are_checked_against_limits_and_names() -> None:
    err = _error(MINIMAL + "poses:\n  up: {hinge: 2.0}\n")
    assert "[-1.5, 1.5]" in str(err)
    err = _error(MINIMAL + "poses:\n  up: {elbow: 0.0}\n")
    assert err.key == "poses" and err.value == "elbow"


def test_base_mount_and_link_are_checked() -> None:
    err = _error(MINIMAL + "base: {mount: prismatic}\n")
    assert err.key == "base.mount"
    err = _error(MINIMAL + "base: {link: arm}\n")
    assert err.key == "base.link" and "'base'" in str(err)
    assert (
        loads_robot(MINIMAL + "base: {link: base, mount: floating}\n").base_mount
        is JointType.FLOATING
    )


def test_continuous_joint_needs_no_position_limits() -> None:
    text = _edit(MINIMAL, "type: revolute", "type: continuous")
    text = _edit(
        text,
        "limits: {position: [-1.5, 1.5], velocity: 3.0, effort: 2.0}",
        "limits: {velocity: .inf}",
    )
    hinge = loads_robot(text).joint("hinge")
    assert math.isinf(hinge.limits.position_max) and math.isinf(hinge.limits.velocity_max)


def test_rover_has_a_planar_joint_in_its_actuator_order() -> None:
    rover = load_robot("rover")
    assert rover.actuator_order == ("base", "mast")
    assert rover.joint_kinds() == {"base": JointKind.PLANAR, "mast": JointKind.SINGLE_DOF}
    assert rover.joint("base").dof == 3


def test_the_bundled_files_are_plain_yaml() -> None:
    """The files parse with PyYAML's own safe loader too (no custom tags)."""
    for name in bundled_robots():
        data = yaml.safe_load(
            (Path(__file__).parents[2] / "src/jointbus/model/robots" / f"{name}.yaml").read_text()
        )
        assert data["name"] == name


def test_a_joint_role_is_read_and_optional() -> None:
    assert loads_robot(MINIMAL, source="test.yaml").joints[0].role == ""
    robot = loads_robot(_edit(MINIMAL, "type: revolute", "type: revolute\n    role: shoulder"))
    assert robot.joints[0].role == "shoulder"
    assert "role" in str(_error(_edit(MINIMAL, "type: revolute", "type: revolute\n    role: 3")))
    hb50 = {j.name: j.role for j in load_robot("hb50").joints}
    assert (hb50["fr_j0"], hb50["rl_j1"], hb50["rr_j2"]) == ("hip_abduction", "hip_flexion", "knee")


TWO_JOINTS = textwrap.dedent(
    """\
    name: arm2
    links:
      - name: base
      - name: upper
      - name: fore
    joints:
      - name: j_base
        type: revolute
        parent: base
        child: upper
        axis: [0, 0, 1]
        limits: {position: [-1.5, 1.5], velocity: 3.0, effort: 2.0}
      - name: j_shoulder
        type: revolute
        parent: upper
        child: fore
        axis: [0, 1, 0]
        limits: {position: [-1.0, 1.0], velocity: 2.0, effort: 10.0}
    """
)
_SHOULDER = "limits: {position: [-1.0, 1.0], velocity: 2.0, effort: 10.0}"


@pytest.mark.parametrize(
    ("old", "new", "key", "value", "expected"),
    [
        (_SHOULDER, "limits: {velocity: 2.0}", "joints[1].limits.position", None, "[min, max]"),
        (
            "position: [-1.0, 1.0]",
            "position: [1.0, -1.0]",
            "joints[1].limits.position",
            [1.0, -1.0],
            "min ≤ max",
        ),
        ("position: [-1.0, 1.0]", "position: [-1.0]", "joints[1].limits.position", [-1.0], "pair"),
        ("position: [-1.0, 1.0]", "position: [-1.0, x]", "joints[1].limits.position[1]", "x", "a"),
        ("effort: 10.0", "effort: -10.0", "joints[1].limits.effort", -10.0, "≥ 0"),
        (
            "velocity: 2.0, effort: 10",
            "velocity: -2, effort: 10",
            "joints[1].limits.velocity",
            -2,
            "≥ 0",
        ),
        ("axis: [0, 1, 0]", "axis: [0, 0, 0]", "joints[1].axis", [0, 0, 0], "non-zero"),
        ("child: fore", "child: upper", "joints[1].child", "upper", "other than the parent"),
        ("child: fore", "child: nowhere", "joints[1]", "j_shoulder", "not a link"),
        ("parent: upper", "parent: upper\n    role: 3", "joints[1].role", 3, "string"),
        ("parent: upper", "parent: upper\n    limts: {}", "joints[1].limts", {}, "one of the keys"),
    ],
)
def test_errors_inside_a_joint_name_the_joint_by_name_and_index(
    old: str, new: str, key: str, value: object, expected: str
) -> None:
    """A bad value of the second joint names the joint ('j_shoulder', index 1), the key, the
    value and what was expected — not only ``joints[1]``."""
    head, tail = TWO_JOINTS.split("  - name: j_shoulder\n")
    assert old in tail, old
    err = _error(head + "  - name: j_shoulder\n" + tail.replace(old, new, 1))
    assert (err.source, err.key, err.joint, err.index) == ("test.yaml", key, "j_shoulder", 1)
    if key != "joints[1]":
        assert err.value == value
    message = str(err)
    assert message.startswith(f"test.yaml: {key} of joint 'j_shoulder' (index 1) = ")
    assert "; expected " in message and expected in message.split("; expected ", 1)[1]


def test_a_joint_without_a_name_is_named_by_its_index() -> None:
    err = _error(TWO_JOINTS.replace("  - name: j_shoulder\n", "  - role: shoulder\n"))
    assert (err.key, err.joint, err.index) == ("joints[1].name", None, 1)
    assert str(err).startswith("test.yaml: joints[1].name of joint (index 1) = None; expected ")


def test_errors_outside_joints_name_no_joint() -> None:
    err = _error(_edit(MINIMAL, "mass: 1.0", "mass: -1.0"))
    assert err.joint is None and err.index is None and " of joint" not in str(err)
