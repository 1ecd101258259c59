"""The kinematics benchmark's anchor computes what the goal row computes.

``bench/bench_kinematics.py`` judges ``PointSet.evaluate`` (the four feet's positions and
Jacobians) as a ratio to a naive per-joint loop; the ratio means something only if both give the
same numbers, at any configuration, not just the one the benchmark times.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.math import Vec3
from jointbus.model.kinematics import Kinematics
from jointbus.model.yaml_loader import load_robot

# the benchmarks are scripts beside src/, not an installed package: load the module from its file
_SPEC = importlib.util.spec_from_file_location(
    "bench_kinematics", Path(__file__).resolve().parents[2] / "bench" / "bench_kinematics.py"
)
assert _SPEC is not None and _SPEC.loader is not None
bench_kinematics = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(bench_kinematics)
LEGS = bench_kinematics.LEGS
NaiveFeet = bench_kinematics.NaiveFeet
check_agreement = bench_kinematics.check_agreement

KIN = Kinematics(load_robot("hb50"))
FEET = KIN.point_set([(f"{leg}_foot", Vec3.ZERO) for leg in LEGS])
NAIVE = NaiveFeet(KIN)


@given(st.lists(st.floats(-3.0, 3.0, allow_nan=False), min_size=12, max_size=12))
def test_goal_row_equals_the_naive_anchor(values: list[float]) -> None:
    q = np.array(values)
    fast = FEET.evaluate(q)
    naive = NAIVE(dict(zip(KIN.joint_names, values, strict=True)))
    check_agreement(fast, naive)
    assert naive[1].any()  # the anchor really fills the Jacobians it is compared on


def test_agreement_check_catches_a_wrong_column() -> None:
    q = KIN.q_from_pose("home")
    positions, jacobians = FEET.evaluate(q)
    naive = NAIVE(dict(zip(KIN.joint_names, q.tolist(), strict=True)))
    wrong = jacobians.copy()
    wrong[2, :, [6, 7]] = wrong[2, :, [7, 6]]
    with pytest.raises(AssertionError, match="Jacobians differ"):
        check_agreement((positions, wrong), naive)
