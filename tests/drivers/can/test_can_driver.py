"""The ``can://`` driver: URL and config, the ActuatorArray behaviours, and the CAN failures
(missed replies, a lost motor putting the drive safe, bus-off) — against the simulated motor
firmware (:class:`FirmwareTwin`) on python-can's virtual bus.

One suite for virtual and real (python-can's lesson): the behaviour tests take the ``rig``
fixture, which is the twin on a virtual bus unless ``JOINTBUS_CAN_TEST_URL`` names a real bus
(e.g. ``can://socketcan/can0?robot=hb50&model=md80`` — the joints WILL move a little); tests that
inject faults or look at the frames need the twin and are skipped on real hardware.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import can
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jointbus import drivers
from jointbus.drivers import (
    Capability,
    DriverClosedError,
    DriverIOError,
    DriverURLError,
    RejectReason,
    RequestRejected,
)
from jointbus.drivers.actuator_array import ActuatorArrayConfigError, JointReading
from jointbus.drivers.can.config import VIRTUAL_REPLY_TIMEOUT_S, CanArrayConfig
from jointbus.drivers.can.driver import (
    ERROR_BYTE_MASK,
    BusFailure,
    CanActuatorArray,
    CanStatus,
    DriveWentSafe,
    MotorError,
    MotorErrorCleared,
)
from jointbus.drivers.can.firmware_twin import FirmwareTwin
from jointbus.drivers.can.mit_protocol import (
    MitCommand,
    MotorRanges,
    ReplyLayout,
    SpecialFrame,
    decode_command,
)
from jointbus.drivers.can.motor_link import CAN_ERR_BUSOFF, MotorSpec, ReplyTimeout
from jointbus.drivers.can.motor_models import (
    MotorModel,
    MotorModelCatalog,
    bundled_motor_models,
    load_motor_models,
)
from jointbus.drivers.can.twin_server import TwinServer
from jointbus.drivers.errors import MotionTimeoutError
from jointbus.drivers.impedance import ImpedanceCommand
from jointbus.drivers.registry import DriverURL
from jointbus.drivers.sim.driver import SimArrayConfig
from jointbus.messages.actarray import ActuatorState
from jointbus.messages.errors import (
    LengthMismatchError,
    LimitError,
    NonFiniteError,
)
from jointbus.model.yaml_loader import load_robot

HB50 = load_robot("hb50")
NAMES = HB50.actuator_order
HOME = np.array([HB50.pose("home")[name] for name in NAMES])
MD80 = bundled_motor_models()["md80"]
REAL_URL = os.environ.get("JOINTBUS_CAN_TEST_URL")
TIMEOUT = VIRTUAL_REPLY_TIMEOUT_S  # s: the twin answers from a thread on a loaded 2-vCPU VM
# (50 ms, the value before, was exceeded: one exchange in 20 000 took 109 ms at load 7.5)
needs_twin = pytest.mark.skipif(REAL_URL is not None, reason="injects faults into the twin")
MOVING_LIMITED = ActuatorState.MOVING | ActuatorState.LIMITED


@dataclass
class Rig:
    """A driver and, on the virtual bus, the twin answering it and a listener seeing all frames."""

    array: CanActuatorArray
    twin: FirmwareTwin | None
    listener: can.BusABC | None

    def commands(self) -> dict[int, list[MitCommand | SpecialFrame]]:
        """The host's frames since the last call, decoded, by CAN id."""
        assert self.listener is not None
        frames: dict[int, list[MitCommand | SpecialFrame]] = {}
        while (msg := self.listener.recv(0.0)) is not None:
            if msg.arbitration_id != 0:  # replies go to host id 0
                frames.setdefault(msg.arbitration_id, []).append(
                    decode_command(msg.data, MD80.ranges)
                )
        return frames


@contextlib.contextmanager
def make_rig(options: str = "", *, start: np.ndarray = HOME) -> Iterator[Rig]:
    """The driver on the twin (virtual bus), or on ``JOINTBUS_CAN_TEST_URL``'s real bus."""
    if REAL_URL is not None:
        with drivers.open(REAL_URL) as array:
            assert isinstance(array, CanActuatorArray)
            yield Rig(array, None, None)
        return
    channel = f"jb-can-test-{uuid.uuid4().hex}"
    twin_bus = can.Bus(interface="virtual", channel=channel)
    listener = can.Bus(interface="virtual", channel=channel)
    twin = FirmwareTwin(
        twin_bus,
        [MotorSpec(name, i + 1, MD80) for i, name in enumerate(NAMES)],
        SimArrayConfig.from_model(HB50, noise=False).params,
        initial_positions=start,
    )
    url = f"can://virtual/{channel}?robot=hb50&model=md80&timeout={TIMEOUT}{options}"
    config = CanArrayConfig.from_url(DriverURL.parse(url))
    try:
        with twin:
            # Lock-step: the driver's clock is the twin's time, one period per exchange, so its
            # profiled moves and the twin's physics keep pace whatever the host's speed.
            array = CanActuatorArray(config, clock=lambda: twin.cycles * config.period_s)
            with array:
                yield Rig(array, twin, listener)
    finally:
        twin_bus.shutdown()
        listener.shutdown()


@pytest.fixture
def rig() -> Iterator[Rig]:
    with make_rig() as r:
        yield r


@pytest.fixture
def powered(rig: Rig) -> Rig:
    rig.array.power(True)
    return rig


def hold(target: np.ndarray, kp: float = 80.0, kd: float = 3.0) -> ImpedanceCommand:
    return ImpedanceCommand.hold(target, kp, kd)


def run_impedance(array: CanActuatorArray, target: np.ndarray, cycles: int) -> None:
    """The bridge's cycle: read, then command."""
    for _ in range(cycles):
        array.read_joints()
        array.impedance(hold(target))


