"""hb50's stance-then-sit fallback, the law alone: what it writes cycle by cycle, and whom it
lets back (no bus, no clock: readings built by hand, cycles counted)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from jointbus.drivers.actuator_array import JointReading
from jointbus.drivers.impedance import ImpedanceCommand
from jointbus.model.yaml_loader import load_robot
from jointbus.robots.hb50.bridge.fallback import StanceFallback, StanceFallbackSettings

ROBOT = load_robot("hb50")
ORDER = ROBOT.actuator_order
HOME = np.array([ROBOT.pose("home")[n] for n in ORDER])
REST = np.array([ROBOT.pose("rest")[n] for n in ORDER])
PERIOD = 0.002
N = len(ORDER)
LOWER = np.array([j.limits.position_min for j in ROBOT.joints if j.name in ORDER])


def reading(
    position: np.ndarray, velocity: float | np.ndarray = 0.0, time: float = 0.0
) -> JointReading:
    """A reading; ``time``: the driver's clock (s). Most tests leave it at 0 (a clock that
    does not move): the fallback then counts cycles."""
    zeros = np.zeros(N)
    return JointReading(
        names=ORDER,
        time=time,
        position=np.asarray(position, dtype=np.float64),
        velocity=np.broadcast_to(np.asarray(velocity, dtype=np.float64), (N,)).copy(),
        acceleration=zeros,
        current=zeros,
        effort=zeros,
        temperature=np.full(N, 30.0),
        status=np.zeros(N, dtype=np.uint32),
        state=np.zeros(N, dtype=np.uint8),
        motor_power=True,
    )


def fallback(tilt: float | None = None) -> StanceFallback:
    """The fallback; ``tilt``: an IMU saying the body is rolled by that much (rad)."""
    up = None if tilt is None else (0.0, math.sin(tilt), math.cos(tilt))
    return StanceFallback.from_model(ROBOT, period=PERIOD, up=None if up is None else (lambda: up))


def trot_command() -> tuple[np.ndarray, ImpedanceCommand]:
    """A mid-trot command: front-right and rear-left legs swinging (thigh and knee folded
    0.4 rad more), stance legs soft with a feed-forward torque; and the pose measured then."""
    target = HOME.copy()
    for i in (1, 7):  # fr_j1, rl_j1 swing the thigh up; knees fold more
        target[i] += 0.4 * np.sign(HOME[i])
    for i in (2, 8):
        target[i] += 0.4 * np.sign(HOME[i])
    kp = np.full(N, 20.0)
    effort = np.where(np.arange(N) % 3 == 2, 6.0 * np.sign(HOME), 0.0)
    cmd = ImpedanceCommand(target, np.zeros(N), effort, kp, np.full(N, 1.0), np.zeros(N, bool))
    return target + 0.01, cmd


def run(fb: StanceFallback, seconds: float, position: np.ndarray) -> list[ImpedanceCommand]:
    return [fb.command(reading(position)) for _ in range(round(seconds / PERIOD))]


def test_the_sit_and_home_stances_are_hb50_poses_inside_the_limits() -> None:
    fb = fallback()
    assert np.allclose(fb.pose_at(fb.home_depth), HOME, atol=0.02)
    assert fb.sit_depth == pytest.approx(0.14 - 0.021)
    depths = fb.foot_depths(fb.q_sit)
    assert np.allclose(depths, fb.sit_depth, atol=1e-6)  # every foot under the body at the sit
    assert np.all(fb.q_sit >= LOWER - 1e-9)
    # the knees fold further to sit, never past their limit (2.705 rad)
    assert np.all(np.abs(fb.q_sit[2::3]) > np.abs(HOME[2::3]))
    assert np.all(np.abs(fb.q_sit[2::3]) < 2.705)


def test_from_a_trot_it_starts_at_the_last_command_and_reaches_the_stance_stiff() -> None:
    fb = fallback()
    measured, last = trot_command()
    report = fb.begin(reading(measured), last, 0.252)
    assert report is not None and report.level == "WARN"
    assert "no command for 252 ms while the robot stood" in report.text
    assert "stiffness 20.0 → 80 N·m/rad" in report.text
    first = fb.command(reading(measured))
    # no jump: the first command is the last one, a cycle along the profile
    assert np.allclose(first.position, last.position, atol=1e-4)
    assert np.allclose(first.kp, last.kp, atol=0.01)
    assert np.allclose(first.effort, last.effort, atol=0.01)
    stance_s = StanceFallbackSettings().stance_s
    commands = [first, *run(fb, stance_s, measured)]
    # the targets move from the last command to the stance at a bounded speed
    steps = np.abs(np.diff([c.position for c in commands], axis=0)) / PERIOD
    gap = np.abs(commands[-1].position - last.position).max()
    assert steps.max() < 1.875 * gap / stance_s + 1e-6  # min-jerk peak: 1.875 × gap / time
    stance = commands[-1]
    assert np.allclose(stance.kp, 80.0) and np.allclose(stance.kd, 3.0)
    assert np.allclose(stance.effort, 0.0)
    # every foot down at the depth of the deepest measured foot, straight below where it was
    depths = fb.foot_depths(stance.position)
    assert np.allclose(depths, depths[0], atol=1e-6)
    assert depths[0] == pytest.approx(min(np.nanmax(fb.foot_depths(measured)), fb.home_depth))
    feet = fb.feet(stance.position)[:, :2]
    moved = feet - fb.feet(measured)[:, :2]
    assert np.abs(moved[[1, 3]]).max() < 1e-6  # the loaded feet (fl, rr) are not moved
    # a swing foot lands under itself, kept within the slack of its home x, y
    slack = StanceFallbackSettings().footprint_slack
    assert np.abs(feet - fb.footprint[:, :2]).max() <= slack + 1e-6
    run(fb, 0.01, measured)
    assert fb.phase == "hold"


def test_its_phases_last_their_seconds_by_the_drivers_clock_when_the_bridge_skips_cycles() -> None:
    """A user's trial (2026-12-06): a bridge skipping 27–51 % of its cycles beside a real-time
    stack reported "ended after 1.89 s in phase hold" 3.50 s after the fallback began (stamps of
    the two reports). Every other cycle skipped here: the driver's clock (the simulator stepping
    through the skipped slots) moves two periods a cycle, and the 5 s hold lasts 5 s of it."""
    settings = StanceFallbackSettings()
    fb = fallback()
    fb.begin(reading(HOME, time=10.0), ImpedanceCommand.hold(HOME, 80.0, 3.0), 0.25)
    t = 10.0
    while fb.phase != "sit" and t < 30.0:
        fb.command(reading(HOME, time=t))
        t += 2 * PERIOD
    began_sit = t - 2 * PERIOD - 10.0  # the reading the sit began at, s after the fallback's
    assert began_sit == pytest.approx(settings.stance_s + settings.hold_s, abs=2 * PERIOD)
    quiet = [r for r in fb.take_reports() if r.text.startswith("fallback: stance quiet")]
    assert quiet and quiet[0].facts["quiet_after_s"] == pytest.approx(
        settings.stance_s + settings.settle_s, abs=4 * PERIOD  # a cycle is 2 periods here
    )


def test_mid_stride_it_takes_over_before_the_watchdog_standing_it_waits() -> None:
    fb = fallback()
    _measured, trot = trot_command()
    standing = ImpedanceCommand.hold(HOME, 80.0, 3.0)
    assert fb.early_after_s == pytest.approx(0.1)
    assert fb.early(reading(HOME), trot, 0.1)  # a foot in the air: do not freeze it there
    assert not fb.early(reading(HOME), standing, 0.1)  # a stance: the watchdog's time
    assert not fb.early(reading(HOME), None, 0.1)


def test_it_holds_then_sits_slowly_and_reports_each_phase() -> None:
    fb = fallback()
    fb.begin(reading(HOME), ImpedanceCommand.hold(HOME, 80.0, 3.0), 0.25)
    hold_s = StanceFallbackSettings().hold_s
    run(fb, StanceFallbackSettings().stance_s + hold_s - 0.01, HOME)
    assert fb.phase == "hold"
    sit = run(fb, 3.0, HOME)
    assert fb.phase == "sit"
    speeds = np.abs(np.diff([c.position for c in sit], axis=0)) / PERIOD
    assert speeds.max() < 1.0  # slow: under 1 rad/s on every joint
    last = run(fb, 0.1, fb.q_sit)[-1]  # measured: the legs at the sit
    assert fb.phase == "sat"
    assert np.allclose(last.position, fb.q_sit) and np.allclose(last.kp, 80.0)
    texts = [r.text for r in fb.take_reports()]
    assert any(t.startswith("fallback: stance reached") for t in texts)
    assert any(t.startswith("fallback: stance quiet") for t in texts)
    assert any("sitting down to 0.14 m over 3 s" in t for t in texts)
    # the height it reports is the measured legs', beside the set-point
    assert any(
        t.startswith("fallback: sat down after")
        and "body at 0.140 m by the legs (set-point 0.14 m)" in t
        for t in texts
    ), texts


def test_a_robot_already_down_or_tipped_over_gets_damping_only() -> None:
    fb = fallback()
    report = fb.begin(reading(REST), ImpedanceCommand.hold(REST, 80.0, 3.0), 0.25)
    assert report is not None and "the robot is down" in report.text and fb.phase == "down"
    cmd = fb.command(reading(REST))
    assert np.all(cmd.kp == 0.0) and np.all(cmd.kd == StanceFallbackSettings().down_kd)
    assert fb.admits(ImpedanceCommand.damping(N, 1.0), reading(REST)) is None
    tipped = fallback(tilt=0.9)
    report = tipped.begin(reading(HOME), ImpedanceCommand.hold(HOME, 80.0, 3.0), 0.25)
    assert report is not None and "tilted 0.90 rad" in report.text and tipped.phase == "down"


def test_a_returning_controller_waits_for_quiet_and_starts_from_the_measured_pose() -> None:
    fb = fallback()
    measured, last = trot_command()
    fb.begin(reading(measured), last, 0.25)
    run(fb, 0.2, measured)
    stale = fb.admits(last, reading(measured))
    assert stale is not None and "not yet quiet" in stale
    # moving joints keep it from being quiet after the stance move
    for _ in range(round(0.6 / PERIOD)):
        fb.command(reading(fb.pose_at(0.3), velocity=0.8))
    assert not fb.quiet
    fb.command(reading(fb.pose_at(0.3), velocity=0.1))
    # still and settled, but the stale trot command was refused last: its sender must see the
    # drives unavailable (not quiet: the node shows ``safe``) to notice and start again
    assert not fb.quiet
    here = fb.pose_at(0.3)
    assert "damping only" in (fb.admits(ImpedanceCommand.damping(N, 3.0), reading(here)) or "")
    assert fb.quiet  # it sends damping: it knows; now it may start from the measured pose
    far = fb.admits(last, reading(here))
    assert far is not None and "from the measured" in far and "(index" in far
    assert not fb.quiet
    assert fb.admits(ImpedanceCommand.hold(here + 0.05, 80.0, 3.0), reading(here)) is None


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="sit_s"):
        StanceFallbackSettings(sit_s=0.0)
    with pytest.raises(ValueError, match="kp"):
        StanceFallbackSettings(kp=math.nan)
    with pytest.raises(ValueError, match="period"):
        StanceFallback.from_model(ROBOT, period=0.0)


def test_a_tilted_body_is_pushed_level_and_not_quiet_while_it_tips() -> None:
    fb = fallback(tilt=0.15)
    fb.begin(reading(HOME), ImpedanceCommand.hold(HOME, 80.0, 3.0), 0.25)
    stance = run(fb, 0.6, HOME)[-1]
    depths = fb.foot_depths(stance.position)  # in the body frame: a level body over its feet
    assert np.allclose(depths, depths[0], atol=1e-6)
    assert fb.quiet  # 0.15 rad < 0.2: quiet
    tipping = fallback(tilt=0.3)
    tipping.begin(reading(HOME), ImpedanceCommand.hold(HOME, 80.0, 3.0), 0.25)
    run(tipping, 0.6, HOME)
    assert not tipping.quiet  # still joints, but the robot tips: no controller yet


def test_in_double_support_the_trots_feed_forward_takes_over_early() -> None:
    """All four feet down (the trot's double support) but the stance legs pushing by ``Jᵀ·f``:
    frozen for the watchdog's 0.25 s, such a command tipped the robot 0.18 rad (it then went
    over onto its back); a handover posture's small residual torque does not count."""
    fb = fallback()
    effort = np.where(np.arange(N) % 3 == 2, 3.0 * np.sign(HOME), 0.0)
    double_support = ImpedanceCommand(
        HOME, np.zeros(N), effort, np.full(N, 40.0), np.full(N, 1.0), np.zeros(N, bool)
    )
    assert np.ptp(fb.foot_depths(HOME)) < StanceFallbackSettings().swing_lift
    assert fb.early(reading(HOME), double_support, 0.1)
    faded = ImpedanceCommand(
        HOME, np.zeros(N), effort / 10.0, np.full(N, 80.0), np.full(N, 3.0), np.zeros(N, bool)
    )
    assert not fb.early(reading(HOME), faded, 0.1)


