"""PNG figures of the scaling sweeps (matplotlib, Agg backend: no display needed).

Where it sits: ``bench/``, used by :mod:`bench.bench_scaling` (which measures) so that drawing is
kept apart from measuring; ``python -m bench.bench_scaling --redraw`` redraws the figures from
``bench/results/scaling.json``. Each figure shows our series next to its anchor, so the picture
says what the table's ratios say. Times in µs, CPU in % of one core.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # after matplotlib.use: the backend is chosen first

_DPI = 110


def _save(fig: Any, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=_DPI)
    plt.close(fig)
    return path


def cycle_cost_vs_joints(
    data: Mapping[int, Mapping[str, float]], stages: Sequence[str], path: Path
) -> Path:
    """Stacked median cost of each stage of the bridge-like cycle against the joint count, with
    the 12-joint total scaled linearly (what the cost would be if it grew with N) as reference."""
    joints = sorted(data)
    fig, ax = plt.subplots(figsize=(7.0, 4.2))
    bottom = [0.0] * len(joints)
    for stage in stages:
        values = [data[n][stage] for n in joints]
        ax.bar([str(n) for n in joints], values, bottom=bottom, label=stage, width=0.55)
        bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    for i, n in enumerate(joints):
        ax.annotate(f"{data[n]['total']:.0f} µs", (i, bottom[i]), ha="center", va="bottom",
                    fontsize=9)
    base_n = joints[0]
    linear = [data[base_n]["total"] * n / base_n for n in joints]
    ax.plot([str(n) for n in joints], linear, "k--", marker="o", linewidth=1,
            label=f"{base_n}-joint cost × N/{base_n} (anchor, linear)")
    ax.set_xlabel("joints")
    ax.set_ylabel("median µs per cycle")
    ax.set_title("Bridge-like cycle cost against joints (physics excluded)")
    ax.set_ylim(0, max(*bottom, *linear) * 1.15)
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(axis="y", alpha=0.3)
    return _save(fig, path)


def callback_cost_vs_subscribers(data: Mapping[str, Mapping[int, float]], path: Path) -> Path:
    """Publish → callback median against the subscriber count, ours and anchors (log y)."""
    fig, ax = plt.subplots(figsize=(7.0, 4.2))
    styles = {
        "realtime": ("tab:blue", "-"),
        "realtime anchor": ("tab:blue", ":"),
        "ordinary": ("tab:orange", "-"),
        "ordinary anchor": ("tab:orange", ":"),
        "ordinary publish cost": ("tab:green", "-"),
        "ordinary anchor put cost": ("tab:green", ":"),
    }
    labels = {
        "realtime": "realtime subscribers: publish → all callbacks",
        "realtime anchor": "anchor: loop over a list of callbacks",
        "ordinary": "ordinary subscribers: publish → last callback",
        "ordinary anchor": "anchor: SimpleQueue hand-off, thread loops",
        "ordinary publish cost": "ordinary: publisher's own cost",
        "ordinary anchor put cost": "anchor: SimpleQueue.put",
    }
    for name, series in data.items():
        ks = sorted(series)
        color, line = styles.get(name, ("gray", "-"))
        ax.plot(ks, [series[k] for k in ks], color=color, linestyle=line, marker="o",
                label=labels.get(name, name))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ticks = sorted({k for series in data.values() for k in series})
    ax.set_xticks(ticks, [str(k) for k in ticks])
    ax.set_xlabel("subscribers")
    ax.set_ylabel("median µs")
    ax.set_title("In-process publish → callback, 12-joint BridgeData")
    ax.legend(fontsize=7, loc="upper left")
    ax.grid(alpha=0.3, which="both")
    return _save(fig, path)


def rate_loop_vs_rate(data: Mapping[str, Mapping[float, Mapping[str, float]]], path: Path) -> Path:
    """Lateness p99 (log) and loop-thread CPU against the rate, for each loop."""
    fig, (late_ax, cpu_ax) = plt.subplots(1, 2, figsize=(10.0, 4.0))
    colors = {"abs sleep": "tab:gray", "RateLoop": "tab:blue", "RateLoop rt": "tab:red"}
    for name, series in data.items():
        rates = sorted(series)
        label = "anchor: sleep to deadline" if name == "abs sleep" else name
        color = colors.get(name, "black")
        late_ax.plot(rates, [max(series[r]["p99"], 0.01) for r in rates], marker="o",
                     color=color, label=label)
        cpu_ax.plot(rates, [series[r]["cpu_pct"] for r in rates], marker="o", color=color,
                    label=label)
    for ax in (late_ax, cpu_ax):
        ax.set_xscale("log")
        ticks = sorted({r for series in data.values() for r in series})
        ax.set_xticks(ticks, [f"{r:g}" for r in ticks])
        ax.minorticks_off()
        ax.set_xlabel("rate (Hz)")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=8)
    late_ax.axhline(100.0, color="black", linestyle="--", linewidth=0.8)
    late_ax.annotate("goal at 500 Hz: 100 µs", (ticks[0], 110.0), fontsize=8)
    late_ax.set_yscale("log")
    late_ax.set_ylabel("wake-up lateness p99 (µs)")
    late_ax.set_title("RateLoop lateness against rate")
    cpu_ax.set_ylabel("loop thread CPU (% of one core)")
    cpu_ax.set_title("RateLoop CPU against rate (empty body)")
    return _save(fig, path)