def complete_reading(array: CanActuatorArray) -> JointReading:
    """The next reading in which every motor answered. A reply the loaded host delivered past the
    reply timeout is NaN for that cycle, flagged REPLY_TIMEOUT (seen in the quick suite on 2 busy
    cores); the next exchange measures again. At most 10 exchanges."""
    reading = array.read_joints()
    for _ in range(10):
        missing = ~np.isfinite(reading.position)
        if not missing.any():
            break
        assert (reading.status[missing] & CanStatus.REPLY_TIMEOUT).all()
        reading = array.read_joints()
    assert np.isfinite(reading.position).all()
    return reading


def run_reads(array: CanActuatorArray, cycles: int) -> None:
    for _ in range(cycles):
        array.read_joints()


# ------------------------------------------------------------------------------ URL and config


def test_url_opens_hb50_in_actuator_order(rig: Rig) -> None:
    array = rig.array
    assert array.names == NAMES
    assert array.can_config.can_ids == tuple(range(1, 13))
    assert all(m.model.name == "md80" for m in array.can_config.motors)
    caps = array.capabilities()
    assert Capability.IMPEDANCE in caps and Capability.POSITION in caps
    assert Capability.BRAKES not in caps  # no brakes on MIT motors
    assert Capability.CURRENT not in caps  # hb50 states no current limit: k_t unknown
    assert len(array.geometry().actuators) == 12


@pytest.mark.parametrize(
    ("query", "match"),
    [
        ("robot=hb50&model=md80&colour=red", "unknown option"),
        ("model=md80", "missing robot"),
        ("robot=hb50", "missing model"),
        ("robot=hb50&model=md99", "unknown motor model 'md99'"),
        ("robot=no_such_robot&model=md80", "robot="),
        ("robot=hb50&model=md80&ids=1,2,3", "3 CAN ids for 12 joints"),
        ("robot=hb50&model=md80&ids=1,1,3,4,5,6,7,8,9,10,11,12", "already used by joint 'fr_j0'"),
        ("robot=hb50&model=md80&ids=0,2,3,4,5,6,7,8,9,10,11,12", "can id 0"),
        ("robot=hb50&model=md80&ids=1,2,x", "whole numbers"),
        ("robot=hb50&model=md80&timeout=-1", "reply_timeout_s"),
        ("robot=hb50&model=md80&timeout=abc", "expected a number"),
        ("robot=hb50&model=md80&lost_after=0", "lost_after"),
        ("robot=hb50&model=md80&lost_after=2.5", "whole number"),
        ("robot=hb50&model=md80&policy=ignore", "reject or saturate"),
        ("robot=hb50&model=md80&safe_kd=50", "safe_kd"),
        ("robot=hb50&model=md80,md80", "2 motor models for 12 joints"),
        ("robot=hb50&model=cheetah", "effort limit"),  # 24 N·m does not fit ±18 N·m
    ],
)
def test_bad_urls_are_typed_errors_naming_the_option(query: str, match: str) -> None:
    with pytest.raises(DriverURLError, match=match):
        drivers.open(f"can://virtual/jb-can-unused?{query}")


def test_url_needs_interface_and_one_channel() -> None:
    with pytest.raises(DriverURLError, match="channel"):
        drivers.open("can://virtual?robot=hb50&model=md80")
    with pytest.raises(DriverURLError, match="channel"):
        drivers.open("can://virtual/a/b?robot=hb50&model=md80")


@pytest.mark.parametrize(
    ("url", "timeout"),
    [
        # the twin on the virtual bus: over twice the worst latency measured on a loaded host
        ("can://virtual/x?robot=hb50&model=md80", 0.25),
        # a real bus: 24 frames × 135 bit at 1 Mbit/s, + 1 ms for the firmware
        ("can://socketcan/can0?robot=hb50&model=md80", 2 * 12 * 135 / 1e6 + 0.001),
        ("can://socketcan/can0?robot=hb50&model=md80&bitrate=500000", 2 * 12 * 135 / 5e5 + 0.001),
        ("can://virtual/x?robot=hb50&model=md80&timeout=0.0008", 0.0008),  # given: used as is
    ],
)
def test_default_reply_timeout_fits_the_interface(url: str, timeout: float) -> None:
    """Issue 11 item 16: the fixed 1 ms default failed against the twin on a loaded host."""
    config = CanArrayConfig.from_url(DriverURL.parse(url))
    assert config.reply_timeout_s == pytest.approx(timeout)


def test_the_default_timeout_powers_the_twin_up_on_a_loaded_host() -> None:
    """With the URL's default timeout, 200 power cycles and 2000 exchanges see no timeout."""
    url = f"can://virtual/jb-can-default-{uuid.uuid4().hex}?robot=hb50&model=md80"
    with TwinServer.from_url(url, noise=False), drivers.open(url) as array:
        assert isinstance(array, CanActuatorArray)
        for _ in range(200):
            array.power(True)
            array.power(False)
        array.power(True)
        for _ in range(2000):
            array.read_joints()
        assert array.link.timeout_counts.sum() == 0


