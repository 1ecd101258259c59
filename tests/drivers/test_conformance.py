"""One behaviour suite for every actuator-array driver, driven by URL (python-can's lesson).

Each test takes ``url`` and opens it with :func:`opened`; a new driver joins the suite by adding
its URL to :data:`URLS` (and, if it needs a counterpart such as the CAN motor twin, a branch in
:func:`opened`). The suite checks what a user relies on whatever the driver: unknown joints are
one error with a natural message, the power state is in every reading and the flags never say
IDLE while unpowered, a commanded move is MOVING from the call on and can be waited for, a
braked joint refuses motion and does not jump when released, and a speed command runs while it is
renewed, is brought to rest by the drive watchdog when it is not, and the next one resumes.

``sim://arm6`` runs in real time; ``can://virtual/…`` is the hb50 legs on MD80 motors answered by
the firmware twin (:class:`~jointbus.drivers.can.twin_server.TwinServer`) on python-can's virtual
bus, with the driver's *default* reply timeout; ``bus://arm6`` is that arm served by an array
node and reached over Zenoh, as ``drivers.open("bus://arm6")`` reaches ``jointbus serve``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import time
import uuid
from collections.abc import Callable, Iterator

import numpy as np
import pytest

from jointbus import drivers
from jointbus.drivers import ActuatorArray, Capability, RejectReason, RequestRejected
from jointbus.drivers.can.config import CanArrayConfig
from jointbus.drivers.can.driver import CanActuatorArray
from jointbus.drivers.can.twin_server import TwinServer
from jointbus.drivers.errors import MotionTimeoutError
from jointbus.drivers.impedance import ImpedanceCommand
from jointbus.drivers.registry import DriverURL
from jointbus.drivers.sim.driver import SimActuatorArray
from jointbus.messages.actarray import ActuatorData, ActuatorState
from jointbus.messages.errors import UnknownJointError
from support.array_server import served

URLS = [
    "sim://arm6?noise=false",
    "can://virtual/{channel}?robot=hb50&model=md80",
    "bus://arm6",
]
"""Drivers under test; ``{channel}`` becomes a fresh virtual CAN channel per test; ``bus://arm6``
reaches ``sim://arm6?noise=false`` served by an array node over real Zenoh (loopback)."""

MOVING, IDLE, UNPOWERED = ActuatorState.MOVING, ActuatorState.IDLE, ActuatorState.UNPOWERED
SAMPLES = 250  # reads over ≈ 0.5 s (the CAN twin's time advances one 2 ms period per read)
SETTLE_TIMEOUT = 20.0  # s: an upper bound for a ≈ 1 s move on a loaded host, never a speed claim


COMMAND_TIMEOUT = 0.25  # s: the array node's default; sim:// takes it as a URL option


@contextlib.contextmanager
def opened(url: str, *, command_timeout: bool = False) -> Iterator[ActuatorArray]:
    """The driver at ``url``, with whatever must answer it running; ``command_timeout``: with the
    drive watchdog of speed commands (:data:`COMMAND_TIMEOUT`) — the ``sim://`` option, the array
    node's default behind ``bus://``."""
    url = url.format(channel=f"jb-conformance-{uuid.uuid4().hex}")
    parsed = DriverURL.parse(url)
    if command_timeout and parsed.scheme == "sim":
        url += f"&command_timeout={COMMAND_TIMEOUT}"
    with contextlib.ExitStack() as stack:
        if parsed.scheme == "can" and parsed.host == "virtual":
            twin = stack.enter_context(TwinServer.from_url(url, noise=False, clock=None))
            yield stack.enter_context(twin_driven(twin))
            return
        if parsed.scheme == "bus":
            server = stack.enter_context(served("sim://arm6?noise=false", parsed.host))
            url = server.url(timeout="2.0")
        yield stack.enter_context(drivers.open(url))


