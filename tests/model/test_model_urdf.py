"""URDF: export (read back by yourdfpy itself), import, round trip, and import errors."""

from __future__ import annotations

import io
import math
import re
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jointbus.model.errors import RobotFileError
from jointbus.model.joint import JointType
from jointbus.model.link import Capsule, Cylinder
from jointbus.model.robot import RobotModel
from jointbus.model.yaml_loader import load_robot

# The URDF library (yourdfpy, which imports trimesh and scipy: ~0.8 s of CPU) is imported when a
# test here runs, not when the suite is collected: `make test` collects the suite five times (the
# cache-filling collection and four workers), and jointbus.model.urdf_loader defers the same
# import for the same reason (src/jointbus/model/__init__.py).


def _yourdfpy() -> Any:
    import yourdfpy  # type: ignore[import-untyped]

    return yourdfpy


def load_urdf(*args: Any, **kwargs: Any) -> RobotModel:
    from jointbus.model.urdf_loader import load_urdf as load

    return load(*args, **kwargs)


def loads_urdf(*args: Any, **kwargs: Any) -> RobotModel:
    from jointbus.model.urdf_loader import loads_urdf as loads

    return loads(*args, **kwargs)


@pytest.mark.parametrize("name", ["hb50", "arm6", "rover"])
def test_exported_urdf_is_valid_for_yourdfpy(name: str) -> None:
    model = load_robot(name)
    urdf = _yourdfpy().URDF.load(io.BytesIO(model.to_urdf().encode()), load_meshes=False)
    assert urdf.validate()
    assert urdf.robot.name == name
    assert urdf.base_link == model.root
    assert {j.name for j in urdf.robot.joints} == {j.name for j in model.joints}
    assert [j.name for j in urdf.actuated_joints] == [
        j.name for j in model.joints if j.type is not JointType.FIXED
    ]


def _assert_same_joints(a: RobotModel, b: RobotModel) -> None:
    assert [j.name for j in a.joints] == [j.name for j in b.joints]
    for ja, jb in zip(a.joints, b.joints, strict=True):
        assert (ja.type, ja.parent, ja.child, ja.actuated) == (
            jb.type,
            jb.parent,
            jb.child,
            jb.actuated,
        )
        assert ja.origin.isclose(jb.origin, 1e-12), ja.name
        assert ja.axis.isclose(jb.axis, 1e-15), ja.name
        la, lb = ja.limits, jb.limits
        assert (la.position_min, la.position_max) == (lb.position_min, lb.position_max), ja.name
        assert (la.velocity_max, la.effort_max, la.soft) == (
            lb.velocity_max,
            lb.effort_max,
            lb.soft,
        )
        assert (ja.dynamics.damping, ja.dynamics.friction) == (
            jb.dynamics.damping,
            jb.dynamics.friction,
        )


@pytest.mark.parametrize("name", ["hb50", "arm6", "rover"])
def test_round_trip_keeps_joints_limits_and_links(name: str) -> None:
    model = load_robot(name)
    back = loads_urdf(
        model.to_urdf(), actuator_order=model.actuator_order, base_mount=model.base_mount
    )
    assert back.name == model.name and back.root == model.root
    assert back.actuator_order == model.actuator_order
    assert back.base_mount is model.base_mount
    _assert_same_joints(model, back)
    for la, lb in zip(model.links, back.links, strict=True):
        assert la.name == lb.name and la.mass == lb.mass and la.inertia == lb.inertia
        assert la.com.isclose(lb.com, 1e-12)
        assert len(la.collisions) == len(lb.collisions)
        for ca, cb in zip(la.collisions, lb.collisions, strict=True):
            assert ca.origin.isclose(cb.origin, 1e-12)
            if isinstance(ca.shape, Capsule):  # URDF has no capsule: the enclosing cylinder
                assert cb.shape == Cylinder(ca.shape.radius, ca.shape.length + 2 * ca.shape.radius)
            else:
                assert ca.shape == cb.shape
    # and the text is stable: exporting the re-imported model gives the same URDF
    assert (
        back.to_urdf() == loads_urdf(back.to_urdf(), actuator_order=model.actuator_order).to_urdf()
    )


