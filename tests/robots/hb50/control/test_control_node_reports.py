"""Faults on the velocity stream are reported on /hb50/status once each, with their figures, and
an OK when they clear (issue 20 item 27) — the control node walking the simulated hb50 (in-process
bus, lock-step with MuJoCo as in test_control_node)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from test_control_node import Rig, wait_until

from jointbus.bus import Bus
from jointbus.messages.geometry_msgs import Twist, Vector3
from jointbus.messages.std_msgs import String
from jointbus.robots.hb50.messages import Level, MotionMode
from support.hb50_sim import lying_world

pytestmark = pytest.mark.long

FORWARD = Twist(Vector3(0.5, 0.0, 0.0), Vector3())


@pytest.fixture
def rig() -> Iterator[Rig]:
    bus = Bus(name="control-reports-test")
    made = Rig(bus, lying_world())
    try:
        yield made
    finally:
        made.node.shutdown()
        bus.close()


def _walking(rig: Rig, seconds: float) -> None:
    rig.run(0.05)
    rig.control.publish(String("stand_up"))
    assert wait_until(lambda: rig.node.motion.mode is MotionMode.STAND_UP)
    rig.run(2.0)
    for _ in range(round(seconds / 0.05)):
        rig.velocity.publish(FORWARD)
        rig.run(0.05)
    assert rig.node.motion.mode is MotionMode.LOCOMOTION


def _count(rig: Rig, text: str, level: Level) -> int:
    return sum(1 for s in rig.statuses if s.level == level and text in s.status)


def test_the_velocity_publisher_dying_mid_stride_is_one_warn_with_its_figures(rig: Rig) -> None:
    _walking(rig, 2.0)
    rig.run(1.5)  # the publisher died: the robot stops on four feet
    assert wait_until(lambda: _count(rig, "velocity commands stopped after", Level.WARN) == 1)
    [text] = [s.status for s in rig.statuses if "velocity commands stopped" in s.status]
    said = "s (robot time) at a commanded 0.50 m/s"
    assert any(f"after {lasted} {said}" in text for lasted in ("1.9", "2.0")), text
    assert "stopping on four feet" in text
    rig.velocity.publish(FORWARD)
    rig.run(0.1)
    assert wait_until(lambda: _count(rig, "velocity commands are back", Level.OK) == 1)
    assert _count(rig, "velocity commands stopped after", Level.WARN) == 1


def test_two_publishers_at_once_are_one_warn_naming_the_reversals(rig: Rig) -> None:
    _walking(rig, 1.0)
    # ±1 m/s alternating beside the 0.5 m/s stream, one command per 2 ms cycle (the topic keeps
    # only the newest sample: a burst between two cycles would reach the node as one command)
    for i in range(300):
        rig.velocity.publish(Twist(Vector3(1.0 if i % 2 else -1.0, 0.0, 0.0), Vector3()))
        rig.cycle()
        if i % 10 == 0:
            rig.velocity.publish(FORWARD)
            rig.cycle()
    assert wait_until(lambda: _count(rig, "from two sources at once?", Level.WARN) == 1)
    [text] = [s.status for s in rig.statuses if "two sources" in s.status]
    assert "linear.x reversed sign" in text and "-1.00" in text and "+1.00" in text
    quiet_until = time.monotonic() + 1.5  # the stream alone for over a second (wall clock)
    while time.monotonic() < quiet_until:
        rig.velocity.publish(FORWARD)
        rig.run(0.05)
    assert wait_until(lambda: _count(rig, "from one source again", Level.OK) == 1)
