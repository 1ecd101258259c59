"""The control node's own pace: frames it skips while starved of CPU are reported once, with
their share and the step time, and an OK follows when it keeps pace again (issue 20 item 27);
cycles the bridge itself skipped are not the node's (a new user's trial, 2026-12-05). A stall
is told stopped, starved or unknown by its threads' run-queue waits, read by the look (the timer
thread), never by the step (a user's trial, 2026-12-06; c70ecf3 read them in the step)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from jointbus.robots.hb50.control.step_pace import LOOK_S, WINDOW_S, PaceReport, StepPace
from jointbus.runtime.cpu_wait import thread_waits

PERIOD = 0.002
PERIOD_NS = 2_000_000


@dataclass
class Feed:
    """A bridge sending frames and a node stepping on some: the subscription's counters."""

    pace: StepPace
    wall: int = 0
    overwritten: int = 0
    lost: int = 0
    next_look: int = 0

    def look(self, reports: list[PaceReport]) -> None:
        """The node's timer thread: :meth:`StepPace.look` every :data:`LOOK_S` of the wall
        clock (none while the process is stalled: the wall clock jumps past those)."""
        if self.wall >= self.next_look:
            reports.extend(self.pace.look(self.wall))
            self.next_look = self.wall + round(LOOK_S * 1e9)

    def run(
        self, seconds: float, *, sent_every: int = 1, stepped_every: int = 1, lost_every: int = 0
    ) -> list[PaceReport]:
        """``seconds`` of bridge cycles: the bridge sends a frame every ``sent_every`` cycles
        (it skips the others), the node steps on every ``stepped_every``-th frame sent (the
        rest overwritten), and every ``lost_every``-th frame sent is lost on the way."""
        reports: list[PaceReport] = []
        sent = 0
        for cycle in range(round(seconds / PERIOD)):
            self.wall += PERIOD_NS
            self.look(reports)
            if cycle % sent_every:
                continue  # the bridge skipped this cycle: no frame
            sent += 1
            if lost_every and sent % lost_every == 0:
                self.lost += 1
                continue
            if sent % stepped_every:
                self.overwritten += 1
                continue
            r = self.pace.step(self.wall, self.wall + 300_000, self.overwritten, self.lost)
            if r is not None:
                reports.append(r)
        return reports


def test_skipped_frames_are_reported_with_figures_and_the_recovery_once() -> None:
    feed = Feed(StepPace(PERIOD))
    assert feed.run(3 * WINDOW_S) == []
    starved = feed.run(2.5 * WINDOW_S, stepped_every=2)  # every other frame overwritten
    assert len(starved) == 1 and starved[0].behind
    assert "50.0 % of the bridge's frames skipped" in starved[0].text
    assert "lost on the way" not in starved[0].text
    assert "control step p99 0.30 ms" in starved[0].text
    back = feed.run(2.5 * WINDOW_S)
    assert len(back) == 1 and not back[0].behind and "keeps pace again" in back[0].text
    assert feed.pace.skipped_total > 0


def test_cycles_the_bridge_skipped_are_not_the_nodes() -> None:
    """The bridge sends every other cycle and the node steps on each frame it sends: nothing is
    the node's to report (stamp gaps would have read 50 %)."""
    feed = Feed(StepPace(PERIOD))
    assert feed.run(3 * WINDOW_S, sent_every=2) == []
    assert feed.pace.skipped_total == 0
    starved = feed.run(2.5 * WINDOW_S, sent_every=2, stepped_every=2)  # the node's own half
    assert len(starved) == 1 and "50.0 % of the bridge's frames skipped" in starved[0].text


def test_frames_lost_on_the_way_are_counted_and_named() -> None:
    feed = Feed(StepPace(PERIOD))
    starved = feed.run(2.5 * WINDOW_S, lost_every=10)
    assert len(starved) == 1
    assert "10.0 % of the bridge's frames skipped (100 of 1001, 100 of them lost" in starved[0].text


