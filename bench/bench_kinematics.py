"""Bench: hb50 forward kinematics, foot Jacobians and leg IK per control cycle.

Goal (model issue): positions and linear Jacobians of all four feet in < 100 µs, so a 500 Hz
control loop (2 ms per cycle) spends under 5 % of its budget on them.

Rows (median and p99 over many calls, after warm-up, one core):

- ``feet FK + Jacobians``: ``PointSet.evaluate(q)`` for the four feet (array q) — the goal row;
- ``all link frames``: ``Kinematics.frames(q)``, the 17 link poses as 4×4 matrices;
- ``fk(q, foot) -> Transform``: one foot as a validated Transform (the convenient API);
- ``4 x leg IK``: ``LegIK.solve`` for the four standing feet;
- anchor ``naive loop``: the same four feet FK + Jacobians computed joint by joint with
  ``Transform`` compositions in pure Python — what the code looks like without batching.

Run: ``python bench/bench_kinematics.py`` (≈ 5 s); ``bench.run`` calls :func:`run`.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from jointbus.math import Quaternion, Transform, Vec3
from jointbus.model.kinematics import Kinematics
from jointbus.model.leg_ik import legs_ik
from jointbus.model.yaml_loader import load_robot

GOAL_US = 100.0
LEGS = ("fr", "fl", "rl", "rr")
GOAL_ROW = "feet FK + Jacobians (goal row)"
ANCHOR_ROW = "anchor: naive per-joint loop"


def measure(fn: Callable[[], object], n: int) -> tuple[float, float]:
    """(median, p99) of ``n`` timed calls, µs."""
    for _ in range(min(n, 2000)):
        fn()
    samples = np.empty(n)
    clock = time.perf_counter_ns
    for i in range(n):
        t0 = clock()
        fn()
        samples[i] = clock() - t0
    return float(np.median(samples)) / 1e3, float(np.percentile(samples, 99)) / 1e3


def _cases() -> list[tuple[str, Callable[[], object]]]:
    """The timed calls, goal row first and the anchor (naive per-joint loop) last."""
    model = load_robot("hb50")
    kin = Kinematics(model)
    q = kin.q_from_pose("home")
    feet = kin.point_set([(f"{leg}_foot", Vec3.ZERO) for leg in LEGS])
    iks = legs_ik(model)
    targets = {leg: kin.fk(q, f"{leg}_foot").translation for leg in LEGS}
    chains = {leg: model.chain(f"{leg}_foot") for leg in LEGS}
    values = dict(zip(kin.joint_names, q.tolist(), strict=True))

    def naive() -> None:
        for leg in LEGS:
            pose = Transform.identity()
            joints = []
            for joint in chains[leg]:
                pose = pose @ joint.origin
                if joint.is_moving:
                    joints.append((pose, joint))
                    pose = pose @ Transform(
                        Vec3.ZERO, Quaternion.from_axis_angle(joint.axis, values[joint.name])
                    )
            foot = pose.translation
            for frame, joint in joints:
                axis = frame.rotation.rotate(joint.axis)
                axis.cross(foot - frame.translation)

    def ik_all() -> None:
        for leg in LEGS:
            iks[leg].solve(targets[leg])

    return [
        (GOAL_ROW, lambda: feet.evaluate(q)),
        ("all link frames", lambda: kin.frames(q)),
        ("fk(q, foot) -> Transform", lambda: kin.fk(q, "fr_foot")),
        ("4 x leg IK", ik_all),
        (ANCHOR_ROW, naive),
    ]


def run(quick: bool) -> list[dict[str, object]]:
    """Rows for ``bench.run``: each call against the naive loop measured in the same run
    (``ratio`` = value / anchor, below 1: cheaper than the anchor)."""
    n = 5000 if quick else 20000
    timed = {name: measure(fn, n) for name, fn in _cases()}
    anchor_p50, anchor_p99 = timed[ANCHOR_ROW]
    rows: list[dict[str, object]] = []
    for name, (p50, p99) in timed.items():
        if name == ANCHOR_ROW:
            continue
        goal = name == GOAL_ROW
        for label, value, anchor in (("p50", p50, anchor_p50), ("p99", p99, anchor_p99)):
            gated = goal and label == "p50"
            rows.append(
                {
                    "metric": f"kinematics.hb50 {name} ({label})",
                    "value": round(value, 2),
                    "unit": "µs",
                    "anchor": "naive per-joint Transform loop (4 feet FK + Jacobians)",
                    "anchor_value": round(anchor, 2),
                    "ratio": round(value / anchor, 3),
                    "goal": f"< {GOAL_US:g} µs" if gated else None,
                    "pass": value < GOAL_US if gated else None,
                }
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-n", type=int, default=20000, help="calls per row")
    args = parser.parse_args()
    results = {}
    print(f"{'row':34} {'p50 µs':>8} {'p99 µs':>8}")
    for name, fn in _cases():
        p50, p99 = measure(fn, args.n)
        results[name] = p50
        print(f"{name:34} {p50:8.1f} {p99:8.1f}")
    goal = results[GOAL_ROW]
    anchor = results[ANCHOR_ROW]
    verdict = "MET" if goal < GOAL_US else "MISSED"
    print(f"goal p50 < {GOAL_US:.0f} µs: {verdict}; ratio anchor/goal row = {anchor / goal:.1f}")


if __name__ == "__main__":
    main()
