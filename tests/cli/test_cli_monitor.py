"""``jointbus monitor --once`` run as a user runs it, after a node in another process died.

The robot's supervisor is played by a :class:`~jointbus.runtime.LivelinessMonitor` in this process
(the one the bridge runs, latching its verdicts on ``/hb50/node_health``); the node it watches is
the CLI tests' talker (a child process, 1 Hz heartbeat), SIGKILLed. This process opens the hub
first, so the talker's death leaves the hub up.
"""

from __future__ import annotations

import re
import subprocess
import time

from jointbus.bus import Bus, ZenohConfig
from jointbus.runtime import LivelinessMonitor, Node
from support.cli import TALKER_NODE, free_port, run_cli, start_talker, stop, wait_until

#: The talker's heartbeat period (s): its last heartbeat came at most this long before the kill.
HEARTBEAT_PERIOD_S = 1.0
#: ``--once`` prints ages to 0.1 s.
ROUNDING_S = 0.05
#: ``--once --wait``: it prints at least this long after it started (s).
WAIT_S = 1.0
_AGE = re.compile(
    rf"^node {TALKER_NODE}: STALE \(\w+, last heartbeat (\d+\.\d) s ago\)$", re.MULTILINE
)


def _monitor_once(port: int) -> tuple[float, float, str]:
    """Run ``jointbus monitor --once``: (monotonic start, monotonic end, stdout)."""
    started = time.monotonic()
    result = run_cli(port, "monitor", "--once", "--wait", str(WAIT_S), "--hub-port", str(port))
    ended = time.monotonic()
    assert result.returncode == 0, result.stderr
    return started, ended, result.stdout


def test_a_monitor_started_after_a_node_died_prints_the_true_growing_age_of_its_heartbeat() -> None:
    """The new user's monitors, started 7.7 to 30.8 s after the kill, all printed "last heartbeat
    2.6 s ago" (the silence at the supervisor's verdict, without the verdict's age). The age
    printed must lie between the time since the kill and that plus one heartbeat period, and grow
    with the time between two monitors."""
    port = free_port()
    with (
        Bus(name="supervisor", zenoh=ZenohConfig(hub_port=port)) as bus,
        Node("supervisor_node", bus) as node,
    ):
        liveliness = LivelinessMonitor(node, ignore={"supervisor_node"}, hidden=False)
        node.start()
        talker: subprocess.Popen[str] = start_talker(port)
        try:
            assert wait_until(lambda: TALKER_NODE in liveliness.states(), 10.0)
            talker.kill()
            killed = time.monotonic()
            talker.wait()
        finally:
            stop(talker)
        assert wait_until(lambda: TALKER_NODE in liveliness.stale(), 5.0)
        runs: list[tuple[float, float, float]] = []  # (start, end, age) of each monitor
        for pause_s in (0.0, 3.0):
            time.sleep(pause_s)
            started, ended, stdout = _monitor_once(port)
            match = _AGE.search(stdout)
            assert match is not None, stdout
            age = float(match[1])
            print(f"\nmonitor --once {started - killed:.2f} s after the kill: age {age:.1f} s")
            # it printed between started + WAIT_S and ended; the last heartbeat came at most one
            # period before the kill
            assert started + WAIT_S - killed - ROUNDING_S <= age, stdout
            assert age <= ended - killed + HEARTBEAT_PERIOD_S + ROUNDING_S, stdout
            runs.append((started, ended, age))
        (start1, end1, age1), (start2, end2, age2) = runs
        grown = age2 - age1
        assert start2 + WAIT_S - end1 - 2 * ROUNDING_S <= grown <= end2 - start1 + 2 * ROUNDING_S
