"""Liveliness monitor: STALE after a silent heartbeat, OK on its return, published on the status
topic; clean shutdowns; Zenoh token withdrawal; and a SIGKILLed peer process over real Zenoh."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from jointbus.bus import LATCHED, RELIABLE, Bus, ZenohConfig
from jointbus.robots.hb50.messages import Level, Status
from jointbus.runtime import (
    LivelinessConfigError,
    LivelinessMonitor,
    Node,
    NodeHealth,
    NodeHealthTable,
)
from support.runtime import NS_PER_S, SteppedWorld, free_port, wait_until

_PEER = Path(__file__).with_name("runtime_peer.py")


@pytest.fixture
def world() -> Iterator[SteppedWorld]:
    with Bus(name="test") as bus:
        world = SteppedWorld(bus)
        yield world
        world.close()


def status_log(bus: Bus) -> list[Status]:
    got: list[Status] = []
    bus.subscribe("/hb50/status", Status, got.append, RELIABLE.with_(depth=1000), realtime=True)
    return got


def changes_of(log: list[Status], name: str) -> list[tuple[Level, str]]:
    return [(Level(m.level), m.status) for m in log if m.data == name.encode()]


def test_stale_after_the_timeout_and_ok_when_heartbeats_return(world: SteppedWorld) -> None:
    log = status_log(world.bus)
    monitor = LivelinessMonitor(world.node("monitor"))
    arm = world.node("arm")
    world.advance(0.1)
    assert monitor.health("arm") is not None
    assert monitor.health("arm").level is Level.OK  # type: ignore[union-attr]
    # The arm's heartbeats stop (a hung process): pause its heartbeat timer.
    arm.heartbeat._timer.pause()
    last = monitor.states()["arm"].last_seen_ns
    world.advance(1.5 - (world.clock.now - last) / NS_PER_S, step_s=0.05)
    assert monitor.health("arm").level is Level.OK  # type: ignore[union-attr]  # not yet: 1.5 s
    world.advance(0.05, step_s=0.05)  # the next check, 1.55 s after the last heartbeat
    health = monitor.health("arm")
    assert health is not None and health.stale
    assert health.since_ns - last <= round((1.5 + monitor.check_period_s) * NS_PER_S)
    assert monitor.stale() == ["arm"]
    arm.heartbeat.start()
    world.advance(0.1)
    assert monitor.health("arm").level is Level.OK  # type: ignore[union-attr]
    levels = [level for level, _ in changes_of(log, "arm")]
    assert levels == [Level.OK, Level.STALE, Level.OK]
    stale_text = changes_of(log, "arm")[1][1]
    assert "'arm'" in stale_text and "no heartbeat" in stale_text
    reporters = {m.reporting_node for m in log if m.data == b"arm"}
    assert reporters == {"monitor"}


def test_current_carries_the_newest_heartbeat_while_states_keep_the_change(
    world: SteppedWorld,
) -> None:
    """``jointbus node list`` prints "last seen" ages from :meth:`current`: for a node OK for a
    while, the age of its newest heartbeat (< one period), not of the one that made it OK."""
    monitor = LivelinessMonitor(world.node("monitor"))
    arm = world.node("arm")
    world.advance(0.1)
    ok = monitor.states()["arm"]
    arm.configure()
    arm.activate()
    world.advance(3.0)
    assert monitor.states()["arm"] == ok  # no change since: the published change as it was
    now = monitor.current()["arm"]
    assert (now.level, now.since_ns, now.reason) == (ok.level, ok.since_ns, ok.reason)
    assert now.heartbeats == ok.heartbeats + 3  # one a second
    assert 0 <= world.clock.now - now.last_seen_ns < NS_PER_S
    assert world.clock.now - ok.last_seen_ns > 3 * NS_PER_S - NS_PER_S // 10
    assert (ok.lifecycle, now.lifecycle) == ("unconfigured", "active")


def test_timeout_is_configurable_and_callbacks_see_each_change(world: SteppedWorld) -> None:
    seen: list[NodeHealth] = []
    monitor = LivelinessMonitor(world.node("monitor"), timeout_s=3.0, on_change=seen.append)
    arm = world.node("arm")
    world.advance(0.1)
    arm.heartbeat._timer.pause()
    world.advance(2.5)
    assert not monitor.stale()  # 1.5 s is no longer the limit
    world.advance(1.0)
    assert monitor.stale() == ["arm"]
    assert [(h.name, h.level) for h in seen if h.name == "arm"] == [
        ("arm", Level.OK),
        ("arm", Level.STALE),
    ]


def test_a_raising_callback_does_not_stop_the_monitor(world: SteppedWorld) -> None:
    def bad(_: NodeHealth) -> None:
        raise RuntimeError("callback bug")

    log = status_log(world.bus)
    monitor = LivelinessMonitor(world.node("monitor"), on_change=bad)
    good: list[str] = []
    monitor.add_callback(lambda h: good.append(h.name))
    arm = world.node("arm")
    world.advance(0.1)
    arm.heartbeat._timer.pause()
    world.advance(2.0)
    assert monitor.stale() == ["arm"]
    assert good.count("arm") == 2
    assert [level for level, _ in changes_of(log, "arm")] == [Level.OK, Level.STALE]


def test_a_clean_shutdown_is_reported_once_and_never_stale(world: SteppedWorld) -> None:
    log = status_log(world.bus)
    monitor = LivelinessMonitor(world.node("monitor"))
    arm = world.node("arm")
    world.advance(0.5)
    arm.shutdown()
    world.advance(5.0)
    health = monitor.health("arm")
    assert health is not None and health.shut_down and health.level is Level.OK
    assert changes_of(log, "arm") == [
        (Level.OK, "node 'arm' OK: heartbeat seen"),
        (Level.OK, "node 'arm' shut down cleanly"),
    ]
    # The same name back (a restarted node) is watched again.
    world.node("arm")
    world.advance(0.1)
    health = monitor.health("arm")
    assert health is not None and not health.shut_down and health.level is Level.OK


def _tokened(world: SteppedWorld, name: str, gid: int) -> tuple[LivelinessMonitor, Node]:
    """A monitor and node ``name`` whose heartbeat publisher's Zenoh token (``gid``) the test
    announces itself: the stepped world has no Zenoh, so token events are fed as Zenoh's
    liveliness subscriber would deliver them."""
    monitor = LivelinessMonitor(world.node("monitor"))
    node = world.node(name)
    monitor._on_token(name, gid, True)
    world.advance(0.1)
    assert monitor.health(name) is not None and not monitor.stale()
    return monitor, node


def test_a_restarted_namesake_does_not_hide_the_death_of_the_process_before_it(
    world: SteppedWorld,
) -> None:
    """The layout respawns a killed control node at once, and a ``Node`` starts the moment its
    predecessor's token is gone: the new token and first heartbeat can arrive within the
    farewell grace. The death is still reported (STALE), then the new incarnation (OK)."""
    log = status_log(world.bus)
    monitor, old = _tokened(world, "arm", gid=1)
    old.heartbeat._timer.pause()
    world.advance(0.4)
    monitor._on_token("arm", 1, False)  # SIGKILL: its token withdrawn, no farewell
    # The respawned process (one in-process bus refuses a namesake, so the old node's heartbeat
    # publisher stands in for it): its first heartbeat at once, and its token, within the grace.
    old.heartbeat.beat()
    monitor._on_token("arm", 2, True)
    world.advance(0.2, step_s=0.05)
    changes = changes_of(log, "arm")
    assert [level for level, _ in changes] == [Level.OK, Level.STALE]
    assert "left the Zenoh network 0.4" in changes[1][1]  # its last heartbeat: 0.4-0.5 s before
    old.heartbeat.start()  # the new incarnation's next heartbeat
    world.advance(0.1)
    assert [level for level, _ in changes_of(log, "arm")] == [Level.OK, Level.STALE, Level.OK]


def test_a_withdrawal_that_arrives_after_the_successors_token_is_a_death(
    world: SteppedWorld,
) -> None:
    """Zenoh may deliver the successor's token before the old one's withdrawal (the old link is
    noticed closed late): the node still has a token, but the one that left died."""
    log = status_log(world.bus)
    monitor, _ = _tokened(world, "arm", gid=1)
    monitor._on_token("arm", 2, True)
    monitor._on_token("arm", 1, False)
    world.advance(0.2, step_s=0.05)
    assert [level for level, _ in changes_of(log, "arm")] == [Level.OK, Level.STALE]
    monitor._on_token("arm", 7, False)  # a token never seen, with others alive: not this node's
    world.advance(1.5, step_s=0.05)
    assert [level for level, _ in changes_of(log, "arm")] == [Level.OK, Level.STALE, Level.OK]


def test_a_silent_node_whose_process_then_exits_is_reported_again(world: SteppedWorld) -> None:
    """A SIGSTOPped node is STALE by its silence; SIGKILLed later, it is reported once more —
    still STALE, now gone: a hung process and a dead one call for different actions."""
    log = status_log(world.bus)
    monitor, arm = _tokened(world, "arm", gid=1)
    arm.heartbeat._timer.pause()
    world.advance(2.0, step_s=0.05)
    assert [level for level, _ in changes_of(log, "arm")] == [Level.OK, Level.STALE]
    monitor._on_token("arm", 1, False)
    world.advance(0.5, step_s=0.05)
    changes = changes_of(log, "arm")
    assert [level for level, _ in changes] == [Level.OK, Level.STALE, Level.STALE]
    assert "no heartbeat" in changes[1][1]
    assert "left the Zenoh network" in changes[2][1] and "silent, now gone" in changes[2][1]
    world.advance(3.0, step_s=0.05)
    assert len(changes_of(log, "arm")) == 3  # judged once


def test_a_farewell_and_its_token_withdrawal_are_a_clean_shutdown_in_either_order(
    world: SteppedWorld,
) -> None:
    log = status_log(world.bus)
    monitor, arm = _tokened(world, "arm", gid=1)
    arm.shutdown()  # the farewell heartbeat first ...
    monitor._on_token("arm", 1, False)  # ... then the withdrawal
    world.advance(0.5, step_s=0.05)
    bob_monitor, bob = monitor, world.node("bob")
    bob_monitor._on_token("bob", 3, True)
    world.advance(0.1)
    bob_monitor._on_token("bob", 3, False)  # the withdrawal first (within the grace) ...
    bob.shutdown()  # ... then the farewell
    world.advance(0.5, step_s=0.05)
    assert [level for level, _ in changes_of(log, "arm")] == [Level.OK, Level.OK]
    assert [level for level, _ in changes_of(log, "bob")] == [Level.OK, Level.OK]
    assert monitor.stale() == []
    world.node("arm")  # a restart after a clean shutdown is not a death either
    monitor._on_token("arm", 4, True)
    world.advance(0.5, step_s=0.05)
    assert monitor.stale() == [] and not monitor.health("arm").shut_down  # type: ignore[union-attr]


def test_the_verdicts_are_latched_for_observers_that_come_later(world: SteppedWorld) -> None:
    """Issue 20 item 5: a node that died is STALE for a subscriber that joins afterwards (the
    status reports are volatile); cleanly shut down nodes are left out of the table."""
    monitor = LivelinessMonitor(world.node("monitor"), ignore=["monitor"])
    arm, rover = world.node("arm"), world.node("rover")
    world.advance(0.5)
    arm.heartbeat._timer.pause()  # the arm goes silent ...
    rover.shutdown()  # ... the rover says goodbye
    world.advance(2.0, step_s=0.05)
    assert monitor.stale() == ["arm"]
    late: list[NodeHealthTable] = []
    world.bus.subscribe(
        "/hb50/node_health", NodeHealthTable, late.append, LATCHED, realtime=True
    )
    assert late, "the table is latched: a late subscriber gets it at once"
    table = late[-1]
    assert table.reporting_node == "monitor"
    assert [e.name for e in table.nodes] == ["arm"]
    entry = table.entry("arm")
    assert entry is not None and entry.stale and "no heartbeat" in entry.reason
    assert entry.lifecycle == "unconfigured"  # what its heartbeats announced
    assert 1.5 < entry.silent_s < 2.2  # s from its last heartbeat to the table's stamp
    arm.heartbeat.start()  # back: the table says so
    world.advance(0.2)
    entry = late[-1].entry("arm")
    assert entry is not None and not entry.stale


def test_every_node_is_tracked_and_ignore_skips_some(world: SteppedWorld) -> None:
    monitor = LivelinessMonitor(world.node("monitor"), ignore=["monitor"])
    for name in ("a", "b", "c"):
        world.node(name)
    world.advance(0.2)
    assert sorted(monitor.states()) == ["a", "b", "c"]
    assert all(h.level is Level.OK and h.heartbeats == 1 for h in monitor.states().values())


def test_watch_limits_the_monitor_to_named_nodes_and_hidden_nodes_can_be_left_out(
    world: SteppedWorld,
) -> None:
    """A control node watches only its bridge; the bridge watches every node but the hidden
    ones (``_``-names: CLI processes), so a ``jointbus topic pub`` adds no reports to its log."""
    log = status_log(world.bus)
    only_bridge = LivelinessMonitor(world.node("control"), watch=["bridge"])
    visible = LivelinessMonitor(world.node("supervisor"), ignore=["supervisor"], hidden=False)
    for name in ("bridge", "arm", "_jointbus_cli_1"):
        world.node(name)
    world.advance(0.2)
    assert sorted(only_bridge.states()) == ["bridge"]
    assert sorted(visible.states()) == ["arm", "bridge", "control"]
    assert not [m for m in log if m.data == b"_jointbus_cli_1"]


def test_close_stops_watching(world: SteppedWorld) -> None:
    monitor = LivelinessMonitor(world.node("monitor"))
    arm = world.node("arm")
    world.advance(0.1)
    monitor.close()
    arm.heartbeat._timer.pause()
    world.advance(3.0)
    assert monitor.stale() == []


@pytest.mark.parametrize(
    ("field", "value"),
    [("timeout_s", 0), ("timeout_s", -1.0), ("check_period_s", True), ("token_grace_s", "x")],
)
def test_invalid_configuration_is_refused(world: SteppedWorld, field: str, value: object) -> None:
    node = world.node("monitor")
    with pytest.raises(LivelinessConfigError) as info:
        LivelinessMonitor(node, **{field: value})  # type: ignore[arg-type]
    assert info.value.field == field
    assert node.bus.local_subscribers("/hb50/heartbeat") == ()


def test_a_withdrawn_zenoh_token_marks_the_node_stale_before_the_timeout() -> None:
    """A peer whose session ends without a farewell (crash) is STALE long before the timeout."""
    port = free_port()
    with Bus(name="a", zenoh=ZenohConfig.loopback(port)) as a:
        peer_bus = Bus(name="b", zenoh=ZenohConfig.loopback(None, (port,)))
        seen: list[NodeHealth] = []
        with Node("monitor", a) as monitor_node:
            monitor = LivelinessMonitor(monitor_node, timeout_s=60.0, on_change=seen.append)
            peer = Node("peer", peer_bus)  # not shut down: its bus just goes away, like a crash
            assert wait_until(lambda: "peer" in monitor.states(), timeout=20.0)
            peer_bus.close()  # withdraws the tokens without a farewell heartbeat
            assert wait_until(lambda: monitor.stale() == ["peer"], timeout=20.0)
            reason = monitor.states()["peer"].reason
            assert "left the Zenoh network" in reason
            peer.shutdown()  # releases its threads; its bus is already closed


def _spawn_peer(port: int, name: str) -> subprocess.Popen[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(_PEER.parent), *filter(None, [env.get("PYTHONPATH")])])
    return subprocess.Popen(
        [sys.executable, str(_PEER), str(port), name],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )


@pytest.mark.parametrize("watch_tokens", [False, True], ids=["heartbeat-only", "zenoh-tokens"])
def test_a_sigkilled_peer_process_is_reported_stale_within_the_timeout(watch_tokens: bool) -> None:
    """Two real processes over Zenoh on loopback; the child is SIGKILLed right after a heartbeat
    (the worst case for the heartbeat rule); STALE must come within 1.5 s + detection slack."""
    port = free_port()
    stale_at: list[float] = []
    beats: list[float] = []
    with Bus(name="parent", zenoh=ZenohConfig.loopback(port)) as bus, Node("monitor", bus) as node:
        log = status_log(bus)
        bus.subscribe(
            "/hb50/heartbeat",
            Status,
            lambda m: beats.append(time.monotonic()) if m.reporting_node == "peer" else None,
            realtime=True,
        )
        monitor = LivelinessMonitor(
            node,
            watch_tokens=watch_tokens,
            on_change=lambda h: stale_at.append(time.monotonic()) if h.stale else None,
        )
        peer = _spawn_peer(port, "peer")
        try:
            assert peer.stdout is not None
            assert peer.stdout.readline().strip() == "ready"
            assert wait_until(lambda: len(beats) >= 2, timeout=20.0)
            count = len(beats)
            assert wait_until(lambda: len(beats) > count, timeout=5.0)
            killed_at = time.monotonic()
            peer.send_signal(signal.SIGKILL)
            assert wait_until(lambda: bool(stale_at), timeout=10.0)
        finally:
            if peer.poll() is None:
                peer.kill()
            peer.wait(timeout=10.0)
        delay = stale_at[0] - killed_at
        mode = "zenoh tokens + heartbeat" if watch_tokens else "heartbeat only"
        print(f"\nSTALE reported {delay * 1000:.0f} ms after SIGKILL ({mode})")
        assert delay < 2.0  # 1.5 s timeout + 50 ms check + slack for this noisy VM
        assert monitor.stale() == ["peer"]
        assert wait_until(lambda: Level.STALE in [lv for lv, _ in changes_of(log, "peer")])


def _stop_the_monitors_process(
    world: SteppedWorld, monitor: LivelinessMonitor, peer: Node, seconds: float
) -> None:
    """The monitor's process is SIGSTOPped for ``seconds`` while ``peer`` runs on: no check runs
    and no heartbeat is received meanwhile; at SIGCONT the check runs first (its timer is due)
    and the heartbeats the peer sent meanwhile arrive after it."""
    monitor._timer.pause()
    peer.heartbeat._timer.pause()  # its heartbeats are sent, but not received here
    world.advance(seconds, step_s=0.05)
    monitor._timer.start(immediately=True)
    world.run_due()  # the first check after the stall, before any queued heartbeat
    peer.heartbeat.start()  # the queued heartbeat arrives, then the peer's own period
    world.run_due()


def test_a_monitor_whose_own_process_was_stopped_does_not_call_a_running_peer_stale(
    world: SteppedWorld,
) -> None:
    """A user's trial: SIGSTOP of the control node for 3 s; at SIGCONT it reported "node
    'bridge_node' STALE: no heartbeat for 3.91 s" then "OK: heartbeat back" in the same
    millisecond, of a bridge that ran throughout. A check 3 s late judges no silence."""
    log = status_log(world.bus)
    monitor = LivelinessMonitor(world.node("control_node"))
    bridge = world.node("bridge_node")
    world.advance(0.6)
    assert monitor.health("bridge_node").level is Level.OK  # type: ignore[union-attr]
    _stop_the_monitors_process(world, monitor, bridge, 3.0)
    world.advance(3.0, step_s=0.05)
    assert [level for level, _ in changes_of(log, "bridge_node")] == [Level.OK]
    assert monitor.stale() == []
    # its own stall is reported once, as what it was, naming no watched node
    own = [m for m in log if m.reporting_node == "control_node" and not m.data]
    assert len(own) == 1, [m.status for m in own]
    assert Level(own[0].level) is Level.WARN
    assert "resumed after 3.0" in own[0].status and "did not run" in own[0].status
    assert monitor.own_stalls == 1


def test_after_its_own_stall_a_monitor_gives_a_silent_peer_a_fresh_timeout(
    world: SteppedWorld,
) -> None:
    """A peer that is really silent is still found STALE: one timeout after the monitor resumed
    (its silence before, unheard, is not counted), and its text gives the true silence."""
    log = status_log(world.bus)
    monitor = LivelinessMonitor(world.node("control_node"))
    bridge = world.node("bridge_node")
    world.advance(0.6)
    monitor._timer.pause()
    bridge.heartbeat._timer.pause()  # the peer hangs too, for good
    world.advance(3.0, step_s=0.05)
    monitor._timer.start(immediately=True)
    resumed = world.clock.now
    world.run_due()
    assert monitor.stale() == []
    world.advance(1.45, step_s=0.05)
    assert monitor.stale() == []  # within the fresh timeout
    world.advance(0.15, step_s=0.05)
    health = monitor.health("bridge_node")
    assert health is not None and health.stale
    assert health.since_ns - resumed <= round((1.5 + 2 * monitor.check_period_s) * NS_PER_S)
    stale_text = changes_of(log, "bridge_node")[-1][1]
    assert "no heartbeat for 5." in stale_text, stale_text  # the true silence, 4.6 to 5.2 s
