"""The bridge's applied-command ages as its diagnostics count them: kinds, parsing, spans and
the p99 a soak and ``bench_layout`` judge by."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from jointbus.robots.hb50.bridge.command_age import (
    COMMAND_AGE_BINS,
    age_kind,
    age_quantile,
    ages_between,
    command_age_counts,
)
from jointbus.runtime import EventCount, LoopDiagnostics

BINS = COMMAND_AGE_BINS + 1


def _diagnostics(counts: list[int]) -> LoopDiagnostics:
    ages = (EventCount(age_kind(age), count) for age, count in enumerate(counts))
    events = (EventCount("limit position", 4), *ages)  # the array node's own kinds beside
    return LoopDiagnostics(node="bridge_node", loop="bridge", events=events)


def test_the_counts_are_read_back_from_the_diagnostics_and_the_last_bin_holds_the_older() -> None:
    assert [age_kind(age) for age in (0, 7, 8, 25)] == [
        "command age 0 cycles",
        "command age 7 cycles",
        "command age 8+ cycles",
        "command age 8+ cycles",
    ]
    counts = [0, 10, 20, 30, 40, 50, 60, 70, 80]
    assert command_age_counts(_diagnostics(counts)) == counts
    assert command_age_counts(LoopDiagnostics(node="bridge_node", loop="bridge")) == []


@given(st.lists(st.integers(0, 10**6), min_size=BINS, max_size=BINS),
       st.lists(st.integers(0, 10**6), min_size=BINS, max_size=BINS))
def test_the_commands_between_two_diagnostics_are_their_difference(
    before: list[int], added: list[int]
) -> None:
    after = [b + a for b, a in zip(before, added, strict=True)]
    assert ages_between(_diagnostics(before), _diagnostics(after)) == added
    none = LoopDiagnostics(node="bridge_node", loop="bridge")
    assert ages_between(none, _diagnostics(after)) == []  # a bridge that does not count


@given(st.lists(st.integers(0, COMMAND_AGE_BINS), min_size=0, max_size=400),
       st.sampled_from([0, 50, 90, 99, 100]))
def test_the_percentile_of_the_counts_is_the_bridges_rule_on_the_ages_themselves(
    ages: list[int], percent: int
) -> None:
    """The bridge's 1 s windows take the age at index ⌊99·n / 100⌋ of the n ages sorted; the
    counts must give the same age, so that a run's p99 and its windows' agree on one rule."""
    counts = [ages.count(age) for age in range(BINS)]
    if not ages:
        assert age_quantile(counts, percent) is None
        return
    expected = sorted(ages)[min(len(ages) - 1, percent * len(ages) // 100)]
    assert age_quantile(counts, percent) == expected


def test_one_old_command_in_two_hundred_is_not_the_p99_two_are() -> None:
    assert age_quantile([0, 199, 0, 1]) == 1  # index 198 of 200 sorted: still 1 cycle
    assert age_quantile([0, 198, 0, 2]) == 3  # index 198: the first of the two 3 cycles old
    assert age_quantile([0, 99, 0, 1]) == 3  # of 100, index 99 is the oldest
    assert age_quantile([5, 0, 0], 0) == 0 and age_quantile([0, 0, 0]) is None
