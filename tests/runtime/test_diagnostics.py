"""LoopDiagnostics (rosbags-identical bytes, validation) and the rate-limited status reporter."""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.bus import RELIABLE, Bus, DeadlineMissedEvent, MalformedPayloadEvent, Publisher
from jointbus.codec import schema_of
from jointbus.codec.msgdef import definition_text
from jointbus.messages.errors import LimitError, ValidationError
from jointbus.messages.stamp import Time
from jointbus.messages.std_msgs import Header
from jointbus.robots.hb50.messages import Level, Status
from jointbus.runtime import InputTotals, LoopDiagnostics, LoopStats, StatusReporter
from support.rosbags_oracle import rosbags_cdr, rosbags_decode
from support.runtime import NS_PER_S, FakeClock

TEXT = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"))
FLOATS = st.floats(allow_nan=False)
COUNTS = st.integers(0, 2**64 - 1)
HEADERS = st.builds(
    Header, st.builds(Time, st.integers(-(2**31), 2**31 - 1), st.integers(0, 10**9 - 1)), TEXT
)
DIAGNOSTICS = st.builds(
    LoopDiagnostics,
    header=HEADERS,
    node=TEXT,
    loop=TEXT,
    rate_hz=FLOATS,
    cycles=COUNTS,
    window=COUNTS,
    period_target_s=FLOATS,
    period_p50_s=FLOATS,
    period_p99_s=FLOATS,
    period_max_s=FLOATS,
    lateness_p50_s=FLOATS,
    lateness_p99_s=FLOATS,
    lateness_max_s=FLOATS,
    overruns=COUNTS,
    skipped=COUNTS,
    cpu_fraction=FLOATS,
    spin_fraction=FLOATS,
    gc_collections=COUNTS,
    achieved_rate_hz=FLOATS,
    window_skipped=COUNTS,
    skipped_fraction=FLOATS,
    late_slots=COUNTS,
    inputs=st.lists(st.builds(InputTotals, TEXT, COUNTS, COUNTS, COUNTS, COUNTS), max_size=4).map(
        tuple
    ),
)


@given(DIAGNOSTICS)
def test_bytes_match_rosbags_and_round_trip(msg: LoopDiagnostics) -> None:
    data = msg.to_cdr()
    assert data == rosbags_cdr(msg)
    assert LoopDiagnostics.from_cdr(data) == msg
    assert rosbags_decode(LoopDiagnostics, data) == msg


def test_definition_names_units() -> None:
    text = definition_text(schema_of(LoopDiagnostics))
    assert text.startswith("std_msgs/Header header\nstring node\nstring loop\nfloat64 rate_hz\n")
    assert "float64 lateness_p99_s\n" in text and "uint64 overruns\n" in text


def test_input_totals_are_a_typed_sequence_of_counts() -> None:
    text = definition_text(schema_of(LoopDiagnostics))
    assert "jointbus_msgs/InputTotals[] inputs\n" in text
    totals = InputTotals("/hb50/joint_command", 100, 3, 5, 2)
    back = LoopDiagnostics.from_cdr(LoopDiagnostics(node="n", inputs=[totals]).to_cdr())
    assert back.inputs == (totals,)
    with pytest.raises(LimitError, match="'refused'"):
        InputTotals("/t", 0, 0, -1, 0)
    with pytest.raises(ValidationError, match=r"inputs\[0\]"):
        LoopDiagnostics(inputs=("not totals",))  # type: ignore[arg-type]


def test_nan_means_no_sample_and_survives_the_wire() -> None:
    msg = LoopDiagnostics(node="n", loop="l")
    back = LoopDiagnostics.from_cdr(msg.to_cdr())
    assert math.isnan(back.period_p50_s) and back.cycles == 0