def twin_driven(server: TwinServer) -> CanActuatorArray:
    """The ``can://`` driver of ``server``'s motors in lock-step with them: its clock is the
    twin's time, which advances one period per exchange (a twin built with ``clock=None``: both
    then run the same physics on a loaded host as on an idle one)."""
    period = server.config.period_s
    return CanActuatorArray(server.config, clock=lambda: server.twin.cycles * period)


@pytest.fixture(params=URLS, ids=lambda u: u.split("?")[0].replace("{channel}", "…"))
def url(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def sample(array: ActuatorArray, joint: int) -> tuple[np.ndarray, np.ndarray]:
    """Positions and velocities of ``joint`` over :data:`SAMPLES` reads, ≈ 2 ms apart."""
    p, v = [], []
    for _ in range(SAMPLES):
        r = array.read_joints()
        p.append(r.position[joint])
        v.append(r.velocity[joint])
        time.sleep(0.002)
    return np.array(p), np.array(v)


def free_target(array: ActuatorArray, joint: int, distance: float) -> float:
    """A position ``distance`` away from where ``joint`` is, inside its limits (rad or m)."""
    limits = array.config.limits[joint]
    here = float(array.read_joints().position[joint])
    up = here + distance
    return up if up <= limits.position_max - 0.05 else here - distance


# ------------------------------------------------------------------------ unknown joints (21)


def test_an_unknown_joint_is_one_error_from_every_call(url: str) -> None:
    with opened(url) as array:
        array.power(True)
        n = array.count
        calls = {
            "position": lambda j: array.position(j, 0.0),
            "speed": lambda j: array.speed(j, 0.0),
            "home": array.home,
            "set_speed": lambda j: array.set_speed(j, 0.5),
            "set_accel": lambda j: array.set_accel(j, 1.0),
            "index": array.index,
            "wait_until_still": lambda j: array.wait_until_still(j, timeout=0.0),
        }
        if Capability.CURRENT in array.capabilities():
            calls["current"] = lambda j: array.current(j, 0.0)
        for call, do in calls.items():
            with pytest.raises(UnknownJointError) as by_index:
                do(99)
            assert str(by_index.value).startswith(
                f"no joint with index 99; the array has {n} joints (0–{n - 1})"
            ), call
            assert isinstance(by_index.value, RequestRejected), call
            assert by_index.value.reason is RejectReason.UNKNOWN_JOINT
            assert by_index.value.index == 99
            with pytest.raises(UnknownJointError) as by_name:
                do(array.names[1] + "x")
            assert str(by_name.value).startswith(
                f"no joint named {array.names[1] + 'x'!r} (did you mean {array.names[1]!r}?)"
            ), call
            assert isinstance(by_name.value, RequestRejected), call


# ------------------------------------------------------------------------ power state (20)


def test_power_state_is_read_and_flags_never_say_idle_unpowered(url: str) -> None:
    with opened(url) as array:
        data = array.read()
        assert data.motor_power is False
        assert all(a.state & UNPOWERED and not a.state & IDLE for a in data.actuators)
        array.power(True)
        data = array.read()
        assert data.motor_power is True
        assert not any(a.state & UNPOWERED for a in data.actuators)
        assert all(a.state & (IDLE | MOVING) for a in data.actuators)
        array.power(False)
        data = array.read()
        assert data.motor_power is False
        assert all(a.state & UNPOWERED and not a.state & IDLE for a in data.actuators)


# ------------------------------------------------------------------------ moves (19)


def test_a_commanded_move_is_moving_from_the_call_on_and_can_be_waited_for(url: str) -> None:
    with opened(url) as array:
        array.power(True)
        joint = 1
        target = free_target(array, joint, 0.3)
        array.position(joint, target)
        assert array.read().actuators[joint].state & MOVING  # at once, not ≈ 30 ms later
        reading = array.wait_until_still(array.names[joint], timeout=SETTLE_TIMEOUT)
        assert not reading.state[joint] & MOVING
        assert reading.position[joint] == pytest.approx(target, abs=0.02)
        assert not array.read().actuators[joint].state & MOVING


def test_waiting_too_short_raises_a_typed_timeout_naming_the_joint(url: str) -> None:
    with opened(url) as array:
        array.power(True)
        joint = 1
        array.position(joint, free_target(array, joint, 0.3))
        with pytest.raises(MotionTimeoutError) as info:
            array.wait_until_still([joint, 0], timeout=0.0)
        assert info.value.joints == (array.names[joint],)
        assert info.value.indices == (joint,)
        assert isinstance(info.value, TimeoutError)
        # every array under test has revolute joints only: its readings are rad and rad/s
        assert info.value.linear == (False,)
        assert re.fullmatch(
            rf"still moving after 0 s: '{array.names[joint]}' \(index {joint}\) "
            r"at \S+ rad, [+-]\S+ rad/s",
            str(info.value),
        ), str(info.value)
        array.wait_until_still(None, timeout=SETTLE_TIMEOUT)


# ------------------------------------------------------------------------ brakes (4)


def braked_joint(array: ActuatorArray) -> int:
    return next(i for i, a in enumerate(array.config.geometry.actuators) if a.has_brakes)


def test_motion_on_a_braked_joint_is_refused_naming_it(url: str) -> None:
    with opened(url) as array:
        array.power(True)
        if Capability.BRAKES not in array.capabilities():
            with pytest.raises(RequestRejected) as info:
                array.brakes(True)
            assert info.value.reason is RejectReason.UNSUPPORTED
            return
        array.brakes(True)
        joint = braked_joint(array)
        name = array.names[joint]
        before = array.read_joints().position.copy()
        refused = [
            lambda: array.position(name, free_target(array, joint, 1.0)),
            lambda: array.positions(before + 0.1),
            lambda: array.speed(joint, 0.5),
            lambda: array.home(joint),
        ]
        if Capability.CURRENT in array.capabilities():
            refused.append(lambda: array.current(joint, 5.0))
        for command in refused:
            with pytest.raises(RequestRejected) as info:
                command()
            assert info.value.reason is RejectReason.BRAKED
            assert (info.value.joint, info.value.index) == (name, joint)
        unbraked = [i for i, a in enumerate(array.config.geometry.actuators) if not a.has_brakes]
        if unbraked:  # a joint without a brake still moves
            array.position(unbraked[0], free_target(array, unbraked[0], 0.1))
            array.wait_until_still(unbraked[0], timeout=SETTLE_TIMEOUT)
        after = array.read_joints().position
        assert after[joint] == pytest.approx(before[joint], abs=0.005)


def test_releasing_the_brakes_never_makes_a_joint_jump(url: str) -> None:
    """Issue 11 item 4: the elbow jumped ≈ 1 rad at 3.94 rad/s on release (limit 2.5)."""
    with opened(url) as array:
        array.power(True)
        if Capability.BRAKES not in array.capabilities():
            pytest.skip("this driver has no brakes (refusal checked above)")
        joint = braked_joint(array)
        limit = array.config.limits[joint].velocity_max
        target = free_target(array, joint, 1.0)
        array.position(joint, target)  # brake mid-move: the move must not resume as a jump
        time.sleep(0.15)
        array.brakes(True)
        for command in (lambda: array.position(joint, target), lambda: array.current(joint, 8.0)):
            with contextlib.suppress(RequestRejected):
                command()
        time.sleep(0.3)
        held = float(array.read_joints().position[joint])
        array.brakes(False)
        positions, velocities = sample(array, joint)
        assert np.abs(velocities).max() <= limit
        assert np.abs(positions - held).max() < 0.02  # starts from, and holds, where it was
        assert not array.read().actuators[joint].state & MOVING


# ------------------------------------------------------------------------ speed watchdog (12)


def test_a_speed_runs_while_renewed_stops_when_not_and_the_next_one_resumes(url: str) -> None:
    """Issue 12 items 1 and 3: Player speed semantics with the drive watchdog, alike on every
    driver that has one: renewed, the joint keeps its speed; not renewed, it is brought to rest
    within the timeout + its ramp and held; the next speed command moves it again."""
    if DriverURL.parse(url.format(channel="x")).scheme == "can":
        pytest.skip("can:// has no host-side drive watchdog (the twin does not model the MD80's)")
    with opened(url, command_timeout=True) as array:
        array.power(True)
        joint, speed = 3, 0.5  # arm6's wrist_roll: ±3.05 rad, no brake; rad/s
        accel = float(array.config_accelerations[joint])
        def renew() -> float:
            sent = time.monotonic()  # before the call: the server has it no earlier than this
            array.speed(joint, speed)
            time.sleep(0.05)
            return sent

        # renewed at 20 Hz, it gets to its speed (how soon depends on the host's load behind
        # bus://), then keeps turning at it
        deadline = time.monotonic() + 3.0
        last = renew()
        while abs(array.read_joints().velocity[joint] - speed) > 0.02:
            assert time.monotonic() < deadline, "never reached its speed"
            last = renew()
        end = time.monotonic() + 0.3
        while time.monotonic() < end:
            last = renew()
        reading = array.read_joints()
        assert reading.velocity[joint] == pytest.approx(speed, abs=0.02)
        assert reading.state[joint] & MOVING
        reading = array.wait_until_still(joint, timeout=SETTLE_TIMEOUT)  # a speed move that ends
        rest = time.monotonic() - last
        assert abs(reading.velocity[joint]) < 1e-3
        # timeout + ramp, + a read's age behind bus:// (100 Hz data) + a loaded host's slack
        assert rest <= COMMAND_TIMEOUT + speed / accel + 0.25
        assert rest >= COMMAND_TIMEOUT  # not before the timeout
        held = float(reading.position[joint])
        positions, velocities = sample(array, joint)
        assert np.abs(positions - held).max() < 2e-3
        assert np.abs(velocities).max() < 1e-3
        array.speed(joint, -speed)  # the next command resumes
        assert array.read().actuators[joint].state & MOVING
        deadline = time.monotonic() + 2.0
        while abs(array.read_joints().velocity[joint] + speed) > 0.02:
            assert time.monotonic() < deadline, "did not resume"
            array.speed(joint, -speed)
            time.sleep(0.02)
        array.speed(joint, 0.0)
        array.wait_until_still(joint, timeout=SETTLE_TIMEOUT)


# ------------------------------------------------------------------------ one joint's drive (1)


def test_one_joints_drive_switches_off_and_on_with_the_same_refusals(url: str) -> None:
    """``joint_power`` is offered wherever the array has it (``bus://`` too: the served array's
    capability, answered ACK/NACK), with the same refusals as a local array."""
    scheme = DriverURL.parse(url.format(channel="x")).scheme
    with opened(url) as array:
        if scheme == "can":  # the MD80 link has no per-joint drive-off: refused up front
            assert Capability.JOINT_POWER not in array.capabilities()
            with pytest.raises(RequestRejected) as info:
                array.joint_power(0, False)
            assert info.value.reason is RejectReason.UNSUPPORTED
            return
        assert Capability.JOINT_POWER in array.capabilities()  # bus://: as the served sim://
        joint = array.count - 2  # arm6's wrist_pitch
        name = array.names[joint]
        with pytest.raises(RequestRejected) as info:  # on needs the array's power
            array.joint_power(name, True)
        assert info.value.reason is RejectReason.POWERED_OFF
        with pytest.raises(UnknownJointError):
            array.joint_power(name + "x", False)
        array.power(True)
        array.joint_power(name, False)
        data = array.read()
        assert data.actuators[joint].state & UNPOWERED
        assert not any(a.state & UNPOWERED for i, a in enumerate(data.actuators) if i != joint)
        with pytest.raises(RequestRejected) as info:  # motion on the limp joint: refused, named
            array.position(joint, free_target(array, joint, 0.1))
        assert info.value.reason is RejectReason.POWERED_OFF
        assert (info.value.joint, info.value.index) == (name, joint)
        other = 0
        array.position(other, free_target(array, other, 0.05))  # the others keep running
        array.wait_until_still(other, timeout=SETTLE_TIMEOUT)
        array.joint_power(name, True)
        assert not array.read().actuators[joint].state & UNPOWERED
        array.position(joint, free_target(array, joint, 0.05))
        array.wait_until_still(joint, timeout=SETTLE_TIMEOUT)


# ------------------------------------------------------------------ limits in every mode (20.1)

TRACKING = 1e-3  # rad: the drive's tracking error at the end of its range
Truth = Callable[[], tuple[np.ndarray, np.ndarray]]
"""The simulated joints' true (position, velocity), actuator space = joint space here."""


@contextlib.contextmanager
def opened_with_truth(
    url: str, *, currents: bool = False
) -> Iterator[tuple[ActuatorArray, Truth]]:
    """The driver at ``url`` and a reader of the simulator's ground truth behind it (the sim's
    physics, the served sim's behind ``bus://``, the CAN motor twin's). ``currents``: give the CAN
    motors torque constants (hb50's file states no current limit), so current commands run."""
    url = url.format(channel=f"jb-limits-{uuid.uuid4().hex}")
    parsed = DriverURL.parse(url)
    with contextlib.ExitStack() as stack:
        if parsed.scheme == "can":
            config = CanArrayConfig.from_url(parsed)
            if currents:
                config = dataclasses.replace(config, torque_constants=(0.3,) * config.array.count)
            # from the standing pose (the twin's own start is the folded rest pose, 5 mrad from
            # the knees' far limit): the joints have their range to run through, as arm6's do
            assert config.robot is not None
            home = config.robot.pose("home")
            start = [home[name] for name in config.array.names]
            server = stack.enter_context(
                TwinServer(config, noise=False, initial_positions=start, clock=None)
            )
            array: ActuatorArray = stack.enter_context(twin_driven(server))

            def truth() -> tuple[np.ndarray, np.ndarray]:
                twin = server.twin
                return twin.positions.copy(), twin.model.velocities.copy()

        else:
            if parsed.scheme == "bus":
                served_array = stack.enter_context(served("sim://arm6?noise=false", parsed.host))
                sim = served_array.array
                array = stack.enter_context(drivers.open(served_array.url(timeout="2.0")))
            else:
                array = sim = stack.enter_context(drivers.open(url))
            assert isinstance(sim, SimActuatorArray)

            def truth() -> tuple[np.ndarray, np.ndarray]:
                with sim.locked() as physics:
                    model = physics.actuators
                    return model.positions.copy(), model.velocities.copy()

        yield array, truth


def drive_into_the_limit(
    array: ActuatorArray, truth: Truth, joint: int, send: Callable[[], object], every: int = 10
) -> tuple[float, float, float]:
    """Renew ``send`` for as long as the joint needs to reach its limit and then some, reading
    the ground truth each cycle; (min, max) position and max speed.

    The CAN twin's time advances one period per exchange: ``every`` exchanges (50 Hz of its time)
    for 1000 of them. The simulator runs on the wall clock: renewed every ``every`` × 2 ms of it
    for at least 2 s, then until the joint has been still for 0.2 s (a loaded host slows the
    physics thread down; the joint must still get to its end and stop there), at most 10 s."""
    scheme = type(array).__name__
    stepped = scheme == "CanActuatorArray"
    p_seen, v_seen = [], []
    if stepped:
        for cycle in range(1000):
            if cycle % every == 0:
                send()
            array.read_joints()
            p, v = truth()
            p_seen.append(p[joint])
            v_seen.append(abs(v[joint]))
        return min(p_seen), max(p_seen), max(v_seen)
    start = time.monotonic()
    renew_s = every * 0.002
    next_send = start
    still_since: float | None = None
    while (now := time.monotonic()) < start + 10.0:
        if now >= next_send:
            send()
            next_send = now + renew_s
        time.sleep(0.002)
        p, v = truth()
        p_seen.append(p[joint])
        v_seen.append(abs(v[joint]))
        if abs(v[joint]) > 0.01:
            still_since = None
        elif still_since is None:
            still_since = now
        if now - start >= 2.0 and still_since is not None and now - still_since >= 0.2:
            break
    return min(p_seen), max(p_seen), max(v_seen)


def assert_held_at_the_limit(
    array: ActuatorArray, joint: int, seen: tuple[float, float, float], upper: bool
) -> None:
    low, high, speed = seen
    limits = array.config.limits[joint]
    # The drive stops it at the end; its tracking error may carry it a hair (< 1 mrad) further.
    assert limits.position_min - TRACKING <= low and high <= limits.position_max + TRACKING, (
        low, high, limits,
    )
    assert speed <= limits.velocity_max * 1.01, (speed, limits.velocity_max)
    end = limits.position_max if upper else limits.position_min
    assert (high if upper else low) == pytest.approx(end, abs=0.02)  # it got there and stopped
    state = ActuatorState(array.read().actuators[joint].state)
    assert ActuatorState.LIMITED in state, state


def limit_joint(array: ActuatorArray) -> tuple[int, bool]:
    """A joint to drive into a limit, and whether it heads for the upper one: arm6's elbow
    (1.5 rad, limit 2.6) or hb50's front-right knee (limit 0)."""
    return 2, True


def test_a_renewed_speed_stops_at_the_limit_and_says_so(url: str) -> None:
    """Issue 20 item 1: a speed command renewed for seconds took arm6's elbow to 4.83 rad (limit
    ±2.6), still MOVING, nothing reported. It must decelerate to stop at the limit, within the
    joint's acceleration, and flag the joint LIMITED."""
    with opened_with_truth(url) as (array, truth):
        array.power(True)
        joint, upper = limit_joint(array)
        seen = drive_into_the_limit(array, truth, joint, lambda: array.speed(joint, 1.15))
        assert_held_at_the_limit(array, joint, seen, upper)


def test_a_current_inside_its_limit_keeps_the_joint_inside_its_speed_and_range(url: str) -> None:
    """Issue 20 item 1: 3.5 A (limit 4 A) spun arm6's wrist at 4.44 rad/s (limit 3.0) to 13.3 rad
    (limit ±3.05). The drive must keep it under its speed limit and stop it at the end."""
    with opened_with_truth(url, currents=True) as (array, truth):
        if Capability.CURRENT not in array.capabilities():
            pytest.skip(f"{type(array).__name__} has no current commands here")
        array.power(True)
        joint = 3 if "wrist_roll" in array.names else 2
        current = 3.5 if "wrist_roll" in array.names else 30.0  # hb50 knee: 9 N·m at 0.3 N·m/A
        seen = drive_into_the_limit(array, truth, joint, lambda: array.current(joint, current))
        assert_held_at_the_limit(array, joint, seen, upper=True)


def test_an_impedance_target_velocity_stops_at_the_limit(url: str) -> None:
    """Issue 20 item 1, the third mode: a velocity target (kp = 0, kd > 0) is a speed command
    inside the impedance law; it too stops at the end of the range."""
    with opened_with_truth(url) as (array, truth):
        array.power(True)
        joint, upper = limit_joint(array)
        limits = array.config.limits
        hold = np.clip(  # where the joints are, inside their ranges (a twin may start at one end)
            array.read_joints().position,
            [lim.position_min for lim in limits],
            [lim.position_max for lim in limits],
        )
        n = array.count
        velocity = np.zeros(n)
        velocity[joint] = 2.0
        kp = np.full(n, 60.0)
        kp[joint] = 0.0
        command = ImpedanceCommand(
            position=hold, velocity=velocity, effort=np.zeros(n), kp=kp,
            kd=np.full(n, 2.0), brake=np.zeros(n, dtype=np.bool_),
        )
        # a stream, as a controller sends it (a served array's watchdog wants ≥ 4 Hz; a loaded
        # host stretches every cycle of this loop)
        seen = drive_into_the_limit(array, truth, joint, lambda: array.impedance(command), every=2)
        assert_held_at_the_limit(array, joint, seen, upper)


def fresh(array: ActuatorArray, joint: int) -> ActuatorData:
    """The joint's reading, once it is not ``STALE`` (``bus://`` behind a loaded host: the last
    sample received is older than 3 server periods; its flags are not the joint's now)."""
    deadline = time.monotonic() + 2.0
    while (actuator := array.read().actuators[joint]).state & ActuatorState.STALE:
        assert time.monotonic() < deadline, "no fresh reading for 2 s"
        time.sleep(0.005)
    return actuator


def test_a_current_held_at_the_limit_is_limited_until_its_stream_runs_out(url: str) -> None:
    """New-user trial: once ``jointbus serve``'s command watchdog had stopped a current that held
    arm6's wrist at its 3.05 rad limit, the served wrist read ``IDLE`` while a local ``sim://arm6``
    read ``IDLE | LIMITED``. ``LIMITED`` says that a command asks for more than the limit lets it
    have (``ActuatorState.LIMITED``; docs/SAFETY.md): the local array has no watchdog by default,
    so its 3.5 A still pushed, while the served one had ended it. With the same watchdog (the
    ``sim://`` option, the served array's default) every driver reads alike: ``IDLE | LIMITED``
    while the stream is renewed, ``IDLE`` — resting at the end, nothing asking for more — once it
    ran out."""
    if DriverURL.parse(url.format(channel="x")).scheme == "can":
        pytest.skip("can:// has no host-side drive watchdog (the twin does not model the MD80's)")
    with opened(url, command_timeout=True) as array:
        array.power(True)
        wrist = array.index("wrist_roll")
        upper = array.config.limits[wrist].position_max
        deadline = time.monotonic() + 10.0  # ≈ 1.2 s of motion; a loaded host is slower
        while True:  # renewed at 50 Hz (a stalled host must not let it run out) until at rest
            assert time.monotonic() < deadline, "never came to rest at its limit"
            last = time.monotonic()  # before the call: the server has it no earlier than this
            array.current(wrist, 3.5)
            time.sleep(0.02)
            held = fresh(array, wrist)
            if held.position > upper - 0.01 and held.state & IDLE:
                break
        assert held.state == IDLE | ActuatorState.LIMITED, held
        while ActuatorState.LIMITED in ActuatorState(fresh(array, wrist).state):
            assert time.monotonic() < last + 3.0, "still LIMITED 3 s after the last renewal"
            time.sleep(0.005)
        # the watchdog ended it, not before, by the wall clock: sim:// and the array node arm it
        # at the command's monotonic arrival (no earlier than `last`) and end it in the first
        # cycle whose monotonic time is past the timeout, before the reading that shows it; the
        # cycle's granularity (2 ms, 10 ms) can only make the end later, so nothing is deducted
        assert time.monotonic() - last >= COMMAND_TIMEOUT
        time.sleep(0.3)
        rest = fresh(array, wrist)
        assert rest.state == IDLE, rest  # held where it stopped: at the end, pushed by nothing
        assert rest.position == pytest.approx(upper, abs=0.01)


# ------------------------------------------ a move planned whole or refused whole (2026-12-06)


def test_a_move_too_slow_to_plan_is_refused_whole_and_nothing_moves(url: str) -> None:
    """A user's trial: ``set_speed('elbow', 1e-6)`` was accepted and the next all-joint move
    failed with "-101 is not a valid Result" (a ValueError locally, a DriverError served) after
    five of six joints had moved. Now it is a NACK naming the joint, and nothing moves."""
    with opened(url) as array:
        array.power(True)
        before = array.read_joints().position.copy()
        slow = 2
        array.set_speed(slow, 1e-6)
        targets = [free_target(array, i, 0.2) for i in range(array.count)]
        with pytest.raises(RequestRejected) as refused:
            array.positions(targets)
        err = refused.value
        assert err.reason is RejectReason.OUT_OF_RANGE
        assert (err.joint, err.index) == (array.names[slow], slow)
        assert "a move of at most 3600 s" in str(err) and "position" in str(err)
        for _ in range(SAMPLES // 5):
            now = array.read_joints().position
        assert np.abs(now - before).max() < 0.01, (now - before).tolist()
        assert not any(a.state & MOVING for a in array.read().actuators)
        # the same move without the slow joint's part runs
        targets[slow] = float(before[slow])
        array.set_speed(slow, 0.5)
        array.positions(targets)
        array.wait_until_still(timeout=SETTLE_TIMEOUT)


def test_an_acceleration_beyond_what_the_joint_can_reach_is_refused(url: str) -> None:
    """A user's trial: ``set_accel(joint, 1e12)`` (and 1e300) was accepted, the next move stepped
    to full speed in one sample and overshot; the limit guard counts on the configured
    acceleration to brake before a limit. Now it is refused, naming the joint and the bound."""
    with opened(url) as array:
        array.power(True)
        before = array.config_accelerations.copy()
        for accel in (1e12, 1e300):
            with pytest.raises(RequestRejected) as refused:
                array.set_accel(1, accel)
            err = refused.value
            assert err.reason is RejectReason.OUT_OF_RANGE
            assert (err.joint, err.index) == (array.names[1], 1)
            assert "the most the joint can reach" in str(err), str(err)
            assert (err.field, err.value) == ("accel", accel)
            assert err.expected.startswith("at most "), err.expected
        with pytest.raises(RequestRejected):
            array.set_accel(None, 1e12)  # all joints: refused whole
        assert array.config_accelerations.tolist() == before.tolist()
        array.set_accel(1, float(before[1]) * 2.0)  # a plausible one is taken
        assert array.config_accelerations[1] == pytest.approx(before[1] * 2.0)


def test_a_command_for_some_joints_is_applied_whole_or_refused_whole(url: str) -> None:
    """``joints_command`` (Rock's ``Joints``, any subset of joints): the array node applied one
    joint after the other, so a refusal of a later joint came after the earlier ones started."""
    with opened(url) as array:
        array.power(True)
        before = array.read_joints().position.copy()
        slow = 2
        array.set_speed(slow, 1e-6)
        first, other = free_target(array, 0, 0.2), free_target(array, slow, 0.2)
        with pytest.raises(RequestRejected) as refused:
            array.joints_command("position", [array.names[0], slow], [first, other])
        assert (refused.value.joint, refused.value.index) == (array.names[slow], slow)
        for _ in range(SAMPLES // 5):
            now = array.read_joints().position
        assert np.abs(now - before).max() < 0.01, (now - before).tolist()
        with pytest.raises(ValueError):  # one value per listed joint
            array.joints_command("position", [0, 1], [first])
        second = free_target(array, 1, 0.2)
        array.joints_command("position", [0, 1], [first, second])
        reading = array.wait_until_still([0, 1], timeout=SETTLE_TIMEOUT)
        assert reading.position[0] == pytest.approx(first, abs=0.02)
        assert reading.position[1] == pytest.approx(second, abs=0.02)
        assert np.abs(reading.position[2:] - before[2:]).max() < 0.01  # the others stayed
