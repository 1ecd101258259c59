"""The ``can://`` driver's time base: profiled moves run on the clock, not on the exchange count.

A user's trial (docs/CAN.md, 2026-12-06): the driver advanced a move's profile by the URL's
``period`` (2 ms) per bus exchange, so served at 100 Hz a move ran 5× slower than its speed, and
read flat out it ran *faster* than the speed set. These tests drive the driver's injected clock
by hand — an exchange every 10 ms of its time (a node serving at 100 Hz) or every 0.5 ms (a loop
reading as fast as it can) — and look at the setpoints on the wire (the twin on python-can's
virtual bus answers, a listener decodes every frame). No assertion depends on the host's speed.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import can
import numpy as np
import pytest

from jointbus.drivers.can.config import VIRTUAL_REPLY_TIMEOUT_S, CanArrayConfig
from jointbus.drivers.can.driver import PROFILE_STEP_MAX_S, CanActuatorArray
from jointbus.drivers.can.firmware_twin import FirmwareTwin
from jointbus.drivers.can.mit_protocol import MitCommand, decode_command
from jointbus.drivers.can.motor_link import MotorSpec
from jointbus.drivers.can.motor_models import bundled_motor_models
from jointbus.drivers.registry import DriverURL
from jointbus.drivers.sim.driver import SimArrayConfig
from jointbus.drivers.sim.profile import ProfileGenerator
from jointbus.model.yaml_loader import load_robot

HB50 = load_robot("hb50")
NAMES = HB50.actuator_order
HOME = np.array([HB50.pose("home")[name] for name in NAMES])
MD80 = bundled_motor_models()["md80"]
JOINT = 1  # fr_j1: at 0.7 rad in the standing pose, range ±1.571 rad, calibration 1·θ + 0
SPEED = 1.0  # rad/s, set_speed
ACCEL = 10.0  # rad/s², set_accel
JERK = ACCEL / CanArrayConfig.from_model(HB50, "md80").jerk_time  # rad/s³, as the driver sets it
DISTANCE = 0.5  # rad
# Resolution of md80 frames: 16-bit position over ±12.5 rad, 12-bit velocity over ±25 rad/s.
P_QUANTUM = 25.0 / 65535
V_QUANTUM = 50.0 / 4095
AT_TARGET = 0.005  # rad from the target: "the move has ended", on both sides of a comparison
PERIOD = 0.002  # s, the URL's default period: the tolerance on when a move ends, with one exchange


class FakeClock:
    """Monotonic seconds that pass only when the test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Rig:
    array: CanActuatorArray
    clock: FakeClock
    listener: can.BusABC

    def setpoint(self) -> tuple[float, float]:
        """(position, velocity) of :data:`JOINT`'s latest command on the wire, actuator space."""
        last: MitCommand | None = None
        while (msg := self.listener.recv(0.0)) is not None:
            if msg.arbitration_id == JOINT + 1:
                frame = decode_command(msg.data, MD80.ranges)
                if isinstance(frame, MitCommand):
                    last = frame
        assert last is not None, "no command to the joint in that exchange"
        return last.position, last.velocity

    def exchange(self, dt: float) -> tuple[float, float, float]:
        """Let ``dt`` s of the driver's clock pass, read (one exchange): (time, p, v) sent."""
        self.clock.now += dt
        self.array.read_joints()
        return (self.clock.now, *self.setpoint())


@contextlib.contextmanager
def clocked_rig(twin_period: float = 0.002) -> Iterator[Rig]:
    """hb50's motors on the twin, the driver on a :class:`FakeClock`, powered and holding; the
    joint's speed and acceleration set. ``twin_period``: the twin's physics per exchange (that
    of the test's exchange rate keeps it in step; it does not change what is sent)."""
    channel = f"jb-can-clock-{uuid.uuid4().hex}"
    twin_bus = can.Bus(interface="virtual", channel=channel)
    listener = can.Bus(interface="virtual", channel=channel)
    twin = FirmwareTwin(
        twin_bus,
        [MotorSpec(name, i + 1, MD80) for i, name in enumerate(NAMES)],
        SimArrayConfig.from_model(HB50, noise=False).params,
        control_period_s=twin_period,
        initial_positions=HOME,
    )
    url = f"can://virtual/{channel}?robot=hb50&model=md80&timeout={VIRTUAL_REPLY_TIMEOUT_S}"
    clock = FakeClock()
    try:
        with twin, CanActuatorArray(CanArrayConfig.from_url(DriverURL.parse(url)),
                                    clock=clock) as array:
            array.power(True)
            array.set_speed(JOINT, SPEED)
            array.set_accel(JOINT, ACCEL)
            array.read_joints()  # the power-on replies: no exchange
            rig = Rig(array, clock, listener)
            rig.exchange(0.002)
            yield rig
    finally:
        twin_bus.shutdown()
        listener.shutdown()


def reference(times: np.ndarray, distance: float) -> np.ndarray:
    """Where the same move is at ``times`` (s from its start, increasing), rad from its start:
    the profile generator with the joint's limits, on its own."""
    gen = ProfileGenerator(["j"], max_velocity=SPEED, max_acceleration=ACCEL, max_jerk=JERK)
    gen.move_to(0, distance)
    out, now = [], 0.0
    for t in times.tolist():
        if t > now:
            gen.step(t - now)
            now = t
        out.append(float(gen.position[0]))
    return np.array(out)


