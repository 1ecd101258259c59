"""Benchmark of the MuJoCo physics behind ``sim://hb50``: one 2 ms cycle of the standing robot.

Where it sits: ``bench/``, run alone (``python -m bench.bench_mujoco [--quick]``) or by the bench
runner through :func:`run`. Times are compared with an anchor measured *in the same run*: a bare
``mujoco.mj_step`` on the same compiled model plus the PD law in numpy (``ctrl = clip(kp·(q* − q)
− kd·v, ±24 N·m)``), the least any Python loop around MuJoCo can cost. The world does more per
substep — the actuator model's impedance law, speed-dependent torque limit, electrical, thermal
and stall supervision — so the ratio says what the drive model and the plumbing cost on top.

Times are the calling thread's CPU time (``time.thread_time_ns``, Linux's thread clock), not
wall time: on this shared 2-vCPU host a call pre-empted by another process would otherwise be
charged for the other process's time slice, which at a load of 10 decides the figure; CPU time
is also what the issue's budget is about (the bridge process's per-cycle CPU).

Rows (µs per 2 ms cycle unless stated):

* ``sim.mujoco.cycle.1x2ms`` / ``.4x0.5ms``: :meth:`MujocoWorld.step` for one 2 ms cycle with
  one 2 ms substep / four 0.5 ms substeps, against the anchor with the same substeps (goal:
  ≤ 5× the anchor; the goal text also gives the share of the 2 ms cycle).
* ``sim.hb50.cycle.500hz`` (issue 21): what the stack's bridge pays each 2 ms cycle for the
  simulated robot — ``sim://hb50``'s :meth:`SimActuatorArray.step` (the driver's control step:
  profiles, the command to the drives, four 0.5 ms MuJoCo substeps with the drive model and its
  supervision) on the standing robot, against the 4 × 0.5 ms anchor (goal ≤ 1.3×).
  ``sim.hb50.cycle.1000hz``: the same for a 1 ms cycle (two substeps) against the 2 × 0.5 ms
  anchor (information: the driver's fixed cost per control step weighs twice as much).
* ``sim.mujoco.actuate``, ``sim.mujoco.mj_step2+1``: the two parts of a substep, each against
  the 1-substep anchor measured interleaved with them (the ratio is the part's share of a bare
  mj_step + PD cycle).
* ``sim.mujoco.plumbing``: the world's own cost per 1-substep cycle (cycle − actuate −
  ``mj_step2`` + ``mj_step1``, measured interleaved): index reads, the ctrl write, friction
  refresh, actuator sync (information: a difference of timings is too noisy for a goal).
* ``sim.mujoco.stand_height``: base height after 2 s at kp 80, kd 3 towards the home pose (m).
"""

from __future__ import annotations

import argparse
import copy
import functools
import statistics
import time
from collections.abc import Callable
from typing import Any

import mujoco
import numpy as np

from bench.run import format_table
from jointbus import drivers
from jointbus.drivers.impedance import ImpedanceCommand
from jointbus.drivers.sim.actuator_model import ActuatorParams
from jointbus.drivers.sim.mujoco_world import MujocoWorld
from jointbus.drivers.sim.robots import MujocoSimArray
from jointbus.model.yaml_loader import load_robot

__all__ = ["run"]

CYCLE = 0.002  # s, the bridge's 500 Hz cycle
KP, KD, TORQUE_LIMIT = 80.0, 3.0, 24.0
MAX_RATIO = 5.0  # a cycle may cost this many anchors: the drive model does far more than PD
HB50_MAX_RATIO = 1.3  # issue 21: the simulated hb50's cycle against bare mj_step + PD


def _per_call_us(fn: Callable[[], Any], calls: int, repeats: int) -> float:
    """Median over ``repeats`` of the mean thread CPU time per call, µs."""
    fn()  # warm up
    results = []
    clock = time.thread_time_ns
    for _ in range(repeats):
        start = clock()
        for _ in range(calls):
            fn()
        results.append((clock() - start) / calls / 1000.0)
    return statistics.median(results)


