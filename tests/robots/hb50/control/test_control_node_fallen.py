"""A robot that has fallen over is detected, reported and only damped — the real bridge and
control node around MuJoCo, lock-step in simulated time (:mod:`support.hb50_lockstep`).

The new user's robot ended on its back after 205 watchdog-driven damping episodes and stayed
there ~790 s while RobotState said STAND. Here the body is put on its back / side in MuJoCo (or
kicked over), and the ground truth (``/hb50/sim/ground_truth``'s source, never the node's input)
checks what the node claims.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest

from jointbus.bus import RELIABLE
from jointbus.messages.std_msgs import String
from jointbus.robots.hb50.control.fall_detector import FallConfig
from jointbus.robots.hb50.messages import Level, MotionMode
from support.hb50_lockstep import PERIOD, LockstepRobot

ON_BACK = (0.0, 0.0, 1.0, 0.0)  # (w, x, y, z): π about y, as the new user's robot lay
ON_SIDE = (math.cos(math.pi / 4), math.sin(math.pi / 4), 0.0, 0.0)  # π/2 about x
UPRIGHT = (1.0, 0.0, 0.0, 0.0)
LIMIT = FallConfig()


def _stand(robot: LockstepRobot, limit_s: float = 10.0) -> None:
    robot.run(0.1)
    robot.command("stand_up")
    for _ in range(round(limit_s / PERIOD)):
        robot.cycle()
        if robot.mode is MotionMode.STAND:
            break
    robot.run(0.3)
    assert robot.mode is MotionMode.STAND


@pytest.fixture
def robot() -> Iterator[LockstepRobot]:
    made = LockstepRobot()
    try:
        yield made
    finally:
        made.close()


@pytest.mark.parametrize("lying", [ON_BACK, ON_SIDE], ids=["on its back", "on its side"])
def test_a_tipped_over_robot_is_fallen_damped_reported_once_and_refuses_to_stand(
    robot: LockstepRobot, lying: tuple[float, float, float, float]
) -> None:
    _stand(robot)
    robot.tip_over(lying, 0.15)
    robot.run(1.0)
    assert robot.tilt() > LIMIT.tilt_limit + 0.3  # ground truth: it really lies tipped over
    assert robot.mode.name == "FALLEN", f"tipped over, the node says {robot.mode.name}"
    assert robot.states[-1].motion_mode == MotionMode.FALLEN  # what the summary line shows
    applied = robot.bridge.last_applied
    assert applied is not None and set(applied.kp) == {0.0} and min(applied.kd) > 0.0
    errors = robot.statuses_at(Level.ERROR)
    assert len(errors) == 1, errors
    assert all(word in errors[0] for word in ("FALLEN", "roll", "pitch", "height")), errors[0]
    for refused in ("stand_up", "stand", "walk"):
        robot.command(refused)
        robot.run(0.15)  # reports go out from the node's timer within 0.1 s
        assert robot.mode is MotionMode.FALLEN
        assert any(
            f"{refused!r} refused in mode FALLEN: the robot has fallen over" in text
            for text in robot.statuses_at(Level.WARN)
        ), refused
    robot.run(2.0)
    assert robot.mode is MotionMode.FALLEN and len(robot.statuses_at(Level.ERROR)) == 1
    # someone rights it: after the upright hold it stands up from where it lies
    robot.tip_over(UPRIGHT, 0.2)
    robot.run(LIMIT.upright_hold + 0.3)
    assert robot.mode is MotionMode.STAND_UP
    assert any("FALLEN -> STAND_UP" in s for s in robot.statuses_at(Level.OK))
    tilt = 0.0
    for _ in range(round(10.0 / PERIOD)):
        robot.cycle()
        tilt = max(tilt, robot.tilt())
        if robot.mode is MotionMode.STAND:
            break
    robot.run(0.3)
    assert robot.mode is MotionMode.STAND and tilt < 0.4, tilt
    assert robot.pose().position[2] == pytest.approx(0.33, abs=0.02)
    assert len(robot.statuses_at(Level.ERROR)) == 1


def test_idle_while_fallen_keeps_the_robot_down_once_righted(robot: LockstepRobot) -> None:
    _stand(robot)
    robot.tip_over(ON_BACK, 0.15)
    robot.run(0.5)
    robot.command("idle")
    assert robot.mode is MotionMode.FALLEN
    robot.tip_over(UPRIGHT, 0.2)
    robot.run(LIMIT.upright_hold + 0.3)
    assert robot.mode is MotionMode.IDLE
    assert any("FALLEN -> IDLE" in s for s in robot.statuses_at(Level.OK))


def test_a_kick_that_topples_the_standing_robot_is_detected_after_the_hold_time(
    robot: LockstepRobot,
) -> None:
    """Detection latency from ground truth: the first cycle whose true tilt exceeds the limit
    to the first cycle in FALLEN."""
    _stand(robot)
    robot.kick(roll_rate=30.0)  # rolls it over onto its back
    crossed = detected = None
    for _ in range(round(3.0 / PERIOD)):
        robot.cycle()
        if crossed is None and robot.tilt() > LIMIT.tilt_limit:
            crossed = robot.sim_time
        if robot.mode is MotionMode.FALLEN:
            detected = robot.sim_time
            break
    assert crossed is not None and detected is not None, (crossed, robot.mode)
    latency = detected - crossed
    print(f"\nFALL detection latency (ground truth tilt > {LIMIT.tilt_limit} rad → FALLEN): "
          f"{latency * 1e3:.0f} ms; true tilt then {robot.tilt():.2f} rad")
    assert LIMIT.fall_hold <= latency <= LIMIT.fall_hold + 0.01


def test_righted_while_the_drives_are_off_it_waits_in_damping_then_stands_up(
    robot: LockstepRobot,
) -> None:
    """FALLEN knows nothing of the drives; once upright it does what DAMPING would: wait for
    the drives (here an e-stop, latched while it lay on its back), then stand up."""
    hardware = robot.bridge_bus.publisher("/hb50/hardware_command", String, RELIABLE)
    _stand(robot)
    robot.tip_over(ON_BACK, 0.15)
    robot.run(0.5)
    assert robot.mode is MotionMode.FALLEN
    hardware.publish(String("estop"))
    robot.run(0.1)
    assert robot.mode is MotionMode.FALLEN  # still tipped over: FALLEN, not DAMPING
    robot.tip_over(UPRIGHT, 0.2)
    robot.run(LIMIT.upright_hold + 0.3)
    assert robot.mode is MotionMode.DAMPING
    assert any("FALLEN -> DAMPING: e-stop latched" in s for s in robot.statuses_at(Level.OK))
    hardware.publish(String("reset"))
    robot.run(0.1)
    assert robot.mode is MotionMode.STAND_UP
    for _ in range(round(10.0 / PERIOD)):
        robot.cycle()
        if robot.mode is MotionMode.STAND:
            break
    robot.run(0.3)
    assert robot.mode is MotionMode.STAND
    assert robot.pose().position[2] == pytest.approx(0.33, abs=0.02)