def test_from_snapshot_copies_every_figure() -> None:
    stats = LoopStats(0.002)
    wake = 0
    for _ in range(5):
        stats.record_body(500_000)
        stats.record_cycle(wake, 1_000, 0, 100_000)
        wake += 2_000_000
    stats.record_cycle(wake + 2_000_000, 2_000_000, 1, 0)  # an overrun skipping one slot
    snap = stats.snapshot()
    msg = LoopDiagnostics.from_snapshot("bridge", "control", 500.0, snap)
    assert (msg.node, msg.loop, msg.rate_hz) == ("bridge", "control", 500.0)
    for name, value in snap.as_dict().items():
        got = getattr(msg, name)
        assert got == value or (math.isnan(got) and math.isnan(value)), name
    assert (msg.overruns, msg.skipped, msg.cycles) == (1, 1, 6)
    assert (msg.window_skipped, msg.window) == (1, 7)  # 6 cycles ran for 7 grid slots
    assert msg.late_slots == 1  # the overrun served its slot 2 ms late, the dropped one on time
    assert msg.skipped_fraction == pytest.approx(1 / 6)  # 1 of the 6 slots after the first
    assert msg.achieved_rate_hz == pytest.approx(5 / 0.012)  # 5 intervals in 12 ms


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [
        ("rate_hz", "500", ValidationError),
        ("cpu_fraction", True, ValidationError),
        ("cycles", -1, LimitError),
        ("overruns", 2**64, LimitError),
        ("window", 1.0, ValidationError),
        ("node", None, ValidationError),
    ],
)
def test_invalid_fields_are_refused_naming_the_field(
    field: str, value: object, error: type[Exception]
) -> None:
    with pytest.raises(error) as info:
        LoopDiagnostics(**{field: value})  # type: ignore[arg-type]
    assert info.value.field == field  # type: ignore[attr-defined]


def test_ints_are_accepted_as_floats() -> None:
    msg = LoopDiagnostics(rate_hz=500)
    assert type(msg.rate_hz) is float


# ---- StatusReporter ---------------------------------------------------------------------------


@pytest.fixture
def status() -> Iterator[tuple[Publisher[Status], list[Status]]]:
    with Bus() as bus:
        got: list[Status] = []
        bus.subscribe("/hb50/status", Status, got.append, RELIABLE.with_(depth=1000), realtime=True)
        yield bus.publisher("/hb50/status", Status), got


def deadline(topic: str, total: int) -> DeadlineMissedEvent:
    return DeadlineMissedEvent(topic, "sub#1", "subscriber", 0.004, total, 1)


def test_a_burst_of_events_becomes_one_report_per_interval(
    status: tuple[Publisher[Status], list[Status]],
) -> None:
    pub, got = status
    clock = FakeClock()
    reporter = StatusReporter("bridge", pub, clock, interval_s=1.0)
    for i in range(250):  # a dead 500 Hz publisher with a 4 ms deadline, for one second
        reporter.record_event(deadline("/hb50/joint_command", i + 1))
    assert reporter.flush() == 1
    assert len(got) == 1
    assert (got[0].level, got[0].reporting_node, got[0].data) == (
        Level.WARN,
        "bridge",
        b"/hb50/joint_command",
    )
    assert "deadline of 0.004 s missed on /hb50/joint_command" in got[0].status
    assert "[250 times" in got[0].status
    reporter.record_event(deadline("/hb50/joint_command", 251))
    clock.now += NS_PER_S // 2
    assert reporter.flush() == 0  # same kind within the interval: held back
    clock.now += NS_PER_S // 2
    assert reporter.flush() == 1  # and released once it has passed
    assert "251 total" in got[-1].status
    assert (reporter.recorded, reporter.reported) == (251, 2)


def test_different_topics_and_kinds_are_reported_separately(
    status: tuple[Publisher[Status], list[Status]],
) -> None:
    pub, got = status
    reporter = StatusReporter("bridge", pub, FakeClock())
    reporter.record_event(deadline("/a", 1))
    reporter.record_event(deadline("/b", 1))
    reporter.record(Level.ERROR, ("loop", "control"), "loop stopped")
    assert reporter.flush() == 3
    assert sorted((m.level, m.data) for m in got) == [
        (Level.WARN, b"/a"),
        (Level.WARN, b"/b"),
        (Level.ERROR, b""),
    ]


