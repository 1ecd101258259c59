"""Bench: how the costs scale — with joints, with subscribers and with the loop rate.

Where it sits: ``bench/``, run by ``python -m bench.run`` (``make bench``) or alone
(``python -m bench.bench_scaling [--full]``). Each sweep is compared with an anchor measured in
the same run and drawn as a PNG in ``bench/results/`` (:mod:`bench.plots`); the raw sweep data go
to ``bench/results/scaling.json`` so the figures can be redrawn without measuring again.

(a) **Cycle cost against joints** (12, 64, 256): one bridge-like cycle built from the real parts —
    ``read_joints()`` of a :class:`~jointbus.drivers.sim.driver.SimActuatorArray` in stepping mode,
    the ``BridgeData`` built the way the bridge builds it (status flags, temperatures as uint8),
    an in-process ``publish`` to a realtime subscriber, the bridge's
    :class:`~jointbus.nodes.safety.command_check.CommandCheck` on an N-joint ``JointImpedance`` and
    the array's ``impedance`` write. The N-joint array is synthetic, built like
    :meth:`SimArrayConfig.from_model` on hb50 with its 12 joints repeated (names made unique), so
    every joint has real limits, drives and calibration. The simulator's physics is *not* in the
    cycle: it stands in for hardware (bench_sim measures it). Anchor: the 12-joint cycle;
    ratio = cost / anchor, to read against N / 12.
(b) **Publish → callback against subscribers** (1, 8, 32) of a 12-joint ``BridgeData``:
    *realtime* subscribers (callbacks run inside ``publish``): time from before ``publish`` to
    its return, every callback run; anchor: a plain loop over a list of the same callbacks.
    *ordinary* subscribers (the bus's dispatcher thread): time from before ``publish`` to the last
    callback; anchor: one ``SimpleQueue`` hand-off to a thread that loops over the callbacks. Both
    ordinary paths pay the VM's cross-vCPU wake-up (≈ 50 µs, library notes).
(c) **RateLoop against the rate** (100, 250, 500, 1000, 2000 Hz), idle machine: wake-up lateness
    p99 and the loop thread's CPU, for the default :class:`~jointbus.runtime.rate_loop.RateLoop`
    and with its real-time settings; anchor: the plain sleep-to-deadline loop
    (``bench_rate_loop.absolute_sleep``). ratio = value / anchor (lateness: below 1 is better; CPU:
    the price of spinning before each deadline).

Medians over many cycles after a warm-up; garbage collection is left on (the bridge collects
between cycles, which this loop does not imitate).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import queue
import statistics
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from bench import plots
from bench.bench_rate_loop import absolute_sleep, rate_loop
from jointbus.bus import MAB_RT, Bus
from jointbus.drivers.limits import JointLimits
from jointbus.drivers.sim.driver import SimActuatorArray, SimArrayConfig
from jointbus.messages.actarray.state import ActuatorState
from jointbus.messages.geometry_msgs import Quaternion, Vector3
from jointbus.messages.joint_impedance import JointImpedance
from jointbus.messages.std_msgs import Header
from jointbus.model.yaml_loader import load_robot
from jointbus.nodes.safety.command_check import CommandCheck
from jointbus.robots.hb50.messages import BridgeData, JointStatusFlag

RESULTS = Path(__file__).resolve().parent / "results"
JOINTS = (12, 64, 256)
SUBSCRIBERS = (1, 8, 32)
RATES_HZ = (100.0, 250.0, 500.0, 1000.0, 2000.0)
STAGES = ("read_joints", "build BridgeData", "publish", "command check", "impedance write")
_NAN3 = (math.nan, math.nan, math.nan)


# ---- (a) cycle cost against joints -------------------------------------------------------------
def synthetic_config(n: int) -> SimArrayConfig:
    """An ``n``-joint stepping simulator: hb50's drives and limits repeated, names unique."""
    base = SimArrayConfig.from_model(load_robot("hb50"), realtime=False)
    arr = base.array
    k = arr.count
    pick = [i % k for i in range(n)]
    names = tuple(f"{arr.names[j]}_{i // k}" for i, j in enumerate(pick))
    geometry = dataclasses.replace(
        arr.geometry, actuators=tuple(arr.geometry.actuators[j] for j in pick)
    )
    array = dataclasses.replace(
        arr,
        names=names,
        types=tuple(arr.types[j] for j in pick),
        limits=tuple(arr.limits[j] for j in pick),
        calibrations=tuple(arr.calibrations[j] for j in pick),
        geometry=geometry,
        accelerations=tuple(arr.accelerations[j] for j in pick),
    )
    return dataclasses.replace(
        base,
        array=array,
        params=tuple(base.params[j] for j in pick),
        kp=tuple(base.kp[j] for j in pick),
        kd=tuple(base.kd[j] for j in pick),
        initial_positions=(),
    )


