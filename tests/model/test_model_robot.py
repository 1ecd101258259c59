"""RobotModel: tree validation, lookups, joint kinds and limits; Joint and Link rules."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import pytest

from jointbus.math import Vec3
from jointbus.messages.errors import UnknownJointError
from jointbus.messages.joint_kind import JointKind
from jointbus.model.errors import DefinitionError, TreeError, UnknownLinkError
from jointbus.model.joint import Joint, JointType
from jointbus.model.limits import JointLimitSpec
from jointbus.model.link import Box, Inertia, Link
from jointbus.model.robot import RobotModel
from jointbus.model.yaml_loader import load_robot

LIM = JointLimitSpec(-1.0, 1.0)


def _chain(*pairs: tuple[str, str], order: tuple[str, ...] | None = None) -> RobotModel:
    links = sorted({name for pair in pairs for name in pair})
    joints = tuple(
        Joint(f"j{i}", JointType.REVOLUTE, parent, child, limits=LIM)
        for i, (parent, child) in enumerate(pairs)
    )
    return RobotModel(
        "t",
        tuple(Link(n) for n in links),
        joints,
        order if order is not None else tuple(j.name for j in joints),
    )


def test_a_valid_chain_and_its_lookups() -> None:
    model = _chain(("a", "b"), ("b", "c"), ("b", "d"))
    assert model.root == "a"
    assert [j.name for j in model.chain("c")] == ["j0", "j1"]
    assert model.parent_joint("a") is None
    assert [j.name for j in model.child_joints("b")] == ["j1", "j2"]
    assert model.actuator_index("j2") == 2
    assert model.limits_for(["j2", "j0"]) == [LIM, LIM]


def test_unknown_names_raise_lookup_errors_carrying_the_name() -> None:
    model = _chain(("a", "b"))
    with pytest.raises(UnknownJointError) as err:
        model.joint("elbow")
    assert err.value.name == "elbow" and "j0" in str(err.value)
    with pytest.raises(UnknownJointError):
        model.limits_for(["j0", "elbow"])
    with pytest.raises(UnknownLinkError) as link_err:
        model.chain("z")
    assert link_err.value.name == "z"
    assert isinstance(link_err.value, LookupError)


@pytest.mark.parametrize(
    ("build", "fragment", "joint", "index"),
    [
        (lambda: _chain(("a", "b"), ("b", "a")), "cycle", None, None),
        (lambda: _chain(("a", "b"), ("c", "d")), "no parent joint", None, None),
        (lambda: _chain(("a", "b"), ("a", "b")), "already has parent", "j1", 1),
        (
            lambda: _chain(("a", "b"), ("b", "c"), ("c", "d"), ("d", "b")),
            "already has parent",
            "j3",
            3,
        ),
        (lambda: _chain(("a", "b"), order=("j0", "j0")), "repeats", "j0", 1),
        (lambda: _chain(("a", "b"), order=("jx",)), "names no joint", "jx", 0),
        (
            lambda: _chain(("a", "b"), ("b", "c"), order=("j1",)),
            "missing from actuator_order",
            "j0",
            0,
        ),
    ],
)
def test_tree_errors_name_the_joint_and_index(
    build: Callable[[], RobotModel], fragment: str, joint: str | None, index: int | None
) -> None:
    with pytest.raises(TreeError, match=fragment) as err:
        build()
    assert (err.value.joint, err.value.index) == (joint, index)


def test_a_cycle_below_the_root_is_found() -> None:
    links = tuple(Link(n) for n in ("root", "a", "b", "c"))
    joints = (
        Joint("j0", JointType.FIXED, "root", "a", actuated=False),
        Joint("j1", JointType.FIXED, "b", "c", actuated=False),
        Joint("j2", JointType.FIXED, "c", "b", actuated=False),
    )
    with pytest.raises(TreeError, match="cycle"):
        RobotModel("t", links, joints, ())


def test_parents_must_exist_and_names_be_unique() -> None:
    with pytest.raises(TreeError, match="parent link 'x'") as err:
        RobotModel(
            "t",
            (Link("a"), Link("b")),
            (Joint("j", JointType.FIXED, "x", "b", actuated=False),),
            (),
        )
    assert (err.value.joint, err.value.index) == ("j", 0)
    with pytest.raises(TreeError, match="used by two joints"):
        RobotModel(
            "t",
            (Link("a"), Link("b"), Link("c")),
            (
                Joint("j", JointType.FIXED, "a", "b", actuated=False),
                Joint("j", JointType.FIXED, "b", "c", actuated=False),
            ),
            (),
        )
    with pytest.raises(TreeError, match="defined twice"):
        RobotModel("t", (Link("a"), Link("a")), (), ())


def test_non_actuated_joints_cannot_be_in_the_actuator_order() -> None:
    links = (Link("a"), Link("b"))
    passive = Joint("j", JointType.REVOLUTE, "a", "b", limits=LIM, actuated=False)
    with pytest.raises(TreeError, match="not actuated"):
        RobotModel("t", links, (passive,), ("j",))
    model = RobotModel("t", links, (passive,), ())
    assert [j.name for j in model.moving_joints()] == ["j"]  # passive joints still move
    assert model.actuated_joints() == ()


def test_joint_rules() -> None:
    with pytest.raises(DefinitionError, match="axis"):
        Joint("j", JointType.REVOLUTE, "a", "b", axis=Vec3(0, 0, 0), limits=LIM)
    with pytest.raises(DefinitionError, match="continuous"):
        Joint("j", JointType.REVOLUTE, "a", "b")  # unbounded revolute
    with pytest.raises(DefinitionError, match="actuated"):
        Joint("j", JointType.FIXED, "a", "b")
    with pytest.raises(DefinitionError, match="parent"):
        Joint("j", JointType.FIXED, "a", "a", actuated=False)
    j = Joint("j", JointType.PRISMATIC, "a", "b", axis=Vec3(0, 3, 4), limits=LIM)
    assert j.axis.isclose(Vec3(0, 0.6, 0.8)) and j.dof == 1 and j.kind is JointKind.SINGLE_DOF
    assert Joint("p", JointType.PLANAR, "a", "b", axis=Vec3(0, 0, 1)).kind is JointKind.PLANAR
    assert Joint("f", JointType.FLOATING, "a", "b").dof == 6
    with pytest.raises(DefinitionError, match="fixed joint has no state"):
        _ = Joint("x", JointType.FIXED, "a", "b", actuated=False).kind


def test_link_rules() -> None:
    with pytest.raises(DefinitionError, match="mass"):
        Link("l", mass=-1.0)
    with pytest.raises(DefinitionError, match="triangle"):
        Inertia(1.0, 1.0, 3.0)
    with pytest.raises(DefinitionError, match=r"size\.y"):
        Box(Vec3(1, 0, 1))
    assert Link("frame").mass == 0.0


def test_joint_kinds_and_actuated_joints_of_the_bundled_robots() -> None:
    hb50 = load_robot("hb50")
    kinds = hb50.joint_kinds()
    assert list(kinds) == list(hb50.actuator_order)
    assert set(kinds.values()) == {JointKind.SINGLE_DOF}
    assert [j.name for j in hb50.actuated_joints()] == list(hb50.actuator_order)
    rover = load_robot("rover")
    assert rover.joint_kinds() == {"base": JointKind.PLANAR, "mast": JointKind.SINGLE_DOF}


def test_poses_are_validated_on_construction() -> None:
    model = _chain(("a", "b"))
    with pytest.raises(DefinitionError, match=r"\[-1.0, 1.0\]"):
        dataclasses.replace(model, poses={"p": {"j0": 1.5}})
    with pytest.raises(UnknownJointError):
        dataclasses.replace(model, poses={"p": {"jx": 0.0}})
    with pytest.raises(DefinitionError, match="position in"):
        dataclasses.replace(model, poses={"p": {"j0": math.nan}})
    with pytest.raises(DefinitionError, match="number"):
        dataclasses.replace(model, poses={"p": {"j0": "up"}})  # type: ignore[dict-item]
    with pytest.raises(DefinitionError, match="one of"):
        model.pose("missing")


def test_the_seed_rover_joint_state_checks_against_the_rover_model() -> None:
    """Seed 000: JointState(names [base, mast], positions [Transform2D(12.4, -3.1, 1.57), 0.5])
    fits the rover description, and the same values swapped do not."""
    from jointbus.math import Transform2D
    from jointbus.messages.errors import ShapeMismatchError
    from jointbus.messages.joint_state import JointState

    kinds = load_robot("rover").joint_kinds()
    JointState(("base", "mast"), positions=(Transform2D(12.4, -3.1, 1.57), 0.5)).check_against(
        kinds
    )
    with pytest.raises(ShapeMismatchError) as err:
        JointState(("mast", "base"), positions=(Transform2D(12.4, -3.1, 1.57), 0.5)).check_against(
            kinds
        )
    assert (err.value.joint, err.value.index) == ("mast", 0)
