"""LoopStats: percentiles, ring window, counters and fractions on known samples."""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.runtime.diagnostics import LoopDiagnostics
from jointbus.runtime.loop_stats import LoopRun, LoopStats, LoopStatsSnapshot
from support.fresh import last_line_in_fresh_interpreter

PERIOD_NS = 2_000_000


def feed(stats: LoopStats, lateness_ns: list[int], *, body_ns: int = 0, spin_ns: int = 0) -> None:
    """Record cycles on a perfect 2 ms grid with the given lateness values."""
    for k, late in enumerate(lateness_ns):
        if k:
            stats.record_body(body_ns)
        stats.record_cycle(k * PERIOD_NS + late, late, 0, spin_ns)


def test_empty_snapshot_is_nan_and_zero() -> None:
    snap = LoopStats(0.002).snapshot()
    assert snap.cycles == 0 and snap.window == 0
    assert math.isnan(snap.lateness_p50_s) and math.isnan(snap.period_max_s)
    assert math.isnan(snap.cpu_fraction)


def test_lateness_percentiles_on_known_samples() -> None:
    stats = LoopStats(0.002, capacity=1000)
    # Lateness 1..100 µs in shuffled order: p50 = 50.5 µs, p99 = 99.01 µs (linear), max 100 µs.
    values = [k * 1000 for k in range(1, 101)]
    rng = np.random.default_rng(3)
    feed(stats, [int(v) for v in rng.permutation(values)])
    snap = stats.snapshot()
    assert snap.cycles == 100 and snap.window == 100
    assert snap.lateness_p50_s == pytest.approx(50.5e-6)
    assert snap.lateness_p99_s == pytest.approx(99.01e-6)
    assert snap.lateness_max_s == pytest.approx(100e-6)


def test_period_is_time_between_wakeups() -> None:
    stats = LoopStats(0.002)
    wakes = [0, 2_000_000, 4_000_000, 9_000_000, 11_000_000]
    for w in wakes:
        stats.record_cycle(w, 0, 0, 0)
    snap = stats.snapshot()
    # Periods 2, 2, 5, 2 ms.
    assert snap.period_p50_s == pytest.approx(0.002)
    assert snap.period_max_s == pytest.approx(0.005)
    assert snap.period_target_s == 0.002


def test_window_covers_only_the_last_capacity_cycles() -> None:
    stats = LoopStats(0.002, capacity=10)
    feed(stats, [500_000] * 15 + [1000] * 10)  # the large early lateness falls out of the window
    snap = stats.snapshot()
    assert snap.cycles == 25
    assert snap.window == 10
    assert snap.lateness_max_s == pytest.approx(1e-6)


def test_overruns_and_skipped_are_cumulative() -> None:
    stats = LoopStats(0.002, capacity=4)
    stats.record_cycle(0, 0, 0, 0)
    stats.record_cycle(7_000_000, 3_000_000, 2, 0)
    stats.record_cycle(8_000_000, 0, 0, 0)
    stats.record_cycle(20_000_000, 10_000_000, 5, 0)
    for k in range(10):  # push the overruns out of the window: counters must remain
        stats.record_cycle(22_000_000 + k * PERIOD_NS, 0, 0, 0)
    snap = stats.snapshot()
    assert snap.overruns == 2
    assert snap.skipped == 7


def test_cpu_and_spin_fraction() -> None:
    stats = LoopStats(0.002)
    feed(stats, [0] * 11, body_ns=500_000, spin_ns=200_000)
    snap = stats.snapshot()
    assert snap.cpu_fraction == pytest.approx(0.25)
    assert snap.spin_fraction == pytest.approx(0.1)


def test_gc_count_and_reset() -> None:
    stats = LoopStats(0.002)
    feed(stats, [10, 20, 30])
    stats.record_gc()
    stats.record_gc()
    assert stats.snapshot().gc_collections == 2
    stats.reset()
    snap = stats.snapshot()
    assert (snap.cycles, snap.gc_collections, snap.overruns) == (0, 0, 0)
    # After a reset the first wake-up has no predecessor: no bogus period across the gap.
    stats.record_cycle(10**12, 0, 0, 0)
    assert math.isnan(stats.snapshot().period_max_s)


def test_as_dict_is_flat_and_complete() -> None:
    stats = LoopStats(0.002)
    feed(stats, [1000, 2000, 3000])
    d = stats.snapshot().as_dict()
    assert set(d) == set(LoopStatsSnapshot.__dataclass_fields__)
    assert all(isinstance(v, int | float) for v in d.values())
    assert d["cycles"] == 3
    assert d["lateness_max_s"] == pytest.approx(3e-6)


