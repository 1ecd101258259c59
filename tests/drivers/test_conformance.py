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
import time
import uuid
from collections.abc import Iterator

import numpy as np
import pytest

from jointbus import drivers
from jointbus.drivers import ActuatorArray, Capability, RejectReason, RequestRejected
from jointbus.drivers.can.twin_server import TwinServer
from jointbus.drivers.errors import MotionTimeoutError
from jointbus.drivers.registry import DriverURL
from jointbus.messages.actarray import ActuatorState
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
            stack.enter_context(TwinServer.from_url(url, noise=False))
        if parsed.scheme == "bus":
            server = stack.enter_context(served("sim://arm6?noise=false", parsed.host))
            url = server.url(timeout="2.0")
        yield stack.enter_context(drivers.open(url))


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
        end = time.monotonic() + 0.6
        while time.monotonic() < end:  # renewed at 20 Hz: keeps turning
            array.speed(joint, speed)
            last = time.monotonic()
            time.sleep(0.05)
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