def test_a_stall_is_not_counted_as_skipped_frames() -> None:
    feed = Feed(StepPace(PERIOD))
    feed.run(1.0)
    feed.wall += 500_000_000  # a 0.5 s stall, reported as a stall instead: 250 frames gone
    feed.overwritten += 250
    feed.pace.step(feed.wall, feed.wall + 300_000, feed.overwritten, feed.lost)
    assert feed.pace.skipped_total == 0


def _stall_and_catch_up(feed: Feed, stall_s: float, caught_up_s: float) -> list[PaceReport]:
    """The node's process stopped for ``stall_s`` while the bridge sent on; at the resumption
    the frames of the stall arrive in a burst over ``caught_up_s``: the node steps on every
    third (the rest overwritten in its depth-1 queue), then on each fresh frame. Each step
    passes its frame's stamp (the bridge's clock: here the wall clock from 0)."""
    reports: list[PaceReport] = []
    stopped = feed.wall
    feed.wall += round(stall_s * 1e9)
    backlog = round(stall_s / PERIOD)
    burst_step_ns = round(caught_up_s * 1e9 / backlog)
    for i in range(1, backlog + 1):
        stamp_ns = stopped + i * PERIOD_NS
        if i % 3:
            feed.overwritten += 1
            continue
        r = feed.pace.step(
            feed.wall, feed.wall + 300_000, feed.overwritten, feed.lost, stamp_s=stamp_ns / 1e9
        )
        feed.wall += 3 * burst_step_ns
        if r is not None:
            reports.append(r)
        feed.look(reports)
    # the frames sent during the catch-up queued behind the backlog: the same burst, until the
    # node reaches the present (user's trial: 0.13-0.28 s of catch-up, then a window of "1045
    # frames in 2.0 s" had the frames sent in it on top)
    stamp_ns = stopped + backlog * PERIOD_NS
    i = 0
    while stamp_ns + PERIOD_NS < feed.wall - 5 * PERIOD_NS:
        stamp_ns += PERIOD_NS
        i += 1
        if i % 3:
            feed.overwritten += 1
            continue
        r = feed.pace.step(
            feed.wall, feed.wall + 300_000, feed.overwritten, feed.lost, stamp_s=stamp_ns / 1e9
        )
        feed.wall += burst_step_ns
        if r is not None:
            reports.append(r)
        feed.look(reports)
    feed.overwritten += (feed.wall - stamp_ns) // PERIOD_NS  # the rest, skipped
    for _ in range(round(2.5 * WINDOW_S / PERIOD)):
        feed.wall += PERIOD_NS
        feed.look(reports)
        r = feed.pace.step(
            feed.wall, feed.wall + 300_000, feed.overwritten, feed.lost, stamp_s=feed.wall / 1e9
        )
        if r is not None:
            reports.append(r)
    return reports


def test_a_sigstop_of_3_s_is_a_stall_not_starvation_and_no_window_counts_its_frames() -> None:
    """A user's trial: after a 3 s SIGSTOP of the control node, "control node starved of CPU:
    35.3 % of the bridge's frames skipped (884 of 2505) … over the last 2 s" — 2505 frames
    cannot fit 2 s at 500 Hz. The stall is reported once as a stall; no window counts more
    frames than the bridge sent in it, and none says starved."""
    pace = StepPace(PERIOD, stall_s=0.25)
    feed = Feed(pace)
    assert feed.run(1.0) == []

    def step_stamped(wall: int) -> PaceReport | None:
        return pace.step(wall, wall + 300_000, feed.overwritten, feed.lost, stamp_s=wall / 1e9)

    # the Feed ran with stamps unknown: give the last step before the stall its stamp
    assert step_stamped(feed.wall) is None
    reports = _stall_and_catch_up(feed, 3.0, 0.3)
    assert pace.stalls == 1
    stalls = [r for r in reports if r.stall]
    assert len(stalls) == 1, [r.text for r in reports]
    assert "control node stalled for 3.00 s" in stalls[0].text
    # no reader of the threads' run-queue waits: the cause is not guessed
    assert "no control step: why is unknown: this node reads no run-queue waits" in stalls[0].text
    figures = re.search(
        r"(\d+) stepped on and (\d+) skipped in a catch-up of ([\d.]+) s", stalls[0].text
    )
    assert figures is not None, stalls[0].text
    stepped, skipped, catch_up_s = int(figures[1]), int(figures[2]), float(figures[3])
    # the 1500 frames of the stall and those sent while the node caught up (to within FRESH_S)
    assert stepped + skipped == pytest.approx(1500 + catch_up_s / PERIOD, abs=12), stalls[0].text
    assert not any("starved of CPU:" in r.text for r in reports), [r.text for r in reports]
    assert not pace.behind


