"""A second process running the hb50 control node, for the stall tests (a script, not collected).

``python control_peer.py PORT``: connect to 127.0.0.1:PORT over Zenoh, run the real
:class:`~jointbus.robots.hb50.control.node.ControlNode` (started: it steps on each
``/hb50/bridge_data`` frame the test sends and reports on ``/hb50/status``), print ``ready`` and
live until killed or until stdin closes.
"""

from __future__ import annotations

import sys

from jointbus.bus import Bus, ZenohConfig
from jointbus.model.yaml_loader import load_robot
from jointbus.robots.hb50.control.node import ControlNode


def main() -> int:
    port = int(sys.argv[1])
    with Bus(name="control-peer", zenoh=ZenohConfig.loopback(None, (port,))) as bus:
        node = ControlNode(bus, load_robot("hb50"))
        try:
            node.start()
            print("ready", flush=True)
            sys.stdin.read()  # the parent kills us (or closes stdin to end cleanly)
        finally:
            node.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
