"""Benchmark of the simulator core: actuator physics per 2 ms cycle and profile steps.

Where it sits: ``bench/``, run alone (``python -m bench.bench_sim [--quick]``) or by the bench
runner through :func:`run`. Times are compared with anchors measured *in the same run*:

* ``ActuatorArrayModel.advance(0.002)`` (4 substeps of 0.5 ms + one supervision step) for 12 and
  256 actuators, against the same physics written as a plain per-joint Python loop
  (:class:`NaiveActuatorLoop`, below), which is what the vectorised model replaces. Before timing,
  the loop is checked to follow the model's trajectory, so the anchor does the same work.
* the ``sim://`` driver (arm6): one control step against the bare profile + drive + physics it
  wraps, and ``read_joints()`` / ``read()`` against the model's own ``measure()``.
* ``ProfileGenerator.step`` for 12 joints during a move, against ruckig's own online loop
  (``Ruckig.update`` + ``OutputParameter.pass_to_input``) on the same 12-DoF move, and
  ``ProfileGenerator.move_to`` (validation + re-plan) against a bare ``Ruckig.calculate``.

Each row: ``metric``, ``value`` and ``anchor_value`` (µs per call), ``ratio`` = value /
anchor_value (below 1: cheaper than the anchor), ``goal`` (text) and ``pass``.
"""

from __future__ import annotations

import argparse
import functools
import math
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from ruckig import InputParameter, OutputParameter, Ruckig, Synchronization, Trajectory

from bench.run import format_table
from jointbus import drivers
from jointbus.drivers.sim.actuator_model import ActuatorArrayModel, ActuatorParams
from jointbus.drivers.sim.profile import ProfileGenerator

__all__ = ["NaiveActuatorLoop", "check_anchor_equivalence", "run"]

CYCLE = 0.002  # s, the bridge's 500 Hz cycle


