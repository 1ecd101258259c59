"""The stand-up from lying, interrupted again and again by the bridge's safe mode, never tips the
robot over — the new user's loaded host (239 watchdog trips, 205 DAMPING episodes), replayed
lock-step in simulated time with the real bridge and control node (:mod:`support.hb50_lockstep`).

Ground truth (MuJoCo) checks the body: its tilt stays below the fall limit the control node
uses (:class:`~jointbus.robots.hb50.control.fall_detector.FallConfig`), so a correct stand-up is
never mistaken for a fall, and in the end the robot stands at its height.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from jointbus.robots.hb50.bridge.node import BridgeMode
from jointbus.robots.hb50.control.fall_detector import FallConfig
from jointbus.robots.hb50.messages import Level, MotionMode
from support.hb50_lockstep import PERIOD, LockstepRobot

LIMIT = FallConfig().tilt_limit
STARVED_S = 0.3  # > the bridge's 0.25 s watchdog: every interruption trips it
INTERRUPTIONS = 12
#: Run lengths (s) between interruptions: they land in the fold, the rise and the stand.
GAPS = (0.15, 0.35, 0.6, 0.25, 0.5, 0.8, 0.2, 1.1)


@pytest.fixture
def robot() -> Iterator[LockstepRobot]:
    # the watchdog's damping (the bridge's `damping` fallback): the stance fallback would hold
    # the robot through every interruption, and this is the stand-up against the damping
    made = LockstepRobot(fallback="damping")
    try:
        yield made
    finally:
        made.close()


def _collapse(robot: LockstepRobot) -> None:
    """Stand, then starve the control node for 2 s: the bridge's safe damping lets the body
    sink to the floor with the legs splayed (the pose the new user's stand-ups began from)."""
    robot.run(0.1)
    robot.command("stand_up")
    while robot.mode is not MotionMode.STAND:
        robot.cycle()
    robot.run(0.3)
    robot.run(2.0, starved=True)
    robot.cycle()
    assert robot.mode is MotionMode.DAMPING or robot.mode is MotionMode.STAND_UP


@pytest.mark.parametrize("start", ["folded", "collapsed"])
def test_a_stand_up_interrupted_by_watchdog_trips_never_tips_the_body(
    robot: LockstepRobot, start: str
) -> None:
    if start == "collapsed":
        _collapse(robot)
    else:
        robot.run(0.1)
        robot.command("stand_up")
    worst = 0.0
    damping = 0
    gaps = itertools.cycle(GAPS)
    for _ in range(INTERRUPTIONS):
        for _ in range(round(next(gaps) / PERIOD)):
            robot.cycle()
            worst = max(worst, robot.tilt())
        robot.starved = True
        for _ in range(round(STARVED_S / PERIOD)):
            robot.cycle()
            worst = max(worst, robot.tilt())
        # the watchdog tripped: the bridge's fallback drives the robot, not the starved owner
        assert robot.bridge.mode in (BridgeMode.SAFE, BridgeMode.HOLD)
        assert robot.bridge.fallback_phase is not None
        held = robot.bridge.mode is BridgeMode.HOLD  # a quiet stance: no DAMPING needed
        robot.starved = False
        robot.cycle()
        damping += robot.mode is MotionMode.DAMPING or held
    for _ in range(round(10.0 / PERIOD)):
        robot.cycle()
        worst = max(worst, robot.tilt())
        if robot.mode is MotionMode.STAND:
            break
    robot.run(0.5)
    worst = max(worst, robot.tilt())
    print(
        f"\nINTERRUPTED stand-up from {start}: {INTERRUPTIONS} watchdog trips, {damping} times "
        f"DAMPING, worst true tilt {worst:.3f} rad (limit {LIMIT}), final base height "
        f"{robot.pose().position[2]:.3f} m"
    )
    assert damping == INTERRUPTIONS
    assert worst < LIMIT / 2, worst  # far from the fall limit, not just under it
    assert robot.mode is MotionMode.STAND
    assert robot.pose().position[2] == pytest.approx(0.33, abs=0.02)
    assert not robot.statuses_at(Level.ERROR)


@pytest.mark.parametrize("slowdown", [25])
def test_a_bridge_slowed_by_a_loaded_host_stands_the_robot_up_in_simulated_time(
    robot: LockstepRobot, slowdown: int
) -> None:
    """A stepped simulator behind a slow bridge lives slower than the host's clock; the stack
    stamps frames with simulated time (``Stack``, ``stamp_ns``), so the stand-up keeps its
    profile in the robot's time: level all the way and standing at its height when STAND comes.
    (With the host's clock as stamps — ``LockstepRobot(sim_stamps=False)``, what the stack did
    before — the same run tilted the body 0.97 rad, a hair under the fall limit, and STAND began
    with the body at 0.094 m: the new user's ×10–30 load flipped it.)"""
    robot.run(0.1)
    robot.command("stand_up")
    worst = 0.0
    for _ in range(round(10.0 / PERIOD)):
        robot.stall(PERIOD * (slowdown - 1))  # each 2 ms cycle takes `slowdown` × 2 ms of host
        robot.cycle()
        worst = max(worst, robot.tilt())
        if robot.mode is MotionMode.STAND:
            break
    height = float(robot.pose().position[2])
    print(
        f"\nSLOWED bridge ×{slowdown}: worst true tilt {worst:.3f} rad, base height when STAND "
        f"began {height:.3f} m"
    )
    assert robot.mode is MotionMode.STAND
    assert worst < 0.1 and height > 0.30