def test_config_file_gives_the_options(tmp_path: Path) -> None:
    models = tmp_path / "models.yaml"
    models.write_text(
        "schema_version: 1\nmodels:\n  big:\n    position_rad: [-12.5, 12.5]\n"
        "    velocity_rad_s: [-30.0, 30.0]\n    kp_nm_per_rad: [0.0, 500.0]\n"
        "    kd_nm_s_per_rad: [0.0, 5.0]\n    torque_nm: [-48.0, 48.0]\n"
        "    reply: {layout: basic}\n",
        encoding="utf-8",
    )
    config = tmp_path / "hb50_can.yaml"
    config.write_text(
        "robot: hb50\nmodels: models.yaml\nmodel: big\n"
        "ids: [11, 12, 13, 21, 22, 23, 31, 32, 33, 41, 42, 43]\n"
        "timeout: 0.0008\nlost_after: 3\nsafe_kd: 0.5\npolicy: saturate\n",
        encoding="utf-8",
    )
    with drivers.open(f"can://virtual/jb-can-file?config={config}") as array:
        assert isinstance(array, CanActuatorArray)
        cfg = array.can_config
        assert cfg.can_ids[:4] == (11, 12, 13, 21)
        assert cfg.motors[0].model.name == "big"
        assert (cfg.reply_timeout_s, cfg.lost_after, cfg.safe_kd) == (0.0008, 3, 0.5)
        assert cfg.array.policy is drivers.LimitPolicy.SATURATE
        assert cfg.kp == (80.0,) * 12  # the robot's stand gains drive profiled moves
    with pytest.raises(DriverURLError, match="given with config="):
        drivers.open(f"can://virtual/x?config={config}&robot=hb50")
    bad = tmp_path / "bad.yaml"
    bad.write_text("robot: hb50\nmodel: md80\nspeed: 3\n", encoding="utf-8")
    with pytest.raises(DriverURLError, match="unknown option"):
        drivers.open(f"can://virtual/x?config={bad}")


def test_motor_model_too_narrow_for_the_joint_range_is_refused() -> None:
    narrow = MotorModel(
        "narrow", MotorRanges(-1.0, 1.0, -30, 30, 0, 500, 0, 5, -30, 30), ReplyLayout()
    )
    match = r"fr_j0.*index 0.*position range.*wire range"
    with pytest.raises(ActuatorArrayConfigError, match=match):
        CanArrayConfig.from_model(
            HB50, "narrow", catalog=MotorModelCatalog({"narrow": narrow})
        )


# ------------------------------------------------------------------------------ behaviours


def test_reads_with_power_off(rig: Rig) -> None:
    data = rig.array.read()
    assert not data.motor_power
    assert len(data.actuators) == 12
    for actuator, home in zip(data.actuators, HOME, strict=True):
        assert actuator.status & CanStatus.UNPOWERED
        assert actuator.state & ActuatorState.STALLED == 0
        if rig.twin is not None:
            assert actuator.position == pytest.approx(home, abs=1e-3)
            assert actuator.temperature == pytest.approx(25.0, abs=5.0)  # md80 reports it


def test_motion_is_refused_while_powered_off(rig: Rig) -> None:
    for command in (
        lambda a: a.impedance(hold(HOME)),
        lambda a: a.positions(HOME.tolist()),
        lambda a: a.speed(0, 0.5),
        lambda a: a.home(),
    ):
        with pytest.raises(RequestRejected) as info:
            command(rig.array)
        assert info.value.reason is RejectReason.POWERED_OFF


def test_power_on_holds_the_joints_where_they_are(powered: Rig) -> None:
    array = powered.array
    before = complete_reading(array)
    assert before.motor_power
    run_reads(array, 100)
    after = complete_reading(array)
    np.testing.assert_allclose(after.position, before.position, atol=0.01)
    assert not (after.status & CanStatus.UNPOWERED).any()
    if powered.twin is not None:
        assert powered.twin.powered.all()


def test_impedance_command_moves_the_joints(powered: Rig) -> None:
    target = HOME + np.tile([0.05, -0.1, 0.1], 4) * np.sign(HOME)
    run_impedance(powered.array, target, 300)
    np.testing.assert_allclose(powered.array.read_joints().position, target, atol=0.02)


@needs_twin
def test_damped_knees_resting_by_their_end_stay_inside_it_with_sensor_noise_and_can_be_held() -> (
    None
):
    """The twin as users get it — sensor noise on (hb50's: 0.38 rad/s, 0.64 mrad), hb50 at rest,
    knees 5 mrad from their end — with every joint only damped (kp 0, kd 1) for 750 exchanges
    (1.5 s, lock-step). Noise makes the limit guard take the damping command over now and then (a
    knee read moving towards its end). Before, its law then pushed the knee, truly at rest, towards
    the end at the envelope's speed: the true knees were past it after 28–146 exchanges (seeds
    0–2) and 0.7–1.3 mrad past within 3 s, and docs/CAN.md's first step — read the positions, hold
    them — was refused ("position = -2.705996…; expected within [-2.705, 0]"). Now such a takeover
    only damps: they stay where they rest, and the hold is taken."""
    url = f"can://virtual/jb-can-test-{uuid.uuid4().hex}?robot=hb50&model=md80&timeout={TIMEOUT}"
    config = CanArrayConfig.from_url(DriverURL.parse(url))
    knees = [NAMES.index(name) for name in ("fr_j2", "fl_j2", "rl_j2", "rr_j2")]
    lower = np.array([s.position_min for s in config.array.limits])[knees]
    upper = np.array([s.position_max for s in config.array.limits])[knees]
    with TwinServer(config, clock=None) as server:  # lock-step: one period per exchange
        twin = server.twin
        with CanActuatorArray(config, clock=lambda: twin.cycles * config.period_s) as array:
            array.power(True)
            n = array.count
            start = complete_reading(array).position
            array.impedance(ImpedanceCommand(
                position=start, velocity=np.zeros(n), effort=np.zeros(n), kp=np.zeros(n),
                kd=np.ones(n), brake=np.zeros(n, dtype=np.bool_),
            ))
            deepest = np.full(len(knees), -np.inf)  # rad past the nearer end (< 0: inside)
            for _ in range(750):
                array.read_joints()
                true = twin.positions[knees]  # hb50's calibration is 1, 0: motor space is joints'
                deepest = np.maximum(deepest, np.maximum(true - upper, lower - true))
            assert (deepest < 0.0).all(), f"true knees past their end by {deepest * 1e3} mrad"
            held = complete_reading(array).position
            array.impedance(ImpedanceCommand.hold(held, kp=40.0, kd=2.0))  # the recipe: taken