class NaiveActuatorLoop:
    """The model's physics with Python floats, one joint at a time (the anchor).

    Same law, friction treatment, supervision and thermal update as
    :class:`~jointbus.drivers.sim.actuator_model.ActuatorArrayModel`, with the per-step constants
    cached the same way, so the comparison measures vectorisation and nothing else.
    """

    def __init__(self, n: int, params: ActuatorParams, bus_voltage: float = 48.0) -> None:
        self.n = n
        self.q = params
        self.bus_voltage = bus_voltage
        self.p = [0.0] * n
        self.v = [0.0] * n
        self.tau = [0.0] * n
        self.demand = [0.0] * n
        self.upper = [0.0] * n
        self.lower = [0.0] * n
        self.p_target = [0.0] * n
        self.v_target = [0.0] * n
        self.tau_ff = [0.0] * n
        self.kp = [0.0] * n
        self.kd = [0.0] * n
        self.external = [0.0] * n
        self.powered = [False] * n
        self.enabled = [False] * n
        self.blocked = [False] * n
        self.current = [0.0] * n
        self.bus_current = [0.0] * n
        self.motor_t = [params.ambient_temperature] * n
        self.driver_t = [params.ambient_temperature] * n
        self.motor_hot = [False] * n
        self.driver_hot = [False] * n
        self.stall_timer = [0.0] * n
        self.stalled = [False] * n
        self.h = math.nan
        self.h_over_j = 0.0
        self.impulse = 0.0
        self.v_scale = 0.0

    def set_power(self, on: bool) -> None:
        self.powered = [on] * self.n
        self.enabled = [on and not (m or d) for m, d in zip(self.motor_hot, self.driver_hot,
                                                           strict=True)]

    def advance(self, dt: float) -> None:
        q = self.q
        chunks = max(1, math.ceil(dt / 0.002 - 1e-9))
        chunk = dt / chunks
        substeps = max(1, math.ceil(chunk / 0.0005 - 1e-9))
        h = chunk / substeps
        if h != self.h:
            self.h = h
            self.h_over_j = h / q.rotor_inertia
            self.impulse = q.coulomb_friction * self.h_over_j
            self.v_scale = 1.0 / (1.0 + q.viscous_friction * self.h_over_j)
            self.gain = q.torque_limit / q.torque_rolloff_band
        for _ in range(chunks):
            for _ in range(substeps):
                self._substep(h)
            self._monitor(chunk)

    def _substep(self, h: float) -> None:
        q = self.q
        limit, v_limit, gain = q.torque_limit, q.velocity_limit, self.gain
        p, v, tau = self.p, self.v, self.tau
        for i in range(self.n):
            pi, vi = p[i], v[i]
            d = self.kp[i] * (self.p_target[i] - pi)
            d += self.kd[i] * (self.v_target[i] - vi)
            d += self.tau_ff[i]
            up = max(min((v_limit - vi) * gain, limit), 0.0)
            lo = min(max((v_limit + vi) * -gain, -limit), 0.0)
            self.demand[i], self.upper[i], self.lower[i] = d, up, lo
            t = max(min(d, up), lo) if self.enabled[i] else 0.0
            tau[i] = t
            v_free = (t - self.external[i]) * self.h_over_j + vi
            magnitude = max(abs(v_free) - self.impulse, 0.0)
            vi = 0.0 if self.blocked[i] else math.copysign(magnitude, v_free) * self.v_scale
            v[i] = vi
            p[i] = pi + vi * h

    def _monitor(self, dt: float) -> None:
        q = self.q
        motor_decay = math.exp(-dt / (q.motor_thermal_resistance * q.motor_thermal_capacity))
        driver_decay = math.exp(-dt / (q.driver_thermal_resistance * q.driver_thermal_capacity))
        motor_release = q.motor_shutdown_temperature - q.motor_shutdown_hysteresis
        driver_release = q.driver_shutdown_temperature - q.driver_shutdown_hysteresis
        for i in range(self.n):
            t = self.tau[i]
            current = t / q.torque_constant
            i_sq = current * current
            copper = i_sq * q.phase_resistance
            driver = i_sq * q.driver_conduction_resistance + (
                q.driver_idle_power if self.powered[i] else 0.0
            )
            self.current[i] = current
            self.bus_current[i] = (t * self.v[i] + copper + driver) / self.bus_voltage
            t_inf = copper * q.motor_thermal_resistance + q.ambient_temperature
            temp = (self.motor_t[i] - t_inf) * motor_decay + t_inf
            self.motor_t[i] = temp
            self.motor_hot[i] = temp >= q.motor_shutdown_temperature or (
                self.motor_hot[i] and temp > motor_release
            )
            t_inf = driver * q.driver_thermal_resistance + q.ambient_temperature
            temp = (self.driver_t[i] - t_inf) * driver_decay + t_inf
            self.driver_t[i] = temp
            self.driver_hot[i] = temp >= q.driver_shutdown_temperature or (
                self.driver_hot[i] and temp > driver_release
            )
            enabled = self.powered[i] and not (self.motor_hot[i] or self.driver_hot[i])
            self.enabled[i] = enabled
            pushing = (
                abs(self.p_target[i] - self.p[i]) > q.stall_position_error and self.kp[i] > 0.0
            ) or self.demand[i] >= self.upper[i] or self.demand[i] <= self.lower[i]
            still = enabled and abs(self.v[i]) < q.stall_velocity and pushing
            self.stall_timer[i] = self.stall_timer[i] + dt if still else 0.0
            self.stalled[i] = self.stall_timer[i] >= q.stall_time


def _scenario(n: int) -> tuple[np.ndarray, np.ndarray]:
    """PD targets and external loads for n joints: a mix of moving, loaded and saturated."""
    rng = np.random.default_rng(1)
    return rng.uniform(-1.5, 1.5, n), rng.uniform(-3.0, 3.0, n)


def _make_pair(n: int) -> tuple[ActuatorArrayModel, NaiveActuatorLoop]:
    params = ActuatorParams.hb50()
    targets, loads = _scenario(n)
    model = ActuatorArrayModel([f"j{i}" for i in range(n)], params)
    model.set_power(np.ones(n, dtype=bool))
    model.set_command(position=targets, kp=np.full(n, 80.0), kd=np.full(n, 3.0))
    model.set_external_torque(loads)
    naive = NaiveActuatorLoop(n, params)
    naive.set_power(True)
    naive.p_target = targets.tolist()
    naive.kp = [80.0] * n
    naive.kd = [3.0] * n
    naive.external = loads.tolist()
    return model, naive