class BridgeLikeCycle:
    """The parts of one bridge cycle for an N-joint array (module docstring, (a))."""

    def __init__(self, n: int, bus: Bus) -> None:
        self.array = SimActuatorArray(synthetic_config(n))
        self.array.power(True)
        names = self.array.names
        self.names = names
        limits = self.array.config.limits
        self.check = CommandCheck(names, JointLimits(names, limits), kp_max=500.0, kd_max=50.0)
        measured = self.array.read_joints().position
        self.command = JointImpedance(
            source_node="control_node",
            name=names,
            position=[min(max(float(p), s.position_min), s.position_max)
                      for p, s in zip(measured, limits, strict=True)],
            velocity=(0.0,) * len(names),
            effort=(0.0,) * len(names),
            kp=(20.0,) * len(names),
            kd=(0.5,) * len(names),
            brake=(False,) * len(names),
        )
        self.frame_id = self.array.config.geometry.header.frame_id
        self.latest: list[BridgeData | None] = [None]
        topic = f"/scaling/n{n}/bridge_data"
        bus.subscribe(topic, BridgeData, self._keep, MAB_RT, realtime=True)
        self.publisher = bus.publisher(topic, BridgeData, MAB_RT)

    def _keep(self, msg: BridgeData) -> None:
        self.latest[0] = msg

    def run(self, cycles: int) -> dict[str, float]:
        """Median µs per stage and in total over ``cycles`` cycles."""
        clock = time.perf_counter_ns
        samples = np.empty((cycles, len(STAGES) + 1), dtype=np.int64)
        array, check, cmd, names, frame_id = (
            self.array, self.check, self.command, self.names, self.frame_id
        )
        publish = self.publisher.publish
        comm_error = int(JointStatusFlag.COMMUNICATION_ERROR)
        motion_error = int(JointStatusFlag.MOTION_ERROR)
        stalled_bit = int(ActuatorState.STALLED)
        n = len(names)
        for i in range(cycles):
            t0 = clock()
            reading = array.read_joints()
            t1 = clock()
            status = np.zeros(n, dtype=np.uint16)
            status[np.isnan(reading.position)] |= comm_error
            status[(reading.state & stalled_bit) != 0] |= motion_error
            t = reading.temperature
            temperature = np.where(np.isnan(t), 0.0, t)
            data = BridgeData(
                Header.now(frame_id),
                Quaternion(*_NAN3, math.nan),
                Vector3(*_NAN3),
                Vector3(*_NAN3),
                names,
                reading.position.tolist(),
                reading.velocity.tolist(),
                reading.effort.tolist(),
                np.clip(np.rint(temperature), 0, 255).astype(np.uint8).tobytes(),
                tuple(status.tolist()),
            )
            t2 = clock()
            publish(data)
            t3 = clock()
            command = check.check(cmd)
            t4 = clock()
            array.impedance(command)
            t5 = clock()
            samples[i] = (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t5 - t0)
        if self.latest[0] is None or len(self.latest[0].joint_name) != n:
            raise RuntimeError("the realtime subscriber did not receive the cycle's BridgeData")
        med = np.median(samples, axis=0) / 1e3
        out = {stage: float(med[k]) for k, stage in enumerate(STAGES)}
        out["total"] = float(med[-1])
        return out

    def close(self) -> None:
        self.array.close()


def sweep_joints(cycles: int) -> dict[int, dict[str, float]]:
    """Median µs per stage and in total for each N in :data:`JOINTS` (interleaved rounds, best
    total kept: host noise hits every N alike)."""
    best: dict[int, dict[str, float]] = {}
    with Bus(name="bench-scaling") as bus:
        loops = {n: BridgeLikeCycle(n, bus) for n in JOINTS}
        try:
            for loop in loops.values():
                loop.run(min(cycles, 300))  # warm-up: codec plans, numpy caches
            for _ in range(3):
                for n, loop in loops.items():
                    result = loop.run(cycles)
                    if n not in best or result["total"] < best[n]["total"]:
                        best[n] = result
        finally:
            for loop in loops.values():
                loop.close()
    return best


# ---- (b) publish -> callback against subscribers -----------------------------------------------
def _message() -> BridgeData:
    names = tuple(f"{leg}_j{j}" for leg in ("fl", "fr", "rl", "rr") for j in range(3))
    return BridgeData(
        Header.at_ns(1, "base_link"),
        joint_name=names,
        joint_position=tuple(0.1 * i for i in range(12)),
        joint_velocity=tuple(0.01 * i for i in range(12)),
        joint_effort=(0.5,) * 12,
        joint_temperature=bytes(range(30, 42)),
        joint_status=tuple(range(12)),
    )


