"""A second process serving a service, for the cross-process service tests (run as a script).

``python service_peer.py PORT NAME``: connect to 127.0.0.1:PORT, serve ``NAME`` (request ``Count``,
response ``Reading``: ``x = 2 * value``; a negative value is refused), print ``ready``, and serve
until stdin closes.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the shared support package

from jointbus.bus import Bus, ServiceRefused, ZenohConfig
from support.bus import Count, Reading


def double(request: Count) -> Reading:
    if request.value < 0:
        raise ServiceRefused("", f"value {request.value} is negative; expected >= 0")
    return Reading(2.0 * request.value)


def main() -> int:
    port, name = int(sys.argv[1]), sys.argv[2]
    with Bus(name="service-peer", zenoh=ZenohConfig.loopback(None, (port,))) as bus:
        bus.serve(name, Count, Reading, double, node="peer_server")
        print("ready", flush=True)
        sys.stdin.read()
    return 0


if __name__ == "__main__":
    sys.exit(main())
