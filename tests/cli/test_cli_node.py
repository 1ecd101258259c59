"""``jointbus node list`` run as a user runs it, against a talker node in another process.

The talker is killed during a test, so each test starts its own.
"""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from jointbus.bus import RELIABLE, Bus, EndpointInfo, TopicInfo, ZenohConfig
from jointbus.cli.node_watch import NO_HEARTBEAT, NodeWatch, heartbeat_namespaces
from jointbus.robots.hb50.messages import Status
from jointbus.runtime import Node
from support.cli import (
    TALKER_NODE,
    cli_env,
    free_port,
    run_cli,
    start_cli,
    start_talker,
    stop,
    wait_until,
)


@pytest.fixture
def talker() -> Iterator[tuple[int, subprocess.Popen[str]]]:
    port = free_port()
    proc = start_talker(port)
    yield port, proc
    stop(proc)


def _talker_row(stdout: str) -> list[str]:
    return next(line.split() for line in stdout.splitlines() if line.startswith(TALKER_NODE + " "))


def test_node_list_shows_the_node_ok_with_its_heartbeat(
    talker: tuple[int, subprocess.Popen[str]],
) -> None:
    port, _ = talker
    result = run_cli(port, "node", "list")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0].split()[:3] == ["NODE", "NAMESPACE", "STATE"]
    row = _talker_row(result.stdout)
    assert row[1:3] == ["hb50", "OK"]
    assert float(row[3]) < 1.6  # "<age> s ago": a heartbeat within the last period or so
    assert "active" in row
    assert not any(line.startswith("_jointbus_cli") for line in result.stdout.splitlines())

    as_json = run_cli(port, "node", "list", "--json", "--wait", "1.2")
    assert as_json.returncode == 0, as_json.stderr
    nodes = {n["name"]: n for n in json.loads(as_json.stdout)}
    node = nodes[TALKER_NODE]
    assert (node["state"], node["namespace"], node["lifecycle"]) == ("OK", "hb50", "active")
    assert node["publishers"] >= 3  # heartbeat, status and the talker's own topic
    assert 0.0 <= node["last_seen_s"] < 1.6


def _read_lines(proc: subprocess.Popen[str], sink: list[str]) -> threading.Thread:
    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            sink.append(line.rstrip("\n"))

    thread = threading.Thread(target=pump, daemon=True)
    thread.start()
    return thread


def _wait_for(lines: list[str], predicate: Callable[[str], bool], timeout: float) -> bool:
    return bool(wait_until(lambda: any(predicate(line) for line in lines), timeout, step=0.02))


def test_node_watch_turns_stale_when_the_process_is_killed(
    talker: tuple[int, subprocess.Popen[str]],
) -> None:
    port, proc = talker
    watch = start_cli(port, "node", "list", "--watch", "--duration", "20")
    lines: list[str] = []
    reader = _read_lines(watch, lines)
    try:
        assert _wait_for(lines, lambda ln: ln.startswith(TALKER_NODE + " ") and " OK " in ln, 10)
        proc.kill()
        proc.wait()
        assert _wait_for(lines, lambda ln: f"STALE     {TALKER_NODE}" in ln, 5.0), lines
        watch.send_signal(signal.SIGINT)  # Ctrl-C ends the watch quietly
        assert watch.wait(timeout=10) == 0
        reader.join(timeout=5)
        assert watch.stderr is not None
        assert "Traceback" not in watch.stderr.read()
    finally:
        if watch.poll() is None:
            watch.kill()
            watch.wait()
    stale = next(ln for ln in lines if "STALE" in ln)
    assert "left the Zenoh network" in stale or "no heartbeat" in stale