def _realtime(k: int, n: int) -> tuple[float, float]:
    """Median µs: ``publish`` with ``k`` realtime subscribers, and the plain callback loop."""
    msg = _message()
    hits = [0]

    def callback(_m: BridgeData) -> None:
        hits[0] += 1

    clock = time.perf_counter_ns
    ours: list[int] = []
    with Bus(name="bench-scaling-rt") as bus:
        for _ in range(k):
            bus.subscribe("/scaling/fanout", BridgeData, callback, MAB_RT, realtime=True)
        pub = bus.publisher("/scaling/fanout", BridgeData, MAB_RT)
        for _ in range(200):
            pub.publish(msg)
        hits[0] = 0
        for _ in range(n):
            t0 = clock()
            pub.publish(msg)
            ours.append(clock() - t0)
    if hits[0] != k * n:
        raise RuntimeError(f"{hits[0]} callbacks for {n} publishes to {k} subscribers")
    callbacks: list[Callable[[BridgeData], None]] = [callback] * k

    def plain(m: BridgeData) -> None:
        for cb in callbacks:
            cb(m)

    anchor: list[int] = []
    for _ in range(n):
        t0 = clock()
        plain(msg)
        anchor.append(clock() - t0)
    return statistics.median(ours) / 1e3, statistics.median(anchor) / 1e3


def _ordinary(k: int, n: int) -> tuple[float, float, float, float]:
    """Median µs publish → last of ``k`` dispatcher callbacks, and the publisher's own cost;
    then the same for a SimpleQueue hand-off to a thread that loops over ``k`` callbacks."""
    msg = _message()
    done = threading.Event()
    count = [0]
    stamp = [0]
    clock = time.perf_counter_ns

    def callback(_m: BridgeData) -> None:
        count[0] += 1
        if count[0] == k:
            stamp[0] = clock()
            done.set()

    def timed(publish: Callable[[BridgeData], object]) -> tuple[list[int], list[int]]:
        latency: list[int] = []
        cost: list[int] = []
        for _ in range(n):
            count[0] = 0
            done.clear()
            t0 = clock()
            publish(msg)
            t1 = clock()
            if not done.wait(1.0):
                raise RuntimeError(f"{count[0]} of {k} callbacks ran within 1 s")
            latency.append(stamp[0] - t0)
            cost.append(t1 - t0)
        return latency, cost

    with Bus(name="bench-scaling-ordinary") as bus:
        for _ in range(k):
            bus.subscribe("/scaling/fanout", BridgeData, callback, MAB_RT)
        pub = bus.publisher("/scaling/fanout", BridgeData, MAB_RT)
        timed(pub.publish)  # warm-up
        ours, ours_cost = timed(pub.publish)
    handoff: queue.SimpleQueue[BridgeData | None] = queue.SimpleQueue()
    callbacks = [callback] * k

    def serve() -> None:
        while (item := handoff.get()) is not None:
            for cb in callbacks:
                cb(item)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        anchor, anchor_cost = timed(handoff.put)
    finally:
        handoff.put(None)
        thread.join()
    med = statistics.median
    return (med(ours) / 1e3, med(anchor) / 1e3, med(ours_cost) / 1e3, med(anchor_cost) / 1e3)


def sweep_subscribers(n_rt: int, n_thread: int) -> dict[str, dict[int, float]]:
    """Series keyed by name, each {k: median µs} (see :func:`_realtime`, :func:`_ordinary`)."""
    series: dict[str, dict[int, float]] = {
        "realtime": {}, "realtime anchor": {},
        "ordinary": {}, "ordinary anchor": {},
        "ordinary publish cost": {}, "ordinary anchor put cost": {},
    }
    for k in SUBSCRIBERS:
        rt, rt_anchor = _realtime(k, n_rt)
        ordinary, ordinary_anchor, cost, anchor_cost = _ordinary(k, n_thread)
        series["realtime"][k] = rt
        series["realtime anchor"][k] = rt_anchor
        series["ordinary"][k] = ordinary
        series["ordinary anchor"][k] = ordinary_anchor
        series["ordinary publish cost"][k] = cost
        series["ordinary anchor put cost"][k] = anchor_cost
    return series


