"""The control-step benchmark measures a robot that stands and walks.

``bench/bench_control.py`` times the control node's frame callback standing and walking; its rows
mean something only if the lock-step robot really stood up, then trotted at the commanded speed
while the walking window ran, and the walking step did the walking controller's work on top of
the standing step's.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# the benchmarks are scripts beside src/, in the package ``bench`` (bench_control imports the bare
# loop of bench.bench_stack): import them from the checkout
_ROOT = str(Path(__file__).resolve().parents[2])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from bench import bench_control  # noqa: E402


def test_the_bench_robot_stands_then_walks_and_the_walking_step_does_more() -> None:
    standing, walking = bench_control.measure(chunks=2, steps=100)
    assert standing.speed_m_s < 0.05
    assert walking.speed_m_s == pytest.approx(bench_control.WALK_SPEED, rel=0.3)
    assert 0.0 < standing.mean_us < walking.mean_us
    assert {"estimator", "motion step", "RobotState built"} <= set(walking.sections_us)
    assert walking.bare_loop_us > 0.0 and walking.bare_body_us > 0.0