@needs_twin
def test_a_command_held_back_reads_which_limit_held_it(powered: Rig) -> None:
    """New-user trial (on arm6): a joint the drive holds back in mid-range is held at its speed
    limit, and the reading must say so rather than leave a report to guess from the speed read.
    A 9 N·m feed-forward drives fr_j1 down its range (1.57 rad from the end; at 400 rad/s² it can
    stop from 20 rad/s within 20² / (2 · 400) = 0.5 rad): held at its speed limit first, at the
    end of its range once it brakes for it and rests there."""
    array = powered.array
    joint = 1
    array.set_accel(joint, 400.0)  # rad/s²: room to be held at the speed limit before the end
    lower = array.config.limits[joint].position_min
    effort = np.zeros(array.count)
    effort[joint] = -9.0  # N·m (limit 24)
    kp = np.full(array.count, 80.0)
    kp[joint] = 0.0
    kd = np.full(array.count, 3.0)
    kd[joint] = 0.0
    command = ImpedanceCommand(
        position=HOME, velocity=np.zeros(array.count), effort=effort, kp=kp, kd=kd,
        brake=np.zeros(array.count, dtype=np.bool_),
    )
    seen = []
    for _ in range(300):  # 0.6 s of the twin's time (one 2 ms period per exchange)
        array.impedance(command)
        r = complete_reading(array)
        assert r.speed_limited is not None
        limited = bool(r.state[joint] & ActuatorState.LIMITED)
        seen.append((limited, bool(r.speed_limited[joint]), float(r.position[joint])))
    phases = [(False, False)]
    for limited, at_speed, _ in seen:
        if (limited, at_speed) != phases[-1]:
            phases.append((limited, at_speed))
    assert phases == [(False, False), (True, True), (True, False)], phases
    at_speed = [p for _, s, p in seen if s]
    at_end = [p for limited, s, p in seen if limited and not s]
    assert min(at_speed) > lower + 0.45 and max(at_end) < lower + 0.55  # switched 0.5 rad out
    assert seen[-1][2] == pytest.approx(lower, abs=0.01)


def test_profiled_position_speed_and_home_moves(powered: Rig) -> None:
    array = powered.array
    target = HOME.copy()
    target[1] += 0.3
    array.positions(target.tolist())
    run_reads(array, 400)
    np.testing.assert_allclose(array.read_joints().position, target, atol=0.02)
    start = array.read_joints().position[4]
    array.speed("fl_j1", 0.5)
    run_reads(array, 150)  # 0.3 s at the configured 2 ms per exchange
    array.speed("fl_j1", 0.0)
    run_reads(array, 100)
    moved = array.read_joints().position[4] - start
    assert 0.05 < moved < 0.2
    array.home()
    run_reads(array, 400)
    homes = [a.home for a in array.geometry().actuators]  # hb50 states none: 0 within range
    np.testing.assert_allclose(array.read_joints().position, homes, atol=0.02)


def test_speed_and_accel_requests_are_acked_and_nacked(rig: Rig) -> None:
    array = rig.array
    array.set_speed("fr_j1", 2.0)
    array.set_accel(None, 10.0)
    assert array.config_speeds[1] == 2.0
    with pytest.raises(RequestRejected) as info:
        array.set_speed("fr_j1", 25.0)  # above the 20 rad/s limit
    assert info.value.reason is RejectReason.OUT_OF_RANGE
    assert info.value.joint == "fr_j1" and info.value.index == 1
    with pytest.raises(RequestRejected) as info:
        array.brakes(True)
    assert info.value.reason is RejectReason.UNSUPPORTED


def test_closed_driver_refuses_everything(rig: Rig) -> None:
    rig.array.close()
    with pytest.raises(DriverClosedError):
        rig.array.read()
    with pytest.raises(DriverClosedError):
        rig.array.power(True)


# ------------------------------------------------------------------------------ on the wire


@needs_twin
def test_one_exchange_per_bridge_cycle(powered: Rig) -> None:
    array = powered.array
    array.read_joints()
    array.impedance(hold(HOME))  # from here on: read (the last replies), command (exchange)
    sent = array.link.frames_sent
    run_impedance(array, HOME, 50)
    assert array.link.frames_sent - sent == 50 * 12
    frames = powered.commands()
    last = frames[2][-1]
    assert isinstance(last, MitCommand)
    assert last.kp == pytest.approx(80.0, abs=0.2) and last.kd == pytest.approx(3.0, abs=0.01)
    assert last.position == pytest.approx(HOME[1], abs=1e-3)


@needs_twin
def test_invalid_commands_send_nothing(powered: Rig) -> None:
    array = powered.array
    array.read_joints()
    powered.commands()
    bad_commands = [
        (hold(HOME).replace(kd=[3.0] * 11 + [float("nan")]), NonFiniteError),
        (hold(HOME + 10.0), LimitError),
        (ImpedanceCommand.hold(HOME[:3], 80.0, 3.0), LengthMismatchError),
    ]
    for command, error in bad_commands:
        with pytest.raises(error):
            array.impedance(command)
    with pytest.raises(NonFiniteError):
        array.positions([float("nan")] * 12)
    # kp within the message rules but above the md80 wire range (0…500 N·m/rad)
    with pytest.raises(LimitError) as info:
        array.impedance(hold(HOME, kp=600.0))
    assert (info.value.joint, info.value.index, info.value.field) == ("fr_j0", 0, "kp")
    assert "wire range" in str(info.value)
    assert powered.commands() == {}