# ---- (c) RateLoop against the rate -------------------------------------------------------------
def sweep_rates(seconds: float) -> dict[str, dict[float, dict[str, float]]]:
    """For each loop and rate: lateness p50 / p99 (µs), % cycles late ≥ 1 period, CPU %."""
    out: dict[str, dict[float, dict[str, float]]] = {
        "abs sleep": {}, "RateLoop": {}, "RateLoop rt": {},
    }
    for rate in RATES_HZ:
        cycles = max(200, int(seconds * rate))
        measured = {
            "abs sleep": absolute_sleep(rate, cycles),
            "RateLoop": rate_loop(rate, cycles, realtime=False)[0],
            "RateLoop rt": rate_loop(rate, cycles, realtime=True)[0],
        }
        for name, m in measured.items():
            out[name][rate] = {
                "p50": m.p(50),
                "p99": m.p(99),
                "late_pct": m.late_pct(),
                "cpu_pct": 100.0 * m.cpu_fraction,
            }
    return out


# ---- rows ---------------------------------------------------------------------------------------
def _row(metric: str, value: float, unit: str, anchor: str, anchor_value: float,
         goal: str | None = None, passed: bool | None = None) -> dict[str, Any]:
    return {
        "metric": metric,
        "value": round(value, 3),
        "unit": unit,
        "anchor": anchor,
        "anchor_value": round(anchor_value, 3),
        "ratio": round(value / anchor_value, 3) if anchor_value > 0 else None,
        "goal": goal,
        "pass": passed,
    }


def rows_from(
    joints: dict[int, dict[str, float]],
    subscribers: dict[str, dict[int, float]],
    rates: dict[str, dict[float, dict[str, float]]],
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    base = joints[JOINTS[0]]["total"]
    for n in JOINTS:
        rows.append(_row(f"scaling.cycle_cost.joints={n} (median)", joints[n]["total"], "µs",
                         f"the same cycle, {JOINTS[0]} joints", base))
    for k in SUBSCRIBERS:
        rows.append(_row(f"scaling.publish_to_callback.realtime.subscribers={k} (median)",
                         subscribers["realtime"][k], "µs", "loop over a list of callbacks",
                         subscribers["realtime anchor"][k]))
    for k in SUBSCRIBERS:
        rows.append(_row(f"scaling.publish_to_callback.ordinary.subscribers={k} (median)",
                         subscribers["ordinary"][k], "µs",
                         "SimpleQueue hand-off to a thread looping over the callbacks",
                         subscribers["ordinary anchor"][k]))
    for name in ("RateLoop", "RateLoop rt"):
        for rate in RATES_HZ:
            m, a = rates[name][rate], rates["abs sleep"][rate]
            rows.append(_row(f"scaling.rate_loop.{rate:g}Hz.{name}: lateness p99", m["p99"], "µs",
                             "plain sleep-to-deadline loop", a["p99"]))
            rows.append(_row(f"scaling.rate_loop.{rate:g}Hz.{name}: loop thread CPU",
                             m["cpu_pct"], "%", "plain sleep-to-deadline loop", a["cpu_pct"]))
    return rows


def draw(data: dict[str, Any], results: Path = RESULTS) -> list[Path]:
    """The three PNGs from the sweep data (as saved in ``scaling.json``)."""
    joints = {int(n): v for n, v in data["joints"].items()}
    subscribers = {s: {int(k): v for k, v in d.items()} for s, d in data["subscribers"].items()}
    rates = {s: {float(r): v for r, v in d.items()} for s, d in data["rates"].items()}
    return [
        plots.cycle_cost_vs_joints(joints, STAGES, results / "scaling_joints.png"),
        plots.callback_cost_vs_subscribers(subscribers, results / "scaling_subscribers.png"),
        plots.rate_loop_vs_rate(rates, results / "scaling_rate.png"),
    ]


def run(quick: bool) -> list[dict[str, Any]]:
    """Measure the three sweeps, draw them, return the rows."""
    joints = sweep_joints(1000 if quick else 5000)
    subscribers = sweep_subscribers(3000 if quick else 20000, 300 if quick else 2000)
    rates = sweep_rates(1.5 if quick else 10.0)
    data = {"joints": joints, "subscribers": subscribers, "rates": rates, "quick": quick}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "scaling.json").write_text(json.dumps(data, indent=2) + "\n")
    for path in draw(json.loads(json.dumps(data))):
        print(f"   drew {path}")
    return rows_from(joints, subscribers, rates)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--full", action="store_true", help="longer sweeps")
    parser.add_argument("--redraw", action="store_true",
                        help="only redraw the PNGs from bench/results/scaling.json")
    args = parser.parse_args()
    if args.redraw:
        for p in draw(json.loads((RESULTS / "scaling.json").read_text())):
            print(p)
    else:
        for row in run(quick=not args.full):
            print(f"{row['metric']:64s} {row['value']:>10} {row['unit']:3s} "
                  f"anchor {row['anchor_value']:>10}  ratio {row['ratio']}")
