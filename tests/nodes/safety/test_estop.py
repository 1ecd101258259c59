"""E-stop latch: only an explicit reset re-arms; afterwards hold the measured position, no jump."""

from __future__ import annotations

import math

import pytest

from jointbus.nodes.safety.estop import EStopLatch, EStopReset, EStopTriggered

MS = 1_000_000
NAMES = ("hip", "knee", "ankle")


def test_trigger_latches_and_keeps_the_first_reason() -> None:
    latch = EStopLatch()
    assert not latch.latched
    event = latch.trigger("estop from jointbus_cli", 10 * MS)
    assert isinstance(event, EStopTriggered)
    assert latch.latched and latch.reason == "estop from jointbus_cli"
    assert "E-STOP" in event.describe()
    assert latch.trigger("second", 20 * MS) is None
    assert latch.reason == "estop from jointbus_cli"


def test_latch_stays_until_an_explicit_reset() -> None:
    latch = EStopLatch()
    latch.trigger("button", 0)
    for t in range(0, 10_000, 100):
        assert latch.latched
        assert not latch.is_fresh(t * MS)  # nothing is applied while latched
    event = latch.reset(10_000 * MS, (0.1, 0.2, 0.3))
    assert isinstance(event, EStopReset)
    assert event.latched_s == pytest.approx(10.0)
    assert not latch.latched


def test_reset_when_not_latched_does_nothing() -> None:
    latch = EStopLatch()
    assert latch.reset(0, (0.0, 0.0, 0.0)) is None
    assert not latch.holding
    assert latch.is_fresh(0)


def test_after_reset_only_commands_received_after_it_are_fresh() -> None:
    latch = EStopLatch()
    latch.trigger("button", 0)
    latch.reset(100 * MS, (0.0, 0.0, 0.0))
    assert not latch.is_fresh(50 * MS)  # sent before the stop / during it: stale
    assert not latch.is_fresh(100 * MS)
    assert latch.is_fresh(100 * MS + 1)


def test_hold_after_reset_uses_the_measured_position_not_the_old_target() -> None:
    latch = EStopLatch()
    latch.trigger("button", 0)
    measured = (0.3, -1.2, 0.7)
    latch.reset(1, measured)
    assert latch.holding
    hold = latch.hold_command(kp=80.0, kd=3.0)
    assert hold.position.tolist() == list(measured)
    assert hold.kp.tolist() == [80.0, 80.0, 80.0]
    assert hold.kd.tolist() == [3.0, 3.0, 3.0]
    assert hold.velocity.tolist() == [0.0] * 3 and hold.effort.tolist() == [0.0] * 3
    assert not hold.brake.any()
    latch.release_hold()
    assert not latch.holding
    with pytest.raises(RuntimeError):
        latch.hold_command(80.0, 3.0)


def test_unmeasured_joint_is_damped_not_held() -> None:
    latch = EStopLatch()
    latch.trigger("button", 0)
    latch.reset(1, (0.3, math.nan, 0.7))
    hold = latch.hold_command(kp=80.0, kd=3.0)
    assert hold.kp.tolist() == [80.0, 0.0, 80.0]
    assert hold.position[1] == 0.0
    assert hold.kd.tolist() == [3.0, 3.0, 3.0]


def test_new_trigger_cancels_a_pending_hold() -> None:
    latch = EStopLatch()
    latch.trigger("a", 0)
    latch.reset(1, (0.0, 0.0, 0.0))
    latch.trigger("b", 2)
    assert not latch.holding
    assert latch.hold_positions is None


def test_hold_has_one_target_per_measured_position() -> None:
    latch = EStopLatch()
    latch.trigger("a", 0)
    latch.reset(1, (0.0, 0.0))
    assert latch.hold_command(80.0, 3.0).count == 2


def test_begin_hold_applies_the_reset_rule_without_a_latch() -> None:
    latch = EStopLatch()
    latch.begin_hold(50 * MS, (0.1, 0.2, 0.3))
    assert latch.holding and not latch.latched
    assert not latch.is_fresh(50 * MS)
    assert latch.is_fresh(51 * MS)
    assert latch.hold_command(80.0, 3.0).position.tolist() == [0.1, 0.2, 0.3]


def test_begin_hold_is_ignored_while_latched() -> None:
    latch = EStopLatch()
    latch.trigger("button", 0)
    latch.begin_hold(1, (0.0, 0.0, 0.0))
    assert latch.latched and not latch.holding