def test_snapshot_from_another_thread_while_recording() -> None:
    stats = LoopStats(0.002, capacity=64)
    done = threading.Event()
    snaps: list[LoopStatsSnapshot] = []

    def reader() -> None:
        while not done.is_set():
            snaps.append(stats.snapshot())

    t = threading.Thread(target=reader)
    t.start()
    try:
        feed(stats, [1000] * 5000)
    finally:
        done.set()
        t.join()
    for s in snaps:
        assert s.window <= 64
        assert math.isnan(s.lateness_max_s) or s.lateness_max_s == pytest.approx(1e-6)
    assert stats.snapshot().cycles == 5000


@pytest.mark.parametrize(("period", "capacity"), [(0.0, 4), (-1.0, 4), (math.nan, 4), (0.002, 0)])
def test_bad_construction_is_rejected(period: float, capacity: int) -> None:
    with pytest.raises(ValueError, match="LoopStats"):
        LoopStats(period, capacity)


@given(
    st.lists(st.integers(min_value=0, max_value=10**9), min_size=1, max_size=300),
    st.integers(min_value=1, max_value=128),
)
def test_window_statistics_match_the_last_samples(samples: list[int], capacity: int) -> None:
    stats = LoopStats(0.002, capacity=capacity)
    for k, late in enumerate(samples):
        stats.record_cycle(k * 10**10 + late, late, 0, 0)
    snap = stats.snapshot()
    window = samples[-capacity:]
    assert snap.window == len(window)
    assert snap.lateness_max_s == pytest.approx(max(window) / 1e9)
    assert snap.lateness_p50_s == pytest.approx(float(np.median(window)) / 1e9)
    assert snap.lateness_p50_s <= snap.lateness_p99_s <= snap.lateness_max_s


# -- what happened, not what a typical cycle looked like (issue 11, item 11) -----------------


def _stalled_run(stats: LoopStats, cycles: int, stall_every: int, skipped_per_stall: int) -> None:
    """A 500 Hz grid where every ``stall_every``-th cycle woke ``skipped_per_stall`` slots late
    (the loop dropped those slots); other cycles woke 10 µs late."""
    slot = 0
    for k in range(cycles):
        skipped = skipped_per_stall if k and k % stall_every == 0 else 0
        due = slot + 1 if k else 0  # the slot after the previous cycle's
        slot = due + skipped
        late = skipped * PERIOD_NS + 10_000  # lateness of the first missed slot
        if k:
            stats.record_body(100_000)
        stats.record_cycle(due * PERIOD_NS + late, late, skipped, 0)


def test_achieved_rate_and_window_skips_count_the_dropped_slots() -> None:
    """A loop that drops one slot in six publishes 5/6 of its rate. The median period stays
    2 ms, which is why ``loop=500Hz`` used to be reported while 17 % of the cycles were missing."""
    stats = LoopStats(0.002, capacity=10_000)
    _stalled_run(stats, 1000, stall_every=5, skipped_per_stall=1)
    snap = stats.snapshot()
    assert snap.period_p50_s == pytest.approx(0.002)  # typical period: unchanged
    slots = 999 + snap.window_skipped  # intervals plus dropped slots
    assert snap.window_skipped == 199
    assert snap.achieved_rate_hz == pytest.approx(500.0 * 999 / slots, rel=1e-3)  # ≈ 417 Hz
    assert snap.skipped_fraction == pytest.approx(199 / slots)
    assert 0.16 < snap.skipped_fraction < 0.17


def test_lateness_percentiles_count_every_slot_a_stall_dropped() -> None:
    """One stall of 20 slots in 1000 cycles: 2 % of the slots were served ≥ 2 ms late, so p99
    must show it — per executed cycle it was only 0.1 % and p99 said 10 µs."""
    stats = LoopStats(0.002, capacity=10_000)
    _stalled_run(stats, 1000, stall_every=500, skipped_per_stall=20)  # one stall, at k = 500
    snap = stats.snapshot()
    assert snap.window == 1000 + 20  # one lateness sample per grid slot, dropped ones included
    assert snap.lateness_max_s == pytest.approx((20 * PERIOD_NS + 10_000) / 1e9)
    assert snap.lateness_p99_s > 0.002


