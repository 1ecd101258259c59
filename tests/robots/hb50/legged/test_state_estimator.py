"""The state estimator: legs, contact with hysteresis, body pose and leg odometry.

Synthetic frames check each rule exactly; a MuJoCo run checks the estimate against the simulator's
ground truth (height, contacts, velocity).
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jointbus.math import Quaternion
from jointbus.messages.errors import LimitError, UnknownJointError
from jointbus.messages.geometry_msgs import Quaternion as QuaternionMsg
from jointbus.messages.geometry_msgs import Vector3
from jointbus.robots.hb50.legged.leg_kinematics import ACCELERATED, LegKinematics
from jointbus.robots.hb50.legged.state_estimator import (
    EstimatedState,
    EstimatorConfig,
    StateEstimator,
)
from jointbus.robots.hb50.messages import BridgeData, JointCommand
from support.accel import assert_runs_without_accel
from support.hb50_sim import PERIOD, apply, frame, hb50, make_world

MODEL = hb50()
NAMES = MODEL.actuator_order
HOME = [MODEL.pose("home")[n] for n in NAMES]
LEGS = LegKinematics(MODEL)
IDENTITY = Quaternion.identity()


def torques_for(q: Sequence[float], forces: np.ndarray) -> list[float]:
    """Joint torques that hold ground forces ``forces`` (legs, 3; body frame) at ``q``."""
    jac = LEGS.jacobians(q)
    tau = np.zeros(12)
    for k in range(4):
        tau[LEGS.joint_index[k]] = -jac[k].T @ forces[k]
    return tau.tolist()


def make_frame(
    q: Sequence[float] = HOME,
    qd: Sequence[float] | None = None,
    tau: Sequence[float] | None = None,
    *,
    orientation: Quaternion = IDENTITY,
    gyro: tuple[float, float, float] = (0.0, 0.0, 0.0),
    names: Sequence[str] = NAMES,
) -> BridgeData:
    return BridgeData(
        orientation=QuaternionMsg.from_math(orientation),
        angular_velocity=Vector3(*gyro),
        joint_name=tuple(names),
        joint_position=tuple(q),
        joint_velocity=tuple(qd) if qd is not None else (0.0,) * len(q),
        joint_effort=tuple(tau) if tau is not None else (0.0,) * len(q),
        joint_temperature=bytes(len(q)),
        joint_status=(0,) * len(q),
    )


def standing_forces(fz: float) -> np.ndarray:
    return np.tile([0.0, 0.0, fz], (4, 1))


def test_feet_forces_and_contacts_of_a_standing_robot() -> None:
    est = StateEstimator(MODEL)
    state = est.update(make_frame(tau=torques_for(HOME, standing_forces(42.0))), PERIOD)
    assert state.legs == ("fr", "fl", "rl", "rr")
    np.testing.assert_allclose(state.foot_position, LEGS.positions_of(HOME), atol=1e-6)
    np.testing.assert_allclose(state.foot_force, standing_forces(42.0), atol=1e-3)
    assert state.contact.tolist() == [True] * 4
    # float32 on the wire: positions agree to ~1e-7 rad
    expected = 0.021 - float(LEGS.positions_of(HOME)[:, 2].mean())
    assert state.height == pytest.approx(expected, abs=1e-6)
    np.testing.assert_allclose(state.position, [0.0, 0.0, expected], atol=1e-6)


def test_contact_has_hysteresis() -> None:
    """On above contact_on, off only below contact_off: no flicker near one threshold."""
    est = StateEstimator(MODEL, EstimatorConfig(contact_on=20.0, contact_off=10.0))
    seen = []
    for fz in (15.0, 25.0, 15.0, 11.0, 5.0, 15.0, 21.0):
        state = est.update(make_frame(tau=torques_for(HOME, standing_forces(fz))), PERIOD)
        seen.append(bool(state.contact[0]))
    assert seen == [False, True, True, True, False, False, True]


def test_a_leg_without_torque_reading_is_not_in_contact() -> None:
    tau = torques_for(HOME, standing_forces(42.0))
    tau[4] = math.nan  # fl_j1 did not report
    state = StateEstimator(MODEL).update(make_frame(tau=tau), PERIOD)
    assert state.contact.tolist() == [True, False, True, True]
    assert np.isnan(state.foot_force[1]).all()


def test_height_is_measured_along_gravity_when_the_body_is_tilted() -> None:
    """Tilted body, feet on flat ground: the height is the body origin's height above them."""
    tilt = Quaternion.from_rpy(0.0, 0.15, 0.0)
    est = StateEstimator(MODEL)
    rot = tilt.to_matrix()
    world_forces = standing_forces(42.0) @ rot  # rows: Rᵀ·(0, 0, fz), the force in the body frame
    state = est.update(make_frame(tau=torques_for(HOME, world_forces), orientation=tilt), PERIOD)
    feet_world = LEGS.positions_of(HOME) @ rot.T
    expected = 0.021 - float(feet_world[:, 2].mean())
    assert state.height == pytest.approx(expected, abs=1e-6)
    assert state.orientation.isclose(tilt, 1e-6)
    assert state.contact.all()