def test_rows_judge_heartbeats_and_endpoints() -> None:
    # In one process: a live runtime node, a node whose heartbeat publisher exists but which
    # sends nothing (a hung process as discovery shows it), and a bus user with no node runtime.
    def endpoint(node: str, topic: str) -> EndpointInfo:
        return EndpointInfo(
            "publisher", topic, Status.TYPE_NAME, node, hash(node), RELIABLE, "z", False
        )

    changes: queue.SimpleQueue[Any] = queue.SimpleQueue()
    with Bus(name="rows") as bus:
        alive = Node("alive", bus)
        watch = NodeWatch(bus, ["hb50"], changes)
        try:
            assert wait_until(lambda: "alive" in watch.monitors["hb50"].states(), timeout=5.0)
            rows = {
                r.name: r
                for r in watch.rows(
                    [endpoint("hung", "/hb50/heartbeat"), endpoint("plain", "/data")], 1.5
                )
            }
        finally:
            watch.close()
            alive.shutdown()
    assert (rows["alive"].state, rows["alive"].namespace) == ("OK", "hb50")
    assert rows["alive"].last_seen_s is not None and rows["alive"].last_seen_s >= 0
    assert (rows["hung"].state, rows["hung"].last_seen_s, rows["hung"].publishers) == (
        "STALE",
        None,
        1,
    )
    assert "no heartbeat in 1.5 s" in rows["hung"].reason
    assert rows["plain"].state == NO_HEARTBEAT
    assert not any(name.startswith("_jointbus_cli") for name in rows)
    assert not changes.empty()  # the change to OK was forwarded for --watch


def test_watch_repeats_no_change_the_table_showed_and_keeps_every_later_one() -> None:
    changes: queue.SimpleQueue[Any] = queue.SimpleQueue()
    with Bus(name="rows") as bus:
        watch = NodeWatch(bus, ["hb50"], changes)
        early = Node("early", bus)
        try:
            assert wait_until(lambda: "early" in watch.monitors["hb50"].states(), timeout=5.0)
            table = {r.name for r in watch.rows([], 0.1)}
            late = Node("late", bus)  # appears after the table was drawn
            assert wait_until(lambda: "late" in watch.monitors["hb50"].states(), timeout=5.0)
            late.shutdown()
            assert wait_until(lambda: watch.monitors["hb50"].states()["late"].shut_down, 5.0)
        finally:
            watch.close()
            early.shutdown()
    queued = []
    while not changes.empty():
        queued.append(changes.get()[1])
    printed = [(h.name, h.shut_down) for h in queued if not watch.already_shown(h, "hb50")]
    assert "early" in table and "late" not in table
    assert ("early", False) not in printed  # in the table: not repeated
    assert printed.count(("late", False)) == 1 and ("late", True) in printed


def test_heartbeat_namespaces_come_from_discovery() -> None:
    def topic(name: str, type_name: str) -> TopicInfo:
        return TopicInfo(name, (type_name,), (), ())

    topics = [
        topic("/arm/heartbeat", "hb50_commons/msg/Status"),
        topic("/hb50/heartbeat", "hb50_commons/msg/Status"),
        topic("/x/heartbeat", "std_msgs/msg/String"),
        topic("/a/b/heartbeat", "hb50_commons/msg/Status"),
    ]
    assert heartbeat_namespaces(topics, ["hb50"]) == ["hb50", "arm", "a/b"]


def test_node_list_with_nothing_running_says_so_and_exits_1() -> None:
    """Issue 20, item 12: one exit-code rule for "nothing there" — node list exited 0 where
    estop, mode and topic echo exit 1. --json still prints a valid (empty) document."""
    port = free_port()
    result = run_cli(port, "node", "list", "--wait", "0.2")
    assert result.returncode == 1
    assert result.stderr.startswith("error: no nodes found")
    assert f"looked on hub port {port}, domain " in result.stderr, result.stderr
    as_json = run_cli(port, "node", "list", "--wait", "0.2", "--json")
    assert as_json.returncode == 1
    assert json.loads(as_json.stdout) == []


def test_node_watch_in_text_mode_lists_a_node_that_starts_later_and_its_death() -> None:
    """Text ``--watch`` once never listed a node (issue 11, item 8): every node the watch comes
    to know is printed — whether it arrives before the table, while it is drawn or after."""
    port = free_port()
    watch = start_cli(port, "node", "list", "--watch", "--wait", "0.5", "--duration", "30")
    lines: list[str] = []
    reader = _read_lines(watch, lines)
    talker: subprocess.Popen[str] | None = None
    try:
        talker = start_talker(port)
        assert _wait_for(lines, lambda ln: TALKER_NODE in ln and "OK" in ln.split(), 15.0), lines
        talker.kill()
        talker.wait()
        assert _wait_for(lines, lambda ln: TALKER_NODE in ln and "STALE" in ln.split(), 5.0), lines
    finally:
        if talker is not None:
            stop(talker)
        if watch.poll() is None:
            watch.send_signal(signal.SIGINT)
            watch.wait(timeout=10)
        reader.join(timeout=5)
    assert sum(TALKER_NODE in ln and "OK" in ln.split() for ln in lines) == 1, lines


