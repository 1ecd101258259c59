"""Bench: RateLoop lateness at 500 Hz and 1 kHz, idle and with the other core busy.

Goal (issue): at 500 Hz, lateness p99 <= 100 µs and at most 0.1 % of cycles late by one period or
more. The 1 kHz rows are reported without a goal.

Measured in the same run, per rate and load:

- ``naive sleep`` (anchor for drift): ``time.sleep(period)`` after each body. Its grid drifts by
  the wake-up lateness every cycle; we report how far it drifted over the run.
- ``abs sleep`` (anchor for lateness and CPU): ``time.sleep`` to an absolute deadline, no spin —
  what a careful hand-written loop does.
- ``RateLoop``: the default loop (sleep to 200 µs before the deadline, then spin).
- ``RateLoop rt``: the same plus SCHED_FIFO 50, pinned to CPU 0, 1 ns timer slack and
  ``freeze_gc=True``; where the OS refuses a setting it runs without it (warning printed).

**Spin policy** (issue 21): the bridge's loop settings (SCHED_FIFO 50, 1 ns timer slack, frozen
gc, *adaptive* spin) with a body of 300 µs of CPU, once with the adaptive spin's defaults
(``SPIN_QUANTILE`` and ``SPIN_MARGIN_S`` of :mod:`jointbus.runtime.rate_loop`: the 90 %
quantile of the wake-up lateness plus 10 µs) and once with the first setting (98 % plus
20 µs), interleaved, at 500 Hz and 1 kHz, idle and busy: the time spent spinning (% of one core;
goal ≤ 0.5× the first setting's) and the lateness p99 (goal ≤ the first setting's + 50 µs, a
fortieth of the 500 Hz period).

"busy" runs a ``while True: pass`` subprocess pinned to the last CPU, started by the bench and
killed after each measurement. Lateness = wake-up time - due deadline on ``time.monotonic_ns``.
``ratio`` = anchor value / value: every metric here is lower-is-better, so ratio > 1 means the
RateLoop is better than the anchor (CPU rows show the price of spinning: ratio < 1).

Run: ``python bench/bench_rate_loop.py`` (quick, ≈ 3 s per loop) or ``--full`` (≈ 20 s per loop).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from bench.run import format_table
from jointbus.runtime.rate_loop import SPIN_MARGIN_S, SPIN_QUANTILE, CycleInfo, RateLoop
from jointbus.runtime.realtime import RealtimeConfig

RATES_HZ = (500.0, 1000.0)
GOAL_RATE_HZ = 500.0
GOAL_P99_US = 100.0
GOAL_LATE_PCT = 0.1
FIRST_SPIN = (0.98, 20e-6)  # the adaptive spin's first setting: quantile, margin (s)
SPIN_BODY_US = 300.0  # CPU a bridge cycle spends in its body (simulator, read, publish, write)
GOAL_SPIN_RATIO = 0.5
GOAL_SPIN_LATE_US = 50.0


@dataclass
class Measurement:
    """Lateness samples (ns) of one loop run, plus its drift and CPU use."""

    lateness_ns: npt.NDArray[np.int64]
    period_ns: float
    drift_ns: float
    cpu_fraction: float

    def p(self, q: float) -> float:
        return float(np.percentile(self.lateness_ns, q)) / 1e3

    def max_us(self) -> float:
        return float(self.lateness_ns.max()) / 1e3

    def late_pct(self) -> float:
        return 100.0 * float(np.count_nonzero(self.lateness_ns >= self.period_ns)) / len(
            self.lateness_ns
        )


def naive_sleep(rate_hz: float, cycles: int) -> Measurement:
    """``sleep(period)`` after each cycle: lateness measured against the ideal grid drifts."""
    period_s = 1.0 / rate_hz
    wakes = np.empty(cycles, dtype=np.int64)
    clock = time.monotonic_ns
    cpu0 = time.thread_time_ns()
    for i in range(cycles):
        wakes[i] = clock()
        time.sleep(period_s)
    wall = clock() - int(wakes[0])
    cpu = time.thread_time_ns() - cpu0
    period_ns = 1e9 / rate_hz
    grid = wakes[0] + np.round(np.arange(cycles) * period_ns).astype(np.int64)
    lateness = wakes - grid
    return Measurement(lateness, period_ns, float(lateness[-1]), cpu / wall)


def absolute_sleep(rate_hz: float, cycles: int) -> Measurement:
    """``sleep`` to absolute deadlines without spinning (bursts to catch up after a stall)."""
    period_ns = 1e9 / rate_hz
    lateness = np.empty(cycles, dtype=np.int64)
    clock = time.monotonic_ns
    cpu0 = time.thread_time_ns()
    t0 = clock()
    for i in range(cycles):
        deadline = t0 + round(i * period_ns)
        remaining = deadline - clock()
        if remaining > 0:
            time.sleep(remaining / 1e9)
        lateness[i] = clock() - deadline
    wall = clock() - t0
    cpu = time.thread_time_ns() - cpu0
    return Measurement(lateness, period_ns, float(lateness[-1]), cpu / wall)


def rate_loop(rate_hz: float, cycles: int, realtime: bool) -> tuple[Measurement, list[str]]:
    """The RateLoop under test; ``realtime`` adds FIFO, CPU 0, 1 ns slack and freeze_gc."""
    lateness = np.empty(cycles, dtype=np.int64)
    loop = RateLoop(
        rate_hz,
        freeze_gc=realtime,
        realtime=RealtimeConfig(priority=50, cpu=0, timerslack_ns=1) if realtime else None,
    )
    last: list[int] = [0]

    def body(info: CycleInfo) -> None:
        lateness[info.index] = info.lateness_ns
        last[0] = info.wake_ns - loop.deadline_ns(info.tick)

    cpu0 = time.thread_time_ns()
    wall0 = time.monotonic_ns()
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        loop.run(body, cycles=cycles)
    wall = time.monotonic_ns() - wall0
    cpu = time.thread_time_ns() - cpu0
    return (
        Measurement(lateness, loop.period_s * 1e9, float(last[0]), cpu / wall),
        loop.realtime_warnings,
    )


@dataclass
class SpinRun:
    """Lateness p99 (µs) and spin time (% of one core) of a bridge-like loop."""

    p99_us: float
    spin_pct: float


def bridge_like_loop(rate_hz: float, cycles: int, quantile: float, margin_s: float) -> SpinRun:
    """The bridge's loop settings with a ``SPIN_BODY_US`` body and the given adaptive spin."""
    loop = RateLoop(
        rate_hz,
        freeze_gc=True,
        realtime=RealtimeConfig(priority=50, timerslack_ns=1),
        adaptive_spin=True,
        spin_quantile=quantile,
        spin_margin_s=margin_s,
    )
    lateness = np.empty(cycles, dtype=np.int64)
    clock = time.thread_time_ns

    def body(info: CycleInfo) -> None:
        lateness[info.index] = info.lateness_ns
        end = clock() + round(SPIN_BODY_US * 1000)
        while clock() < end:
            pass

    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        snapshot = loop.run(body, cycles=cycles)
    settled = lateness[cycles // 4 :]  # after the window has settled from spin_s
    return SpinRun(float(np.percentile(settled, 99)) / 1e3, 100.0 * snapshot.spin_fraction)


def spin_policy_rows(quick: bool) -> list[dict[str, object]]:
    """The spin policy rows (module docstring): the default against the first setting."""
    seconds, rounds = (2.0, 2) if quick else (10.0, 3)
    rows: list[dict[str, object]] = []
    for rate in RATES_HZ:
        cycles = int(seconds * rate)
        for kind in ("idle", "busy"):
            runs: dict[str, list[SpinRun]] = {"default": [], "first": []}
            with load(kind):
                for _ in range(rounds):  # interleaved: host noise hits both alike
                    runs["default"].append(
                        bridge_like_loop(rate, cycles, SPIN_QUANTILE, SPIN_MARGIN_S)
                    )
                    runs["first"].append(bridge_like_loop(rate, cycles, *FIRST_SPIN))
            new = SpinRun(
                float(np.median([r.p99_us for r in runs["default"]])),
                float(np.median([r.spin_pct for r in runs["default"]])),
            )
            old = SpinRun(
                float(np.median([r.p99_us for r in runs["first"]])),
                float(np.median([r.spin_pct for r in runs["first"]])),
            )
            policy = f"q {SPIN_QUANTILE:g} + {SPIN_MARGIN_S * 1e6:g} µs"
            tag = f"{rate:g} Hz {kind} spin policy ({policy})"
            anchor = f"q {FIRST_SPIN[0]:g} + {FIRST_SPIN[1] * 1e6:g} µs, same run"
            rows += [
                {
                    "metric": f"{tag}: spin",
                    "value": round(new.spin_pct, 2),
                    "unit": "% core",
                    "anchor": anchor,
                    "anchor_value": round(old.spin_pct, 2),
                    "ratio": round(new.spin_pct / old.spin_pct, 3) if old.spin_pct else None,
                    "goal": f"<= {GOAL_SPIN_RATIO:g}x anchor",
                    "pass": new.spin_pct <= GOAL_SPIN_RATIO * old.spin_pct,
                },
                {
                    "metric": f"{tag}: lateness p99",
                    "value": round(new.p99_us, 1),
                    "unit": "µs",
                    "anchor": anchor,
                    "anchor_value": round(old.p99_us, 1),
                    "ratio": round(new.p99_us / old.p99_us, 3) if old.p99_us else None,
                    "goal": f"<= anchor + {GOAL_SPIN_LATE_US:g} µs",
                    "pass": new.p99_us <= old.p99_us + GOAL_SPIN_LATE_US,
                },
            ]
    return rows


@contextlib.contextmanager
def load(kind: str) -> Iterator[None]:
    """``idle``: nothing. ``busy``: a spinning Python process pinned to the last CPU."""
    if kind == "idle":
        yield
        return
    cpus = sorted(os.sched_getaffinity(0))
    code = f"import os\nos.sched_setaffinity(0, {{{cpus[-1]}}})\nwhile True: pass"
    hog = subprocess.Popen([sys.executable, "-c", code])
    try:
        time.sleep(0.3)  # let it start spinning
        yield
    finally:
        hog.kill()
        hog.wait()


def row(
    metric: str,
    value: float,
    unit: str,
    anchor: str,
    anchor_value: float,
    goal: str | None = None,
    passed: bool | None = None,
) -> dict[str, object]:
    ratio = anchor_value / value if value > 0 else None
    return {
        "metric": metric,
        "value": value,
        "unit": unit,
        "anchor": anchor,
        "anchor_value": anchor_value,
        "ratio": ratio,
        "goal": goal,
        "pass": passed,
    }


def run(quick: bool) -> list[dict[str, object]]:
    """Measure every loop at every rate and load; return one row per metric."""
    seconds = 3.0 if quick else 20.0
    rows: list[dict[str, object]] = []
    for rate in RATES_HZ:
        cycles = int(seconds * rate)
        for kind in ("idle", "busy"):
            with load(kind):
                naive = naive_sleep(rate, cycles)
                absolute = absolute_sleep(rate, cycles)
                default, _ = rate_loop(rate, cycles, realtime=False)
                rt, refused = rate_loop(rate, cycles, realtime=True)
            if refused:
                print(f"note: RateLoop rt ran without: {'; '.join(refused)}", file=sys.stderr)
            goal = rate == GOAL_RATE_HZ
            tag = f"{rate:g} Hz {kind}"
            for name, m in (("RateLoop", default), ("RateLoop rt", rt)):
                p99 = m.p(99)
                late = m.late_pct()
                rows += [
                    row(f"{tag} {name}: lateness p50", m.p(50), "µs", "abs sleep", absolute.p(50)),
                    row(
                        f"{tag} {name}: lateness p99",
                        p99,
                        "µs",
                        "abs sleep",
                        absolute.p(99),
                        f"<= {GOAL_P99_US:g}" if goal else None,
                        p99 <= GOAL_P99_US if goal else None,
                    ),
                    row(f"{tag} {name}: lateness max", m.max_us(), "µs", "abs sleep",
                        absolute.max_us()),
                    row(
                        f"{tag} {name}: cycles late >= 1 period",
                        late,
                        "%",
                        "abs sleep",
                        absolute.late_pct(),
                        f"<= {GOAL_LATE_PCT:g}" if goal else None,
                        late <= GOAL_LATE_PCT if goal else None,
                    ),
                    row(f"{tag} {name}: drift at end", abs(m.drift_ns) / 1e6, "ms",
                        "naive sleep", naive.drift_ns / 1e6),
                    row(f"{tag} {name}: loop thread CPU", 100 * m.cpu_fraction, "%",
                        "abs sleep", 100 * absolute.cpu_fraction),
                ]
    return rows + spin_policy_rows(quick)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--full", action="store_true", help="≈ 20 s per loop instead of ≈ 3 s")
    args = parser.parse_args()
    print(format_table(run(quick=not args.full)))