def test_only_feet_in_contact_give_the_height() -> None:
    q = list(HOME)
    q[1] -= 0.3  # fr thigh lifted: its foot is higher, and carries no load
    forces = standing_forces(42.0)
    forces[0] = 0.0
    state = StateEstimator(MODEL).update(make_frame(q, tau=torques_for(q, forces)), PERIOD)
    assert state.contact.tolist() == [False, True, True, True]
    expected = 0.021 - float(LEGS.positions_of(q)[1:, 2].mean())
    assert state.height == pytest.approx(expected, abs=1e-6)


def test_without_contact_the_lowest_foot_gives_the_height() -> None:
    q = list(HOME)
    q[1] -= 0.3
    state = StateEstimator(MODEL).update(make_frame(q), PERIOD)
    assert not state.contact.any()
    assert state.height == pytest.approx(0.021 - float(LEGS.positions_of(q)[:, 2].min()))


def test_leg_odometry_gives_the_body_velocity() -> None:
    """Stance feet sliding back in the body frame at v mean the body moves forward at v."""
    est = StateEstimator(MODEL, EstimatorConfig(velocity_tau=0.0))
    qd = [0.0, 0.5, 0.2] * 4
    jac = LEGS.jacobians(HOME)
    foot_vel = np.stack([jac[k] @ np.array(qd[3 * k : 3 * k + 3]) for k in range(4)])
    yaw = Quaternion.from_rpy(0.0, 0.0, 0.5)
    tau = torques_for(HOME, standing_forces(42.0))
    state = est.update(make_frame(qd=qd, tau=tau, orientation=yaw), PERIOD)
    v_body = -foot_vel.mean(axis=0)
    np.testing.assert_allclose(state.body_linear_velocity, v_body, atol=1e-5)
    np.testing.assert_allclose(state.foot_velocity, foot_vel, atol=1e-5)
    np.testing.assert_allclose(state.world_linear_velocity, yaw.to_matrix() @ v_body, atol=1e-5)
    # odometry: x, y integrate the world velocity
    state = est.update(make_frame(qd=qd, tau=tau, orientation=yaw), PERIOD)
    np.testing.assert_allclose(
        state.position[:2], 2 * PERIOD * (yaw.to_matrix() @ v_body)[:2], atol=1e-7
    )