def test_a_window_counts_no_more_frames_than_the_bridge_sent_in_it() -> None:
    """Starved after the stall: the window's figures are the window's (≈ 1000 frames in 2 s at
    500 Hz), not the stall's backlog on top."""
    pace = StepPace(PERIOD, stall_s=0.25)
    feed = Feed(pace)
    feed.run(1.0)
    pace.step(feed.wall, feed.wall + 300_000, feed.overwritten, feed.lost, stamp_s=feed.wall / 1e9)
    _stall_and_catch_up(feed, 3.0, 0.3)
    starved: list[PaceReport] = []
    for cycle in range(round(3.5 * WINDOW_S / PERIOD)):
        feed.wall += PERIOD_NS
        if cycle % 2:
            feed.overwritten += 1
            continue
        r = pace.step(
            feed.wall, feed.wall + 300_000, feed.overwritten, feed.lost, stamp_s=feed.wall / 1e9
        )
        if r is not None:
            starved.append(r)
    assert starved and all(r.behind for r in starved), [r.text for r in starved]
    for r in starved:  # each window's figures fit its 2 s: 1001 frames at 500 Hz, + its edge
        sent = int(re.search(r"skipped \(\d+ of (\d+)", r.text)[1])  # type: ignore[index]
        assert sent <= 1002 and "over the last 2.0 s" in r.text, r.text
    assert pace.behind and pace.stalls == 1


class _Waits:
    """A process's threads' cumulative run-queue waits (ns) as ``/proc`` counts them: each waits
    ``usual`` s per s of the feed's clock while the process runs, plus what the test adds (a
    starvation)."""

    def __init__(self, feed: Feed, usual: float) -> None:
        self.feed, self.usual, self.extra_ns, self.paused_ns = feed, usual, 0, 0

    def __call__(self) -> dict[int, int]:
        base = round((self.feed.wall - self.paused_ns) * self.usual)  # none while not running
        return {7: base + self.extra_ns, 8: base}


def _stalled(feed: Feed, waits: _Waits, starved: bool) -> list[PaceReport]:
    """Two windows of pace (the usual waits known), then a 0.28 s stall and its catch-up; the
    process was stopped through it, or (``starved``) one thread of it waited 0.27 s for a CPU."""
    assert feed.run(2.5 * WINDOW_S) == []
    assert feed.pace.step(feed.wall, feed.wall + 300_000, stamp_s=feed.wall / 1e9) is None
    waits.paused_ns = 280_000_000  # not running through the gap: waiting as usual stops too
    if starved:
        waits.extra_ns = 270_000_000  # runnable through the 0.28 s gap, other work on the CPUs
    return _stall_and_catch_up(feed, 0.28, 0.05)


@pytest.mark.parametrize("starved", [True, False])
def test_a_stall_is_told_stopped_or_starved_by_its_threads_waits_for_a_cpu(starved: bool) -> None:
    """A user's trial (2026-12-06): another robot's real-time threads held both CPUs for 0.28 s
    and the control node said "its process did not run — stopped or frozen, not starved of CPU";
    nothing was stopped. A thread that waited for a CPU through the gap says starvation; threads
    that waited only as usual (15 % on a loaded host: a thread waking 500 times a second waits a
    little each time) say a stop — the same gap, the same frames. The report comes from the look
    (the timer thread), once a reading after the stall tells."""
    feed = Feed(StepPace(PERIOD, stall_s=0.25))
    waits = _Waits(feed, usual=0.15)
    feed.pace = StepPace(PERIOD, stall_s=0.25, thread_waits=waits)
    stalls = [r.text for r in _stalled(feed, waits, starved) if r.stall]
    assert len(stalls) == 1, stalls
    assert "control node stalled for 0.28 s" in stalls[0]
    if starved:
        assert (
            "no control step: its process was starved of CPU — a thread of it waited 0.27 s "
            "more than usual for a CPU" in stalls[0]
        ), stalls[0]
        assert "stopped" not in stalls[0]
    else:
        assert "its process did not run — stopped or frozen, not starved of CPU" in stalls[0]
        assert "no thread of it waited more than 0.00 s beyond its usual" in stalls[0], stalls[0]
        assert "starved of CPU —" not in stalls[0]