def test_the_rate_figures_cover_the_same_slots_as_the_window_not_more_time() -> None:
    """A new user's trial (2026-12-07): ``| bridge loop, last 10s: loop=215Hz skipped=57.0%``
    while the bridge's 1 s reports of those 10 s averaged 382 Hz. The rate figures came from the
    newest 5 000 cycles *run*, which a loop dropping slots spreads over far more than the 5 000
    slots (10 s) the window names. A run at full rate, then one slot dropped in two: the window
    of 5 000 slots holds 2 500 cycles and 2 500 dropped slots."""
    stats = LoopStats(0.002, capacity=5000)
    _stalled_run(stats, 8000, stall_every=8001, skipped_per_stall=0)  # 16 s at 500 Hz
    snap = stats.snapshot()
    assert snap.achieved_rate_hz == pytest.approx(500.0) and snap.window_skipped == 0
    base = 8000 * PERIOD_NS
    for k in range(3000):  # then 12 s of every other slot
        stats.record_cycle(base + (2 * k + 1) * PERIOD_NS, PERIOD_NS, 1, 0)
    snap = stats.snapshot()
    assert snap.window == 5000  # slots, whose span the status line names: 10 s
    assert snap.window_skipped == 2500, snap
    assert snap.skipped_fraction == pytest.approx(0.5)
    assert snap.achieved_rate_hz == pytest.approx(250.0)
    # a single stall longer than the window still gives a figure (its own interval)
    stats.record_cycle(base + 6001 * PERIOD_NS + 6000 * PERIOD_NS, 6000 * PERIOD_NS, 6000, 0)
    snap = stats.snapshot()
    assert snap.window_skipped == 6000 and snap.achieved_rate_hz == pytest.approx(1 / 12.004)


def test_window_skips_leave_the_window_with_their_cycles() -> None:
    stats = LoopStats(0.002, capacity=50)
    _stalled_run(stats, 10, stall_every=3, skipped_per_stall=2)
    for k in range(60):  # a clean second run of the loop pushes the stalls out of the window
        stats.record_cycle(10**9 + k * PERIOD_NS, 0, 0, 0)
    snap = stats.snapshot()
    assert snap.window_skipped == 0 and snap.skipped == 6
    assert snap.achieved_rate_hz == pytest.approx(500.0)


@given(
    st.lists(
        st.tuples(st.integers(0, 50_000_000), st.integers(0, 30)), min_size=1, max_size=200
    )
)
def test_late_slots_counts_every_slot_served_more_than_half_a_period_late(
    cycles: list[tuple[int, int]],
) -> None:
    """A soak judges its p99 over the whole run from this count, so it must be exact: a cycle
    ``late`` after its deadline that dropped ``skipped`` slots served slots late by ``late``,
    ``late - period``, …; the ones over half a period count, however few fit in the window."""
    stats = LoopStats(0.002, capacity=16)
    wake = 0
    for late, skipped in cycles:
        wake += PERIOD_NS * (skipped + 1)
        stats.record_cycle(wake + late, late, skipped, 0)
    expected = sum(
        1
        for late, skipped in cycles
        for k in range(skipped + 1)
        if late - k * PERIOD_NS > PERIOD_NS // 2
    )
    assert stats.snapshot().late_slots == expected


def test_late_slots_is_a_count_since_start_that_reset_clears() -> None:
    stats = LoopStats(0.002, capacity=4)
    feed(stats, [1_000_001, 999_999, 1_000_000, 3_000_000] + [0] * 10)
    assert stats.snapshot().late_slots == 2  # 1.000001 and 3 ms; exactly half a period is not late
    stats.reset()
    assert stats.snapshot().late_slots == 0


def test_a_run_that_kept_its_rate_until_its_last_seconds_is_said_as_such() -> None:
    """A new-user trial's demo ran ≈ 90 % of its time at 500 Hz with no cycle skipped and ended
    in a stall; its last line said "429 Hz achieved (14.3 % of cycles skipped)" — the window's
    figures. :class:`LoopRun` says the run's shares from the counts since start, the window's
    beside them, each named."""
    stats = LoopStats(0.002, capacity=1000)
    slot = 0
    for k in range(21_000):  # 40 s on time, then 2 s with one slot in six lost
        skipped = 1 if k >= 20_000 and k % 5 == 4 else 0
        slot += skipped
        late = skipped * PERIOD_NS + 10_000
        stats.record_body(100_000)
        stats.record_cycle(slot * PERIOD_NS + late, late, skipped, 0)
        slot += 1
    snap = stats.snapshot()
    run = LoopRun.of(snap)
    assert run.cycles == 21_000 and run.skipped == 200 and run.due == 21_200
    assert run.run_skipped_fraction == pytest.approx(200 / 21_200)  # 0.94 %, not the window's 17 %
    assert run.skipped_fraction == snap.skipped_fraction and run.skipped_fraction > 0.16
    assert run.window_s == pytest.approx(1000 * 0.002)
    text = run.describe()
    assert text.startswith("over the run 21000 of 21200 due cycles (0.94 % skipped, ")
    assert snap.achieved_rate_hz == pytest.approx(500 * 5 / 6, rel=0.01)
    assert f"last 2.0 s: {snap.achieved_rate_hz:.0f} Hz achieved, 16." in text, text
    assert f"lateness p99 {snap.lateness_p99_s * 1e6:.0f} us" in text