def reference_end(distance: float = DISTANCE) -> float:
    """When the same move comes within :data:`AT_TARGET` of its end, s from its start (sampled
    every 0.1 ms)."""
    times = np.arange(1, 30_000) * 1e-4
    return float(times[np.flatnonzero(distance - reference(times, distance) <= AT_TARGET)[0]])


def held_setpoint(rig: Rig) -> float:
    """The joint's position sent while it holds (actuator space = joint space for fr_j1)."""
    return rig.exchange(0.0)[1]


def run_move(rig: Rig, interval: float, seconds: float) -> tuple[float, np.ndarray]:
    """Command the move, then exchange every ``interval`` s of the clock for ``seconds``: the
    position held before it, and rows of (time since the command, position sent, velocity
    sent)."""
    start = held_setpoint(rig)
    t0 = rig.clock.now
    rig.array.position(JOINT, float(HOME[JOINT]) + DISTANCE)
    rows = []
    while rig.clock.now - t0 < seconds:
        t, p, v = rig.exchange(interval)
        rows.append((t - t0, p, v))
    return start, np.array(rows)


@pytest.mark.parametrize(
    ("interval", "who"),
    [(0.010, "served at the node's 100 Hz"), (0.0005, "read flat out")],
    ids=["100Hz", "flat-out"],
)
def test_a_move_takes_the_time_its_speed_says_at_any_exchange_rate(
    interval: float, who: str
) -> None:
    """Old driver: 2 ms of profile per exchange — at 100 Hz the move ended 5× late, read every
    0.5 ms it ended 4× early at 4× the speed set."""
    expected = reference_end()
    with clocked_rig(twin_period=interval) as rig:
        start, rows = run_move(rig, interval, expected + 0.2)
    t, p, v = rows[:, 0], rows[:, 1], rows[:, 2]
    # The setpoint's speed never exceeds the speed set: the velocity sent, and the positions
    # sent over every span of at least 20 ms (two frames' quantization spread over it).
    assert np.abs(v).max() <= SPEED + V_QUANTUM, who
    span = max(1, round(0.02 / interval))
    rate = np.abs(np.diff(p[::span])) / np.diff(t[::span])
    assert rate.max() <= SPEED + 2 * P_QUANTUM / 0.02, (who, rate.max())
    # The setpoint is where the move is by the clock, at every exchange (to the frames' own
    # resolution: the start and each position sent are rounded to it) …
    error = np.abs(p - start - reference(t, DISTANCE))
    assert error.max() <= 2 * P_QUANTUM, (who, error.max(), t[np.argmax(error)])
    # … so it ends when the move's time says, to a period and an exchange.
    arrived = np.flatnonzero(np.abs(start + DISTANCE - p) <= AT_TARGET)
    assert arrived.size, f"{who}: not at the target {expected + 0.2:g} s after the command"
    assert abs(t[arrived[0]] - expected) <= PERIOD + interval, (who, t[arrived[0]], expected)
    assert p[-1] == pytest.approx(start + DISTANCE, abs=P_QUANTUM)


def test_a_stall_does_not_make_the_setpoint_jump_ahead() -> None:
    """A stalled program (GC pause, SIGSTOP, busy host): 1 s passes between two exchanges in
    the middle of the move. The setpoint moves on by the clamp's worth of the move (50 ms at
    1 rad/s: 0.05 rad), not by the second's worth (the rest of the move), and the move then
    continues from there: it ends 1 s - 50 ms later than it would have. (The old driver moved
    it by 2 ms, whatever the time.)"""
    interval = 0.002
    expected = reference_end()
    with clocked_rig(twin_period=interval) as rig:
        start = held_setpoint(rig)
        t0 = rig.clock.now
        rig.array.position(JOINT, float(HOME[JOINT]) + DISTANCE)
        while rig.clock.now - t0 < 0.3:  # cruising at 1 rad/s by now (0.15 s to reach it)
            _, before, v_before = rig.exchange(interval)
        assert v_before == pytest.approx(SPEED, abs=V_QUANTUM)
        _, after, _ = rig.exchange(1.0)
        jump = abs(after - before)
        assert jump <= SPEED * PROFILE_STEP_MAX_S + P_QUANTUM, jump
        assert jump == pytest.approx(SPEED * PROFILE_STEP_MAX_S, abs=2 * P_QUANTUM)
        end = None
        while rig.clock.now - t0 < expected + 1.2 and end is None:
            t, p, _ = rig.exchange(interval)
            if abs(start + DISTANCE - p) <= AT_TARGET:
                end = t - t0
    assert end is not None, "not at the target after the move's time and the stall"
    late = 1.0 - PROFILE_STEP_MAX_S  # the stall, less the clamp's worth it did advance
    assert abs(end - (expected + late)) <= PERIOD + interval, (end, expected + late)


def test_exchanges_within_one_clock_tick_advance_nothing() -> None:
    """Two exchanges at the same clock time send the same setpoint (the old driver advanced it
    2 ms per exchange)."""
    with clocked_rig() as rig:
        rig.array.position(JOINT, float(HOME[JOINT]) + DISTANCE)
        for _ in range(100):
            _, p, v = rig.exchange(0.002)
        assert v > 0.1  # under way
        for _ in range(20):
            _, again, _ = rig.exchange(0.0)
            assert again == p
