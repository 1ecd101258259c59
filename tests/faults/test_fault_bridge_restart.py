"""Fault: the bridge process dies and is restarted → its subscribers recover without restarting.

This process runs the control node (a one-node :class:`~jointbus.stack.Stack`, as ``jointbus
control`` does, started idle) and a plain observer subscription on ``/hb50/bridge_data`` and
``/hb50/bridge_state``; the bridge runs in a child process (as ``jointbus bridge``). The bridge
is SIGKILLed and a new one started: the *same* subscriber objects — the observer's and the control
node's — receive the new bridge's frames, the control node's commands reach it (``owner:
control_node``, ``mode: run``), and ``stand_up`` stands the robot up under the new bridge. The
time from the new bridge being up (its ``ready`` stamp) to its first frame here is printed.
"""

from __future__ import annotations

import time

from fault_support import (
    Arrivals,
    ModeLog,
    end,
    free_port,
    hub_config,
    kill,
    orphan_shm_files,
    ready_ns,
    remove_orphan_shm,
    spawn,
    stderr_of,
    wait_until,
)

from jointbus.bus import MAB_RT
from jointbus.messages.hb50 import BridgeData
from jointbus.stack import Stack

RECOVERY_S = 2.0  # frames at the old subscribers after the new bridge is up


def test_subscribers_recover_when_the_bridge_restarts() -> None:
    shm_before = orphan_shm_files()
    port = free_port()
    with Stack(nodes=("control",), zenoh=hub_config(port), start_command=None) as stack:
        control = stack.control
        assert control is not None
        frames = Arrivals()
        sub = stack.bus.subscribe("/hb50/bridge_data", BridgeData, frames, MAB_RT, realtime=True)
        log = ModeLog(stack.bus)
        bridge = spawn("bridge", "--hub-port", str(port))
        try:
            assert wait_until(lambda: log.owner == "control_node" and log.mode == "run", 40.0), (
                log.changes[-3:],
                stderr_of(bridge),
            )
            used_before = control.frames_used
            killed_ns = kill(bridge)
            time.sleep(0.5)
            assert not frames.after(killed_ns + 100_000_000)  # it is gone
            bridge = spawn("bridge", "--hub-port", str(port))
            up_ns = ready_ns(bridge)
            assert wait_until(lambda: bool(frames.after(up_ns)), 10.0), stderr_of(bridge)
            first_ns = frames.after(up_ns)[0]
            assert wait_until(
                lambda: (c := log.first(up_ns, lambda c: c.mode == "run")) is not None
                and c.owner == "control_node",
                5.0,
            ), log.since(up_ns)
            assert control.frames_used > used_before  # the control node's subscription too
            recovery = (first_ns - up_ns) / 1e9
            print(
                f"\nFAULT bridge restarted: first frame at the old subscribers "
                f"{recovery * 1e3:.0f} ms after the new bridge was up"
            )
            assert recovery <= RECOVERY_S
            stack.command("stand_up")
            summary = stack.wait_for(lambda s: s.standing and s.bridge_mode == "run", 15.0)
            assert summary.standing, summary
            assert sub.stats().received == len(frames.times)
        finally:
            end(bridge)
            log.close()
            sub.close()
    remove_orphan_shm(shm_before)
