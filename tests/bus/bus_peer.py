"""A second jointbus process for the cross-process tests (run as a script, not collected).

``python bus_peer.py talk PORT TOPIC COUNT``: connect to 127.0.0.1:PORT, publish COUNT ``Count``
messages (node ``peer_talker``) once a remote subscriber matches, then stay alive until stdin closes
so the parent can run discovery against it.
``python bus_peer.py listen PORT TOPIC COUNT``: subscribe, print ``ready``, then print the received
values as one JSON line once COUNT arrived (or after 10 s).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the shared support package

from jointbus.bus import RELIABLE, Bus, ZenohConfig
from support.bus import Count, wait_until


def main() -> int:
    role, port, topic, count = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    with Bus(name="peer", zenoh=ZenohConfig.loopback(None, (port,))) as bus:
        if role == "talk":
            pub = bus.publisher(topic, Count, RELIABLE, node="peer_talker")
            print("ready", flush=True)
            if not wait_until(lambda: pub.remote_matched, timeout=10.0):
                print("no subscriber", flush=True)
                return 1
            for i in range(count):
                pub.publish(Count(i, "from peer"))
                time.sleep(0.001)
            print("sent", flush=True)
            sys.stdin.read()  # the parent closes stdin when it is done with discovery
            return 0
        got: list[int] = []
        bus.subscribe(topic, Count, lambda m: got.append(m.value), RELIABLE.with_(depth=1000))
        print("ready", flush=True)
        wait_until(lambda: len(got) >= count, timeout=10.0)
        print(json.dumps(got), flush=True)
        return 0


if __name__ == "__main__":
    sys.exit(main())
