"""The teleop key map and the held-key → Twist stream (:mod:`jointbus.tools.teleop_keys`), shared
by ``jointbus teleop`` and the monitor; the stream publishes on a real (in-process) bus."""

from __future__ import annotations

import threading
import time

import pytest

from jointbus.bus import MAB_RT, Bus
from jointbus.messages.geometry_msgs import Twist
from jointbus.tools.teleop_keys import ZERO_REPEATS, TeleopKeys, TwistStream
from support.bus import wait_until


def test_keys_follow_teleop_twist_keyboard() -> None:
    keys = TeleopKeys(linear_scale=0.5, angular_scale=0.4, release=0.5)
    keys.press("i", 0.0)
    tw = keys.twist(0.1)
    # linear.z 0: "height not commanded" (README), as every plain Twist and teleop sends
    assert (tw.linear.x, tw.linear.y, tw.linear.z, tw.angular.z) == (0.5, 0.0, 0.0, 0.0)
    keys.press("u", 0.2)
    assert keys.twist(0.3).angular.z == 0.4  # forward while turning left
    keys.press("J", 0.4)
    assert (keys.twist(0.5).linear.y, keys.twist(0.5).angular.z) == (0.5, 0.0)  # strafe
    assert keys.twist(1.0).linear.y == 0.0  # released: no key for 0.5 s
    keys.press("q", 1.0)
    assert keys.linear_scale == pytest.approx(0.55)
    for _ in range(20):
        keys.press("q", 1.0)
    assert keys.linear_scale == 1.0  # never beyond the normalised range
    assert keys.stop().linear.z == 0.0
    keys.press("b", 1.0)  # a height key commands the height, stepping from the reference height
    assert keys.twist(1.0).linear.z == pytest.approx(0.95)
    assert keys.stop().linear.z == pytest.approx(0.95)
    for _ in range(40):  # all the way down: z = 0 would mean "height not commanded"
        keys.press("b", 1.0)
    assert keys.twist(1.0).linear.z == pytest.approx(0.05)
    keys.press("i", 2.0)
    keys.press("k", 2.1)
    assert keys.twist(2.2).linear.x == 0.0
    raised = TeleopKeys()
    raised.press("t", 0.0)  # up from the reference height: the reference height, no more
    assert raised.twist(0.0).linear.z == 1.0


class _Twists:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.items: list[tuple[float, Twist]] = []

    def __call__(self, msg: Twist) -> None:
        with self.lock:
            self.items.append((time.monotonic(), msg))

    def since(self, t: float) -> list[Twist]:
        with self.lock:
            return [m for s, m in self.items if s >= t]


@pytest.mark.parametrize("publish_idle", [True, False])
def test_stream_publishes_while_held_then_zero_and_zero_on_close(publish_idle: bool) -> None:
    got = _Twists()
    with Bus(name="teleop-stream-test") as bus:
        bus.subscribe("/hb50/velocity_command", Twist, got, MAB_RT, realtime=True)
        pub = bus.publisher("/hb50/velocity_command", Twist, MAB_RT)
        stream = TwistStream(pub, TeleopKeys(release=0.3), publish_idle=publish_idle)
        time.sleep(0.3)
        idle = got.since(0.0)
        if publish_idle:  # jointbus teleop: zeros keep flowing
            assert idle and all(m.linear.x == 0.0 and m.linear.z == 0.0 for m in idle)
        else:  # the monitor: silent while nothing is held
            assert idle == []
        t_key = time.monotonic()
        stream.press("i")
        assert wait_until(lambda: any(m.linear.x == 0.5 for m in got.since(t_key)), 2.0)
        assert wait_until(lambda: got.since(t_key)[-1].linear.x == 0.0, 3.0)  # released
        t_released = time.monotonic()
        time.sleep(0.4)
        after = got.since(t_released)
        if publish_idle:
            assert after and all(m.linear.x == 0.0 for m in after)
        else:
            assert len(after) < ZERO_REPEATS  # a few zeros, then silence
        t_close = time.monotonic()
        stream.press("l")
        stream.close()
        stream.close()  # idempotent
        closing = got.since(t_close)
        assert closing[-ZERO_REPEATS:] == [stream.keys.stop()] * ZERO_REPEATS
        n = len(got.since(0.0))
        time.sleep(0.2)
        assert len(got.since(0.0)) == n  # the thread has stopped


def test_release_sends_zero_at_once() -> None:
    got = _Twists()
    with Bus(name="teleop-release-test") as bus:
        bus.subscribe("/hb50/velocity_command", Twist, got, MAB_RT, realtime=True)
        pub = bus.publisher("/hb50/velocity_command", Twist, MAB_RT)
        with TwistStream(pub, TeleopKeys(release=5.0), rate_hz=10.0, publish_idle=False) as stream:
            stream.press("j")
            assert wait_until(lambda: any(m.angular.z == 0.5 for m in got.since(0.0)), 2.0)
            t = time.monotonic()
            stream.release()
            first = got.since(t)[0]  # realtime subscription: delivered inside publish()
            assert (first.linear.x, first.angular.z) == (0.0, 0.0)
            assert "turn +0.00" in stream.describe()


def test_a_rate_below_10_hz_is_refused() -> None:
    with Bus(name="teleop-rate-test") as bus:
        pub = bus.publisher("/hb50/velocity_command", Twist, MAB_RT)
        with pytest.raises(ValueError, match="rate_hz"):
            TwistStream(pub, rate_hz=5.0)
        with pytest.raises(ValueError, match="rate_hz"):
            TwistStream(pub, rate_hz=float("nan"))
