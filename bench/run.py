"""Run every benchmark, print one table and write ``bench/results/latest.json``.

Usage: ``python -m bench.run [--quick | --full] [--only NAME] [--output PATH] [--strict]
[--doc PATH]`` (``make bench BENCH_ARGS=--full``). Quick mode is the default and stays well under
five minutes. ``python -m bench.run --doc docs/PERFORMANCE.md --from-json
bench/results/latest.json`` rewrites the document's generated blocks from an earlier run without
measuring again.

Besides the rows, every run writes ``<output>.machine.json`` (for the default output:
``bench/results/latest.machine.json``): when it ran, the machine (CPUs, CPU model, kernel, load
average before and after), Python and library versions, whether jointbus's compiled CDR core
(``_cdr_accel``) was built (``codec_compiled_core``) — numbers mean little without them.
``--doc PATH`` then rewrites the blocks of PATH between ``<!-- bench:NAME:start -->`` and
``<!-- bench:NAME:end -->`` markers: ``goals`` (every row with a goal), ``machine``, ``all``
(every row) and ``module:bench_x`` (the rows of one module), so the document shows exactly what
the run measured; it also copies the figures ``bench/results/*.png`` (kept out of git) to the
``images/`` folder beside the document, where the document embeds them.

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
import datetime
import importlib
import importlib.metadata
import json
import math
import os
import platform
import re
import shutil
import sys
import time
import traceback
from collections.abc import Callable, Sequence
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


LIBRARIES = (
    "eclipse-zenoh", "cyclonedds", "rosbags", "msgspec", "mcap", "mcap-ros2-support", "numpy",
    "mujoco", "ruckig", "python-can", "matplotlib", "iceoryx2",
)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _load() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def _codec_compiled_core() -> bool | None:
    """Whether jointbus's compiled CDR core (``_cdr_accel``) is built; None if not importable."""
    try:
        from jointbus.codec import accel
    except ImportError:
        return None
    return bool(accel.AVAILABLE)


def machine_info() -> dict[str, Any]:
    """Where and when the numbers were measured (see the module docstring)."""
    versions: dict[str, str | None] = {}
    for name in LIBRARIES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return {
        "started_utc": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "nproc": os.cpu_count(),
        "cpu_model": _cpu_model(),
        "kernel": f"{platform.system()} {platform.release()}",
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "libraries": versions,
        "codec_compiled_core": _codec_compiled_core(),
        "load_average_before": _load(),
    }


def _md(value: object) -> str:
    return _fmt(value).replace("|", "\\|")


def goals_markdown(rows: Sequence[dict[str, Any]], *, only_goals: bool = True) -> str:
    """A Markdown table of the rows (only those with a goal unless ``only_goals`` is false)."""
    lines = [
        "| metric | goal | measured | anchor | anchor value | ratio | pass |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        if only_goals and row.get("goal") is None:
            continue
        unit = f" {row['unit']}" if row.get("unit") else ""
        measured = _md(row.get("value")) + (unit if row.get("value") is not None else "")
        anchor_value = row.get("anchor_value")
        anchor_text = _md(anchor_value) + (unit if anchor_value is not None else "")
        lines.append(
            f"| {_md(row['metric'])} | {_md(row.get('goal'))} | {measured} | "
            f"{_md(row.get('anchor'))} | {anchor_text} | {_md(row.get('ratio'))} | "
            f"{_md(row.get('pass'))} |"
        )
    return "\n".join(lines)


def machine_markdown(info: dict[str, Any]) -> str:
    libs = ", ".join(f"{k} {v}" for k, v in info.get("libraries", {}).items() if v)
    load = info.get("load_average_before") or []
    after = info.get("load_average_after") or []
    return "\n".join([
        f"- run: {info.get('started_utc')} (UTC), {info.get('mode')} mode, "
        f"{info.get('duration_s')} s, {info.get('rows')} rows",
        f"- machine: {info.get('nproc')} CPUs, {info.get('cpu_model')}, {info.get('kernel')}",
        f"- load average (1, 5, 15 min) before: {load}, after: {after}",
        f"- {info.get('python')}; {libs}",
        f"- jointbus CDR core: {_core_text(info.get('codec_compiled_core'))}",
    ])


def _core_text(compiled: object) -> str:
    if compiled is None:
        return "unknown"
    return "compiled (_cdr_accel)" if compiled else "pure-Python fallback"


def _replacement(body: str) -> Callable[[re.Match[str]], str]:
    def replace(match: re.Match[str]) -> str:
        return f"{match.group(1)}{body}\n{match.group(2)}"

    return replace


def update_doc(path: Path, rows: Sequence[dict[str, Any]], info: dict[str, Any]) -> None:
    """Rewrite the generated blocks of ``path`` (module docstring); other text is kept."""
    text = path.read_text()
    blocks = {
        "goals": goals_markdown(rows),
        "all": goals_markdown(rows, only_goals=False),
        "machine": machine_markdown(info),
    }
    for module in sorted({str(row.get("module", "")) for row in rows}):
        name = module.removeprefix("bench.")
        blocks[f"module:{name}"] = goals_markdown(
            [row for row in rows if row.get("module") == module], only_goals=False
        )
    for name, body in blocks.items():
        pattern = re.compile(
            rf"(<!-- bench:{name}:start -->\n).*?(<!-- bench:{name}:end -->)", re.DOTALL
        )
        text = pattern.sub(_replacement(body), text)
    path.write_text(text)
    images = path.parent / "images"
    for figure in sorted((BENCH_DIR / "results").glob("*.png")):
        images.mkdir(exist_ok=True)
        shutil.copyfile(figure, images / figure.name)


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
    parser.add_argument("--doc", type=Path, metavar="PATH",
                        help="rewrite the generated blocks of this Markdown file (goal table, "
                             "machine, all rows)")
    parser.add_argument("--from-json", type=Path, metavar="PATH",
                        help="with --doc: take the rows of an earlier run instead of measuring")
    args = parser.parse_args(argv)

    if args.from_json is not None:
        if args.doc is None:
            parser.error("--from-json needs --doc")
        rows_in = json.loads(args.from_json.read_text())
        machine_path = args.from_json.with_suffix(".machine.json")
        info_in = json.loads(machine_path.read_text()) if machine_path.exists() else {}
        update_doc(args.doc, rows_in, info_in)
        print(f"{args.doc} updated from {args.from_json}")
        return 0

    modules = discover(args.only)
    if not modules:
        print(f"no benchmark module matches {args.only!r}", file=sys.stderr)
        return 2
    info = machine_info()
    print(f"python {platform.python_version()} on {platform.machine()}, {info['nproc']} CPUs "
          f"({info['cpu_model']}), load {info['load_average_before']}, "
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
    duration = time.perf_counter() - started
    info.update(
        mode="quick" if args.quick else "full",
        duration_s=round(duration),
        rows=len(rows),
        load_average_after=_load(),
        modules=modules,
    )
    args.output.with_suffix(".machine.json").write_text(json.dumps(info, indent=2) + "\n")
    if args.doc is not None:
        update_doc(args.doc, rows, info)
        print(f"{args.doc} updated")
    missed = [r["metric"] for r in rows if r["pass"] is False]
    print(f"\n{len(rows)} rows in {duration:.0f} s written to {args.output}; "
          f"{len(missed)} missed their goal" + (f": {', '.join(missed)}" if missed else ""))
    if not all_ran:
        return 1
    return 1 if (args.strict and missed) else 0


if __name__ == "__main__":
    sys.exit(main())
