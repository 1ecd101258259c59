"""The control node's own pace: frames it skips while starved of CPU are reported once, with
their share and the step time, and an OK follows when it keeps pace again (issue 20 item 27);
cycles the bridge itself skipped are not the node's (a new user's trial, 2026-12-05)."""

from __future__ import annotations

from dataclasses import dataclass

from jointbus.robots.hb50.control.step_pace import WINDOW_S, PaceReport, StepPace

PERIOD = 0.002
PERIOD_NS = 2_000_000


@dataclass
class Feed:
    """A bridge sending frames and a node stepping on some: the subscription's counters."""

    pace: StepPace
    wall: int = 0
    overwritten: int = 0
    lost: int = 0

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