@pytest.fixture(scope="module")
def shared_powered() -> Iterator[Rig]:
    """One powered rig for property tests (each example leaves it as it was, or fails)."""
    with make_rig() as r:
        r.array.power(True)
        r.array.impedance(hold(HOME))
        yield r


@settings(max_examples=50)
@given(kp=st.floats(500.5, 1e6), kd=st.floats(0.0, 10.0), joint=st.integers(0, 11))
def test_any_gain_outside_the_wire_range_is_refused_whole(
    shared_powered: Rig, kp: float, kd: float, joint: int
) -> None:
    array = shared_powered.array
    if shared_powered.listener is not None:
        shared_powered.commands()
    gains = [80.0] * 12
    gains[joint] = kp
    with pytest.raises(LimitError) as info:
        array.impedance(ImpedanceCommand.hold(HOME, gains, kd))
    assert (info.value.index, info.value.joint, info.value.field) == (joint, NAMES[joint], "kp")
    if shared_powered.listener is not None:
        assert shared_powered.commands() == {}  # not one frame of the command went out


@needs_twin
def test_close_switches_the_motors_off(powered: Rig) -> None:
    assert powered.twin is not None
    powered.array.close()
    assert not powered.twin.powered.any()


@needs_twin
def test_motor_error_byte_and_temperature_are_reported(powered: Rig) -> None:
    assert powered.twin is not None
    powered.twin.set_error_code(5, 0x21)
    powered.array.read_joints()
    reading = powered.array.read_joints()
    assert reading.status[4] & ERROR_BYTE_MASK == 0x21
    assert reading.status[4] & CanStatus.MOTOR_ERROR
    assert not reading.status[3] & CanStatus.MOTOR_ERROR
    assert np.isfinite(reading.temperature).all()


# ------------------------------------------------------------------------------ failures


def assert_safe_on_the_wire(rig: Rig, kd: float) -> None:
    """What the twin received last, per motor: the safe damping command (kp 0, no torque)."""
    frames = rig.commands()
    assert sorted(frames) == list(range(1, 13))
    for can_id, sent in frames.items():
        last = sent[-1]
        assert isinstance(last, MitCommand), can_id
        assert last.kp == 0.0, can_id
        assert last.kd == pytest.approx(kd, abs=0.01), can_id
        assert last.torque == pytest.approx(0.0, abs=0.01), can_id


@needs_twin
def test_a_motor_reporting_an_error_is_driven_no_more_until_cleared_and_re_armed() -> None:
    """A user's trial (2026-12-06): fl_j1's MD80 (index 4, CAN id 5) reported error byte 0x21
    while holding a pose, and the driver kept it IDLE and kept driving it as if healthy. Now the
    joint reads STALLED with the code in its status word, one ERROR fault names motor, index,
    CAN id and code, every motor gets the safe damping command (as for a lost motor), commands
    are refused whole with the code, and only a cleared code plus a re-arm brings it back."""
    with make_rig("&safe_kd=1.5") as r:
        assert r.twin is not None
        array = r.array
        array.power(True)
        array.positions(HOME.tolist())
        run_reads(array, 20)
        array.drain_events()
        array.take_faults()
        r.commands()
        r.twin.set_error_code(5, 0x21)
        reading = complete_reading(array)
        assert reading.status[4] & ERROR_BYTE_MASK == 0x21
        assert reading.status[4] & CanStatus.MOTOR_ERROR
        assert reading.state[4] & ActuatorState.STALLED
        assert not (np.delete(reading.state, 4) & ActuatorState.STALLED).any()
        assert array.safe and array.errored.tolist() == [i == 4 for i in range(12)]
        run_reads(array, 10)  # the error goes on: reported once, not every cycle
        r.twin.drop_replies(5, True)  # a missed reply says nothing about the code
        run_reads(array, 1)
        r.twin.drop_replies(5, False)
        reading = complete_reading(array)
        assert (reading.status & CanStatus.SAFE).all()
        assert reading.state[4] & ActuatorState.STALLED
        faults = [f for f in array.take_faults() if f.key.startswith("can error")]
        assert len(faults) == 1 and faults[0].severe, faults
        assert faults[0].text.startswith(
            "motor 'fl_j1' (index 4, CAN id 5) reports error code 0x21: every motor is on the "
            "safe damping command (kp 0, kd 1.5 N·m·s/rad) and commands are refused"
        ), faults[0].text
        errors = [e for e in array.drain_events() if isinstance(e, MotorError)]
        assert [(e.motor_index, e.joint, e.can_id, e.code) for e in errors] == [
            (4, "fl_j1", 5, 0x21)
        ]
        assert not [e for e in array.drain_events() if isinstance(e, DriveWentSafe)]
        assert_safe_on_the_wire(r, 1.5)
        # Commands are refused, naming the joint, field and code; nothing is applied in part.
        target = HOME.copy()
        target[[1, 4]] += 0.2
        refusals = (
            lambda: array.position("fl_j1", float(target[4])),
            lambda: array.positions(target.tolist()),
            lambda: array.impedance(hold(target)),
            lambda: array.speed("fl_j1", 0.5),
        )
        for command in refusals:
            with pytest.raises(RequestRejected) as info:
                command()
            e = info.value
            assert (e.reason, e.joint, e.index, e.field) == (
                RejectReason.DRIVER_FAULT, "fl_j1", 4, "motor_error"
            )
            assert e.value == "0x21 (motor (can id 5))"
            assert "reports error code 0x21" in str(e)
        with pytest.raises(RequestRejected) as info:  # a healthy joint names the faulty motor
            array.position("fr_j1", float(target[1]))
        assert (info.value.joint, info.value.index) == ("fr_j1", 1)
        assert "motor (can id 5) of joint 'fl_j1' (index 4) reports error code 0x21" in str(
            info.value
        )
        run_reads(array, 5)
        assert_safe_on_the_wire(r, 1.5)  # still safe: no joint took the refused targets
        # The code goes back to 0: reported once (WARN); the array stays safe until re-armed.
        r.twin.set_error_code(5, 0)
        run_reads(array, 5)
        cleared = [f for f in array.take_faults() if f.key.startswith("can error")]
        assert [(f.severe, f.key) for f in cleared] == [(False, "can error cleared fl_j1")]
        assert "(index 4, CAN id 5) reports no error any more (was 0x21)" in cleared[0].text
        assert [e for e in array.drain_events() if isinstance(e, MotorErrorCleared)] == [
            MotorErrorCleared(4, "fl_j1", 5, 0x21, True)
        ]
        reading = complete_reading(array)
        assert not reading.status[4] & CanStatus.MOTOR_ERROR
        assert reading.state[4] & ActuatorState.STALLED  # latched until re-armed
        with pytest.raises(RequestRejected, match=r"reported error code 0x21 \(now 0\)"):
            array.position("fl_j1", float(target[4]))
        # Re-armed: normal operation again.
        array.power(False)
        array.power(True)
        assert not array.safe and not array.errored.any()
        array.position("fl_j1", float(target[4]))
        run_reads(array, 300)
        reading = complete_reading(array)
        assert reading.position[4] == pytest.approx(target[4], abs=0.02)
        assert not (reading.state & ActuatorState.STALLED).any()
        assert not (reading.status & CanStatus.SAFE).any()


