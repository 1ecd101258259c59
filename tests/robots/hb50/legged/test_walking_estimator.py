"""The walking estimator refines an estimate and carries the rest of it through.

(Its accuracy on MuJoCo walks is judged in ``test_walking.py``: body-velocity error against the
simulator's ground truth.)
"""

from __future__ import annotations

import dataclasses

import numpy as np

from jointbus.math import Quaternion
from jointbus.robots.hb50.legged.state_estimator import EstimatedState
from jointbus.robots.hb50.legged.walking_estimator import WalkingEstimator

#: The fields the walking estimator computes itself; every other one is the input's.
REFINED = {"contact", "position", "height", "body_linear_velocity", "world_linear_velocity"}
FEET = np.array(
    ((0.17, -0.145, -0.33), (0.17, 0.145, -0.33), (-0.23, 0.145, -0.33), (-0.23, -0.145, -0.33))
)


def standing() -> EstimatedState:
    return EstimatedState(
        legs=("fr", "fl", "rl", "rr"),
        joint_position=np.arange(12.0),
        joint_velocity=np.zeros(12),
        joint_effort=np.ones(12),
        foot_position=FEET.copy(),
        foot_velocity=np.zeros((4, 3)),
        foot_force=np.tile((0.0, 0.0, 42.0), (4, 1)),
        contact=np.ones(4, dtype=bool),
        orientation=Quaternion.identity(),
        position=np.array((1.0, 2.0, 0.3)),
        height=0.3,
        body_linear_velocity=np.zeros(3),
        body_angular_velocity=np.zeros(3),
        world_linear_velocity=np.zeros(3),
        world_angular_velocity=np.zeros(3),
        linear_acceleration=np.array((0.0, 0.0, 9.81)),
    )


def test_every_field_it_does_not_refine_is_the_input_s() -> None:
    state = standing()
    out = WalkingEstimator().update(
        state, state.linear_acceleration, (True, False, True, False), 0.002, np.full(4, 0.021)
    )
    for f in dataclasses.fields(EstimatedState):
        if f.name not in REFINED:
            assert getattr(out, f.name) is getattr(state, f.name), f.name


def test_contacts_follow_the_schedule_confirmed_by_force_and_height_the_stance_feet() -> None:
    state = standing()
    out = WalkingEstimator().update(
        state, state.linear_acceleration, (True, False, True, False), 0.002, np.full(4, 0.021)
    )
    assert out.contact.tolist() == [True, False, True, False]
    assert out.height == np.float64(0.33 + 0.021)
    np.testing.assert_allclose(out.position, (1.0, 2.0, 0.351), atol=1e-12)
    # at rest, level, IMU reading gravity: no velocity appears
    np.testing.assert_allclose(out.world_linear_velocity, 0.0, atol=1e-12)
    np.testing.assert_allclose(out.body_linear_velocity, 0.0, atol=1e-12)
