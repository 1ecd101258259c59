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
from jointbus.robots.hb50.legged.leg_kinematics import LegKinematics, leg_names
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


# ---- the walking controller's direction: J⁻¹·v and −Jᵀ·f per leg in closed form -----------------
# Reference: what the controller ran before (numpy.linalg.solve and einsum on the (legs, 3, 3)
# Jacobians). Tolerance: the closed form and LAPACK round differently; on legs whose Jacobian is
# well conditioned (|det J| ≥ 1e-4 m³; the hb50 walks at ≈ 3e-3) they agree to 1e-9 relative.
legs_in_workspace = st.lists(st.floats(-0.6, 0.6), min_size=4, max_size=4).flatmap(
    lambda j0: st.tuples(
        st.just(j0),
        st.lists(st.floats(-1.2, 1.2), min_size=4, max_size=4),
        st.lists(st.floats(0.3, 2.5), min_size=4, max_size=4),
    )
)
three_vectors = st.lists(
    st.tuples(st.floats(-300, 300), st.floats(-300, 300), st.floats(-300, 300)),
    min_size=4,
    max_size=4,
)


def _q(legs: tuple[list[float], list[float], list[float]]) -> list[float]:
    q = [0.0] * 12
    for k in range(4):
        i0, i1, i2 = LEGS.joint_index[k]
        q[i0], q[i1], q[i2] = legs[0][k], legs[1][k], legs[2][k]
    return q


@given(legs_in_workspace, three_vectors, three_vectors)
def test_rates_and_torques_equal_the_numpy_solve_on_random_leg_states(
    legs: tuple[list[float], list[float], list[float]],
    velocities: list[tuple[float, float, float]],
    forces: list[tuple[float, float, float]],
) -> None:
    q = _q(legs)
    jac = LEGS.jacobians(q)
    rates, torques = LEGS.rates_and_torques(q, velocities, forces)
    tau_ref = -np.einsum("kji,kj->ki", jac, np.array(forces))
    for k in range(4):
        idx = LEGS.joint_index[k]
        np.testing.assert_allclose(
            [torques[i] for i in idx], tau_ref[k], rtol=1e-12, atol=1e-9
        )
    assert rates is not None
    qd_ref = np.linalg.solve(jac, np.array(velocities)[:, :, None])[:, :, 0]
    for k in range(4):
        if abs(np.linalg.det(jac[k])) < 1e-4:
            continue
        idx = LEGS.joint_index[k]
        scale = 1.0 + np.abs(qd_ref[k]).max()
        np.testing.assert_allclose([rates[i] for i in idx], qd_ref[k], rtol=0, atol=1e-9 * scale)


def test_a_singular_leg_gives_no_rates_as_numpy_refuses_the_solve() -> None:
    q = [0.0] * 12  # every knee straight: J singular
    q[0] = 0.1
    zero = [(0.0, 0.0, 0.0)] * 4
    rates, torques = LEGS.rates_and_torques(q, [(0.1, 0.0, 0.0)] * 4, zero)
    assert rates is None
    assert torques == [0.0] * 12


def test_evaluate_rows_are_the_arrays_of_evaluate() -> None:
    q = list(hb50().pose("home").values())
    rows = LEGS.evaluate_rows(q, q, [1.0] * 12)
    sample = LEGS.evaluate(q, q, [1.0] * 12)
    assert np.array(rows[0]).tolist() == sample.position.tolist()
    assert np.array(rows[1]).tolist() == sample.velocity.tolist()
    assert np.array(rows[2]).tolist() == sample.force.tolist()
    assert rows[3] == sample.det.tolist()
