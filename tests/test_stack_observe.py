"""A stack that does not observe (``Stack(observe=False)``: a layout's own process, whose summary
nobody reads) runs its nodes as any stack does, and nothing in it but the control node takes the
bridge's frames: no watcher's callback on each frame, on the bridge's loop or the control step's
thread."""

from __future__ import annotations

import time

from jointbus.stack import Stack


def test_a_stack_that_does_not_observe_leaves_the_frames_to_the_control_node() -> None:
    with Stack(
        zenoh=None, layout="inproc", start_command=None, realtime=None, observe=False
    ) as stack:
        control = stack.control
        assert control is not None
        deadline = time.monotonic() + 10.0
        while control.frames_used < 100 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert control.frames_used >= 100  # the robot runs: frames reach the control node
        (bus,) = stack.buses
        frames = bus.local_subscribers("/hb50/bridge_data")
        assert [sub.node for sub in frames] == ["control_node"]
        assert bus.local_subscribers("/hb50/status") == ()  # no watcher of the reports
        assert bus.local_subscribers("/hb50/bridge_state_10hz") == ()
