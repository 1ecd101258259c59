"""A child process of the fault tests: a Zenoh router, one robot node, or an observer (a script).

``python fault_node.py ROLE (--hub-port PORT | --router-port PORT) [--start COMMAND]``:

- ``router --port PORT``: a Zenoh session in *router* mode listening on ``tcp/127.0.0.1:PORT``
  (zenoh-python opens one; there is no ``zenohd`` binary here) — the multi-host topology's
  router, on loopback;
- ``bridge`` / ``control``: that node alone, as ``jointbus bridge`` / ``jointbus control`` run it
  (a one-node :class:`jointbus.stack.Stack`), over the default hub scheme or through the router;
  ``--start`` is the control node's start command (``none``: nothing);
- ``observer``: a node that subscribes to ``/hb50/bridge_data`` and prints
  ``data <monotonic ns>`` on the first frame (the peer the Zenoh-peer test kills and restarts).

Every session uses the tests' :data:`fault_support.FAST_RECONNECT`. The process prints ``ready
<time.monotonic_ns()>`` once it is up — a router stamps the moment it began opening its session,
since it listens from inside that call — and lives until its stdin closes (a clean stop, exit 0)
or it is killed.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the shared support package

from jointbus.bus import MAB_RT, Bus, ZenohConfig
from jointbus.robots.hb50.messages import BridgeData
from support.faults import FAST_RECONNECT, hub_config, router_config


def _router(port: int) -> int:
    import zenoh

    config = zenoh.Config()
    for key, value in (
        ("mode", '"router"'),
        ("listen/endpoints", json.dumps([f"tcp/127.0.0.1:{port}"])),
        ("scouting/multicast/enabled", "false"),
        ("transport/shared_memory/enabled", "false"),
        *FAST_RECONNECT,
    ):
        config.insert_json5(key, value)
    opening_ns = time.monotonic_ns()  # it listens from inside open(): the restart moment
    session = zenoh.open(config)
    try:
        _say(f"ready {opening_ns}")
        sys.stdin.read()
    finally:
        session.close()
    return 0


_SAY = threading.Lock()


def _say(line: str) -> None:
    """One whole line on stdout: ``print`` writes the text and its newline apart, and the
    observer's first ``data`` line (a Zenoh thread) once landed inside its ``ready`` line."""
    with _SAY:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def _observer(config: ZenohConfig) -> int:
    from jointbus.runtime import Node

    first = threading.Event()

    def on_frame(_frame: BridgeData) -> None:
        if not first.is_set():
            first.set()
            _say(f"data {time.monotonic_ns()}")

    with Bus(name="fault-observer", zenoh=config) as bus, Node("fault_observer", bus) as node:
        node.create_subscription("bridge_data", BridgeData, on_frame, MAB_RT, realtime=True)
        node.start()
        _say(f"ready {time.monotonic_ns()}")
        sys.stdin.read()
    return 0


def _node(role: str, config: ZenohConfig, start: str) -> int:
    from jointbus.stack import Stack

    stack = Stack(
        nodes=(role,),
        zenoh=config,
        start_command=None if start == "none" else start,
    )
    with stack:
        _say(f"ready {time.monotonic_ns()}")
        sys.stdin.read()
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("role", choices=("router", "bridge", "control", "observer"))
    parser.add_argument("--port", type=int, help="router: the port to listen on")
    parser.add_argument("--hub-port", type=int, help="the default scheme's hub port")
    parser.add_argument(
        "--router-port", type=int, help="connect to the router on this loopback port (client mode)"
    )
    parser.add_argument("--start", default="stand_up", help="control: start command or none")
    args = parser.parse_args()
    if args.role == "router":
        return _router(args.port)
    if args.router_port is not None:
        config = router_config(args.router_port)
    else:
        config = hub_config(args.hub_port)
    if args.role == "observer":
        return _observer(config)
    return _node(args.role, config, args.start)


if __name__ == "__main__":
    sys.exit(main())