def test_a_report_published_late_says_how_long_ago_its_newest_event_was(
    status: tuple[Publisher[Status], list[Status]],
) -> None:
    """A user's trial (2026-12-05): "velocity_command ignored in mode STAND_UP: the robot is
    still rising [4 times in 1.1 s]" arrived after the robot stood, and read as current."""
    pub, got = status
    clock = FakeClock()
    reporter = StatusReporter("n", pub, clock)
    reporter.record(Level.WARN, ("k",), "still rising")
    reporter.flush()  # published at once
    assert got[-1].status == "still rising"
    clock.now += NS_PER_S // 10
    reporter.record(Level.WARN, ("k",), "still rising")
    clock.now += NS_PER_S // 10
    reporter.record(Level.WARN, ("k",), "still rising")
    clock.now += NS_PER_S * 8 // 10  # the interval ends 0.8 s after the newest event
    reporter.flush()
    assert got[-1].status == "still rising [2 times in 0.9 s, the last 0.8 s ago]"
    clock.now += 2 * NS_PER_S
    reporter.record(Level.WARN, ("k",), "still rising")
    clock.now += NS_PER_S // 10  # fresh enough: no age
    reporter.flush()
    assert got[-1].status == "still rising"
    clock.now += NS_PER_S // 10
    reporter.record(Level.WARN, ("k",), "still rising")
    clock.now += NS_PER_S // 2  # one alone, held back by the interval
    sent = len(got)
    assert reporter.flush() == 0 and len(got) == sent  # the last report is 0.6 s old
    clock.now += NS_PER_S
    reporter.flush()
    assert got[-1].status == "still rising [1.5 s ago]"


def test_a_folded_report_of_one_shape_counts_them_and_of_several_says_e_g(
    status: tuple[Publisher[Status], list[Status]],
) -> None:
    """Issue 20 item 21: a count must not pass for that many samples like the one quoted."""
    pub, got = status
    clock = FakeClock()
    reporter = StatusReporter("n", pub, clock)
    for _ in range(3):
        reporter.record(Level.ERROR, ("k",), "44 bytes from a#1")
    reporter.flush()
    assert got[-1].status == "44 bytes from a#1 [3 times in 0.0 s]"
    clock.now += NS_PER_S
    for text in ["44 bytes from unknown"] * 14 + ["44 bytes from a#1"] * 5:
        reporter.record(Level.ERROR, ("k",), text)
    reporter.flush()
    assert got[-1].status == "44 bytes from a#1 [e.g.: 19 times in 0.0 s, 5 like this one]"
    clock.now += NS_PER_S
    malformed = [  # the same publisher and error: one shape, whatever the running total
        MalformedPayloadEvent("/t", "sub#1", "a#1", 44, "bad", total, b"x" * 44)
        for total in range(1, 5)
    ]
    for event in malformed:
        reporter.record_event(event)
    reporter.flush()
    assert got[-1].status.endswith("(4 total) [4 times in 0.0 s]"), got[-1].status
    clock.now += NS_PER_S
    reporter.record_event(malformed[0])
    reporter.record_event(MalformedPayloadEvent("/t", "sub#1", "b#2", 44, "bad", 5, b"y" * 44))
    reporter.flush()
    assert "from b#2" in got[-1].status and "[e.g.: 2 times" in got[-1].status
    assert got[-1].status.endswith(", 1 like this one]")


def test_the_worst_level_of_folded_reports_wins(
    status: tuple[Publisher[Status], list[Status]],
) -> None:
    pub, got = status
    reporter = StatusReporter("n", pub, FakeClock())
    reporter.record(Level.WARN, ("k",), "first")
    reporter.record(Level.ERROR, ("k",), "second")
    reporter.record(Level.WARN, ("k",), "third")
    reporter.flush()
    assert [(m.level, m.status.split(" [")[0]) for m in got] == [(Level.ERROR, "third")]
