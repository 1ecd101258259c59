"""The control-step benchmark measures a robot that stands and walks.

``bench/bench_control.py`` times the control node's frame callback standing and walking; its rows
mean something only if the lock-step robot really stood up and stood still through the standing
window, then trotted at the commanded speed through the walking window (how long the steps take is
the bench's to say, not a test's).
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


def test_the_bench_robot_stands_then_walks_at_the_commanded_speed() -> None:
    standing, walking = bench_control.measure(chunks=2, steps=100)
    assert standing.speed_m_s < 0.05
    assert walking.speed_m_s == pytest.approx(bench_control.WALK_SPEED, rel=0.3)
    for phase in (standing, walking):
        assert phase.mean_us > 0.0 and phase.same_thread_us > 0.0
        assert phase.bare_loop_us > 0.0 and phase.bare_body_us > 0.0
        assert {"estimator", "motion step", "JointCommand published"} <= set(phase.sections_us)
        # nobody listens to robot_state in the bench, as in the stack's layout: not built
        assert "RobotState built" not in phase.sections_us