def test_without_run_queue_waits_on_this_host_the_cause_is_unknown_not_guessed() -> None:
    """A kernel without ``schedstat`` (or not Linux): no reading tells, and the report says so
    rather than "stopped or frozen"."""
    feed = Feed(StepPace(PERIOD))
    feed.pace = StepPace(PERIOD, stall_s=0.25, thread_waits=dict)
    reports = feed.run(2.5 * WINDOW_S)
    feed.pace.step(feed.wall, feed.wall + 300_000, stamp_s=feed.wall / 1e9)
    stalls = [r.text for r in reports + _stall_and_catch_up(feed, 0.28, 0.05) if r.stall]
    assert len(stalls) == 1, stalls
    assert "why is unknown: this host gives no run-queue waits of its threads" in stalls[0]
    assert "did not run" not in stalls[0] and "starved of CPU —" not in stalls[0]


def test_the_step_never_reads_the_run_queue_waits_only_the_look_does() -> None:
    """Reading ``/proc/self/task/*/schedstat`` takes 11-18 ms with 100 threads: in the control
    step (c70ecf3) it stalled the step 250 ms beside a second stack. Counted over windows and a
    stall with the real reader: no reading in any step, one by the look at each window and one
    after the stall."""
    calls = 0

    def counted() -> dict[int, int]:
        nonlocal calls
        calls += 1
        return thread_waits()

    pace = StepPace(PERIOD, stall_s=0.25, thread_waits=counted)
    in_steps = 0
    step = pace.step

    def step_counted(*args: float, **kwargs: float | None) -> PaceReport | None:
        nonlocal in_steps
        before = calls
        r = step(*args, **kwargs)  # type: ignore[arg-type]
        in_steps += calls - before
        return r

    pace.step = step_counted  # type: ignore[method-assign]
    feed = Feed(pace)
    feed.run(2.5 * WINDOW_S)
    feed.pace.step(feed.wall, feed.wall + 300_000, stamp_s=feed.wall / 1e9)
    reports = _stall_and_catch_up(feed, 0.4, 0.05)
    assert [r for r in reports if r.stall], [r.text for r in reports]
    assert in_steps == 0
    # the looks read: at the first, every window of the 5 s before the stall and 5 s after, and
    # at the first look after the resumption
    assert 6 <= calls <= 8, calls


def test_the_stall_is_reported_at_the_first_look_after_its_catch_up() -> None:
    """The bounded delay: the step hands the stall over when it has caught up, and the look
    reports it at once if it has a reading from after the stall (taken at its first look after
    the resumption), so at most :data:`LOOK_S` after the catch-up."""
    feed = Feed(StepPace(PERIOD))
    waits = _Waits(feed, usual=0.0)
    pace = StepPace(PERIOD, stall_s=0.25, thread_waits=waits)
    feed.pace = pace
    feed.run(2.5 * WINDOW_S)
    pace.step(feed.wall, feed.wall + 300_000, stamp_s=feed.wall / 1e9)
    feed.wall += 400_000_000  # stopped 0.4 s: no backlog (its frames were lost), fresh at once
    assert pace.step(feed.wall, feed.wall + 300_000, stamp_s=feed.wall / 1e9) is None
    feed.wall += PERIOD_NS
    assert pace.step(feed.wall, feed.wall + 300_000, stamp_s=feed.wall / 1e9) is None  # caught up
    reports = pace.look(feed.wall + 1)
    assert len(reports) == 1 and reports[0].stall, [r.text for r in reports]
    assert "stopped or frozen" in reports[0].text
    assert pace.look(feed.wall + round(LOOK_S * 1e9)) == []