def test_urdf_without_actuator_order_uses_moving_joints_in_file_order(tmp_path: Path) -> None:
    model = load_robot("arm6")
    path = tmp_path / "arm6.urdf"
    path.write_text(model.to_urdf())
    loaded = load_urdf(path)
    assert loaded.actuator_order == model.actuator_order
    assert loaded.joint("elbow").calibration.direction == 1  # URDF carries no calibration
    assert loaded.joint("elbow").actuator is None


def test_joints_left_out_of_the_actuator_order_are_passive() -> None:
    model = load_robot("arm6")
    loaded = loads_urdf(model.to_urdf(), actuator_order=["shoulder_pan", "elbow"])
    assert not loaded.joint("shoulder_lift").actuated
    assert [j.name for j in loaded.moving_joints()][:2] == ["shoulder_pan", "elbow"]


GOOD = textwrap.dedent(
    """\
    <robot name="r">
      <link name="a"/>
      <link name="b"><collision><geometry><mesh filename="b.stl"/></geometry></collision></link>
      <joint name="j" type="revolute">
        <parent link="a"/><child link="b"/>
        <limit lower="-1" upper="1" effort="2" velocity="3"/>
      </joint>
    </robot>
    """
)


def test_meshes_are_an_error_unless_skipped() -> None:
    with pytest.raises(RobotFileError, match="meshes") as err:
        loads_urdf(GOOD, source="r.urdf")
    assert err.value.key == "link 'b' (index 1).collision[0]" and err.value.source == "r.urdf"
    model = loads_urdf(GOOD, skip_meshes=True)
    assert model.link("b").collisions == ()
    assert model.joint("j").axis.x == 1.0  # URDF default axis


@pytest.mark.parametrize(
    ("old", "new", "fragment"),
    [
        ('<robot name="r">', '<robot name="r"', "well-formed XML"),
        ('<robot name="r">', "<robot>", "<robot name=...>"),
        ('<child link="b"/>', "", "<child link=...>"),
        (' lower="-1" upper="1"', "", "joint[0].limit.lower of joint 'j' (index 0) = None"),
        ('type="revolute"', 'type="hinge"', "joint[0].type of joint 'j' (index 0) = 'hinge'"),
        ('<parent link="a"/>', '<parent link="x"/>', "a valid tree"),
        ('lower="-1"', 'lower="low"', "joint[0].limit.lower of joint 'j' (index 0) = 'low'"),
        ('<mesh filename="b.stl"/>', "<cone/>", "Unknown tag: cone"),
        ("<limit ", '<mimic joint="j"/><limit ', "no mimic"),
    ],
)
def test_bad_urdf_gives_a_typed_error(old: str, new: str, fragment: str) -> None:
    assert old in GOOD
    with pytest.raises(RobotFileError, match=re.escape(fragment)) as err:
        loads_urdf(GOOD.replace(old, new), source="r.urdf", skip_meshes=True)
    assert err.value.source == "r.urdf"


def test_parser_errors_not_checked_beforehand_keep_their_full_text() -> None:
    tag = "a_geometry_tag_that_no_urdf_parser_knows_and_whose_name_is_longer_than_eighty_chars"
    with pytest.raises(RobotFileError) as err:
        loads_urdf(GOOD.replace('<mesh filename="b.stl"/>', f"<{tag}/>"), source="r.urdf")
    assert f"Unknown tag: {tag})" in str(err.value)


def test_unbounded_limits_are_written_as_infinity_and_read_back() -> None:
    model = load_robot("rover")
    text = model.to_urdf()
    assert 'effort="Infinity"' in text
    back = loads_urdf(text, actuator_order=model.actuator_order)
    assert math.isinf(back.joint("base").limits.effort_max)
    assert back.joint("base").limits.velocity_max == 1.5


def test_exported_inertias_are_what_yourdfpy_reads() -> None:
    model = load_robot("hb50")
    urdf = _yourdfpy().URDF.load(io.BytesIO(model.to_urdf().encode()), load_meshes=False)
    body = urdf.link_map["body"]
    assert body.inertial.mass == 7.812
    np.testing.assert_array_equal(np.diag(body.inertial.inertia), (0.03428, 0.05385, 0.07359))