@needs_twin
def test_power_on_is_refused_while_a_motor_reports_an_error(rig: Rig) -> None:
    """Re-arming (or first powering) with a motor that reports an error byte is refused, naming
    it and the code, and no motor is left in motor mode; once it reports 0, power on works."""
    assert rig.twin is not None
    rig.twin.set_error_code(5, 0x21)
    with pytest.raises(RequestRejected) as info:
        rig.array.power(True)
    e = info.value
    assert (e.reason, e.joint, e.index, e.field, e.value) == (
        RejectReason.DRIVER_FAULT, "fl_j1", 4, "motor_error", "0x21"
    )
    assert "motor (can id 5) reports error code 0x21; power is still off" in str(e)
    assert not rig.twin.powered.any() and not rig.array.read_joints().motor_power
    faults = [f for f in rig.array.take_faults() if f.key.startswith("can error")]
    assert [f.text for f in faults] == [
        "motor 'fl_j1' (index 4, CAN id 5) reports error code 0x21: power on is refused until "
        "it reports 0"
    ]
    rig.twin.set_error_code(5, 0)
    rig.array.power(True)
    assert rig.twin.powered.all() and not rig.array.safe


@needs_twin
def test_a_missed_reply_is_flagged_reported_and_clears() -> None:
    with make_rig("&lost_after=3") as r:
        assert r.twin is not None
        array = r.array
        array.power(True)
        array.read_joints()
        array.drain_events()
        r.twin.drop_replies(5, True)
        array.impedance(hold(HOME))  # accepted: one miss is not a lost motor
        reading = array.read_joints()
        assert np.isnan(reading.position[4]) and np.isnan(reading.velocity[4])
        assert reading.status[4] & CanStatus.REPLY_TIMEOUT
        assert not reading.status[4] & CanStatus.COMM_LOST
        assert reading.state[4] & ActuatorState.STALLED == 0
        assert np.isfinite(np.delete(reading.position, 4)).all()
        timeouts = [e for e in array.drain_events() if isinstance(e, ReplyTimeout)]
        assert [(e.motor_index, e.motor_name, e.can_id) for e in timeouts] == [(4, "fl_j1", 5)]
        r.twin.drop_replies(5, False)
        array.impedance(hold(HOME))
        reading = array.read_joints()
        assert not reading.status[4] & CanStatus.REPLY_TIMEOUT
        assert np.isfinite(reading.position[4])


@needs_twin
def test_misses_that_are_not_consecutive_do_not_trip() -> None:
    with make_rig("&lost_after=2") as r:
        assert r.twin is not None
        array = r.array
        array.power(True)
        for _ in range(4):
            r.twin.drop_replies(7, True)
            array.impedance(hold(HOME))
            r.twin.drop_replies(7, False)
            array.impedance(hold(HOME))
        assert not array.safe
        assert array.link.timeout_counts[6] == 4


