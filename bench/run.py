"""Run every benchmark, print one table and write ``bench/results/latest.json``.

Usage: ``python -m bench.run [--quick | --full] [--only NAME] [--output PATH] [--strict]``
(``make bench BENCH_ARGS=--full``). Quick mode is the default and stays well under five minutes.

Discovery: every ``bench/bench_*.py`` module defining ``run(quick: bool) -> list[dict]``. A module
that fails to import or raises is reported (traceback printed, one failed row) and the others still
run. Each row is a dict with the keys of :data:`ROW_KEYS`:

- ``metric``: dotted name, e.g. ``codec.bridge_data.roundtrip.p50``;
- ``value`` / ``unit``: our measurement;
- ``anchor`` / ``anchor_value``: what it is compared with (another library, same run) or ``None``;
- ``ratio``: the comparison as the goal states it (e.g. a speed-up, or our time / anchor time);
- ``goal``: the target in words (e.g. ``">= 8x (required)"``) or ``None`` for information rows;
- ``pass``: ``True`` / ``False`` against the goal, ``None`` when there is no goal.

The exit status is 1 if a module failed, or (with ``--strict``) if any row missed its goal.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import platform
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
DEFAULT_OUTPUT = BENCH_DIR / "results" / "latest.json"
ROW_KEYS = ("metric", "value", "unit", "anchor", "anchor_value", "ratio", "goal", "pass")


def discover(only: str | None = None) -> list[str]:
    """The benchmark modules (``bench.bench_x``), optionally only the one named ``only``."""
    names = sorted(p.stem for p in BENCH_DIR.glob("bench_*.py"))
    if only:
        wanted = only if only.startswith("bench_") else f"bench_{only}"
        names = [n for n in names if n in (wanted, only)]
    return [f"bench.{name}" for name in names]


def failed_row(module: str, error: BaseException) -> dict[str, Any]:
    return {
        "metric": f"{module.removeprefix('bench.')}: FAILED",
        "value": None,
        "unit": None,
        "anchor": None,
        "anchor_value": None,
        "ratio": None,
        "goal": f"{type(error).__name__}: {error}"[:200],
        "pass": False,
        "module": module,
    }


def normalise(module: str, row: dict[str, Any]) -> dict[str, Any]:
    """A row with every key of :data:`ROW_KEYS` (missing ones ``None``) and its module name."""
    out = {key: row.get(key) for key in ROW_KEYS}
    for key in ("value", "anchor_value", "ratio"):
        value = out[key]
        if isinstance(value, float) and not math.isfinite(value):
            out[key] = None  # JSON has no NaN / inf
    out["module"] = module
    return out


def run_module(module: str, quick: bool) -> tuple[list[dict[str, Any]], bool]:
    """The rows of one module and whether it ran without an exception."""
    started = time.perf_counter()
    print(f"-- {module} ({'quick' if quick else 'full'})", flush=True)
    try:
        mod = importlib.import_module(module)
        rows = mod.run(quick)
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise TypeError(f"{module}.run() must return a list of dicts, got {type(rows)!r}")
    except Exception as exc:  # a broken benchmark must not hide the others
        traceback.print_exc()
        return [failed_row(module, exc)], False
    print(f"   {len(rows)} rows in {time.perf_counter() - started:.1f} s", flush=True)
    return [normalise(module, row) for row in rows], True


def _fmt(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "NO"
    if isinstance(value, float):
        if value == 0 or 0.01 <= abs(value) < 1e6:
            return f"{value:.3g}" if abs(value) < 100 else f"{value:.1f}"
        return f"{value:.3e}"
    return str(value)


MAX_CELL = 64  # printed table only; the JSON keeps every text whole


def _clip(text: str) -> str:
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"


def format_table(rows: Sequence[dict[str, Any]]) -> str:
    headers = ("metric", "value", "unit", "anchor", "anchor value", "ratio", "goal", "pass")
    keys = ("metric", "value", "unit", "anchor", "anchor_value", "ratio", "goal", "pass")
    cells = [[_clip(_fmt(row.get(k))) for k in keys] for row in rows]
    widths = [max([len(h)] + [len(c[i]) for c in cells]) for i, h in enumerate(headers)]
    numeric = {1, 4, 5}

    def line(values: Sequence[str]) -> str:
        return "  ".join(
            v.rjust(w) if i in numeric else v.ljust(w)
            for i, (v, w) in enumerate(zip(values, widths, strict=True))
        ).rstrip()

    out = [line(headers), line(["-" * w for w in widths])]
    out += [line(c) for c in cells]
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.split("\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", dest="quick", action="store_true", default=True,
                      help="short runs (default; the whole suite in well under 5 minutes)")
    mode.add_argument("--full", dest="quick", action="store_false",
                      help="longer runs for steadier medians and tails")
    parser.add_argument("--only", metavar="NAME", help="run one module: 'codec' or 'bench_codec'")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT,
                        help=f"where to write the JSON rows (default {DEFAULT_OUTPUT})")
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 when any row misses its goal")
    args = parser.parse_args(argv)

    modules = discover(args.only)
    if not modules:
        print(f"no benchmark module matches {args.only!r}", file=sys.stderr)
        return 2
    print(f"python {platform.python_version()} on {platform.machine()}, "
          f"{len(modules)} module(s), {'quick' if args.quick else 'full'} mode", flush=True)
    rows: list[dict[str, Any]] = []
    all_ran = True
    started = time.perf_counter()
    for module in modules:
        module_rows, ran = run_module(module, args.quick)
        rows += module_rows
        all_ran &= ran

    print()
    print(format_table(rows))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(rows, indent=2) + "\n")
    missed = [r["metric"] for r in rows if r["pass"] is False]
    print(f"\n{len(rows)} rows in {time.perf_counter() - started:.0f} s written to {args.output}; "
          f"{len(missed)} missed their goal" + (f": {', '.join(missed)}" if missed else ""))
    if not all_ran:
        return 1
    return 1 if (args.strict and missed) else 0


if __name__ == "__main__":
    sys.exit(main())
