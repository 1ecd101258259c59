"""The chaos campaign's ``bus://`` client: a process that reads the robot through its array API.

Where it sits: :mod:`jointbus.tools.chaos`; :mod:`jointbus.chaos_campaign` starts it as
``python -m jointbus.tools.chaos.bus_client --hub-port P`` beside the robot, stops it (SIGSTOP)
and kills and restarts it, as Player's clients come and go. It opens ``bus://hb50`` (the
bridge served as an actuator array, :mod:`jointbus.drivers.bus`) and reads the joints at 50 Hz,
commanding nothing — so its death must change nothing for the robot, and a hung client must not
hold anything of the bridge's. Prints ``ready`` once the array is open; stops on SIGTERM.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    from jointbus import drivers
    from jointbus.drivers.errors import DriverError

    parser = argparse.ArgumentParser(prog="python -m jointbus.tools.chaos.bus_client")
    parser.add_argument("--hub-port", type=int, required=True)
    parser.add_argument("--namespace", default="hb50")
    parser.add_argument("--rate", type=float, default=50.0)
    args = parser.parse_args(argv)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    array = drivers.open(f"bus://{args.namespace}?hub_port={args.hub_port}&timeout=5")
    try:
        print("ready", flush=True)
        while not stop.wait(1.0 / args.rate):
            try:
                array.read_joints()
            except DriverError:  # the bridge is restarting: keep asking
                continue
    finally:
        array.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