def test_a_turning_body_over_still_feet_has_no_linear_velocity() -> None:
    """Feet still in the world while the body yaws: ṗ_rel = −ω × p, so v = 0."""
    est = StateEstimator(MODEL, EstimatorConfig(velocity_tau=0.0))
    omega = np.array([0.0, 0.0, 0.4])
    feet = LEGS.positions_of(HOME)
    jac = LEGS.jacobians(HOME)
    qd = np.zeros(12)
    for k in range(4):
        qd[LEGS.joint_index[k]] = np.linalg.solve(jac[k], -np.cross(omega, feet[k]))
    tau = torques_for(HOME, standing_forces(42.0))
    state = est.update(make_frame(qd=qd.tolist(), tau=tau, gyro=(0.0, 0.0, 0.4)), PERIOD)
    np.testing.assert_allclose(state.body_linear_velocity, 0.0, atol=1e-5)
    np.testing.assert_allclose(state.body_angular_velocity, omega, atol=1e-12)


def test_joints_are_mapped_by_name() -> None:
    order = list(range(12))[::-1]
    tau = torques_for(HOME, standing_forces(42.0))
    shuffled = make_frame(
        [HOME[i] for i in order], tau=[tau[i] for i in order], names=[NAMES[i] for i in order]
    )
    a = StateEstimator(MODEL).update(shuffled, PERIOD)
    b = StateEstimator(MODEL).update(make_frame(tau=tau), PERIOD)
    np.testing.assert_allclose(a.foot_force, b.foot_force)
    np.testing.assert_allclose(a.joint_position, b.joint_position)


def test_a_frame_missing_a_joint_is_refused_and_changes_nothing() -> None:
    est = StateEstimator(MODEL)
    est.update(make_frame(tau=torques_for(HOME, standing_forces(42.0))), PERIOD)
    partial = make_frame(HOME[:11], names=NAMES[:11])
    with pytest.raises(UnknownJointError, match="rr_j2"):
        est.update(partial, PERIOD)
    with pytest.raises(LimitError, match="dt"):
        est.update(make_frame(), 0.0)
    # still in contact: the refused frames (no load) were not applied
    state = est.update(make_frame(tau=torques_for(HOME, standing_forces(15.0))), PERIOD)
    assert state.contact.all()


def test_an_unusable_imu_orientation_keeps_the_last_one() -> None:
    est = StateEstimator(MODEL)
    tilt = Quaternion.from_rpy(0.1, 0.0, 0.0)
    est.update(make_frame(orientation=tilt), PERIOD)
    bad = make_frame()
    bad = BridgeData(
        orientation=QuaternionMsg(math.nan, 0.0, 0.0, 1.0),
        joint_name=bad.joint_name,
        joint_position=bad.joint_position,
        joint_velocity=bad.joint_velocity,
        joint_effort=bad.joint_effort,
        joint_temperature=bad.joint_temperature,
        joint_status=bad.joint_status,
    )
    assert est.update(bad, PERIOD).orientation.isclose(tilt, 1e-9)


def test_config_is_validated() -> None:
    with pytest.raises(LimitError, match="contact_off"):
        EstimatorConfig(contact_on=10.0, contact_off=10.0)
    with pytest.raises(LimitError, match="velocity_tau"):
        EstimatorConfig(velocity_tau=-1.0)


def test_estimate_matches_mujoco_ground_truth() -> None:
    """A standing robot pushed sideways and forwards: height, contacts and velocity track the
    simulator's truth (joint noise of the real drives included).

    Contact is load-based: a foot that touches but carries less than ``contact_off`` (the push
    rocks the robot off one foot) is not a stance foot, so the estimate may say "no contact" where
    MuJoCo reports a touching geom — never the reverse.
    """
    world = make_world()
    q_home = np.array(HOME)
    world.reset(base_height=0.36, joint_positions=q_home)
    apply(world, JointCommand.hold(NAMES, HOME, 80.0, 3.0))
    est = StateEstimator(MODEL)
    world.step(1.0)  # settle on the ground
    errors_v = []
    for i in range(500):
        if i == 100:
            world.mujoco_data.xfrc_applied[1, :3] = (60.0, 30.0, 0.0)  # push the body
        if i == 150:
            world.mujoco_data.xfrc_applied[1, :3] = 0.0
        world.step(PERIOD)
        state = est.update(frame(world), PERIOD)
        truth = world.base_pose()
        assert state.height == pytest.approx(truth.position[2], abs=0.02)
        touching = world.foot_contacts()
        assert not (state.contact & ~touching).any()
        if i < 100 or i >= 400:  # standing still: every foot carries load
            assert state.contact.all() and touching.all()
        errors_v.append(state.world_linear_velocity - truth.linear_velocity)
    rms = np.sqrt(np.mean(np.square(errors_v), axis=0))
    assert rms[:2].max() < 0.05  # m/s, against speeds up to ≈ 0.2 m/s