@needs_twin
def test_consecutive_misses_flag_the_motor_and_put_the_drive_safe() -> None:
    with make_rig("&lost_after=3&safe_kd=1.5") as r:
        assert r.twin is not None
        array = r.array
        array.power(True)
        array.read_joints()
        r.twin.drop_replies(8, True)  # rl_j1, index 7
        array.impedance(hold(HOME))
        array.impedance(hold(HOME))
        r.commands()
        with pytest.raises(RequestRejected) as info:
            array.impedance(hold(HOME))  # the third miss: the command is replaced by safe
        assert info.value.reason is RejectReason.TIMED_OUT
        assert (info.value.joint, info.value.index) == ("rl_j1", 7)
        assert array.safe and array.lost.tolist() == [i == 7 for i in range(12)]
        # On the wire: the command, then the safe damping command to every motor.
        for can_id, frames in r.commands().items():
            last = frames[-1]
            assert isinstance(last, MitCommand), can_id
            assert (last.kp, last.torque) == (0.0, pytest.approx(0.0, abs=0.01))
            assert last.kd == pytest.approx(1.5, abs=0.01)
        went_safe = [e for e in array.drain_events() if isinstance(e, DriveWentSafe)]
        assert went_safe == [DriveWentSafe(7, "rl_j1", 8, 3)]
        reading = array.read_joints()  # reads go on (and keep sending the safe command)
        assert reading.status[7] & CanStatus.COMM_LOST
        assert reading.state[7] & ActuatorState.STALLED
        assert (reading.status & CanStatus.SAFE).all()
        assert not (np.delete(reading.state, 7) & ActuatorState.STALLED).any()
        for command in (lambda: array.impedance(hold(HOME)), lambda: array.positions(HOME)):
            with pytest.raises(RequestRejected) as info:
                command()
            assert info.value.reason is RejectReason.TIMED_OUT and info.value.index == 7
        # A one-joint command to a motor that still answers names that joint, and the lost one.
        with pytest.raises(RequestRejected) as info:
            array.position("fr_j1", float(HOME[1]))
        assert (info.value.reason, info.value.joint, info.value.index) == (
            RejectReason.TIMED_OUT, "fr_j1", 1
        )
        assert "motor (can id 8) of joint 'rl_j1' (index 7) missed 3 replies" in str(info.value)
        with pytest.raises(RequestRejected) as info:  # one that is lost names itself
            array.position("rl_j1", float(HOME[7]))
        assert (info.value.joint, info.value.index) == ("rl_j1", 7)
        assert "motor (can id 8) missed 3 replies" in str(info.value)
        # Re-arm: power off and on once the motor answers again.
        r.twin.drop_replies(8, False)
        array.power(False)
        array.power(True)
        assert not array.safe and not array.lost.any()
        array.impedance(hold(HOME))
        assert not (array.read_joints().state & ActuatorState.STALLED).any()


@needs_twin
def test_a_motor_lost_while_only_reading_also_goes_safe() -> None:
    with make_rig("&lost_after=2") as r:
        assert r.twin is not None
        array = r.array
        array.power(True)
        array.positions((HOME + 0.1 * np.sign(HOME)).tolist())
        r.twin.drop_replies(1, True)
        run_reads(array, 3)  # reads never raise for timeouts
        assert array.safe
        assert array.read_joints().status[0] & CanStatus.COMM_LOST


@needs_twin
def test_power_on_is_refused_when_a_motor_does_not_answer(rig: Rig) -> None:
    assert rig.twin is not None
    rig.twin.drop_replies(3, True)
    with pytest.raises(RequestRejected) as info:
        rig.array.power(True)
    assert info.value.reason is RejectReason.TIMED_OUT
    assert (info.value.joint, info.value.index) == ("fr_j2", 2)
    assert not rig.array.read_joints().motor_power
    # the motors that had answered were switched back off (the silent one acts, unheard)
    assert not np.delete(rig.twin.powered, 2).any()


@needs_twin
def test_bus_off_is_reported_and_changes_nothing(powered: Rig) -> None:
    assert powered.twin is not None and powered.listener is not None
    array = powered.array
    array.impedance(hold(HOME))
    powered.commands()
    powered.listener.send(
        can.Message(is_error_frame=True, arbitration_id=CAN_ERR_BUSOFF, data=bytes(8))
    )
    with pytest.raises(DriverIOError, match="bus-off"):
        array.impedance(hold(HOME + 0.1, kp=40.0))
    assert [type(e) for e in array.drain_events()][-1] is BusFailure
    assert powered.commands() == {}
    # The held command is still the one before the failure.
    array.read_joints()
    array.read_joints()
    held = powered.commands()[1][-1]
    assert isinstance(held, MitCommand)
    assert held.kp == pytest.approx(80.0, abs=0.2)


@needs_twin
def test_a_closed_bus_is_a_driver_io_error() -> None:
    channel = f"jb-can-test-{uuid.uuid4().hex}"
    host = can.Bus(interface="virtual", channel=channel)
    config = CanArrayConfig.from_model(HB50, "md80", reply_timeout_s=TIMEOUT)
    array = CanActuatorArray(config, host)
    host.shutdown()
    with pytest.raises(DriverIOError):
        array.read()
    with pytest.raises(DriverIOError):
        array.power(True)
    array.close()


def test_unknown_interface_is_a_driver_io_error() -> None:
    with pytest.raises((DriverIOError, DriverURLError)):
        drivers.open("can://no_such_interface/can0?robot=hb50&model=md80")


@needs_twin
def test_a_missed_reply_is_not_taken_for_a_joint_at_rest() -> None:
    """A reading whose reply was lost (NaN) said IDLE, so wait_until_still returned it."""
    with make_rig() as rig:
        assert rig.twin is not None
        rig.array.power(True)
        rig.twin.drop_replies(5, True)
        rig.array.read_joints()  # the power-on replies, from before the drop
        assert np.isnan(rig.array.read_joints().position[4])
        with pytest.raises(MotionTimeoutError) as info:
            rig.array.wait_until_still(timeout=0.3)
        assert info.value.joints == (NAMES[4],)
        assert info.value.indices == (4,)
        rig.twin.drop_replies(5, False)


@needs_twin
def test_a_joint_at_rest_is_not_moving_despite_velocity_noise() -> None:
    """hb50's drives report velocity with σ ≈ 0.38 rad/s: a 0.05 rad/s threshold on it said
    MOVING at rest nearly every read, so wait_until_still never returned."""
    url = f"can://virtual/jb-can-noise-{uuid.uuid4().hex}?robot=hb50&model=md80"
    with TwinServer.from_url(url, noise=True), drivers.open(url) as array:
        array.power(True)
        speeds, moving = [], 0
        for _ in range(300):
            reading = array.read_joints()
            speeds.append(np.abs(reading.velocity).max())
            moving += int((reading.state & ActuatorState.MOVING).any())
        # nanmedian: a reply missed on a loaded host is a NaN reading, not a speed
        assert np.nanmedian(speeds) > 0.5  # the noise is there …
        assert moving == 0  # … and is not taken for motion
        array.position("fr_j1", 0.9)
        assert array.read_joints().state[1] & ActuatorState.MOVING
        reading = array.wait_until_still("fr_j1", timeout=10.0)
        assert reading.position[1] == pytest.approx(0.9, abs=0.02)