def _row(
    metric: str,
    value: float,
    anchor: str | None,
    anchor_value: float | None,
    goal: str | None,
    passed: bool | None,
    unit: str = "µs",
) -> dict[str, Any]:
    return {
        "metric": metric,
        "value": round(value, 4 if unit == "m" else 2),
        "unit": unit,
        "anchor": anchor,
        "anchor_value": None if anchor_value is None else round(anchor_value, 4),
        "ratio": None if not anchor_value else round(value / anchor_value, 3),
        "goal": goal,
        "pass": passed,
    }


def _standing_world(timestep: float) -> tuple[MujocoWorld, np.ndarray]:
    """The HB50 standing on its drives after 2 s, and the home pose in actuator order."""
    robot = load_robot("hb50")
    home = robot.pose("home")
    target = np.array([home[name] for name in robot.actuator_order])
    world = MujocoWorld(robot, ActuatorParams.hb50(), timestep=timestep)
    world.reset(0.36, home)
    world.actuators.set_power(np.ones(len(target), dtype=np.bool_))
    world.actuators.set_command(
        position=target, kp=np.full(len(target), KP), kd=np.full(len(target), KD)
    )
    for _ in range(round(2.0 / CYCLE)):
        world.step(CYCLE)
    return world, target


def _anchor(world: MujocoWorld, target: np.ndarray, substeps: int) -> Callable[[], None]:
    """Bare ``mj_step`` + PD in numpy on a copy of the world's model and state."""
    model = mujoco.MjModel.from_xml_string(world.mjcf)
    model.opt.timestep = world.timestep
    data = mujoco.MjData(model)
    source = world.mujoco_data
    data.qpos[:] = source.qpos
    data.qvel[:] = source.qvel
    mujoco.mj_forward(model, data)
    order = world.robot.actuator_order
    joints = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name) for name in order]
    q_index = np.array([model.jnt_qposadr[j] for j in joints])
    v_index = np.array([model.jnt_dofadr[j] for j in joints])
    if not (np.diff(q_index) == 1).all() or not (np.diff(v_index) == 1).all():
        raise RuntimeError("the anchor expects the actuated joints contiguous in actuator order")
    q = data.qpos[q_index[0] : q_index[-1] + 1]  # views, the cheapest possible reads
    v = data.qvel[v_index[0] : v_index[-1] + 1]
    ctrl = data.ctrl
    step = mujoco.mj_step

    def cycle() -> None:
        for _ in range(substeps):
            tau = KP * (target - q)
            tau -= KD * v
            np.clip(tau, -TORQUE_LIMIT, TORQUE_LIMIT, out=ctrl)
            step(model, data)

    return cycle


def _standing_array() -> tuple[MujocoSimArray, np.ndarray]:
    """``sim://hb50`` in stepping mode, standing on a hold command (kp 80, kd 3) after 1 s."""
    array = drivers.open("sim://hb50?realtime=false")
    if not isinstance(array, MujocoSimArray):
        raise RuntimeError(f"sim://hb50 opened a {type(array).__name__}, not a MujocoSimArray")
    robot = array.world.robot
    home = robot.pose("home")
    target = np.array([home[name] for name in robot.actuator_order])
    array.world.reset(0.36, home)
    array.power(True)
    array.impedance(ImpedanceCommand.hold(target, KP, KD))
    for _ in range(round(1.0 / CYCLE)):
        array.step(CYCLE)
    return array, target


def _hb50_rows(calls: int, repeats: int) -> list[dict[str, Any]]:
    """``sim.hb50.cycle.*``: the driver's step against the anchor, interleaved."""
    rows = []
    array, target = _standing_array()
    try:
        for period, substeps, goal in ((CYCLE, 4, HB50_MAX_RATIO), (CYCLE / 2, 2, None)):
            anchor = _anchor(array.world, target, substeps)
            step = functools.partial(array.step, period)
            pairs = [
                (_per_call_us(step, calls, 1), _per_call_us(anchor, calls, 1))
                for _ in range(repeats)
            ]
            ours = statistics.median(p[0] for p in pairs)
            bare = statistics.median(p[1] for p in pairs)
            rate = round(1.0 / period)
            rows.append(
                _row(
                    f"sim.hb50.cycle.{rate}hz (sim://hb50 step, {substeps} x 0.5 ms)",
                    ours,
                    f"mj_step + PD in numpy, {substeps} x 0.5 ms",
                    bare,
                    None if goal is None else f"<= {goal:g}x anchor; "
                    f"{ours / (period * 1e4):.1f} % of the {period * 1000:g} ms cycle",
                    None if goal is None else ours <= goal * bare,
                )
            )
    finally:
        array.close()
    return rows


