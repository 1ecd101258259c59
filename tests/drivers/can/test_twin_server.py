"""The motor twin of a ``can://`` URL: where its motors start, its time base, its fault injection.

Issue 20 item 16: the twin started every motor at 0 rad — on the knee's limit [-2.705, 0] — so
the README's "hold where you are" pattern (read the positions, command them back as an
impedance hold) was refused on its very first command.

A user's trial (2026-12-06): the twin advanced its physics by the URL's ``period`` per exchange,
so on the default 2 ms and driven at 100 Hz (``jointbus serve``) it moved 5× slow by the wall
clock and replied velocities 5× the positions' change per second. The time-base tests drive the
twin's injected clock by hand — no assertion depends on the host's speed.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from jointbus import drivers
from jointbus.drivers import ImpedanceCommand
from jointbus.drivers.actuator_array import ActuatorArray, ActuatorArrayConfigError
from jointbus.drivers.can.config import CanArrayConfig
from jointbus.drivers.can.driver import max_profile_step
from jointbus.drivers.can.twin_server import TwinServer, rest_positions
from jointbus.drivers.registry import DriverURL
from jointbus.drivers.sim.robots import HB50_LYING_POSE
from jointbus.model.yaml_loader import load_robot


def fresh_url(robot: str = "hb50") -> str:
    return f"can://virtual/jb-twin-{uuid.uuid4().hex}?robot={robot}&model=md80"


@pytest.mark.parametrize("noise", [True, False])
def test_holding_where_the_motors_are_is_accepted_on_the_first_command(noise: bool) -> None:
    url = fresh_url()
    with TwinServer.from_url(url, noise=noise), drivers.open(url) as legs:
        legs.power(True)
        here = legs.read_joints().position.copy()  # rad, actuator order
        limits = legs.config.limits
        for i, spec in enumerate(limits):
            assert spec.position_min < here[i] < spec.position_max, legs.names[i]
        hold = ImpedanceCommand.hold(here, kp=20.0, kd=1.0)
        for _ in range(50):  # the README's pattern: a short impedance stream, nothing refused
            legs.impedance(hold)
            reading = legs.read_joints()
        assert np.abs(reading.position - here).max() < 0.05


def test_hb50s_twin_starts_where_the_simulated_robot_lies() -> None:
    """One rest pose: the robot file's ``rest``, which ``sim://hb50`` starts in too."""
    model = load_robot("hb50")
    rest = model.pose("rest")
    home = model.pose("home")
    for leg in range(4):
        names = model.actuator_order[3 * leg : 3 * leg + 3]
        expected = [np.sign(home[n]) * v for n, v in zip(names, HB50_LYING_POSE, strict=True)]
        assert [rest[n] for n in names] == pytest.approx(expected)
    url = fresh_url()
    config = CanArrayConfig.from_url(DriverURL.parse(url))
    assert rest_positions(config) == pytest.approx([rest[n] for n in model.actuator_order])
    with TwinServer.from_url(url, noise=False) as server:
        assert server.twin.positions == pytest.approx([rest[n] for n in model.actuator_order])


def test_a_robot_without_a_rest_pose_starts_at_home_moved_inside_its_limits(
    tmp_path: Path,
) -> None:
    robot = tmp_path / "wrist.yaml"
    robot.write_text(
        """
name: wrist
links: [{name: base}, {name: a}, {name: b}]
joints:
  - {name: flex, type: revolute, parent: base, child: a, axis: [0, 1, 0],
     limits: {position: [-2.0, 0.0], velocity: 3.0, effort: 5.0, current: 4.0}}
  - {name: roll, type: revolute, parent: a, child: b, axis: [1, 0, 0],
     limits: {position: [-1.0, 1.0], velocity: 3.0, effort: 5.0, current: 4.0}}
""",
        encoding="utf-8",
    )
    url = f"can://virtual/jb-twin-{uuid.uuid4().hex}?robot={robot}&model=md80"
    start = rest_positions(CanArrayConfig.from_url(DriverURL.parse(url)))
    assert -2.0 < start[0] < 0.0  # home 0 is on flex's upper limit: moved inside
    assert start[0] == pytest.approx(-0.05)
    assert start[1] == 0.0  # roll's home is inside already


