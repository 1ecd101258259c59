"""Bench: the whole robot stack at 500 Hz — CPU, bridge loop lateness, command-to-actuator latency.

Goals (issue, "make bench"): CPU of the whole stack at 500 Hz ≤ 30 % of one core; bridge loop
lateness p99 ≤ 100 µs; command-to-actuator latency is reported without a goal.

What runs is ``make demo``: :class:`jointbus.stack.Stack` with its defaults (simulated hb50 stepped
by the bridge loop, bridge + control node on one bus, topics offered on Zenoh on a free loopback
port with nobody subscribed, SCHED_FIFO where allowed). The robot first stands up; the measurement
window starts once it stands (quick: 5 s, full: 30 s).

- **CPU** = process CPU time / wall time over the window, in % of one core. Two rows: the whole
  process, and the same minus the CPU time of the simulator's physics (measured around each
  ``step`` on the bridge thread) — on a robot that time is spent by the hardware, not by jointbus.
  The goal is checked on both; the simulator's own share is an information row.
- **Lateness** = the bridge rate loop's wake-up time minus its deadline (its own statistics over
  the window; ``time.monotonic_ns``).
- **Command-to-actuator latency** = from the control node stamping a ``JointCommand`` (the header
  stamp, taken when it starts computing it) to the bridge writing it to the actuator array — the
  array's ``impedance`` call is wrapped for the bench only. It includes the wait for the next
  bridge cycle, so it lies between 0 and one period (2 ms) plus the control node's compute time.
- **Frames handled** = control-node steps / bridge cycles: a value below 100 % means the control
  node skipped frames (a MAB_RT depth-1 subscription keeps only the newest).

No anchor library runs a comparable stack, so ``anchor`` is empty; the rate-loop bench compares the
loop itself with hand-written sleep loops.
"""

from __future__ import annotations

import argparse
import threading
import time
from typing import Any

import numpy as np

from jointbus.bus import ZenohConfig
from jointbus.messages.hb50 import JointCommand
from jointbus.stack import Stack

GOAL_CPU_PCT = 30.0
GOAL_LATENESS_US = 100.0


def _free_port() -> int:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _row(
    metric: str, value: float, unit: str, goal: str | None = None, ok: bool | None = None
) -> dict[str, Any]:
    return {
        "metric": metric,
        "value": value,
        "unit": unit,
        "anchor": None,
        "anchor_value": None,
        "ratio": None,
        "goal": goal,
        "pass": ok,
    }


def measure(window_s: float) -> list[dict[str, Any]]:
    stack = Stack(zenoh=ZenohConfig(hub_port=_free_port())).start()
    try:
        standing = stack.wait_for(lambda s: s.standing, 20.0)
        if not standing.standing:
            raise RuntimeError(f"the robot did not stand up: {standing.line()}")
        time.sleep(1.0)  # settle after the stand-up
        array = stack.array
        bridge = stack.bridge
        control = stack.control
        assert array is not None and bridge is not None and control is not None
        latencies: list[int] = []
        lock = threading.Lock()
        original = array.impedance

        def timed(command: JointCommand) -> Any:
            result = original(command)
            if command.source_node == "control_node":
                late = time.time_ns() - command.header.stamp.to_ns()
                with lock:
                    latencies.append(late)
            return result

        array.impedance = timed  # type: ignore[method-assign]
        # the loop's statistics window (10 s) is restarted so the stand-up is not in it
        loop = bridge.rate_loops["bridge"].loop
        loop.stats.reset()
        cycles0, frames0 = bridge.cycles, control.frames_used
        sim0 = stack.simulator_cpu_s
        cpu0, t0 = time.process_time(), time.monotonic()
        time.sleep(window_s)
        cpu1, t1 = time.process_time(), time.monotonic()
        sim1 = stack.simulator_cpu_s
        cycles1, frames1 = bridge.cycles, control.frames_used
        stats = bridge.loop_stats()["bridge"]
        height = stack.true_base_height()
        array.impedance = original  # type: ignore[method-assign]
    finally:
        stack.stop()
    wall = t1 - t0
    cpu_pct = (cpu1 - cpu0) / wall * 100.0
    sim_pct = (sim1 - sim0) / wall * 100.0
    lat = np.array(latencies, dtype=np.float64) / 1e3  # µs
    p99 = stats.lateness_p99_s * 1e6
    rows = [
        _row("stack.cpu.whole_process", cpu_pct, "% core", f"<= {GOAL_CPU_PCT:g} % of one core",
             cpu_pct <= GOAL_CPU_PCT),
        _row("stack.cpu.without_sim_physics", cpu_pct - sim_pct, "% core",
             f"<= {GOAL_CPU_PCT:g} % of one core", cpu_pct - sim_pct <= GOAL_CPU_PCT),
        _row("stack.cpu.sim_physics", sim_pct, "% core"),
        _row("stack.bridge.lateness.p99", p99, "us", f"<= {GOAL_LATENESS_US:g} us",
             p99 <= GOAL_LATENESS_US),
        _row("stack.bridge.lateness.p50", stats.lateness_p50_s * 1e6, "us"),
        _row("stack.bridge.lateness.max", stats.lateness_max_s * 1e6, "us"),
        _row("stack.bridge.overruns", float(stats.overruns), "cycles"),
        _row("stack.bridge.rate", (cycles1 - cycles0) / wall, "Hz"),
        _row("stack.control.frames_handled", (frames1 - frames0) / max(1, cycles1 - cycles0)
             * 100.0, "%"),
        _row("stack.standing_height", height, "m"),
    ]
    if lat.size:
        rows += [
            _row("stack.command_to_actuator.p50", float(np.percentile(lat, 50)), "us"),
            _row("stack.command_to_actuator.p99", float(np.percentile(lat, 99)), "us"),
        ]
    return rows


def run(quick: bool) -> list[dict[str, Any]]:
    return measure(5.0 if quick else 30.0)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true")
    for row in run(quick=not parser.parse_args().full):
        print(f"{row['metric']:36s} {row['value']:10.1f} {row['unit']:7s} {row['goal'] or ''} "
              f"{'' if row['pass'] is None else ('ok' if row['pass'] else 'MISSED')}")