def test_the_imu_specific_force_is_passed_on_in_the_body_frame() -> None:
    """The walking estimator predicts the velocity from it (issue 13)."""
    est = StateEstimator(MODEL)
    data = dataclasses.replace(make_frame(), linear_acceleration=Vector3(0.3, -0.2, 9.81))
    state = est.update(data, PERIOD)
    np.testing.assert_allclose(state.linear_acceleration, [0.3, -0.2, 9.81])


# ---- the compiled step (``_leg_accel``'s ``Legs.estimate``) against its reference ----------------

needs_core = pytest.mark.skipif(
    not ACCELERATED,
    reason="_leg_accel not built (no C compiler when installed) or JOINTBUS_NO_ACCEL set",
)


def generic(lo: float, hi: float) -> st.SearchStrategy[float]:
    """Floats spread over [lo, hi] with full mantissas, from a seeded generator (hypothesis's own
    favour round values, whose sums round exactly and would hide a changed order of
    operations)."""
    return st.integers(0, 2**32 - 1).map(lambda seed: random.Random(seed).uniform(lo, hi))


def sometimes_nan(common: st.SearchStrategy[float]) -> st.SearchStrategy[float]:
    """``common``, NaN (an actuator that did not answer, no gyro) one time in 60: rare enough
    that most frames have four finite legs, whose sums show an order of operations changed."""
    return st.tuples(st.integers(0, 59), common).map(lambda t: math.nan if t[0] == 0 else t[1])


#: A frame's orientation: a unit-ish quaternion, or one the estimator cannot use (zero, NaN).
orientations = st.one_of(
    st.builds(Quaternion.from_rpy, generic(-0.6, 0.6), generic(-0.6, 0.6), generic(-4.0, 4.0)),
    st.builds(Quaternion.from_rpy, generic(-0.6, 0.6), generic(-0.6, 0.6), generic(-4.0, 4.0)),
    st.builds(Quaternion.from_rpy, generic(-0.6, 0.6), generic(-0.6, 0.6), generic(-4.0, 4.0)),
    st.just((0.0, 0.0, 0.0, 0.0)),
    st.just((math.nan, 0.0, 0.0, 0.0)),
)
frames = st.fixed_dictionaries(
    {
        "q": st.tuples(*[sometimes_nan(generic(h - 0.4, h + 0.4)) for h in HOME]),
        "qd": st.tuples(*[sometimes_nan(generic(-8.0, 8.0)) for _ in HOME]),
        # ±25 N·m: feet loaded well past contact_on and unloaded below contact_off, and between
        "tau": st.tuples(*[sometimes_nan(generic(-25.0, 25.0)) for _ in HOME]),
        "orientation": orientations,
        "gyro": st.tuples(*[sometimes_nan(generic(-3.0, 3.0)) for _ in range(3)]),
        "accel": st.tuples(*[sometimes_nan(generic(-20.0, 20.0)) for _ in range(3)]),
        "dt": st.one_of(st.just(0.002), generic(1e-4, 0.1)),
    }
)
configs = st.builds(
    lambda on, off, tau, det: EstimatorConfig(on, on * off, tau, det),
    generic(5.0, 40.0),
    generic(0.1, 0.9),
    st.one_of(st.just(0.0), st.just(0.03), generic(0.001, 0.2)),
    st.one_of(st.just(1e-5), generic(1e-7, 1e-3)),
)