def check_anchor_equivalence(n: int = 12, cycles: int = 500) -> float:
    """Run model and naive loop side by side; raise if their trajectories part. Returns the
    largest position difference, rad."""
    model, naive = _make_pair(n)
    worst = 0.0
    for _ in range(cycles):
        model.advance(CYCLE)
        naive.advance(CYCLE)
        worst = max(worst, float(np.max(np.abs(model.positions - np.array(naive.p)))))
    temps = np.abs(model.motor_temperatures - np.array(naive.motor_t)).max()
    if worst > 1e-9 or temps > 1e-9:
        raise RuntimeError(f"naive anchor diverges from the model: Δp {worst}, ΔT {temps}")
    return worst


def _per_call_us(fn: Callable[[], Any], calls: int, repeats: int) -> float:
    """Median over ``repeats`` of the mean time per call, µs."""
    fn()  # warm up
    results = []
    for _ in range(repeats):
        start = time.perf_counter_ns()
        for _ in range(calls):
            fn()
        results.append((time.perf_counter_ns() - start) / calls / 1000.0)
    return statistics.median(results)


def _row(
    metric: str, value: float, anchor: str, anchor_value: float, goal: str, passed: bool
) -> dict[str, Any]:
    return {
        "metric": metric,
        "value": round(value, 2),
        "unit": "µs",
        "anchor": anchor,
        "anchor_value": round(anchor_value, 2),
        "ratio": round(value / anchor_value, 3),
        "goal": goal,
        "pass": passed,
    }


