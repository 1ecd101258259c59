"""Closed-form leg kinematics and statics against the model's generic kinematics and IK."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.math import Vec3
from jointbus.model.errors import DefinitionError
from jointbus.model.kinematics import Kinematics
from jointbus.model.yaml_loader import load_robot
from jointbus.robots.hb50.control.leg_kinematics import LegKinematics, leg_names
from support.hb50_sim import hb50

LEGS = LegKinematics(hb50())
KIN = Kinematics(hb50())
FEET = KIN.point_set([(f"{leg}_foot", Vec3.ZERO) for leg in LEGS.legs])

angles = st.lists(st.floats(-1.5, 1.5), min_size=12, max_size=12)
vectors = st.lists(st.floats(-100.0, 100.0), min_size=3, max_size=3)


def test_legs_are_read_from_the_model_in_actuator_order() -> None:
    assert leg_names(hb50()) == ("fr", "fl", "rl", "rr")
    assert LEGS.joint_index.tolist() == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11]]
    assert LEGS.foot_radius.tolist() == [0.021] * 4


def test_a_robot_without_legs_is_refused() -> None:
    with pytest.raises(DefinitionError, match="legs"):
        LegKinematics(load_robot("arm6"))


@given(angles, angles)
def test_positions_velocities_and_jacobians_match_the_generic_kinematics(
    q: list[float], qd: list[float]
) -> None:
    positions, jacobians = FEET.evaluate(np.array(q))
    sample = LEGS.evaluate(q, qd)
    np.testing.assert_allclose(sample.position, positions, atol=1e-12)
    np.testing.assert_allclose(sample.velocity, jacobians @ np.array(qd), atol=1e-12)
    per_leg = np.stack([jacobians[k][:, LEGS.joint_index[k]] for k in range(4)])
    np.testing.assert_allclose(LEGS.jacobians(q), per_leg, atol=1e-12)
    np.testing.assert_allclose(sample.det, np.linalg.det(per_leg), atol=1e-12)


@given(angles, vectors)
def test_the_force_is_the_one_whose_joint_torques_were_measured(
    q: list[float], force: list[float]
) -> None:
    """Joints loaded by a foot force f read τ = −Jᵀ·f; the estimate inverts exactly that."""
    jac = LEGS.jacobians(q)
    f = np.array(force)
    tau = np.zeros(12)
    for k in range(4):
        tau[LEGS.joint_index[k]] = -jac[k].T @ f
    sample = LEGS.evaluate(q, None, tau)
    for k in range(4):
        if abs(np.linalg.det(jac[k])) < 1e-3:  # ill-conditioned: the exact check is meaningless
            continue
        np.testing.assert_allclose(sample.force[k], f, atol=1e-6 * (1 + np.abs(f).max()))


def test_a_straight_leg_has_no_force_estimate() -> None:
    q = [0.0] * 12  # every leg stretched: knee singularity
    sample = LEGS.evaluate(q, None, [1.0] * 12)
    assert np.isnan(sample.force).all()
    assert np.abs(sample.det).max() < 1e-12


def test_nan_measurements_stay_in_their_leg() -> None:
    q = list(hb50().pose("home").values())
    q[4] = float("nan")  # fl_j1
    sample = LEGS.evaluate(q, q, [1.0] * 12)
    assert np.isnan(sample.position[1]).all()
    assert np.isfinite(sample.position[[0, 2, 3]]).all()
    assert np.isfinite(sample.force[[0, 2, 3]]).all()


def test_without_velocities_the_feet_are_still() -> None:
    sample = LEGS.evaluate(list(hb50().pose("home").values()))
    assert sample.velocity.tolist() == [[0.0] * 3] * 4
    assert np.isnan(sample.force).all()
