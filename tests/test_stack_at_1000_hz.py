"""The hb50 stack at 1000 Hz (``jointbus demo --rate 1000``, :mod:`jointbus.stack`).

Its own module, so that it has the host to itself: ``tests/test_stack.py`` keeps a module-scoped
500 Hz stack running until its last test, and the achieved rate asserted here (more than 500 Hz
could give) is a share of the CPU that a second simulated robot beside it takes away (3000 frames
in 5.6-7.5 s there, 453-535 Hz, on a quiet host).
"""

from __future__ import annotations

import itertools
import time

import pytest

from jointbus.bus import MAB_RT
from jointbus.robots.hb50.messages import BridgeData
from jointbus.stack import Stack, StackSummary
from support.bus import wait_until

STAND_TIMEOUT = 15.0  # s; the stand-up itself takes 1 s of motion after ~0.2 s of start-up


def _standing(s: StackSummary) -> bool:
    return s.standing and s.owner == "control_node"


def test_a_stack_at_1000_hz_publishes_steps_and_controls_at_1000_hz() -> None:
    """Issue 15: ``jointbus demo --rate 1000``. The frames are stamped in simulated time, one 1 ms
    physics step per cycle (median stamp period 1 ms); the achieved rate is frames per second of
    the host's clock (more than 500 Hz could give); the bridge counts skipped cycles against 1000
    a second; what is timed in seconds of the host's clock (the 10 Hz mirror) stays in them."""
    from jointbus.messages.nav_msgs import Odometry
    from jointbus.robots.hb50.messages import BridgeState, JointCommand

    with Stack(zenoh=None, rate_hz=1000.0) as fast:
        s = fast.wait_for(_standing, STAND_TIMEOUT)
        assert s.standing, s
        bridge, control = fast.bridge, fast.control
        assert bridge is not None and control is not None
        assert bridge.config.rate_hz == 1000.0 and control.nominal_period_s == 0.001
        frames: list[BridgeData] = []
        truths: list[Odometry] = []
        commands: list[JointCommand] = []
        mirrors: list[BridgeState] = []
        frame_s: list[float] = []  # arrival times on the host's monotonic clock

        def on_frame(frame: BridgeData) -> None:
            frame_s.append(time.monotonic())
            frames.append(frame)

        subs = [
            fast.bus.subscribe("/hb50/bridge_data", BridgeData, on_frame, MAB_RT, realtime=True),
            fast.bus.subscribe("/hb50/sim/ground_truth", Odometry, truths.append, MAB_RT,
                               realtime=True),
            fast.bus.subscribe("/hb50/joint_command", JointCommand, commands.append, MAB_RT,
                               realtime=True),
            fast.bus.subscribe("/hb50/bridge_state_10hz", BridgeState, mirrors.append, MAB_RT,
                               realtime=True),
        ]
        try:
            wait_until(lambda: len(frames) >= 3000, 10.0)
        finally:
            for sub in subs:
                sub.close()
        window = bridge.publish_window_ns
        rate, skipped = bridge.publish_rate_hz, bridge.publish_skipped
        final = fast.summary()
    stamps = [f.header.stamp.to_ns() for f in frames]
    span_s = frame_s[-1] - frame_s[0]
    intervals = sorted(b - a for a, b in itertools.pairwise(stamps))
    assert intervals[len(intervals) // 2] == pytest.approx(1_000_000, rel=0.05)  # median period
    # more than the default 500 Hz could publish; how close to 1000 Hz it gets depends on the
    # host's load (the bench rows stack.1000hz.*: 957 Hz at load 12, 760 Hz at load 20)
    assert (len(frame_s) - 1) / span_s > 1.2 * 500.0
    steps = [b - a for a, b in itertools.pairwise(m.header.stamp.to_ns() for m in truths)]
    # simulated time: a 1 ms physics step per cycle; a cycle after slots the host dropped steps
    # the simulator through them too (up to 5 more, so its time keeps the wall clock's pace),
    # always in whole 1 ms steps
    assert all(s % 1_000_000 == 0 and 1_000_000 <= s <= 6_000_000 for s in steps), set(steps)
    assert sorted(steps)[len(steps) // 2] == 1_000_000
    # the control node keeps answering (the share of frames it handles depends on the host's
    # load: bench row stack.1000hz.control.steps_per_s) and the robot keeps standing (below)
    assert commands and commands[-1].source_node == "control_node"
    assert 0.8 * 10 * span_s <= len(mirrors) <= 1.2 * 10 * span_s + 1  # still 10 Hz
    assert window is not None
    elapsed_s = (window[1] - window[0]) / 1e9
    # the bridge's own accounting is against 1000 cycles a second: ran + skipped = due
    assert round(rate * elapsed_s) + skipped == max(
        round(rate * elapsed_s), round(elapsed_s * 1000.0)
    )
    assert final.standing, final