def _profile_rows(calls: int, repeats: int) -> list[dict[str, Any]]:
    n = 12
    names = [f"j{i}" for i in range(n)]
    targets = np.linspace(-1.0, 1.0, n)
    vmax, amax, jmax = 2.0, 8.0, 100.0

    def fresh_generator() -> ProfileGenerator:
        gen = ProfileGenerator(names, max_velocity=vmax, max_acceleration=amax, max_jerk=jmax)
        gen.move_to(None, targets)
        return gen

    gen = fresh_generator()
    steps = [0]

    def profile_step() -> None:
        steps[0] += 1
        if steps[0] % 400 == 0:  # stay inside the move (≈ 1 s long)
            gen.reset(np.zeros(n))
            gen.move_to(None, targets)
        gen.step(CYCLE)

    otg = Ruckig(n, CYCLE)
    inp = InputParameter(n)
    out = OutputParameter(n)

    def ruckig_reset() -> None:
        inp.current_position = [0.0] * n
        inp.current_velocity = [0.0] * n
        inp.current_acceleration = [0.0] * n
        inp.target_position = targets.tolist()
        inp.max_velocity = [vmax] * n
        inp.max_acceleration = [amax] * n
        inp.max_jerk = [jmax] * n
        inp.synchronization = Synchronization.No

    ruckig_reset()
    ruckig_steps = [0]

    def ruckig_step() -> None:
        ruckig_steps[0] += 1
        if ruckig_steps[0] % 400 == 0:
            ruckig_reset()
        otg.update(inp, out)
        out.pass_to_input(inp)
        np.array(out.new_position)  # the caller needs the reference as an array too

    step_us = _per_call_us(profile_step, calls, repeats)
    ruckig_us = _per_call_us(ruckig_step, calls, repeats)

    plan_gen = fresh_generator()
    flip = [1.0]

    def replan() -> None:
        flip[0] = -flip[0]
        plan_gen.move_to(None, targets * flip[0])

    trajectory = Trajectory(n)
    plain = Ruckig(n)

    def bare_calculate() -> None:
        flip[0] = -flip[0]
        inp.target_position = (targets * flip[0]).tolist()
        plain.calculate(inp, trajectory)

    ruckig_reset()
    replan_us = _per_call_us(replan, calls // 4, repeats)
    calculate_us = _per_call_us(bare_calculate, calls // 4, repeats)
    return [
        _row(
            "profile step, 12 joints", step_us, "ruckig update + pass_to_input (12 DoF)",
            ruckig_us, "<= 20 µs (1 % of a 2 ms cycle)", step_us <= 20.0,
        ),
        _row(
            "profile move_to (validate + re-plan), 12 joints", replan_us,
            "bare ruckig calculate (12 DoF)", calculate_us, "<= 100 µs", replan_us <= 100.0,
        ),
    ]


def _driver_rows(calls: int, repeats: int) -> list[dict[str, Any]]:
    """The ``sim://`` driver layer over the bare physics and profiles (arm6, stepping mode)."""
    from jointbus.drivers.sim.driver import SimActuatorArray

    arm = drivers.open("sim://arm6?realtime=false")
    assert isinstance(arm, SimActuatorArray)
    arm.power(True)
    arm.positions([1.0, 1.0, -1.0, 2.0, -1.5, 2.0])
    arm.step(0.1)  # mid-move
    model = ActuatorArrayModel(arm.names, [ActuatorParams.hb50()] * arm.count, seed=0)
    generator = ProfileGenerator(arm.names, max_velocity=1.0, max_acceleration=4.0,
                                 max_jerk=80.0)
    generator.move_to(None, [1.0] * arm.count)

    def bare_cycle() -> None:
        p, v, _ = generator.step(CYCLE)
        model.set_command(position=p, velocity=v, kp=model_kp, kd=model_kd)
        model.advance(CYCLE)

    model_kp = np.full(arm.count, 60.0)
    model_kd = np.full(arm.count, 2.0)
    model.set_power(np.ones(arm.count, dtype=bool))
    step_us = _per_call_us(functools.partial(arm.step, CYCLE), calls, repeats)
    bare_us = _per_call_us(bare_cycle, calls, repeats)
    joints_us = _per_call_us(arm.read_joints, calls, repeats)
    read_us = _per_call_us(arm.read, calls, repeats)
    measure_us = _per_call_us(model.measure, calls, repeats)
    arm.close()
    return [
        _row(
            "sim:// driver step(2 ms), arm6 (profiles + drive command + physics)",
            step_us,
            "bare ProfileGenerator.step + set_command + advance(2 ms), 6 actuators",
            bare_us,
            "<= 2 × anchor (feed-forward, modes, lock, acceleration: small)",
            step_us <= 2.0 * bare_us,
        ),
        _row(
            "sim:// read_joints() (joint-space arrays, flags), arm6",
            joints_us,
            "ActuatorArrayModel.measure(), 6 actuators",
            measure_us,
            "<= 100 µs (5 % of a 500 Hz cycle)",
            joints_us <= 100.0,
        ),
        _row(
            "sim:// read() (ActuatorArrayData messages), arm6",
            read_us,
            "ActuatorArrayModel.measure(), 6 actuators",
            measure_us,
            "<= 200 µs (10 % of a 500 Hz cycle)",
            read_us <= 200.0,
        ),
    ]


def run(quick: bool) -> list[dict[str, Any]]:
    """Measure and return the rows (see the module docstring)."""
    check_anchor_equivalence()
    calls, repeats = (200, 3) if quick else (2000, 7)
    rows: list[dict[str, Any]] = []
    for n, budget in ((12, 200.0), (256, 1000.0)):
        model, naive = _make_pair(n)
        # Time a typical mid-motion state, not the first cycle after switch-on.
        for _ in range(50):
            model.advance(CYCLE)
            naive.advance(CYCLE)
        model_us = _per_call_us(functools.partial(model.advance, CYCLE), calls, repeats)
        naive_calls = max(10, calls // (n // 12))
        naive_us = _per_call_us(functools.partial(naive.advance, CYCLE), naive_calls, repeats)
        rows.append(
            _row(
                f"actuator model advance(2 ms), {n} actuators",
                model_us,
                f"naive per-joint Python loop, {n} actuators",
                naive_us,
                f"<= {budget:.0f} µs ({budget / 20:.0f} % of the cycle) and faster than anchor",
                model_us <= budget and model_us < naive_us,
            )
        )
    rows.extend(_profile_rows(calls * 5, repeats))
    rows.extend(_driver_rows(calls, repeats))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer iterations")
    args = parser.parse_args()
    print(format_table(run(quick=args.quick)))


if __name__ == "__main__":
    main()
