"""A second process running one jointbus node, for the liveliness tests (a script, not collected).

``python runtime_peer.py PORT NAME``: connect to 127.0.0.1:PORT over Zenoh, run node NAME (started,
so it sends its 1 Hz heartbeat), print ``ready`` and live until killed or until stdin closes.
"""

from __future__ import annotations

import sys

from jointbus.bus import Bus, ZenohConfig
from jointbus.runtime import Node


def main() -> int:
    port, name = int(sys.argv[1]), sys.argv[2]
    with (
        Bus(name="peer", zenoh=ZenohConfig.loopback(None, (port,))) as bus,
        Node(name, bus) as node,
    ):
        node.start()
        print("ready", flush=True)
        sys.stdin.read()  # the parent kills us (or closes stdin to end cleanly)
    return 0


if __name__ == "__main__":
    sys.exit(main())
