"""Command watchdog: no valid command for the timeout → safe mode (damping only), reported once."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.nodes.safety.watchdog import SafeModeEntered, SafeModeLeft, Watchdog, safe_command

MS = 1_000_000
NAMES = ("hip", "knee", "ankle")


def test_starts_in_safe_mode_until_the_first_command() -> None:
    dog = Watchdog()
    assert dog.expired(0) is True
    assert dog.last_feed_ns is None
    dog.feed(5 * MS)
    assert dog.expired(5 * MS) is False
    assert dog.take_events() == []  # starting is not a transition


def test_expires_only_after_the_timeout() -> None:
    dog = Watchdog(timeout_s=0.25)
    dog.feed(0)
    assert dog.expired(250 * MS) is False  # exactly the timeout: not yet
    assert dog.expired(250 * MS + 1) is True
    (event,) = dog.take_events()
    assert isinstance(event, SafeModeEntered)
    assert event.silence_s == pytest.approx(0.25)
    assert "safe mode" in event.describe()


def test_entering_is_reported_once_and_leaving_on_the_next_command() -> None:
    dog = Watchdog(timeout_s=0.1)
    dog.feed(0)
    for t in range(101, 500, 10):
        assert dog.expired(t * MS) is True
    assert [type(e) for e in dog.take_events()] == [SafeModeEntered]
    dog.feed(600 * MS)
    assert dog.expired(600 * MS) is False
    (left,) = dog.take_events()
    assert isinstance(left, SafeModeLeft)
    assert left.safe_s == pytest.approx(0.499)
    # the silence: from the last command, the timeout before safe mode included (a trial's 2.0 s
    # SIGSTOP read "resumed after 1.75 s", the safe mode's alone)
    assert left.silence_s == pytest.approx(0.6)
    assert left.describe().startswith(
        "watchdog: commands resumed after 0.60 s without one (safe mode for the last 0.50 s;"
    ), left.describe()


def test_a_command_of_known_age_lives_from_the_data_it_answers() -> None:
    """Answers arriving late (a backlog behind a stalled host) keep the owner alive only as long
    as the data they answer is younger than the timeout; an older answer never moves the life
    back, and leaving safe mode is timed by the arrival."""
    dog = Watchdog(timeout_s=0.25)
    dog.feed(0)
    for t in range(10, 200, 10):  # 0.2 s of answers to the data of t = 0
        dog.feed(t * MS, answers_ns=0)
        assert dog.last_feed_ns == 0
    assert dog.expired(250 * MS) is False
    assert dog.expired(251 * MS) is True  # 0.25 s after its data, not after the last arrival
    dog.feed(300 * MS, answers_ns=290 * MS)
    (entered, left) = dog.take_events()
    assert isinstance(entered, SafeModeEntered) and isinstance(left, SafeModeLeft)
    assert left.at_ns == 300 * MS and left.safe_s == pytest.approx(0.049)
    dog.feed(310 * MS, answers_ns=280 * MS)  # an older answer: the life stays at 0.29 s
    assert dog.last_feed_ns == 290 * MS
    dog.feed(320 * MS, answers_ns=330 * MS)  # never later than its arrival
    assert dog.last_feed_ns == 320 * MS


def test_commands_the_driver_refused_are_withdrawn_and_the_silence_counts_from_the_last_taken(
) -> None:
    """A stream the driver refuses at every write is no stream: withdrawn, its commands do not
    keep the owner alive, and the watchdog trips the timeout after the last command the drives
    took. A withdrawal never moves the life forward."""
    dog = Watchdog(timeout_s=0.25)
    dog.feed(0)  # taken
    for t in range(10, 300, 10):  # refused, each withdrawn back to the one taken
        dog.feed(t * MS)
        dog.withdraw(0)
        assert dog.last_feed_ns == 0
    assert dog.expired(251 * MS) is True
    dog.withdraw(400 * MS)  # later than the life: nothing changes
    assert dog.last_feed_ns == 0


def test_timeout_is_configurable() -> None:
    dog = Watchdog(timeout_s=0.05)
    dog.feed(0)
    assert dog.expired(51 * MS) is True


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf")])
def test_bad_timeout_is_refused(bad: float) -> None:
    with pytest.raises(ValueError, match="timeout_s"):
        Watchdog(bad)


@given(st.lists(st.integers(0, 400), min_size=1, max_size=50))
def test_regular_feeding_never_expires(gaps_ms: list[int]) -> None:
    dog = Watchdog(timeout_s=0.4)
    t = 0
    dog.feed(t)
    for gap in gaps_ms:
        t += gap * MS
        assert dog.expired(t) is False
        dog.feed(t)
    assert dog.take_events() == []


def test_safe_command_is_damping_only() -> None:
    cmd = safe_command(len(NAMES), 2.0)
    assert cmd.count == len(NAMES)
    assert cmd.kp.tolist() == [0.0, 0.0, 0.0]
    assert cmd.kd.tolist() == [2.0, 2.0, 2.0]
    assert cmd.effort.tolist() == [0.0, 0.0, 0.0]
    assert cmd.velocity.tolist() == [0.0, 0.0, 0.0]
    assert cmd.brake.tolist() == [False, False, False]


def test_safe_command_engages_brakes_where_fitted() -> None:
    cmd = safe_command(len(NAMES), (1.0, 2.0, 3.0), has_brake=(False, True, False))
    assert cmd.brake.tolist() == [False, True, False]
    assert cmd.kd.tolist() == [1.0, 2.0, 3.0]
    assert cmd.kp.tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="has_brake"):
        safe_command(len(NAMES), 1.0, has_brake=(True,))