ARM = textwrap.dedent(
    """\
    <robot name="arm">
      <link name="base"/><link name="upper"/><link name="fore"/>
      <joint name="j_base" type="revolute">
        <parent link="base"/><child link="upper"/>
        <limit lower="-1.5" upper="1.5" effort="2.0" velocity="3.0"/>
      </joint>
      <joint name="j_shoulder" type="revolute">
        <parent link="upper"/><child link="fore"/><axis xyz="0 1 0"/>
        <limit lower="-1.0" upper="1.0" effort="10.0" velocity="2.0"/>
        <dynamics damping="0.1" friction="0.0"/>
        <safety_controller soft_lower_limit="-0.9" soft_upper_limit="0.9" k_position="10"
                           k_velocity="1"/>
      </joint>
    </robot>
    """
)
_SHOULDER_LIMIT = '<limit lower="-1.0" upper="1.0" effort="10.0" velocity="2.0"/>'


def _arm_error(old: str, new: str) -> RobotFileError:
    head, tail = ARM.split('<joint name="j_shoulder"')
    assert old in tail, old
    with pytest.raises(RobotFileError) as err:
        loads_urdf(head + '<joint name="j_shoulder"' + tail.replace(old, new, 1), source="a.urdf")
    return err.value


@pytest.mark.parametrize(
    ("old", "new", "key", "value", "expected"),
    [
        ('effort="10.0"', 'effort="-10.0"', "limit.effort", -10.0, "a magnitude ≥ 0"),
        ('velocity="2.0"', 'velocity="-2"', "limit.velocity", -2.0, "a magnitude ≥ 0"),
        ('upper="1.0"', 'upper="-2.0"', "limit.lower/upper", (-1.0, -2.0), "min ≤ max"),
        ('damping="0.1"', 'damping="-0.1"', "dynamics.damping", -0.1, "a finite number ≥ 0"),
        ('k_position="10"', 'k_position="-1"', "safety_controller.k_position", -1.0, "a gain ≥ 0"),
        ('<child link="fore"/>', "", "child", None, "a <child link=...> element"),
        ('<axis xyz="0 1 0"/>', '<mimic joint="j_base"/>', "mimic", "mimic", "no mimic joints"),
    ],
)
def test_errors_inside_a_joint_name_the_joint_field_value_and_expectation(
    old: str, new: str, key: str, value: object, expected: str
) -> None:
    """Not "joint 'j_shoulder' (index 1) = 'j_shoulder'; expected effort_max = -10.0; ...": the
    attribute, the refused value and the rule, and the joint by name and index."""
    err = _arm_error(old, new)
    where = (err.source, err.key, err.value, err.joint, err.index)
    assert where == ("a.urdf", f"joint[1].{key}", value, "j_shoulder", 1)
    assert str(err) == (
        f"a.urdf: joint[1].{key} of joint 'j_shoulder' (index 1) = {value!r}; expected {expected}"
    )


_URDF_TYPES = "revolute, continuous, prismatic, fixed, floating, planar"
_REVOLUTE_LIMIT = "a number (required in the <limit> of a revolute or prismatic joint)"