def test_a_chosen_start_is_where_the_motors_are_and_a_wrong_one_is_refused() -> None:
    url = fresh_url()
    config = CanArrayConfig.from_url(DriverURL.parse(url))
    home = load_robot("hb50").pose("home")
    start = [home[n] for n in config.array.names]
    with TwinServer(config, noise=False, initial_positions=start) as server:
        assert server.twin.positions == pytest.approx(start)
    with pytest.raises(ActuatorArrayConfigError, match="expected 12 finite positions"):
        TwinServer(config, initial_positions=[0.0, 0.0])


# ---------------------------------------------------------------- time base

JOINT = 1  # fr_j1: 0.7 rad in the standing pose, range ±1.571 rad, calibration 1·θ + 0
VELOCITY = -1.0  # rad/s, towards the far end of fr_j1's range: 2.27 rad of room
KD = 5.0  # N·m·s/rad: the joint reaches the target velocity within ms (J = 0.0094 kg·m²)
P_QUANTUM = 25.0 / 65535  # rad: md80's 16-bit position over ±12.5 rad
V_QUANTUM = 50.0 / 4095  # rad/s: md80's 12-bit velocity over ±25 rad/s


class FakeClock:
    """Monotonic seconds that pass only when the test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@contextlib.contextmanager
def clocked_twin(url: str) -> Iterator[tuple[TwinServer, ActuatorArray, FakeClock]]:
    """hb50's twin for ``url`` on a :class:`FakeClock`, noise-free, standing; the driver open on
    it and powered, waiting up to 1 s for a reply (a reply missed on a loaded host would read
    NaN, and no assertion here is about the host's speed)."""
    url += "&timeout=1"
    config = CanArrayConfig.from_url(DriverURL.parse(url))
    home = load_robot("hb50").pose("home")
    start = [home[n] for n in config.array.names]
    clock = FakeClock()
    with (
        TwinServer(config, noise=False, initial_positions=start, clock=clock) as server,
        drivers.open(url) as legs,
    ):
        legs.power(True)
        yield server, legs, clock


def velocity_command(server: TwinServer, legs: ActuatorArray) -> ImpedanceCommand:
    """Every joint held where it stands, but :data:`JOINT` driven at :data:`VELOCITY` (kp 0,
    kd :data:`KD`) with its friction fed forward, so its steady velocity is the target's."""
    here = legs.read_joints().position.copy()
    params = server.twin.model.params[JOINT]
    effort = np.zeros(legs.count)
    effort[JOINT] = np.sign(VELOCITY) * params.coulomb_friction + params.viscous_friction * VELOCITY
    velocity = np.zeros(legs.count)
    velocity[JOINT] = VELOCITY
    kp = np.full(legs.count, 20.0)
    kp[JOINT] = 0.0
    kd = np.full(legs.count, 1.0)
    kd[JOINT] = KD
    return ImpedanceCommand(here, velocity, effort, kp, kd, np.zeros(legs.count, dtype=bool))


def exchange(
    legs: ActuatorArray, clock: FakeClock, command: ImpedanceCommand, dt: float
) -> tuple[float, float, float]:
    """Let ``dt`` s of the clock pass, then one exchange: (clock time, position, velocity) of
    :data:`JOINT` in its replies."""
    clock.now += dt
    legs.impedance(command)
    reading = legs.read_joints()  # the replies of that exchange
    return clock.now, float(reading.position[JOINT]), float(reading.velocity[JOINT])


@pytest.mark.parametrize(
    ("interval", "period", "old"),
    [
        (0.010, None, "on its default 2 ms: 5× slow"),
        (0.002, 0.01, "given the 10 ms of a node at 100 Hz: 5× fast"),
    ],
    ids=["100Hz", "500Hz"],
)
def test_the_twin_moves_by_the_clock_at_any_exchange_rate(
    interval: float, period: float | None, old: str
) -> None:
    """A joint commanded at -1 rad/s moves 1 rad per second of the clock, and the velocity it
    reports is its position's change per clock second, whether the program exchanges every
    10 ms or every 2 ms, whatever ``period`` the twin's URL gives. (The old twin advanced its
    physics by ``period`` per exchange: exchanged at 100 Hz on the default 2 ms it moved
    0.2 rad per clock second while reporting -1 rad/s; at 500 Hz with period 0.01, 5 rad.)"""
    url = fresh_url() + ("" if period is None else f"&period={period}")
    with clocked_twin(url) as (server, legs, clock):
        assert server.twin.clocked
        command = velocity_command(server, legs)
        rows = [exchange(legs, clock, command, interval) for _ in range(round(1.2 / interval))]
        truth_time, truth = server.twin.model.time, server.twin.positions[JOINT]
        # the physics ran for the clock's time, not a period per exchange
        assert truth_time == pytest.approx(1.2, abs=1e-6), old
    t, p, v = (np.array(column) for column in zip(*rows, strict=True))
    t -= t[0] - interval
    steady = t >= 0.2  # s: the joint reached its velocity within ms; well after that
    moved = p[steady][-1] - p[steady][0]
    elapsed = t[steady][-1] - t[steady][0]
    # moved by velocity × clock time, to the frames' resolution (the command's velocity
    # travels in 12 bits: -1 rad/s arrives as -0.9951) …
    bound = V_QUANTUM * elapsed + 2 * P_QUANTUM
    assert moved == pytest.approx(VELOCITY * elapsed, abs=bound), (old, moved, elapsed)
    # … and every velocity reported is the position's change per clock second
    assert np.abs(v[steady] - VELOCITY).max() <= V_QUANTUM, old
    assert np.mean(v[steady]) == pytest.approx(moved / elapsed, abs=V_QUANTUM), old
    # the true position agrees: from 0.7 rad (the standing pose), moving from the first
    # exchange on (the joint's ~2 ms to reach its velocity: 2 mrad)
    run = 1.2 - interval
    assert truth == pytest.approx(0.7 + VELOCITY * run, abs=V_QUANTUM * run + 0.003), old


def test_a_stalled_clock_advances_the_twins_physics_by_the_clamp_at_most() -> None:
    """1 s passes on the clock between two exchanges (a stalled program, a starved twin
    thread): the physics advances by the driver's clamp (50 ms), so the joint moving at
    -1 rad/s moves 0.05 rad in that exchange, not 1 rad, and then goes on at its velocity."""
    clamp = max_profile_step(CanArrayConfig.from_url(DriverURL.parse(fresh_url())).period_s)
    assert clamp == pytest.approx(0.05)
    with clocked_twin(fresh_url()) as (server, legs, clock):
        command = velocity_command(server, legs)
        for _ in range(30):  # 0.3 s at 100 Hz: at its velocity
            _, before, _ = exchange(legs, clock, command, 0.01)
        time_before = server.twin.model.time
        _, after, v_after = exchange(legs, clock, command, 1.0)
        stalled_step = server.twin.model.time - time_before
        _, later, _ = exchange(legs, clock, command, 0.01)
    assert stalled_step == pytest.approx(clamp, abs=1e-9)
    assert after - before == pytest.approx(VELOCITY * clamp, abs=2 * P_QUANTUM)
    assert v_after == pytest.approx(VELOCITY, abs=V_QUANTUM)
    assert later - after == pytest.approx(VELOCITY * 0.01, abs=2 * P_QUANTUM)


def test_a_twin_for_a_user_runs_on_the_monotonic_clock() -> None:
    """``TwinServer.from_url`` (``jointbus can-twin``, a user's program) is clocked; a test that
    runs the driver in lock-step asks for ``clock=None``, and its twin steps per exchange."""
    url = fresh_url()
    with TwinServer.from_url(url, noise=False) as server:
        assert server.twin.clocked
    with TwinServer.from_url(url, noise=False, clock=None) as server:
        assert not server.twin.clocked
