"""Bench: the whole robot stack at 500 Hz — CPU, bridge loop lateness, command-to-actuator latency.

Goals (issue, "make bench"): CPU of the whole stack at 500 Hz ≤ 30 % of one core; bridge loop
lateness p99 ≤ 100 µs; command-to-actuator latency is reported without a goal.

What runs is ``make demo --record``: :class:`jointbus.stack.Stack` with its defaults (simulated
hb50 stepped by the bridge loop, bridge + control node on one bus, topics offered on Zenoh on a free
loopback port with nobody subscribed, SCHED_FIFO where allowed) plus a
:class:`~jointbus.tools.recorder.Recorder` on the same bus writing every topic to an MCAP file in a
temporary directory — the issue's "simulator + bridge + control + recorder". The robot first stands
up; the measurement window starts once it stands (quick: 5 s, full: 30 s).

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
- **Control steps per second** against the bridge's cycles per second: a ratio below 1 means the
  control node skipped frames (a MAB_RT depth-1 subscription keeps only the newest).

**Anchor** (same run, same process, after the stack stopped): the least a 500 Hz loop on this
simulator can do — a hand-written loop sleeping to absolute deadlines (no spin, no SCHED_FIFO)
that steps the same ``sim://hb50`` by one period, reads the joints and writes a hold command to
the array, with no bus, no control node and no recorder. The CPU rows compare with its CPU (the
"without physics" row with its CPU minus its own physics time), the lateness rows with its
wake-up lateness, the rate and overruns with its own, the command-to-actuator latency with its
own (from the moment it would stamp a command — after reading the joints — to the write
returning: no bus, no wait for the next cycle). Other same-run anchors: the control node's steps
per second against the bridge's cycles per second (their ratio is the share of frames handled),
the estimated base height against MuJoCo's ground truth. Numbers with no meaningful anchor — the
recorder's messages per second, the CPU of each thread (``threading`` threads, Linux thread
clocks) — are printed, not put in the table. No library
runs a comparable stack, so this floor is the fairest anchor there is: the ratio says how much
the framework costs over the bare minimum.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from jointbus import drivers
from jointbus.bus import ZenohConfig
from jointbus.drivers.sim.driver import SimActuatorArray
from jointbus.messages.hb50 import JointCommand
from jointbus.stack import Stack, default_url
from jointbus.tools.recorder import Recorder

GOAL_CPU_PCT = 30.0
GOAL_LATENESS_US = 100.0


def _free_port() -> int:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


ANCHOR = "bare 500 Hz loop: sim step + read_joints + hold command, abs sleep"
ANCHOR_COMMAND = "bare loop: command applied in the cycle it is made"


@dataclass(frozen=True)
class BareLoop:
    """What the anchor loop measured: CPU (% of one core), its physics share and lateness (µs)."""

    cpu_pct: float
    sim_pct: float
    lateness_p50_us: float
    lateness_p99_us: float
    lateness_max_us: float
    overruns: int
    rate_hz: float
    command_p50_us: float
    command_p99_us: float


def bare_loop(window_s: float, rate_hz: float = 500.0) -> BareLoop:
    """The anchor (module docstring): a hand-written loop over the same simulator."""
    array = drivers.open(default_url("hb50"))
    try:
        if not isinstance(array, SimActuatorArray) or array.realtime:
            raise RuntimeError(f"{default_url('hb50')} did not open a stepping simulator")
        array.power(True)
        limits = array.config.limits
        measured = array.read_joints().position
        hold = JointCommand.hold(
            array.names,
            [min(max(float(p), s.position_min), s.position_max)
             for p, s in zip(measured, limits, strict=True)],
            20.0,
            0.5,
            source_node="bench",
        )
        period_ns = round(1e9 / rate_hz)
        period_s = period_ns / 1e9
        cycles = int(window_s * rate_hz)
        lateness = np.empty(cycles, dtype=np.int64)
        command_ns = np.empty(cycles, dtype=np.int64)
        sim_ns = 0
        clock = time.monotonic_ns
        cpu0 = time.process_time()
        t0 = clock()
        for i in range(cycles):
            deadline = t0 + i * period_ns
            remaining = deadline - clock()
            if remaining > 0:
                time.sleep(remaining / 1e9)
            lateness[i] = clock() - deadline
            s0 = time.thread_time_ns()
            array.step(period_s)
            sim_ns += time.thread_time_ns() - s0
            array.read_joints()
            stamp = time.time_ns()  # where the control node stamps its command
            array.impedance(hold)
            command_ns[i] = time.time_ns() - stamp
        wall = (clock() - t0) / 1e9
        cpu = time.process_time() - cpu0
    finally:
        array.close()
    late = lateness / 1e3
    command_us = command_ns / 1e3
    return BareLoop(
        cpu / wall * 100.0,
        sim_ns / 1e9 / wall * 100.0,
        float(np.percentile(late, 50)),
        float(np.percentile(late, 99)),
        float(late.max()),
        int(np.count_nonzero(lateness >= period_ns)),
        cycles / wall,
        float(np.percentile(command_us, 50)),
        float(np.percentile(command_us, 99)),
    )


def thread_cpu_s() -> dict[str, float]:
    """CPU time (s) of each live Python thread of this process, by name (Linux thread clocks).

    Threads started outside Python (Zenoh's runtime) are not listed: they are the process total
    minus these."""
    out: dict[str, float] = {}
    for thread in threading.enumerate():
        if thread.ident is None:
            continue
        try:
            clock = time.pthread_getcpuclockid(thread.ident)
            out[thread.name] = out.get(thread.name, 0.0) + time.clock_gettime(clock)
        except (OSError, AttributeError):  # the thread ended meanwhile / not on this platform
            continue
    return out


def _row(
    metric: str,
    value: float,
    unit: str,
    goal: str | None = None,
    ok: bool | None = None,
    anchor: str | None = None,
    anchor_value: float | None = None,
) -> dict[str, Any]:
    return {
        "metric": metric,
        "value": value,
        "unit": unit,
        "anchor": anchor,
        "anchor_value": anchor_value,
        "ratio": value / anchor_value if anchor_value else None,
        "goal": goal,
        "pass": ok,
    }


def measure(window_s: float) -> list[dict[str, Any]]:
    tmp = Path(tempfile.mkdtemp(prefix="jb-bench-stack-"))
    stack = Stack(zenoh=ZenohConfig(hub_port=_free_port())).start()
    recorder = Recorder(stack.bus, tmp / "stack.mcap").start()
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
        rec0 = recorder.stats().messages
        threads0 = thread_cpu_s()
        cpu0, t0 = time.process_time(), time.monotonic()
        time.sleep(window_s)
        cpu1, t1 = time.process_time(), time.monotonic()
        threads1 = thread_cpu_s()
        rec1 = recorder.stats().messages
        sim1 = stack.simulator_cpu_s
        cycles1, frames1 = bridge.cycles, control.frames_used
        stats = bridge.loop_stats()["bridge"]
        height = stack.true_base_height()
        estimated_height = stack.summary().base_height_m
        array.impedance = original  # type: ignore[method-assign]
    finally:
        try:
            rec_stats = recorder.stop()
        finally:
            stack.stop()
            shutil.rmtree(tmp, ignore_errors=True)
    if rec_stats.skipped:
        print(f"note: the recorder skipped {rec_stats.skipped} messages")
    bare = bare_loop(min(window_s, 5.0))
    wall = t1 - t0
    cpu_pct = (cpu1 - cpu0) / wall * 100.0
    sim_pct = (sim1 - sim0) / wall * 100.0
    lat = np.array(latencies, dtype=np.float64) / 1e3  # µs
    p99 = stats.lateness_p99_s * 1e6
    goal_cpu = f"<= {GOAL_CPU_PCT:g} % of one core"
    rows = [
        _row("stack.cpu.whole_process (sim + bridge + control + recorder)", cpu_pct, "% core",
             goal_cpu, cpu_pct <= GOAL_CPU_PCT, ANCHOR, bare.cpu_pct),
        _row("stack.cpu.without_sim_physics", cpu_pct - sim_pct, "% core", goal_cpu,
             cpu_pct - sim_pct <= GOAL_CPU_PCT, ANCHOR + ", minus its physics",
             bare.cpu_pct - bare.sim_pct),
        _row("stack.cpu.sim_physics", sim_pct, "% core", anchor=ANCHOR + ", its physics",
             anchor_value=bare.sim_pct),
        _row("stack.bridge.lateness.p99", p99, "us", f"<= {GOAL_LATENESS_US:g} us",
             p99 <= GOAL_LATENESS_US, ANCHOR, bare.lateness_p99_us),
        _row("stack.bridge.lateness.p50", stats.lateness_p50_s * 1e6, "us",
             anchor=ANCHOR, anchor_value=bare.lateness_p50_us),
        _row("stack.bridge.lateness.max", stats.lateness_max_s * 1e6, "us",
             anchor=ANCHOR, anchor_value=bare.lateness_max_us),
        _row("stack.bridge.overruns", float(stats.overruns), "cycles", anchor=ANCHOR,
             anchor_value=float(bare.overruns)),
        _row("stack.bridge.rate", (cycles1 - cycles0) / wall, "Hz", anchor=ANCHOR,
             anchor_value=bare.rate_hz),
        _row("stack.control.steps_per_s", (frames1 - frames0) / wall, "Hz",
             anchor="bridge cycles/s, same window (ratio = share of frames handled)",
             anchor_value=(cycles1 - cycles0) / wall),
        _row("stack.base_height.estimated", estimated_height, "m",
             anchor="MuJoCo ground truth, same instant", anchor_value=height),
    ]
    if lat.size:
        rows += [
            _row("stack.command_to_actuator.p50", float(np.percentile(lat, 50)), "us",
                 anchor=ANCHOR_COMMAND, anchor_value=bare.command_p50_us),
            _row("stack.command_to_actuator.p99", float(np.percentile(lat, 99)), "us",
                 anchor=ANCHOR_COMMAND, anchor_value=bare.command_p99_us),
        ]
    # Details without a same-run anchor: printed, not in the table.
    print(f"   recorder: {(rec1 - rec0) / wall:.0f} msg/s recorded, "
          f"{rec_stats.skipped} skipped; MuJoCo standing height {height:.3f} m")
    parts = sorted(
        ((name, (threads1[name] - threads0.get(name, 0.0)) / wall * 100.0) for name in threads1),
        key=lambda item: -item[1],
    )
    other = cpu_pct - sum(pct for _, pct in parts)
    print("   CPU by thread (% core): " + ", ".join(f"{n} {pct:.1f}" for n, pct in parts if pct
          >= 0.05) + f", other (Zenoh runtime, ended threads) {other:.1f}")
    return rows


def run(quick: bool) -> list[dict[str, Any]]:
    return measure(5.0 if quick else 30.0)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true")
    for row in run(quick=not parser.parse_args().full):
        anchor = "" if row["anchor_value"] is None else f"(anchor {row['anchor_value']:.1f})"
        print(f"{row['metric']:36s} {row['value']:10.1f} {row['unit']:7s} {anchor:16s} "
              f"{row['goal'] or ''} "
              f"{'' if row['pass'] is None else ('ok' if row['pass'] else 'MISSED')}")