@pytest.mark.parametrize(
    ("old", "new", "key", "value", "expected"),
    [
        (' velocity="2.0"', "", "limit.velocity", None, "a number (required in every <limit>)"),
        (' effort="10.0"', "", "limit.effort", None, "a number (required in every <limit>)"),
        (' lower="-1.0"', "", "limit.lower", None, _REVOLUTE_LIMIT),
        (' upper="1.0"', "", "limit.upper", None, _REVOLUTE_LIMIT),
        (
            _SHOULDER_LIMIT,
            "",
            "limit",
            None,
            "a <limit> element (required on a revolute or prismatic joint)",
        ),
        ('velocity="2.0"', 'velocity="abc"', "limit.velocity", "abc", "a number"),
        ('effort="10.0"', 'effort=""', "limit.effort", "", "a number"),
        ('upper="1.0"', 'upper="1,5"', "limit.upper", "1,5", "a number"),
        ('type="revolute"', 'type="revolut"', "type", "revolut", f"one of {_URDF_TYPES}"),
        (' type="revolute"', "", "type", None, f"one of {_URDF_TYPES}"),
        ('k_position="10"', 'k_position="q"', "safety_controller.k_position", "q", "a number"),
        ('<axis xyz="0 1 0"/>', '<axis xyz="0 y 0"/>', "axis.xyz", "0 y 0", "three numbers"),
        ('<axis xyz="0 1 0"/>', '<origin rpy="0 0"/>', "origin.rpy", "0 0", "three numbers"),
    ],
)
def test_urdf_the_parser_would_refuse_names_the_joint_key_value_and_expectation(
    old: str, new: str, key: str, value: object, expected: str
) -> None:
    """Not "a.urdf = 'ValueError'; expected a valid URDF (could not convert string to float:
    'abc')": the file, the attribute's key, the joint by name and index, the value and the rule
    — checked before yourdfpy parses, so its terse or cut-off messages never reach the user."""
    err = _arm_error(old, new)
    where = (err.source, err.key, err.value, err.joint, err.index)
    assert where == ("a.urdf", f"joint[1].{key}", value, "j_shoulder", 1)
    assert str(err) == (
        f"a.urdf: joint[1].{key} of joint 'j_shoulder' (index 1) = {value!r}; expected {expected}"
    )


def _not_a_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return True
    return False


@given(
    field=st.sampled_from(["lower", "upper", "effort", "velocity"]),
    text=st.text(st.characters(whitelist_categories=("L", "Nd")), min_size=1).filter(_not_a_number),
)
@settings(max_examples=50, deadline=None)
def test_any_limit_attribute_that_is_not_a_number_is_refused_naming_the_joint(
    field: str, text: str
) -> None:
    limit = re.sub(f'{field}="[^"]*"', lambda _: f'{field}="{text}"', _SHOULDER_LIMIT)
    err = _arm_error(_SHOULDER_LIMIT, limit)
    assert str(err) == (
        f"a.urdf: joint[1].limit.{field} of joint 'j_shoulder' (index 1) = {text!r}; "
        "expected a number"
    )


def test_a_continuous_joint_needs_no_limit_and_no_position_bounds() -> None:
    head, tail = ARM.split('<joint name="j_shoulder"')
    no_bounds = tail.replace('type="revolute"', 'type="continuous"').replace(
        'lower="-1.0" upper="1.0" ', ""
    )
    model = loads_urdf(head + '<joint name="j_shoulder"' + no_bounds)
    assert model.joint("j_shoulder").type is JointType.CONTINUOUS
    assert model.joint("j_shoulder").limits.velocity_max == 2.0
    no_limit = tail.replace('type="revolute"', 'type="continuous"').replace(_SHOULDER_LIMIT, "")
    model = loads_urdf(head + '<joint name="j_shoulder"' + no_limit)
    assert math.isinf(model.joint("j_shoulder").limits.velocity_max)


@given(
    field=st.sampled_from(["effort", "velocity"]),
    magnitude=st.floats(min_value=1e-9, max_value=1e9, allow_nan=False),
)
@settings(max_examples=50, deadline=None)
def test_any_negative_limit_magnitude_is_refused_naming_the_joint(
    field: str, magnitude: float
) -> None:
    limit = _SHOULDER_LIMIT.replace(
        f'{field}="{"10.0" if field == "effort" else "2.0"}"', f'{field}="{-magnitude!r}"'
    )
    err = _arm_error(_SHOULDER_LIMIT, limit)
    assert str(err) == (
        f"a.urdf: joint[1].limit.{field} of joint 'j_shoulder' (index 1) = {-magnitude!r}; "
        "expected a magnitude ≥ 0"
    )


def test_a_good_arm_urdf_loads() -> None:
    model = loads_urdf(ARM)
    assert model.joint("j_shoulder").limits.effort_max == 10.0
    soft = model.joint("j_shoulder").limits.soft
    assert soft is not None and soft.k_position == 10.0
