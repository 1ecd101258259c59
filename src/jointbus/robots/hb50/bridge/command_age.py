"""The ages of the commands the hb50 bridge applied, as its diagnostics count them.

Where it sits: :mod:`jointbus.robots.hb50.bridge`, below :mod:`.node` (whose
:meth:`~.node.BridgeNode.event_counts` names its counts with :func:`age_kind`) and read by what
watches a running bridge from another process (:mod:`jointbus.soak`, ``bench/bench_layout.py``)
off its ``/hb50/diagnostics``.

Why counts: a command's age is the number of bridge cycles between the frame it answers (the
control node stamps each command with that frame's stamp) and the cycle that applies it. The
status line's ``command age p99`` is each second's; the bridge also counts every applied command
by age since its start, so two diagnostics messages give the distribution over any span between
them exactly — the p99 over a 20 s bench window or a 30 min soak — where the worst of many 1 s
windows' p99 only bounds it from above.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from jointbus.runtime.diagnostics import LoopDiagnostics

__all__ = ["COMMAND_AGE_BINS", "age_kind", "age_quantile", "ages_between", "command_age_counts"]

#: The applied commands are counted by age since the start, 0 … this − 1 cycles one by one and
#: older ones together: ``command age <n> cycles`` / ``command age <N>+ cycles``.
COMMAND_AGE_BINS: Final = 8


def age_kind(age: int) -> str:
    """The event kind of the count of commands ``age`` cycles old (the last bin: that many or
    more)."""
    plus = "+" if age >= COMMAND_AGE_BINS else ""
    return f"command age {min(age, COMMAND_AGE_BINS)}{plus} cycles"


def command_age_counts(diagnostics: LoopDiagnostics) -> list[int]:
    """The applied commands since the bridge started, by age in cycles (index = age, the last
    entry the oldest bin), from its diagnostics' event counts; empty when it sends none."""
    counts: dict[int, int] = {}
    for event in diagnostics.events:
        words = event.kind.split()
        if len(words) == 4 and words[:2] == ["command", "age"] and words[3] == "cycles":
            counts[int(words[2].rstrip("+"))] = int(event.count)
    return [counts.get(age, 0) for age in range(len(counts))]


def ages_between(first: LoopDiagnostics, last: LoopDiagnostics) -> list[int]:
    """The commands applied between two diagnostics of one bridge, by age (see
    :func:`command_age_counts`); empty when either has no counts."""
    before, after = command_age_counts(first), command_age_counts(last)
    if not before or len(before) != len(after):
        return []
    return [b - a for a, b in zip(before, after, strict=True)]


def age_quantile(counts: Sequence[int], percent: int = 99) -> int | None:
    """The ``percent`` percentile (0–100) of the ages counted in ``counts`` (index = age in
    cycles), by the rule of the bridge's own 1 s windows: the age at index ⌊percent·n / 100⌋ of
    the n ages sorted (the last one for 100), in integers so that it is that rule exactly.
    ``None`` when nothing was counted. In the last bin the age is at least that many cycles."""
    total = sum(counts)
    if total <= 0:
        return None
    rank = min(total - 1, percent * total // 100)
    seen = 0
    for age, count in enumerate(counts):
        seen += count
        if seen > rank:
            return age
    return len(counts) - 1  # pragma: no cover - the counts add up to total
