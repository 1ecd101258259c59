"""Same-host links between the processes of one launch (jointbus.bus.sibling_link).

Real processes, real Zenoh sessions on 127.0.0.1: this test process plays the launcher (it opens
the hub and starts the siblings, as :class:`jointbus.stack.Stack` does), ``sibling_peer.py`` is
each sibling.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.bus import MAB_RT, Bus, ZenohConfig
from jointbus.bus.errors import BusError
from jointbus.bus.qos import LATCHED, RELIABLE
from jointbus.bus.sibling_link import READ_LIMIT, SiblingGroup, carried
from support.bus import Count, free_port, wait_until

_PEER = Path(__file__).with_name("sibling_peer.py")
_TOPIC = "/t/linked"


class Sibling:
    """One sibling process, driven by commands on its stdin (see ``sibling_peer.py``)."""

    def __init__(self, role: str, port: int, group: SiblingGroup, qos: str = "mab") -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(_PEER.parent), *filter(None, [env.get("PYTHONPATH")])]
        )
        self.process = subprocess.Popen(
            [sys.executable, str(_PEER), role, str(port), group.to_arg(), _TOPIC, qos],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )

    def ask(self, command: str) -> dict[str, Any]:
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None
        stdin.write(command + "\n")
        stdin.flush()
        line = stdout.readline()
        assert line, f"the sibling ended before answering {command!r}"
        answer: dict[str, Any] = json.loads(line)
        return answer

    def stop(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(AssertionError, OSError):
                self.ask("quit")
            try:
                self.process.wait(timeout=10.0)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture
def launcher() -> Iterator[tuple[Bus, int]]:
    port = free_port()
    bus = Bus(name="launcher", zenoh=ZenohConfig.loopback(port))
    yield bus, port
    bus.close()


@pytest.fixture
def siblings(launcher: tuple[Bus, int]) -> Iterator[list[Sibling]]:
    started: list[Sibling] = []
    yield started
    for sibling in started:
        sibling.stop()


def _start(
    started: list[Sibling], port: int, group: SiblingGroup, role: str, qos: str = "mab"
) -> Sibling:
    sibling = Sibling(role, port, group, qos)
    started.append(sibling)
    return sibling


def _pair(
    started: list[Sibling], port: int, qos: str = "mab"
) -> tuple[Sibling, Sibling, SiblingGroup]:
    """A talker and a listener of one launch (and the listener's group, to start it again)."""
    talker_group, listener_group = SiblingGroup.of_launch(["talker", "listener"])
    talker = _start(started, port, talker_group, "pub", qos)
    listener = _start(started, port, listener_group, "sub", qos)
    return talker, listener, listener_group


def _linked(started: list[Sibling], port: int, role: str) -> tuple[Sibling, Sibling, SiblingGroup]:
    """A talker and a listener of ``role``, linked both ways (and the talker's group, to start
    a successor)."""
    talker_group, listener_group = SiblingGroup.of_launch(["talker", "listener"])
    talker = _start(started, port, talker_group, "pub")
    listener = _start(started, port, listener_group, role)
    assert talker.ask("linked") == {"ok": True}
    assert listener.ask("linked") == {"ok": True}
    return talker, listener, talker_group


def test_a_best_effort_stream_goes_by_the_link_and_not_over_zenoh(
    launcher: tuple[Bus, int], siblings: list[Sibling]
) -> None:
    _bus, port = launcher
    talker, listener, _ = _pair(siblings, port)
    assert talker.ask("linked") == {"ok": True}
    assert listener.ask("linked") == {"ok": True}
    talker.ask("publish 20")  # the first messages may go both ways while the link settles
    assert talker.ask("zenoh 0") == {"ok": True}  # then nobody listens on Zenoh
    before = listener.ask("stats")
    assert before["on_zenoh"] is False  # no Zenoh subscriber for a publisher heard by the link
    talker.ask("publish 300")
    assert wait_until(lambda: len(listener.ask("stats")["got"]) >= 320, timeout=10.0)
    after = listener.ask("stats")
    assert after["got"] == list(range(320))  # each once, in order
    assert after["received"] - before["received"] == 300  # all 300 by the link
    assert after["lost"] == 0
    assert after["linked"] == ["talker"]
    assert talker.ask("stats")["targets"] == 1


def test_a_dispatcher_on_the_links_runs_linked_and_zenoh_callbacks_on_the_links_thread(
    launcher: tuple[Bus, int], siblings: list[Sibling]
) -> None:
    """The control process's case: its node's callbacks run where the frames arrive (one
    wake-up a frame), and what Zenoh brings (a velocity command) runs on that same thread, in
    order — the node needs no locks."""
    bus, port = launcher
    talker, listener, _ = _linked(siblings, port, "hosted")
    talker.ask("publish 200")
    assert wait_until(lambda: len(listener.ask("stats")["got"]) >= 200, timeout=10.0)
    outside = bus.publisher(_TOPIC + "_zenoh", Count, RELIABLE.with_(depth=100), node="outside")
    assert wait_until(lambda: outside.remote_matched, timeout=10.0)
    for value in range(5):
        outside.publish(Count(value, "over zenoh"))
    assert wait_until(lambda: len(listener.ask("stats")["got_zenoh"]) >= 5, timeout=10.0)
    stats = listener.ask("stats")
    assert stats["got"] == list(range(200))
    assert stats["received"] >= 180  # by the link (the first few may cross on Zenoh)
    assert stats["got_zenoh"] == list(range(5))
    assert stats["threads"] == ["jointbus-sibling", "started on jointbus-sibling"]


def test_a_loop_that_reads_its_links_gets_each_message_when_it_reads_on_its_own_thread(
    launcher: tuple[Bus, int], siblings: list[Sibling]
) -> None:
    """The bridge process's case: its loop reads the commands waiting, once a cycle, and no
    other thread takes them meanwhile; a bounded read leaves the rest waiting, in order."""
    _bus, port = launcher
    talker, listener, _ = _linked(siblings, port, "reader")
    talker.ask("publish 20")  # these cross on Zenoh too while the link settles
    # the first read by the link: the listener's Zenoh subscriber goes, so nobody hears Zenoh
    assert wait_until(
        lambda: listener.ask("read")["read"] >= 0 and listener.ask("stats")["on_zenoh"] is False,
        timeout=10.0,
    )
    assert talker.ask("zenoh 0") == {"ok": True}
    while listener.ask("read")["read"]:  # the link's copies of what Zenoh brought first
        pass
    settled = listener.ask("stats")
    first = settled["got"]
    # best effort while the link settled (Zenoh may drop some under load): in order, none twice
    assert first == sorted(set(first)) and set(first) <= set(range(20)) and first
    talker.ask("publish 100")
    time.sleep(0.3)
    assert listener.ask("stats")["got"] == first  # waiting, nobody else took them
    assert listener.ask("read 30") == {"read": 30}
    assert listener.ask("stats")["got"] == first + list(range(20, 50))
    reads = []
    while (n := listener.ask("read")["read"]) > 0:
        reads.append(n)
    assert reads == [READ_LIMIT] * (70 // READ_LIMIT) + [70 % READ_LIMIT]  # bounded a call
    stats = listener.ask("stats")
    assert stats["got"] == first + list(range(20, 120))  # by the link: each, in order
    assert {thread for value, thread in stats["where"] if value >= 20} == {"MainThread"}
    assert stats["received"] - settled["received"] == 100
    assert stats["lost"] == settled["lost"]
    # closed: the links' thread reads them again, nobody needs to ask
    assert listener.ask("unread") == {"ok": True}
    talker.ask("publish 50")
    assert wait_until(lambda: len(listener.ask("stats")["got"]) >= len(first) + 150, 10.0)
    stats = listener.ask("stats")
    assert stats["got"] == first + list(range(20, 170))
    assert {thread for value, thread in stats["where"] if value >= 120} == {"jointbus-sibling"}


def test_a_reader_finds_a_dead_sibling_and_reads_its_successor(
    launcher: tuple[Bus, int], siblings: list[Sibling]
) -> None:
    _bus, port = launcher
    talker, listener, talker_group = _linked(siblings, port, "reader")
    talker.process.send_signal(signal.SIGKILL)
    talker.process.wait(timeout=10.0)
    # the reader meets the closed link; the links' thread drops it
    assert wait_until(
        lambda: listener.ask("read")["read"] == 0 and listener.ask("stats")["linked"] == [],
        timeout=10.0,
    )
    successor = _start(siblings, port, talker_group, "pub")
    assert successor.ask("linked") == {"ok": True}
    assert listener.ask("linked") == {"ok": True}
    successor.ask("publish 1")
    assert wait_until(lambda: listener.ask("read")["read"] > 0, timeout=10.0)
    assert successor.ask("zenoh 0") == {"ok": True}
    successor.ask("publish 30")
    assert wait_until(
        lambda: listener.ask("read")["read"] >= 0 and len(listener.ask("stats")["got"]) >= 31,
        timeout=10.0,
    )
    stats = listener.ask("stats")
    assert stats["got"] == list(range(31))
    # the first may cross on Zenoh; the link's are read on the reader's thread
    assert {thread for value, thread in stats["where"] if value >= 1} == {"MainThread"}


def test_an_outside_subscriber_gets_the_stream_over_zenoh_and_the_sibling_each_message_once(
    launcher: tuple[Bus, int], siblings: list[Sibling]
) -> None:
    bus, port = launcher
    talker, listener, _ = _pair(siblings, port)
    assert talker.ask("linked") == {"ok": True}
    talker.ask("publish 20")
    outside: list[int] = []
    bus.subscribe(_TOPIC, Count, lambda m: outside.append(m.value), MAB_RT, realtime=True)
    assert talker.ask("zenoh 1") == {"ok": True}
    talker.ask("publish 200")
    assert wait_until(lambda: len(outside) >= 200, timeout=10.0)
    assert outside[-200:] == list(range(20, 220))
    stats = listener.ask("stats")
    assert stats["got"] == list(range(220))
    assert stats["on_zenoh"] is False


def test_a_second_publisher_outside_the_launch_is_heard_over_zenoh_and_the_linked_copies_dropped(
    launcher: tuple[Bus, int], siblings: list[Sibling]
) -> None:
    bus, port = launcher
    talker, listener, _ = _pair(siblings, port)
    assert talker.ask("linked") == {"ok": True}
    talker.ask("publish 20")
    outsider = bus.publisher(_TOPIC, Count, MAB_RT, node="outsider")
    # the listener now needs Zenoh for the outsider: the talker's messages reach it both ways
    assert wait_until(lambda: listener.ask("stats")["on_zenoh"] is True, timeout=10.0)
    assert talker.ask("zenoh 1") == {"ok": True}
    assert wait_until(lambda: outsider.remote_matched, timeout=10.0)
    talker.ask("publish 200")
    for i in range(5):
        outsider.publish(Count(1000 + i, "outside"))
    assert wait_until(lambda: len(listener.ask("stats")["got"]) >= 225, timeout=10.0)
    stats = listener.ask("stats")
    linked = [v for v in stats["got"] if v < 1000]
    assert linked == list(range(220))  # once each: the Zenoh copies were dropped
    assert [v for v in stats["got"] if v >= 1000] == [1000, 1001, 1002, 1003, 1004]
    assert stats["copies"] >= 150  # ... and there were copies to drop


def test_a_reliable_topic_stays_on_zenoh(
    launcher: tuple[Bus, int], siblings: list[Sibling]
) -> None:
    _bus, port = launcher
    talker, listener, _ = _pair(siblings, port, "reliable")
    assert talker.ask("linked links") == {"ok": True}
    assert talker.ask("zenoh 1") == {"ok": True}
    talker.ask("publish 50")
    assert wait_until(lambda: len(listener.ask("stats")["got"]) >= 50, timeout=10.0)
    stats = listener.ask("stats")
    assert stats["got"] == list(range(50))
    assert stats["received"] == 0  # nothing by the link
    assert stats["on_zenoh"] is True
    assert talker.ask("stats")["targets"] == 0


def test_a_dead_sibling_sends_the_stream_back_to_zenoh_and_its_successor_is_linked_again(
    launcher: tuple[Bus, int], siblings: list[Sibling]
) -> None:
    bus, port = launcher
    talker, listener, listener_group = _pair(siblings, port)
    assert talker.ask("linked") == {"ok": True}
    outside: list[int] = []
    bus.subscribe(_TOPIC, Count, lambda m: outside.append(m.value), MAB_RT, realtime=True)
    listener.process.send_signal(signal.SIGKILL)
    listener.process.wait(timeout=10.0)
    assert wait_until(lambda: talker.ask("stats")["targets"] == 0, timeout=10.0)
    assert talker.ask("zenoh 1") == {"ok": True}  # the outside subscriber still hears it
    talker.ask("publish 10")
    assert wait_until(lambda: len(outside) >= 10, timeout=10.0)
    successor = _start(siblings, port, listener_group, "sub")  # respawned under its name
    assert talker.ask("linked") == {"ok": True}
    assert successor.ask("linked") == {"ok": True}
    talker.ask("publish 100")
    assert wait_until(lambda: len(successor.ask("stats")["got"]) >= 90, timeout=10.0)
    stats = successor.ask("stats")
    assert stats["received"] >= 90
    assert stats["got"] == sorted(set(stats["got"]))  # in order, none twice


def test_a_process_that_is_not_the_launchs_child_is_refused(
    launcher: tuple[Bus, int], siblings: list[Sibling]
) -> None:
    _bus, port = launcher
    talker_group, listener_group = SiblingGroup.of_launch(["talker", "listener"])
    listener = _start(siblings, port, listener_group, "sub")
    assert wait_until(
        lambda: _connects(talker_group.address("listener")), timeout=10.0
    )  # listening
    # This process knows the address but is the siblings' parent, not their sibling.
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as intruder:
        intruder.connect(talker_group.address("listener"))
        hello = json.dumps({"name": "talker"}).encode()
        intruder.settimeout(10.0)
        try:  # closed before or after the hello: never told what the listener subscribes
            intruder.send(b"H" + hello)
            reply = intruder.recv(4096)
        except OSError:
            reply = b""
        assert reply == b""
    stats = listener.ask("stats")
    assert stats["refused"] >= 1
    assert stats["linked"] == []


def _connects(address: bytes) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as probe:
        try:
            probe.connect(address)
        except OSError:
            return False
    return True


_NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,11}", fullmatch=True)


@given(_NAMES, st.lists(_NAMES, max_size=4, unique=True))
def test_a_group_survives_its_command_line_form(name: str, peers: list[str]) -> None:
    others = tuple(p for p in peers if p != name)
    group = SiblingGroup("0123abcd", name, others)
    assert SiblingGroup.from_arg(group.to_arg()) == group


@pytest.mark.parametrize(
    ("key", "name", "peers", "expected"),
    [
        ("0123", "Bridge", (), "name 'Bridge'; expected [a-z0-9_]+"),
        ("0123", "bridge", ("con:trol",), "peer 'con:trol'; expected [a-z0-9_]+"),
        ("XYZ", "bridge", (), "key 'XYZ'; expected lower-case hex"),
        ("0123", "bridge", ("bridge",), "'bridge' is among its own peers"),
    ],
)
def test_a_malformed_group_is_refused_naming_what_is_wrong(
    key: str, name: str, peers: tuple[str, ...], expected: str
) -> None:
    with pytest.raises(BusError, match=re.escape(expected)):
        SiblingGroup(key, name, peers)


def test_only_best_effort_volatile_topics_are_carried() -> None:
    assert carried(MAB_RT)
    assert not carried(RELIABLE)
    assert not carried(LATCHED)


def test_each_launch_has_its_own_addresses() -> None:
    first = SiblingGroup.of_launch(["bridge", "control"])
    second = SiblingGroup.of_launch(["bridge", "control"])
    assert first[0].address("control") == first[1].address("control")
    assert first[0].address("control") != second[0].address("control")
    assert [g.peers for g in first] == [("control",), ("bridge",)]