def test_a_gap_through_which_the_timer_thread_kept_looking_is_no_stop() -> None:
    """No frame for 0.4 s while the process ran (the bridge sent none, or the step thread was
    held): its threads waited for no CPU, yet the timer thread looked throughout — neither
    stopped nor starved, and the report says the process ran."""
    feed = Feed(StepPace(PERIOD))
    waits = _Waits(feed, usual=0.0)
    feed.pace = StepPace(PERIOD, stall_s=0.25, thread_waits=waits)
    reports = feed.run(2.5 * WINDOW_S)
    feed.pace.step(feed.wall, feed.wall + 300_000, stamp_s=feed.wall / 1e9)
    for _ in range(200):  # 0.4 s without a frame; the timer thread looks on
        feed.wall += PERIOD_NS
        feed.look(reports)
    for _ in range(round(1.0 / PERIOD)):
        feed.wall += PERIOD_NS
        feed.look(reports)
        r = feed.pace.step(feed.wall, feed.wall + 300_000, stamp_s=feed.wall / 1e9)
        if r is not None:
            reports.append(r)
    stalls = [r.text for r in reports if r.stall]
    assert len(stalls) == 1, [r.text for r in reports]
    ran = "control node stalled for 0.40 s (no control step: its process ran (its timer thread"
    assert ran in stalls[0], stalls[0]
    assert "stopped" not in stalls[0] and "starved of CPU —" not in stalls[0]


def test_a_stalls_frames_that_never_arrived_are_named_apart_from_the_late_ones() -> None:
    """A user's trial: a 1 s SIGSTOP of the control process while walking; the link held some
    of the bridge's frames and dropped the rest. Beside "404 message(s) lost", the stall's report
    said "the bridge's frames of the stall arrived late: 1 stepped on and 457 skipped", 862 frames
    of a stall in which the bridge sent ≈ 505. The skipped count includes the lost ones: the
    report now says how many of them never arrived."""
    pace = StepPace(PERIOD, stall_s=0.25)
    feed = Feed(pace)
    feed.run(1.0)
    reports: list[PaceReport] = []
    pace.step(feed.wall, feed.wall + 300_000, feed.overwritten, feed.lost, stamp_s=feed.wall / 1e9)
    stopped = feed.wall
    feed.wall += 1_000_000_000  # stopped for 1 s: the bridge sent 500 frames
    feed.lost += 400  # the full link dropped these; the 100 it held arrive now, in a burst
    for i in range(401, 501):
        stamp_ns = stopped + i * PERIOD_NS
        if i % 10:
            feed.overwritten += 1
            continue
        r = pace.step(
            feed.wall, feed.wall + 300_000, feed.overwritten, feed.lost, stamp_s=stamp_ns / 1e9
        )
        assert r is None
        feed.wall += 100_000
    for _ in range(round(2.5 * WINDOW_S / PERIOD)):  # fresh frames again
        feed.wall += PERIOD_NS
        feed.look(reports)
        r = pace.step(
            feed.wall, feed.wall + 300_000, feed.overwritten, feed.lost, stamp_s=feed.wall / 1e9
        )
        if r is not None:
            reports.append(r)
    stalls = [r for r in reports if r.stall]
    assert len(stalls) == 1, [r.text for r in reports]
    figures = re.search(
        r"(\d+) stepped on and (\d+) skipped in a catch-up of [\d.]+ s \((\d+) of them never "
        r"arrived: lost on the way",
        stalls[0].text,
    )
    assert figures is not None, stalls[0].text
    stepped, skipped, lost = (int(figures[k]) for k in (1, 2, 3))
    assert lost == 400
    # every frame of the stall counted once; the newest (sent as it resumed) was a fresh one
    assert stepped + skipped == 499, stalls[0].text
