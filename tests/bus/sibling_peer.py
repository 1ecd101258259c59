"""A process of a two-process "launch" for the same-host link tests (run as a script).

``python sibling_peer.py ROLE PORT GROUP TOPIC [QOS]``: a bus connected to 127.0.0.1:PORT that
joins the sibling group GROUP (``SiblingGroup.to_arg``); ROLE ``pub`` declares a ``Count``
publisher of TOPIC, ``sub`` a realtime subscriber (every message kept), ``hosted`` an ordinary
subscriber of TOPIC and a RELIABLE one of TOPIC + ``_zenoh`` (a topic the links never carry) on a
dispatcher served by the links' thread (``Bus.dispatcher(on_sibling_links=True)``), each noting
the thread its callback ran on, ``reader`` a realtime subscriber (value and thread kept) whose
inbound links this process's main thread reads (``SiblingLinks.inbound_reader``); QOS ``mab``
(MAB_RT, the default) or ``reliable`` (RELIABLE, depth 1000). It then answers one JSON line per
command read on stdin: ``linked`` (waits ≤ 10 s for both links and, for ``pub``, the
subscriber's announcement), ``zenoh MATCHED`` (``pub``: waits ≤ 10 s until Zenoh's matching
status is MATCHED, 0 or 1), ``publish N`` (N messages, 2 ms apart, values counting on),
``read [LIMIT]`` (``reader``: one read of the links, on this thread), ``unread`` (``reader``: the
links' thread reads again), ``stats``, ``quit``.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the shared support package

from jointbus.bus import MAB_RT, RELIABLE, Bus, ZenohConfig
from jointbus.bus.sibling_link import SiblingGroup
from support.bus import Count, wait_until


def main() -> int:
    role, port, group_arg, topic = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    group = SiblingGroup.from_arg(group_arg)
    qos = RELIABLE.with_(depth=1000) if sys.argv[5:] == ["reliable"] else MAB_RT
    with Bus(name=f"sibling-{role}", zenoh=ZenohConfig.loopback(None, (port,))) as bus:
        transport = bus.zenoh
        assert transport is not None
        links = transport.join_siblings(group)
        got: list[int] = []
        got_zenoh: list[int] = []
        threads: set[str] = set()
        pub = None
        sub = None
        reader = None
        where: list[tuple[int, str]] = []  # reader: (value, thread of its callback)
        if role == "pub":
            pub = bus.publisher(topic, Count, qos, node="sibling_talker")
        elif role == "hosted":

            def on_count(into: list[int], msg: Count) -> None:
                threads.add(threading.current_thread().name)
                into.append(msg.value)

            dispatcher = bus.dispatcher(
                "listener-callbacks",
                lambda: threads.add("started on " + threading.current_thread().name),
                on_sibling_links=True,
            )
            sub = bus.subscribe(
                topic,
                Count,
                partial(on_count, got),
                qos.with_(depth=1000),
                dispatcher=dispatcher,
                node="sibling_listener",
            )
            bus.subscribe(
                topic + "_zenoh",
                Count,
                partial(on_count, got_zenoh),
                RELIABLE.with_(depth=1000),
                dispatcher=dispatcher,
                node="sibling_listener",
            )
        elif role == "reader":

            def on_read(msg: Count) -> None:
                got.append(msg.value)
                where.append((msg.value, threading.current_thread().name))

            sub = bus.subscribe(
                topic, Count, on_read, qos.with_(depth=1000), realtime=True, node="sibling_reader"
            )
            reader = links.inbound_reader()
        else:
            sub = bus.subscribe(
                topic,
                Count,
                lambda m: got.append(m.value),
                qos,
                realtime=True,
                node="sibling_listener",
            )
        sent = 0

        def remote() -> Any:
            assert pub is not None
            return pub._remote

        for line in sys.stdin:
            words = line.split()
            answer: dict[str, Any] = {}
            if words[0] == "linked":
                ok = wait_until(lambda: bool(links.linked()), timeout=10.0)
                if pub is not None and words[1:] != ["links"]:
                    ok = ok and wait_until(lambda: bool(remote().sibling_targets), timeout=10.0)
                answer["ok"] = ok
            elif words[0] == "zenoh":
                answer["ok"] = wait_until(
                    lambda want=words[1] == "1": remote().zenoh_matched is want, timeout=10.0
                )
            elif words[0] == "publish":
                assert pub is not None
                for _ in range(int(words[1])):
                    pub.publish(Count(sent, "linked"))
                    sent += 1
                    time.sleep(0.002)
                answer["sent"] = sent
            elif words[0] == "read":
                assert reader is not None
                answer["read"] = reader.read(*(int(w) for w in words[1:]))
            elif words[0] == "unread":
                assert reader is not None
                reader.close()
                answer["ok"] = True
            elif words[0] == "stats":
                subscription = transport.subscription(topic)
                answer = {
                    "got": got,
                    "got_zenoh": got_zenoh,
                    "threads": sorted(threads),
                    "where": where,
                    "received": links.received,
                    "refused": links.refused,
                    "linked": list(links.linked()),
                    "on_zenoh": None if subscription is None else subscription.on_zenoh,
                    "copies": None if subscription is None else subscription.sibling_copies,
                    "lost": None if sub is None else sub.stats().lost,
                    "targets": None if pub is None else len(remote().sibling_targets),
                    "zenoh_matched": None if pub is None else remote().zenoh_matched,
                }
            elif words[0] == "quit":
                return 0
            print(json.dumps(answer), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