_QUIET_PEER = """
import sys
from jointbus.bus import Bus, ZenohConfig
from jointbus.runtime import Node
with Bus(zenoh=ZenohConfig(hub_port=int(sys.argv[1]))) as bus, Node(
    "quiet_peer", bus, heartbeat_period_s=60.0
) as node:
    node.start()
    print("ready", flush=True)
    sys.stdin.read()
"""


def test_plain_node_list_shows_a_node_killed_during_the_listing_as_stale() -> None:
    """Issue: a node SIGKILLed while ``node list`` listened vanished from the plain table. The peer
    beats once a minute, so the listing knows it only by its token when it dies."""
    port = free_port()
    with Bus(name="node-list-test", zenoh=ZenohConfig(hub_port=port)) as bus:
        cli_beats: list[str] = []
        bus.subscribe(
            "/hb50/heartbeat",
            Status,
            lambda m: cli_beats.append(m.reporting_node),
            RELIABLE,
            realtime=True,
        )
        peer = subprocess.Popen(
            [sys.executable, "-c", _QUIET_PEER, str(port)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=cli_env(port),
        )
        try:
            assert peer.stdout is not None and peer.stdout.readline().strip() == "ready"
            listing = start_cli(port, "node", "list", "--wait", "3")
            cli_node = f"_jointbus_cli_{listing.pid}"
            # The listing's node (and its monitor, made right after it) is up: kill the peer.
            assert wait_until(lambda: cli_node in cli_beats, 30.0)
            time.sleep(0.5)
            peer.send_signal(signal.SIGKILL)
            out, err = listing.communicate(timeout=60.0)
        finally:
            if peer.poll() is None:
                peer.kill()
            peer.wait(timeout=10.0)
    assert listing.returncode == 0, err
    row = next((line.split() for line in out.splitlines() if line.startswith("quiet_peer ")), None)
    assert row is not None, out
    assert row[1:4] == ["hb50", "STALE", "none"], out  # no heartbeat ever reached the listing
    assert "LAST HEARTBEAT" in out.splitlines()[0], out


def test_two_served_arrays_of_the_same_node_name_are_two_rows() -> None:
    """Issue 12 item 2: ``serve sim://arm6`` and ``serve sim://rover`` both run a node named
    ``array_node``; the listing keeps one row per (namespace, name), each with its own endpoints
    (they were merged into one row with both arrays' counts summed)."""
    port = free_port()
    servers = [start_cli(port, "serve", url) for url in ("sim://arm6", "sim://rover")]
    try:
        for server, name in zip(servers, ("arm6", "rover"), strict=True):
            assert server.stdout is not None
            assert f"as /{name}" in server.stdout.readline()
        listed = run_cli(port, "node", "list", "--json", "--wait", "2.0")
        assert listed.returncode == 0, listed.stderr
        rows = [n for n in json.loads(listed.stdout) if n["name"] == "array_node"]
        assert sorted(r["namespace"] for r in rows) == ["arm6", "rover"]
        by_ns = {r["namespace"]: r for r in rows}
        for r in rows:
            assert r["state"] == "OK"
        # Each array's own endpoints (the rover has fewer commands than the arm: no current).
        assert by_ns["arm6"]["publishers"] > 0 and by_ns["rover"]["publishers"] > 0
        text = run_cli(port, "node", "list", "--wait", "2.0")
        assert text.returncode == 0, text.stderr
        table = [line.split() for line in text.stdout.splitlines() if line.startswith("array_node")]
        assert sorted(row[1] for row in table) == ["arm6", "rover"]
        assert {row[1]: row[-2:] for row in table} == {
            ns: [str(r["publishers"]), str(r["subscribers"])] for ns, r in by_ns.items()
        }
    finally:
        for server in servers:
            server.kill()
            server.wait(timeout=10.0)