def run(quick: bool) -> list[dict[str, Any]]:
    """Measure and return the rows (see the module docstring)."""
    calls, repeats = (300, 5) if quick else (2000, 9)
    rows: list[dict[str, Any]] = _hb50_rows(calls, repeats)
    worlds = {1: _standing_world(CYCLE), 4: _standing_world(CYCLE / 4)}
    anchors = {n: _anchor(worlds[n][0], worlds[n][1], n) for n in (1, 4)}
    for substeps in (1, 4):
        h = CYCLE / substeps
        world = worlds[substeps][0]
        anchor = anchors[substeps]
        step = functools.partial(world.step, CYCLE)
        # Interleaved with the anchor, so that host noise hits both alike.
        pairs = [
            (_per_call_us(step, calls, 1), _per_call_us(anchor, calls, 1)) for _ in range(repeats)
        ]
        world_us = statistics.median(p[0] for p in pairs)
        anchor_us = statistics.median(p[1] for p in pairs)
        label = f"{substeps}x{h * 1000:g}ms"
        rows.append(
            _row(
                f"sim.mujoco.cycle.{label}",
                world_us,
                f"mj_step + PD in numpy, {substeps} x {h * 1000:g} ms",
                anchor_us,
                f"<= {MAX_RATIO:g}x anchor (drive model included); "
                f"{world_us / (CYCLE * 1e4):.1f} % of the cycle",
                world_us <= MAX_RATIO * anchor_us,
            )
        )
    world = worlds[1][0]
    z = float(world.base_pose().position[2])
    on_four_feet = bool(world.foot_contacts().all())
    model = world.mujoco_model
    data = copy.copy(world.mujoco_data)  # the split step runs open-loop: not on the world
    drives = world.actuators
    q, v = world.joint_positions(), world.joint_velocities()

    def actuate() -> None:
        drives.actuate(q, v, CYCLE)

    def split_step() -> None:
        mujoco.mj_step2(model, data)
        mujoco.mj_step1(model, data)

    def cycle() -> None:
        world.step(CYCLE)

    # Interleaved, so that the difference is taken between neighbouring measurements.
    parts = [
        tuple(_per_call_us(fn, calls, 1) for fn in (cycle, actuate, split_step, anchors[1]))
        for _ in range(repeats)
    ]
    actuate_us = statistics.median(p[1] for p in parts)
    physics_us = statistics.median(p[2] for p in parts)
    plumbing = max(0.0, statistics.median(p[0] - p[1] - p[2] for p in parts))
    anchor_1x = statistics.median(p[3] for p in parts)
    rows.append(
        _row("sim.mujoco.actuate", actuate_us, "mj_step + PD in numpy, 1 x 2 ms", anchor_1x,
             None, None)
    )
    rows.append(
        _row("sim.mujoco.mj_step2+1", physics_us, "mj_step + PD in numpy, 1 x 2 ms", anchor_1x,
             None, None)
    )
    rows.append(
        _row(
            "sim.mujoco.plumbing.1x2ms",
            plumbing,
            "mj_step + PD in numpy, 1 x 2 ms",
            anchor_1x,
            None,  # a difference of three timings: too noisy on a shared host for a goal
            None,
        )
    )
    rows.append(
        _row(
            "sim.mujoco.stand_height",
            z,
            "issue target",
            0.34,
            "within 10 % of 0.34 m, four feet down",
            abs(z - 0.34) <= 0.034 and on_four_feet,
            unit="m",
        )
    )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer iterations")
    args = parser.parse_args()
    print(format_table(run(quick=args.quick)))


if __name__ == "__main__":
    main()
