"""Fault: a Zenoh peer is killed and restarted → traffic recovers within 2 s; nothing crashes.

The peer killed is the worst one to lose: the *hub* of the default scheme — the first process on
the host, listening on the hub port, which every later process connects to. Here it is an
observer (a node subscribing to ``/hb50/bridge_data``, like ``jointbus topic echo``) started
first; then the bridge (this process) and the control node (a child) join through it.

- Kill the hub (SIGKILL): gossip scouting has already linked the bridge and the control node
  directly, so their traffic goes on — the bridge never leaves ``mode: run`` and the longest gap
  between two commands it receives stays far below its 250 ms watchdog time.
- Restart it (same hub port): within about a second one of the others takes over the hub port
  (``jointbus.bus.hub_relay``), and the others' links to the hub endpoint are retried there
  (within 0.5 s: ``ZenohConfig``'s default retry); the new observer joins there (or, started before
  the take-over, is the hub again) and receives frames within 2 s of its session being up. The
  bridge and control node ran on throughout.
"""

from __future__ import annotations

import time

from jointbus.bus import MAB_RT
from jointbus.robots.hb50.messages import JointCommand
from jointbus.stack import Stack
from support.faults import (
    Arrivals,
    ModeLog,
    end,
    free_port,
    hub_config,
    kill,
    orphan_shm_files,
    read_stamp,
    ready_ns,
    remove_orphan_shm,
    spawn,
    stderr_of,
)

RECOVERY_S = 2.0
WATCHDOG_S = 0.25


def test_killing_and_restarting_the_hub_peer_disturbs_nothing_and_traffic_recovers() -> None:
    shm_before = orphan_shm_files()
    port = free_port()
    hub = spawn("observer", "--hub-port", str(port))  # first: it listens on the hub port
    control = None
    try:
        with Stack(nodes=("bridge",), zenoh=hub_config(port)) as stack:
            log = ModeLog(stack.bus)
            commands = Arrivals()
            sub = stack.bus.subscribe(
                "/hb50/joint_command", JointCommand, commands, MAB_RT, realtime=True
            )
            control = spawn("control", "--hub-port", str(port))
            try:
                summary = stack.wait_for(
                    lambda s: s.standing and s.owner == "control_node" and s.bridge_mode == "run",
                    40.0,
                )
                assert summary.standing, (summary, stderr_of(control))
                assert read_stamp(hub, "data", 5.0) is not None  # the hub sees the robot
                killed_ns = kill(hub)
                time.sleep(1.0)
                hub = spawn("observer", "--hub-port", str(port))
                up_ns = ready_ns(hub)
                data_ns = read_stamp(hub, "data", 10.0)
                assert data_ns is not None, stderr_of(hub)
                gap = commands.max_gap_s(killed_ns, up_ns)
                changes = log.since(killed_ns)
                recovery = (data_ns - up_ns) / 1e9
                print(
                    f"\nFAULT hub peer killed: longest command gap at the bridge "
                    f"{gap * 1e3:.1f} ms; bridge modes since: {[c.mode for c in changes]}; "
                    f"restarted peer got frames {recovery * 1e3:.0f} ms after it was up"
                )
                assert all(c.mode == "run" for c in changes), changes
                assert gap < WATCHDOG_S
                assert recovery <= RECOVERY_S
                assert control.poll() is None, stderr_of(control)  # nothing crashed
                assert stack.summary().standing
            finally:
                end(control)
                sub.close()
                log.close()
    finally:
        end(hub)
        remove_orphan_shm(shm_before)
