"""The hb50 stack at 1000 Hz (``jointbus demo --rate 1000``, :mod:`jointbus.stack`), in the
process layout that command runs (bridge on one core, control on the other).

Its own module, so that it has the host to itself: ``tests/test_stack.py`` keeps a module-scoped
500 Hz stack running until its last test, and the achieved rate asserted here (more than 500 Hz
could give) is a share of the CPU that a second simulated robot beside it takes away. The
one-process stack does not reach 1 kHz on a 2-core VM (300-600 Hz, with the stepped simulator
catching up on the slots it drops); ``tests/test_stack.py`` covers that layout at 500 Hz.
"""

from __future__ import annotations

import itertools
import time

from jointbus.bus import MAB_RT, RELIABLE, ZenohConfig
from jointbus.robots.hb50.messages import BridgeData
from jointbus.stack import Stack, StackSummary
from support.bus import free_port, wait_until

STAND_TIMEOUT = 40.0  # s; two processes import numpy, MuJoCo and Zenoh, then stand up in ~1 s


def _standing(s: StackSummary) -> bool:
    return s.standing and s.owner == "control_node"


def test_a_stack_at_1000_hz_publishes_steps_and_controls_at_1000_hz() -> None:
    """Issue 15: ``jointbus demo --rate 1000``. The frames are stamped in simulated time, one 1 ms
    physics step per cycle (median stamp period 1 ms); the achieved rate is frames per second of
    the host's clock (more than 500 Hz could give), and so is the bridge's own achieved loop rate;
    what is timed in seconds of the host's clock (the 10 Hz mirror) stays in them."""
    from jointbus.robots.hb50.messages import BridgeState

    with Stack(zenoh=ZenohConfig(hub_port=free_port()), rate_hz=1000.0) as fast:
        assert fast.processes is not None and fast.bridge is None  # the robot is in its processes
        s = fast.wait_for(_standing, STAND_TIMEOUT)
        assert s.standing, s
        frames: list[BridgeData] = []
        mirrors: list[BridgeState] = []
        frame_s: list[float] = []  # arrival times on the host's monotonic clock

        def on_frame(frame: BridgeData) -> None:
            frame_s.append(time.monotonic())
            frames.append(frame)

        # what a user watches: the frames and the 10 Hz mirror. Each 1 kHz stream this process
        # takes costs the bridge's core another encode and send per cycle, and at 1 kHz that core
        # has nothing to spare on a 2-core host (watching the ground truth and the commands too,
        # the stand-up failed in 4 of 4 runs: the control node's commands arrived at 516 Hz)
        subs = [
            fast.bus.subscribe("/hb50/bridge_data", BridgeData, on_frame, MAB_RT, realtime=True),
            # reliable, as it is published
            fast.bus.subscribe("/hb50/bridge_state_10hz", BridgeState, mirrors.append, RELIABLE),
        ]
        try:
            wait_until(lambda: len(frames) >= 3000, 10.0)
        finally:
            for sub in subs:
                sub.close()
        final = fast.wait_for(lambda s: s.loop_rate_hz > 0.0, 2.0)
    stamps = [f.header.stamp.to_ns() for f in frames]
    span_s = frame_s[-1] - frame_s[0]
    steps = [b - a for a, b in itertools.pairwise(stamps)]
    assert sorted(steps)[len(steps) // 2] == 1_000_000  # median period
    # more than the default 500 Hz could publish; how close to 1000 Hz it gets depends on the
    # host's load (the bench rows stack.1000hz.*: 957 Hz at load 12, 760 Hz at load 20)
    assert (len(frame_s) - 1) / span_s > 1.2 * 500.0
    # simulated time: a 1 ms physics step per cycle; a cycle after slots the host dropped steps
    # the simulator through them too (so its time keeps the wall clock's pace), always in whole
    # 1 ms steps. This process receives the frames best-effort over Zenoh, so a longer step may
    # also be a frame it missed; the bound on catching up (5 slots) is tests/drivers/sim's.
    assert all(s % 1_000_000 == 0 and s >= 1_000_000 for s in steps), sorted(set(steps))
    # the control node, in its own process, keeps owning the robot and answering at 1 kHz
    assert final.owner == "control_node", final.line()
    assert final.command_hz > 1.2 * 500.0, final.line()
    # the 10 Hz mirror is timed in the host's seconds: never 20 Hz because the loop runs twice as
    # fast. At 1 kHz the bridge's loop takes nearly all of its core here (real-time factor
    # 0.96, lateness p99 28 ms), and its timers get what is left: 3.7 Hz measured, an open
    # shortfall of issue 21 that the demo's status line shows (BEHIND REAL TIME)
    assert 0.2 * 10 * span_s <= len(mirrors) <= 1.2 * 10 * span_s + 1
    # the bridge's own figures, against 1000 cycles a second
    assert 1.2 * 500.0 < final.loop_rate_hz <= 1010.0, final.line()
    assert final.standing, final.line()