def bridge_frame(d: dict[str, Any], names: Sequence[str]) -> BridgeData:
    """The frame of step ``d``, its joints in the order ``names`` (the model's, or shuffled)."""
    where = [NAMES.index(n) for n in names]
    o = d["orientation"]
    w, x, y, z = (o.w, o.x, o.y, o.z) if isinstance(o, Quaternion) else o
    return BridgeData(
        orientation=QuaternionMsg(x, y, z, w),
        angular_velocity=Vector3(*d["gyro"]),
        linear_acceleration=Vector3(*d["accel"]),
        joint_name=tuple(names),
        joint_position=tuple(d["q"][i] for i in where),
        joint_velocity=tuple(d["qd"][i] for i in where),
        joint_effort=tuple(d["tau"][i] for i in where),
        joint_temperature=bytes(len(names)),
        joint_status=(0,) * len(names),
    )


def numbers(state: EstimatedState) -> list[float]:
    """Every number of an estimate, in field order (the contacts as 0 / 1)."""
    out: list[float] = []
    for f in dataclasses.fields(state):
        value = getattr(state, f.name)
        if f.name == "legs":
            continue
        if f.name == "orientation":
            out += [value.w, value.x, value.y, value.z]
            continue
        out += np.asarray(value, dtype=np.float64).ravel().tolist()
    return out


def same(a: Sequence[float], b: Sequence[float]) -> bool:
    """Equal float for float: NaN equal to NaN, the same sign of zero."""
    return len(a) == len(b) and all(
        (math.isnan(x) and math.isnan(y))
        or (x == y and math.copysign(1.0, x) == math.copysign(1.0, y))
        for x, y in zip(a, b, strict=True)
    )


@needs_core
@settings(deadline=None)  # the profile's examples: 100, or 5 000 with HYPOTHESIS_PROFILE=fuzz
@given(configs, st.lists(frames, min_size=1, max_size=8), st.booleans())
def test_the_compiled_step_equals_the_reference(
    config: EstimatorConfig, steps: list[dict[str, Any]], shuffled: bool
) -> None:
    """``update`` (the compiled step) and ``update_python`` from the same start over the same
    frames: every number of every estimate, and the filter state they keep, equal bit for bit —
    the same formulas in the same order, built without fused multiply-add."""
    names = tuple(reversed(NAMES)) if shuffled else NAMES
    core, reference = StateEstimator(MODEL, config), StateEstimator(MODEL, config)
    assert core._core is not None
    for d in steps:
        data = bridge_frame(d, names)
        got, want = core.update(data, d["dt"]), reference.update_python(data, d["dt"])
        assert same(numbers(got), numbers(want)), (got, want)
        assert same(list(core._filter), list(reference._filter))
        assert got.contact.dtype == np.bool_ and got.foot_force.shape == (4, 3)
        for f in dataclasses.fields(got):  # C-contiguous, as RobotState's compiled build wants
            value = getattr(got, f.name)
            if isinstance(value, np.ndarray):
                assert value.flags.c_contiguous, f.name


def test_disabling_the_core_runs_the_reference() -> None:
    script = (
        "from jointbus.robots.hb50.legged import leg_kinematics\n"
        "from jointbus.robots.hb50.legged.state_estimator import StateEstimator\n"
        "from support.hb50_sim import hb50, lying_world, frame\n"
        "assert not leg_kinematics.ACCELERATED\n"
        "e = StateEstimator(hb50())\n"
        "assert e._core is None\n"
        "s = e.update(frame(lying_world()), 0.002)\n"
        "assert s.foot_force.shape == (4, 3) and s.joint_position.shape == (12,)\n"
    )
    assert_runs_without_accel(script)
