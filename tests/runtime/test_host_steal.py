"""The host's steal time: read from ``/proc/stat`` and measured over a report's window."""

from __future__ import annotations

import os

from hypothesis import given
from hypothesis import strategies as st

from jointbus.runtime.host_steal import StealSamples, StealSpan, parse_steal_s, read_steal_s

_STAT = b"""cpu  4432241 0 316091 4870303 7834 0 24099 36879 0 0
cpu0 2235520 0 140997 2422978 628 0 11272 18462 0 0
cpu1 2196720 0 175093 2447325 7206 0 12827 18417 0 0
intr 1 2 3
ctxt 99
"""


def test_steal_is_the_eighth_value_of_each_cpu_line_in_seconds() -> None:
    assert parse_steal_s(_STAT, user_hz=100) == (184.62, 184.17)
    assert parse_steal_s(_STAT, user_hz=1000) == (18.462, 18.417)
    # a kernel without the steal column, and a garbled one: nothing to report, not a guess
    assert parse_steal_s(b"cpu  1 2 3 4\ncpu0 1 2 3 4\n") == ()
    assert parse_steal_s(b"cpu0 1 2 3 4 5 6 7 x\n") == ()


def test_this_machine_reads_one_growing_figure_per_cpu() -> None:
    first = read_steal_s()
    assert len(first) == os.cpu_count()
    again = read_steal_s()
    assert all(b >= a >= 0.0 for a, b in zip(first, again, strict=True))


def _scripted(readings: list[tuple[float, ...]]) -> StealSamples:
    it = iter(readings)
    return StealSamples(read=lambda: next(it))


def test_a_window_reads_the_samples_nearest_its_ends() -> None:
    samples = _scripted([(0.0, 0.0), (0.01, 0.0), (0.05, 0.02), (0.06, 0.02), (0.5, 0.5)])
    for at_ms in (0, 100, 200, 300, 400):
        samples.sample(at_ms * 1_000_000)
    span = samples.over(100_000_000, 350_000_000)  # from the 100 ms sample to the 300 ms one
    assert span is not None
    assert span.span_s == 0.2
    assert [round(s, 3) for s in span.per_cpu_s] == [0.05, 0.02]
    text = span.describe()
    assert text == (
        "the VM's host held this machine's CPUs for 70 ms of 0.2 s (cpu0 50 ms, cpu1 20 ms: "
        "steal time, when nothing here could run)"
    )
    # a window older than every sample starts at the oldest kept; one with a single sample
    # before its end has no span to tell
    assert samples.over(-5, 0) is None
    assert samples.over(-5, 100_000_000) == StealSpan((0.01, 0.0), 0.1)


def test_no_steal_says_nothing_and_an_unreadable_host_keeps_no_sample() -> None:
    assert StealSpan((0.0, 0.0), 1.0).describe() == ""
    nothing = StealSamples(read=lambda: ())
    nothing.sample(0)
    nothing.sample(1_000_000_000)
    assert nothing.over(0, 1_000_000_000) is None


@given(
    st.lists(
        st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=2, max_size=30
    ),
    st.integers(0, 40),
    st.integers(0, 40),
)
def test_a_span_is_the_difference_of_two_kept_readings(
    steps: list[tuple[int, int]], start: int, length: int
) -> None:
    """Whatever the window, the steal it reads is what the counters grew between two samples
    (never negative, never more than they grew over every sample kept)."""
    readings: list[tuple[float, ...]] = []
    total = [0, 0]
    for a, b in steps:
        total = [total[0] + a, total[1] + b]
        readings.append((total[0] / 100, total[1] / 100))
    samples = _scripted(list(readings))
    for k in range(len(readings)):
        samples.sample(k * 100)
    span = samples.over(start * 100, (start + length) * 100)
    if span is None:
        return
    first = min(start, len(readings) - 1)
    last = min(start + length, len(readings) - 1)
    assert span.span_s == (last - first) * 100 / 1e9
    expected = [readings[last][i] - readings[first][i] for i in range(2)]
    assert [round(s, 9) for s in span.per_cpu_s] == [round(e, 9) for e in expected]