def test_the_docs_config_and_motor_model_files_load_as_written(tmp_path: Path) -> None:
    """docs/CAN.md's two YAML examples are what a user copies for a real adapter."""
    doc = (Path(__file__).resolve().parents[3] / "docs" / "CAN.md").read_text(encoding="utf-8")
    catalogue, config_file = re.findall(r"```yaml\n(.*?)```", doc, re.DOTALL)
    models = tmp_path / "my_models.yaml"
    models.write_text(textwrap.dedent(catalogue), encoding="utf-8")
    assert load_motor_models(models)["my-drive"].ranges.v_max == 45.0
    path = tmp_path / "legs_can.yaml"
    path.write_text(config_file, encoding="utf-8")
    config = CanArrayConfig.from_url(DriverURL.parse(f"can://socketcan/can0?config={path}"))
    assert config.can_ids == tuple(range(1, 13))
    assert (config.bitrate, config.lost_after, config.safe_kd) == (1_000_000, 5, 1.0)
    assert config.reply_timeout_s == pytest.approx(0.00424)  # the doc's 4.2 ms for 12 motors


@needs_twin
def test_a_lost_motor_is_never_idle_and_a_silent_array_is_not_reported_powered() -> None:
    """Issue 20 item 9: NaN readings from a lost motor were still IDLE, and ``motor_power``
    stayed True after every motor had stopped answering."""
    with make_rig("&lost_after=2") as rig:
        assert rig.twin is not None
        rig.array.power(True)
        rig.array.read_joints()
        rig.twin.set_silent(True)  # the whole twin stops answering
        for _ in range(3):
            reading = rig.array.read_joints()
        assert np.isnan(reading.position).all()
        assert not (reading.state & ActuatorState.IDLE).any()
        assert (reading.state & ActuatorState.STALLED).all()  # lost
        assert reading.motor_power is False
        assert rig.array.read().motor_power is False
        rig.twin.set_silent(False)


@needs_twin
def test_a_stop_at_the_limit_is_limited_only_until_it_rests() -> None:
    """A user's trial (2026-12-06): fr_j2 (knee, range [-2.705, 0]) sent towards its end with
    ``speed 3.0``, then ``speed(0)`` while it braked for the end: the stop would have come to
    rest past the end, so the drive turned it into a stop at the end (``MOVING | LIMITED``) —
    and the knee, resting there, read ``IDLE | LIMITED`` for good, though a speed of 0 asks for
    nothing beyond the end. Now it reads ``IDLE`` once it rests."""
    knee = 2
    start = HOME.copy()
    start[knee] = -2.0
    with make_rig(start=start) as r:
        array = r.array
        array.power(True)
        upper = array.config.limits[knee].position_max
        array.speed(knee, 3.0)
        for _ in range(400):
            reading = complete_reading(array)
            if reading.position[knee] > upper - 0.6:
                break
        assert ActuatorState(int(reading.state[knee])) == ActuatorState.MOVING
        # A gentle deceleration, then the stop: at 3 rad/s and 4 rad/s² it needs 1.1 rad, more
        # than the 0.6 rad left, so the drive cuts it short at the end.
        array.set_accel(knee, 4.0)
        array.speed(knee, 0.0)
        states = []
        for _ in range(1500):  # 3 s: the knee brakes at the end and rests
            reading = complete_reading(array)
            states.append(ActuatorState(int(reading.state[knee])))
        assert states[0] == MOVING_LIMITED  # still cut short while it brakes
        assert states[-1] == ActuatorState.IDLE, states[-1]
        assert reading.position[knee] == pytest.approx(upper, abs=0.01)
        # The plain case still holds: a joint held at its end by a speed reads LIMITED until a
        # speed of 0.
        array.speed(knee, 1.0)
        run_reads(array, 100)  # 0.2 s: still over the 0.1 s window that judges MOVING
        assert ActuatorState(int(array.read_joints().state[knee])) == (
            ActuatorState.IDLE | ActuatorState.LIMITED
        )
        array.speed(knee, 0.0)
        run_reads(array, 2)  # the stop is planned at once, and rests at the next exchange
        assert ActuatorState(int(array.read_joints().state[knee])) == ActuatorState.IDLE



#: On the twin: a closed driver still referenced when the interpreter exits, as a served array's
#: node callbacks may hold it (here a daemon thread holds it; Python never frees what it holds).
_HELD_AT_EXIT = """
import sys, threading, time
from jointbus import drivers
from jointbus.drivers.can.twin_server import TwinServer
with TwinServer.from_url(sys.argv[1], noise=False):
    array = drivers.open(sys.argv[1])
    array.power(True)
    array.position(array.names[0], array.read().actuators[0].position + 0.05)  # ruckig plans it
    array.close()
threading.Thread(target=lambda a: time.sleep(600), args=(array,), daemon=True).start()
"""


def test_a_closed_can_array_referenced_at_exit_leaves_no_nanobind_leak_report() -> None:
    """As the sim driver's: ruckig's nanobind objects alive at exit are listed on stderr
    ("nanobind: leaked 3 instances!"); closing the driver frees them, whoever holds it."""
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[3] / "src")
    env["PYTHONPATH"] = os.pathsep.join([src, *filter(None, [env.get("PYTHONPATH")])])
    url = f"can://virtual/exit-{uuid.uuid4().hex[:8]}?robot=hb50&model=md80"
    result = subprocess.run(
        [sys.executable, "-c", _HELD_AT_EXIT, url],
        capture_output=True,
        text=True,
        timeout=120.0,
        env=env,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "nanobind" not in result.stderr, result.stderr
