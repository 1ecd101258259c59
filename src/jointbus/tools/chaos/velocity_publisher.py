"""The chaos campaign's velocity publisher: a process that walks the robot by the seeded script.

Where it sits: :mod:`jointbus.tools.chaos`; :mod:`jointbus.chaos_campaign` starts it as
``python -m jointbus.tools.chaos.velocity_publisher`` beside the robot, stops it (SIGSTOP), kills
and restarts it, as a joystick or a planner process fails.

It publishes the :class:`~.velocity_script.VelocityScript` of ``--seed`` on
``/<ns>/velocity_command`` (``geometry_msgs/Twist``, normalised, MAB_RT) at ``--rate`` Hz (20 by
default, a joystick's rate), as the node ``chaos_velocity`` — so its heartbeats make it a node
the bridge's liveliness monitor watches, and its death is reported STALE on ``/<ns>/status``.
The script's time is ``time.monotonic()`` minus the origin the campaign writes in
``--origin-file`` (CLOCK_MONOTONIC is one clock for every process of the host; the file is read
again every second): a restarted publisher carries on where the script is, not from its start,
and while the file is absent (before the campaign clock starts, while the stack restarts) it
publishes stop.
Prints ``ready`` once its node runs; stops on SIGTERM / SIGINT (publishing a stop first).
"""

from __future__ import annotations

import argparse
import math
import signal
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from jointbus.bus import MAB_RT, Bus, ZenohConfig
from jointbus.messages.geometry_msgs import Twist, Vector3
from jointbus.runtime import Node
from jointbus.tools.chaos.velocity_script import VelocityScript

__all__ = ["NODE_NAME", "main"]

#: The publisher's node name (its heartbeats let the bridge report its death).
NODE_NAME: Final = "chaos_velocity"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jointbus.tools.chaos.velocity_publisher")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--seconds", type=float, required=True, help="the script's length")
    parser.add_argument(
        "--origin-file", type=Path, required=True, help="holds the monotonic time of t = 0"
    )
    parser.add_argument("--hub-port", type=int, required=True)
    parser.add_argument("--rate", type=float, default=20.0)
    parser.add_argument("--namespace", default="hb50")
    args = parser.parse_args(argv)
    script = VelocityScript.from_seed(args.seed, args.seconds)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    bus = Bus(name="chaos-velocity", zenoh=ZenohConfig(hub_port=args.hub_port))
    try:
        node = Node(NODE_NAME, bus, namespace=args.namespace)
        pub = node.create_publisher("velocity_command", Twist, MAB_RT, managed=False)
        node.start()
        print("ready", flush=True)
        period = 1.0 / args.rate
        tick = time.monotonic()
        origin, read_at = math.nan, -math.inf
        while not stop.is_set():
            now = time.monotonic()
            if now - read_at >= 1.0:
                origin, read_at = _origin(args.origin_file), now
            forward, sideways, turn = (
                (0.0, 0.0, 0.0) if math.isnan(origin) else script.at(now - origin)
            )
            pub.publish(Twist(Vector3(forward, sideways, 0.0), Vector3(0.0, 0.0, turn)))
            tick += period
            stop.wait(max(0.0, tick - time.monotonic()))
            tick = max(tick, time.monotonic() - period)  # after a SIGSTOP: no burst
        pub.publish(Twist())
        node.shutdown()
    finally:
        bus.close()
    return 0


def _origin(path: Path) -> float:
    """The campaign's t = 0 (monotonic s) from ``path``; NaN while there is none."""
    try:
        return float(path.read_text())
    except (OSError, ValueError):
        return math.nan


if __name__ == "__main__":
    sys.exit(main())