@given(st.integers(0, 10**9), st.integers(0, 10**6), st.integers(0, 10**6), st.integers(1, 8192))
def test_a_loop_run_reads_the_same_from_a_snapshot_and_from_its_diagnostics(
    cycles: int, skipped: int, late: int, window: int
) -> None:
    """The launcher of a process layout has only the bridge's ``LoopDiagnostics``; the
    one-process stack the snapshot itself: the same run either way, its shares exact."""
    snap = LoopStatsSnapshot(
        cycles=cycles, window=window, period_target_s=0.002, period_p50_s=0.002,
        period_p99_s=0.002, period_max_s=0.002, lateness_p50_s=1e-5, lateness_p99_s=2e-5,
        lateness_max_s=3e-5, overruns=0, skipped=skipped, cpu_fraction=0.1, spin_fraction=0.0,
        gc_collections=0, achieved_rate_hz=499.0, window_skipped=0, skipped_fraction=0.001,
        late_slots=late,
    )
    diagnostics = LoopDiagnostics(
        node="bridge_node", loop="bridge", rate_hz=500.0, **snap.as_dict()
    )
    run = LoopRun.of(snap)
    assert LoopRun.of(diagnostics) == run
    assert run.due == cycles + skipped
    if run.due:
        assert run.run_skipped_fraction == skipped / (cycles + skipped)
        assert run.run_late_fraction == late / (cycles + skipped)
        assert f"over the run {cycles} of {cycles + skipped} due cycles" in run.describe()
    else:
        assert math.isnan(run.run_skipped_fraction) and "(? % skipped" in run.describe()


def test_a_loop_run_read_from_an_older_report_says_how_old_its_counts_are() -> None:
    """A new user's trial (2026-12-05): the demo's last line in the process layout read "over the
    run 19930 of 19930 due cycles" after 40.0 s (20 000 slots) — the bridge's 1 Hz report it
    counted from had come 0.17 s before the stop. The line now says its counts' age; figures
    read in the loop's own process (age 0) need no note."""
    snap = LoopStatsSnapshot(
        cycles=19_930, window=500, period_target_s=0.002, period_p50_s=0.002,
        period_p99_s=0.002, period_max_s=0.002, lateness_p50_s=1e-5, lateness_p99_s=2e-5,
        lateness_max_s=3e-5, overruns=0, skipped=0, cpu_fraction=0.1, spin_fraction=0.0,
        gc_collections=0, achieved_rate_hz=500.0, window_skipped=0, skipped_fraction=0.0,
        late_slots=0,
    )
    diagnostics = LoopDiagnostics(
        node="bridge_node", loop="bridge", rate_hz=500.0, **snap.as_dict()
    )
    aged = LoopRun.of(diagnostics, age_s=0.17).describe()
    assert aged.startswith("over the run 19930 of 19930 due cycles (0.00 % skipped, ")
    assert "late; counted to its report 0.2 s before this line); last 1.0 s:" in aged, aged
    assert "counted to its report" not in LoopRun.of(snap).describe()
    assert "counted to its report" not in LoopRun.of(diagnostics, age_s=0.01).describe()


def test_first_snapshot_imports_nothing() -> None:
    """A node's first report (a snapshot, on a thread of the loop's process, about a second after
    the loop starts) must not import a module: ``np.percentile`` imports ``numpy.ma`` on its first
    call, 10 ms in which the bridge's loop was held off and dropped cycles. Run in a fresh
    interpreter, where nothing else has called it yet."""
    code = (
        "import sys\n"
        "from jointbus.runtime.loop_stats import LoopStats\n"
        "stats = LoopStats(0.002)\n"
        "for k in range(50):\n"
        "    stats.record_cycle(k * 2_000_000 + 1_000, 1_000, 0, 0)\n"
        "before = set(sys.modules)\n"
        "snap = stats.snapshot()\n"
        "assert snap.lateness_p99_s > 0, snap\n"
        "print(sorted(set(sys.modules) - before))\n"
    )
    imported = last_line_in_fresh_interpreter(code)
    assert imported == "[]", f"the first snapshot imported {imported}"
