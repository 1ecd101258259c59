"""hb50's fallback trot to a stop, on MuJoCo in simulated time (deterministic).

The scenario is the one that tipped hb50 over before the fallback stepped: the walking controller
trots at 1 m/s (the robot's top speed) and stops answering; the bridge applies its last command for
``early_s`` (0.1 s), then runs the fallback. Here the fallback gets the bridge's frames and drives
the simulated drives itself, as the array node does. Ground truth is MuJoCo's body pose.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import pytest

from jointbus.drivers.actuator_array import JointReading
from jointbus.drivers.impedance import ImpedanceCommand
from jointbus.robots.hb50.bridge.fallback import StanceFallback, StanceFallbackSettings
from jointbus.robots.hb50.bridge.stopping_trot import StoppingTrot
from jointbus.robots.hb50.messages import BridgeData
from support.hb50_sim import PERIOD, apply_arrays, frame, hb50
from support.walking_faults import tilt_of
from support.walking_sim import STAND_HEIGHT, WalkingSim, constant

ROBOT = hb50()
N = len(ROBOT.actuator_order)


def reading_of(data: BridgeData) -> JointReading:
    """The array node's reading of the drives behind ``data`` (the fallback's other input)."""
    zeros = np.zeros(N)
    return JointReading(
        names=ROBOT.actuator_order,
        time=0.0,
        position=np.array(data.joint_position),
        velocity=np.array(data.joint_velocity),
        acceleration=zeros,
        current=zeros,
        effort=np.array(data.joint_effort),
        temperature=np.full(N, 30.0),
        status=np.zeros(N, dtype=np.uint32),
        state=np.zeros(N, dtype=np.uint8),
        motor_power=True,
    )


def up_of(data: BridgeData) -> tuple[float, float, float]:
    o = data.orientation
    w, x, y, z = o.w, o.x, o.y, o.z
    return (2.0 * (x * z - w * y), 2.0 * (y * z + w * x), w * w - x * x - y * y + z * z)


class Stall:
    """The robot trotting at ``speed`` m/s for ``walk_s`` s (simulated), then its controller
    silent: its last command stays applied for ``early_s``, then the fallback drives."""

    def __init__(
        self, speed: float, walk_s: float, vy: float = 0.0, yaw_rate: float = 0.0
    ) -> None:
        self.sim = WalkingSim()
        self.sim.run(walk_s, constant(vx=speed, vy=vy, yaw_rate=yaw_rate))
        ctl = self.sim.controller
        self.walk_phase = ctl.gait.peek()
        self.setpoint = ctl.velocity_setpoint
        world = self.sim.world
        out = self.sim.last_output  # what the drives apply until told otherwise
        assert out is not None
        self.last = ImpedanceCommand(
            out.position, out.velocity, out.torque, out.kp, out.kd, np.zeros(N, dtype=np.bool_)
        )
        self.frame = frame(world)
        self.fallback = StanceFallback.from_model(
            ROBOT, period=PERIOD, up=lambda: up_of(self.frame), frame=lambda: self.frame
        )
        self.min_height = math.inf
        self.max_tilt = 0.0
        self.heights: list[float] = []
        self.speeds: list[float] = []
        self.phases: list[str] = []

    def step(self, command: ImpedanceCommand | None = None) -> None:
        world = self.sim.world
        if command is not None:
            apply_arrays(world, command.position, command.velocity, command.effort, command.kp,
                         command.kd)
        world.step(PERIOD)
        self.frame = frame(world)
        pose = world.base_pose()
        w, x, y, z = pose.orientation.tolist()
        height = float(pose.position[2])
        self.min_height = min(self.min_height, height)
        self.max_tilt = max(self.max_tilt, tilt_of(x, y, z, w))
        self.heights.append(height)
        self.speeds.append(float(np.hypot(*pose.linear_velocity[:2])))

    def stall(self, seconds: float, runs: Sequence[bool] = (True,)) -> None:
        """``seconds`` of fallback; ``runs``: the bridge's cycles in a repeating pattern, False
        for one it skipped (starved of CPU: the drives keep the last command, the robot moves
        on)."""
        for _ in range(round(StanceFallbackSettings().early_s / PERIOD)):
            self.step()  # the bridge keeps applying the last command
        report = self.fallback.begin(reading_of(self.frame), self.last, 0.1)
        assert report is not None
        self.report = report
        for runs_now in itertools.islice(itertools.cycle(runs), round(seconds / PERIOD)):
            if not runs_now:
                self.step()
                continue
            self.step(self.fallback.command(reading_of(self.frame)))
            self.phases.append(self.fallback.phase)


@pytest.mark.parametrize("walk_s", [2.0, 2.05, 2.1, 2.17])  # stalls at four points of the stride
def test_a_controller_lost_at_top_speed_is_stepped_to_a_standstill_then_the_robot_sits(
    walk_s: float,
) -> None:
    stall = Stall(1.0, walk_s)
    assert stall.speeds == [] and stall.setpoint[0] == pytest.approx(1.0)
    stall.stall(12.0)
    report = stall.report
    assert "while the robot walked" in report.text and "trotting to a stop" in report.text
    assert report.facts["phase"] == "step"
    assert report.facts["vx"] == pytest.approx(1.0, abs=0.05)  # read off the last command
    # it stayed up while it stopped: above 0.25 m, tilted less than the chaos bound of 0.5 rad
    step_cycles = stall.phases.count("step")
    trot = stall.fallback._trot
    assert trot is not None and not trot.timed_out
    assert 0 < step_cycles * PERIOD < trot.timeout_s
    assert min(stall.heights[:step_cycles]) > 0.25
    assert stall.max_tilt < 0.5
    # at a standstill when the hold began, and still there
    hold = stall.phases.index("hold")
    assert max(stall.speeds[hold : hold + round(1.0 / PERIOD)]) < 0.1
    # then it sat: phases in order, the body at the sit height, level
    seen = [p for i, p in enumerate(stall.phases) if i == 0 or stall.phases[i - 1] != p]
    assert seen == ["step", "hold", "sit", "sat"]
    assert stall.heights[-1] == pytest.approx(0.14, abs=0.03)
    assert stall.fallback.quiet
    texts = [r.text for r in stall.fallback.take_reports()]
    sit = stall.phases.index("sit")
    print(f"step {step_cycles * PERIOD:.2f} s, min height before the sit "
          f"{min(stall.heights[:sit]):.3f} m, max tilt {stall.max_tilt:.3f} rad")
    assert any("trotted to a stop in" in t for t in texts)


@pytest.mark.parametrize("walk_s", [2.0, 2.03, 2.08])  # swinging, double support, swinging
def test_it_reads_the_walking_velocity_and_the_pair_that_lifts_next_off_the_last_command(
    walk_s: float,
) -> None:
    stall = Stall(0.6, walk_s)
    trot = StoppingTrot(ROBOT, period=PERIOD)
    (vx, vy), lifting = trot.walking_velocity(stall.last)
    assert vx == pytest.approx(stall.setpoint[0], abs=0.03)
    assert vy == pytest.approx(stall.setpoint[1], abs=0.03)
    owner = stall.walk_phase  # the owner's own clock: the oracle the bridge has not got
    if not all(owner.stance):
        assert lifting == [not s for s in owner.stance]
    else:  # double support: the pair furthest through its stance lifts next
        due = max(range(4), key=lambda k: owner.progress[k])
        assert sum(lifting) == 2 and lifting[due]
        assert all(owner.progress[k] > 0.5 for k in range(4) if lifting[k])
    # a standing posture (no feed-forward torque anywhere) is not walking
    standing = ImpedanceCommand.hold(stall.last.position, 80.0, 3.0)
    assert trot.walking_velocity(standing) == ((0.0, 0.0), [False] * 4)


def test_a_robot_that_only_stands_gets_the_stance_not_the_trot() -> None:
    sim = WalkingSim()
    data = frame(sim.world)
    fb = StanceFallback.from_model(ROBOT, period=PERIOD, up=lambda: up_of(data),
                                   frame=lambda: data)
    q = np.array(data.joint_position)
    report = fb.begin(reading_of(data), ImpedanceCommand.hold(q, 80.0, 3.0), 0.25)
    assert report is not None and "while the robot stood" in report.text
    assert fb.phase == "stance"
    assert sim.world.base_pose().position[2] == pytest.approx(STAND_HEIGHT, abs=0.02)


# The chaos campaign's SIGKILL #862 (seed 11): the control node lost mid-trot at 0.42 m/s forward,
# 0.26 m/s sideways and -0.70 rad/s. At this point of the stride every foot is down.
COMBINED = dict(speed=0.42, vy=0.26, yaw_rate=-0.70)


def test_a_controller_lost_in_double_support_mid_turn_lifts_the_pair_due_and_stays_level() -> None:
    stall = Stall(walk_s=2.08, **COMBINED)
    assert all(stall.walk_phase.stance)  # double support
    stall.stall(3.0)
    facts = stall.report.facts
    # the pair at the end of its stance steps first (lifting the pair that had just landed
    # tipped the body to 0.43 rad here)
    legs = ("fr", "fl", "rl", "rr")
    due = [leg for k, leg in enumerate(legs) if stall.walk_phase.progress[k] > 0.5]
    assert facts["swinging"] == due
    assert stall.max_tilt < 0.25


def test_the_trot_squares_the_feet_before_it_hands_the_stance_on() -> None:
    stall = Stall(walk_s=2.12, **COMBINED)
    stall.stall(4.0)
    hold = stall.phases.index("hold")
    trot = stall.fallback._trot
    assert trot is not None and not trot.timed_out and trot.squaring_steps >= 1
    assert hold * PERIOD < trot.timeout_s
    # where the feet stand in the hold, when a controller may take over: near the walking
    # controller's nominal footholds (without the steps in place: 62-86 mm off; from a stance
    # 86 mm off, a stand-up rolled the robot over)
    assert stall.fallback.phase == "hold"
    feet = stall.fallback.feet(np.array(stall.frame.joint_position))
    off = np.hypot(*(feet[:, :2] - trot.controller.nominal).T)
    assert float(off.max()) < 0.06, off
    texts = [r.text for r in stall.fallback.take_reports()]
    assert any("step(s) in place to square the feet" in t for t in texts)


@pytest.mark.parametrize(
    ("runs", "walk_s"),
    [
        ((True, False), 2.0),  # every other cycle skipped
        ((True,) * 10 + (False,) * 15, 2.05),  # 20 ms run, 30 ms skipped: 40 % of the cycles
    ],
)
def test_a_bridge_skipping_cycles_still_trots_to_a_stop_in_robot_time(
    runs: tuple[bool, ...], walk_s: float
) -> None:
    """A bridge starved of CPU skips cycles while the robot moves on. The trot advances by the
    frames' stamps, so it keeps time with the robot: counted in bridge periods, it ran at the
    share of cycles it got and tipped the robot stopped from 0.5 m/s to 1.0–3.1 rad in 8 of 9
    such runs (tilt 0.14–0.24 rad with the stamps)."""
    stall = Stall(0.5, walk_s)
    stall.stall(4.0, runs)
    trot = stall.fallback._trot
    assert trot is not None and not trot.timed_out
    assert "hold" in stall.phases, stall.phases[-1]
    assert stall.max_tilt < 0.35, stall.max_tilt
    assert stall.min_height > 0.3, stall.min_height