def test_a_robot_tipping_over_during_the_stance_gets_damping_and_a_controller_may_take_it() -> None:
    tilt = [0.1]
    fb = StanceFallback.from_model(
        ROBOT, period=PERIOD, up=lambda: (0.0, math.sin(tilt[0]), math.cos(tilt[0]))
    )
    fb.begin(reading(HOME), ImpedanceCommand.hold(HOME, 80.0, 3.0), 0.25)
    run(fb, 0.3, HOME)
    assert fb.phase == "hold"
    tilt[0] = 0.6  # going over
    cmd = fb.command(reading(HOME, velocity=2.0))
    assert fb.phase == "down"
    assert np.all(cmd.kp == 0.0) and np.all(cmd.kd == StanceFallbackSettings().down_kd)
    reports = fb.take_reports()
    assert any(
        r.level == "ERROR" and "tipped over" in r.text and "0.60 rad" in r.text for r in reports
    )
    tilt[0] = math.pi  # on its back: damping stays, a controller's damping is let in
    run(fb, 1.0, HOME)
    assert fb.phase == "down"
    assert fb.admits(ImpedanceCommand.damping(N, 1.0), reading(HOME)) is None


def test_its_own_last_command_is_no_stride_of_the_owner_when_a_controller_comes_back() -> None:
    """A user's fault test (3 s SIGSTOP of the walking control node): a command answering a
    frame 0.19 s old ended the fallback, and in that same cycle the last command written — the
    fallback's own, its stance still pushing with the trot's torques — made the early rule
    begin a second fallback at once ("no command for 186 ms while the robot stood", a new
    stance that refused the controller for 0.4 s). The rule judges the owner's stride only."""
    fb = fallback()
    measured, last = trot_command()
    fb.begin(reading(measured), last, 0.25)
    own = run(fb, 0.01, measured)[-1]  # early in the stance: the trot's torque not yet faded
    assert float(np.abs(own.effort).max()) > StanceFallbackSettings().early_effort
    fb.cancel()  # the owner's command was admitted: the fallback ended this cycle
    assert not fb.early(reading(measured), own, 0.186)
    # the same torques in a command of the owner's (a stride): still early
    owners = ImpedanceCommand(
        own.position + 0.01, own.velocity, own.effort, own.kp, own.kd, own.brake
    )
    assert fb.early(reading(measured), owners, 0.186)
