"""TimerThread: absolute grid, skipped slots, pause / start / cancel, errors, and its thread."""

from __future__ import annotations

import threading

import pytest

from jointbus.runtime import Timer, TimerClosedError, TimerConfigError, TimerThread
from support.runtime import NS_PER_S, FakeClock, wait_until


def manual() -> tuple[TimerThread, FakeClock]:
    clock = FakeClock()
    return TimerThread("test", clock=clock, threaded=False), clock


def test_fires_on_an_absolute_grid_without_drift() -> None:
    timers, clock = manual()
    start = clock.now
    fired: list[int] = []
    timers.add(0.1, lambda: fired.append(clock.now))
    # Run late by 3 ms at every slot: the grid stays start + k * 100 ms, never start + k * 103 ms.
    for k in range(1, 11):
        clock.now = start + k * NS_PER_S // 10 + 3_000_000
        assert timers.run_due() == 1
    assert len(fired) == 10
    assert timers.timers[0].next_due_ns == start + 11 * NS_PER_S // 10


def test_not_due_does_not_fire() -> None:
    timers, clock = manual()
    fired: list[int] = []
    timers.add(0.1, lambda: fired.append(1))
    clock.now += NS_PER_S // 10 - 1
    assert timers.run_due() == 0
    clock.now += 1
    assert timers.run_due() == 1
    assert fired == [1]


def test_an_overrun_skips_slots_instead_of_bursting() -> None:
    timers, clock = manual()
    fired: list[int] = []
    timer = timers.add(0.1, lambda: fired.append(1))
    clock.now += 450_000_000  # 4.5 periods: slots 1..4 due
    assert timers.run_due() == 1
    assert fired == [1]
    assert timer.skipped == 3
    assert timer.next_due_ns == clock.now + 50_000_000  # back on the grid (slot 5)


def test_immediately_fires_at_start_and_timers_run_earliest_first() -> None:
    timers, clock = manual()
    order: list[str] = []
    timers.add(0.3, lambda: order.append("slow"))
    timers.add(0.1, lambda: order.append("fast"), immediately=True)
    assert timers.run_due() == 1
    clock.now += 300_000_000
    timers.run_due()
    assert order == ["fast", "fast", "slow"]


def test_pause_start_and_cancel() -> None:
    timers, clock = manual()
    fired: list[int] = []
    timer = timers.add(0.1, lambda: fired.append(1), start=False)
    assert not timer.active
    clock.now += NS_PER_S
    assert timers.run_due() == 0
    timer.start()
    clock.now += NS_PER_S // 10
    timers.run_due()
    timer.pause()
    clock.now += NS_PER_S
    assert timers.run_due() == 0
    timer.start()  # the grid restarts one period from now
    clock.now += NS_PER_S // 10
    timers.run_due()
    assert fired == [1, 1]
    timer.cancel()
    assert timer.cancelled
    assert timer not in timers.timers
    with pytest.raises(TimerClosedError, match="cancelled"):
        timer.start()


def test_a_raising_callback_is_counted_reported_and_keeps_its_timer() -> None:
    failures: list[tuple[Timer, Exception]] = []
    clock = FakeClock()
    timers = TimerThread(
        "t", clock=clock, threaded=False, on_error=lambda t, e: failures.append((t, e))
    )

    def boom() -> None:
        raise RuntimeError("boom")

    timer = timers.add(0.1, boom, name="bad")
    for _ in range(3):
        clock.now += NS_PER_S // 10
        timers.run_due()
    assert (timer.calls, timer.errors, timer.active) == (3, 3, True)
    assert [str(e) for _, e in failures] == ["boom"] * 3
    assert failures[0][0] is timer


@pytest.mark.parametrize("period", [0, -1.0, float("nan"), float("inf"), 1e-6, True, "1"])
def test_invalid_period_is_refused(period: object) -> None:
    timers, _ = manual()
    with pytest.raises(TimerConfigError) as info:
        timers.add(period, lambda: None)  # type: ignore[arg-type]
    assert info.value.field == "period_s"
    assert timers.timers == ()


def test_not_callable_is_refused() -> None:
    timers, _ = manual()
    with pytest.raises(TimerConfigError, match="callable"):
        timers.add(0.1, 42)  # type: ignore[arg-type]


def test_closed_thread_refuses_timers_and_cancels_its_own() -> None:
    timers, _ = manual()
    timer = timers.add(0.1, lambda: None)
    timers.close()
    assert timer.cancelled
    with pytest.raises(TimerClosedError):
        timers.add(0.1, lambda: None)


def test_the_thread_runs_timers_and_close_stops_it() -> None:
    timers = TimerThread("real")
    count = [0]

    def tick() -> None:
        count[0] += 1

    timers.add(0.005, tick)
    assert wait_until(lambda: count[0] >= 5)
    timers.close()
    after = count[0]
    assert not any(t.name == "real" and t.is_alive() for t in threading.enumerate())
    assert count[0] == after


def test_pause_then_wait_idle_waits_for_a_running_callback() -> None:
    timers = TimerThread("idle")
    entered = threading.Event()
    release = threading.Event()
    finished = threading.Event()

    def slow() -> None:
        entered.set()
        release.wait(5)
        finished.set()

    timer = timers.add(0.001, slow)
    assert entered.wait(5)
    timer.pause()
    waiter = threading.Thread(target=timers.wait_idle)
    waiter.start()
    waiter.join(0.05)
    assert waiter.is_alive()  # still inside the callback
    release.set()
    waiter.join(5)
    assert finished.is_set() and not waiter.is_alive()
    timers.close()
