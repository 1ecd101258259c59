"""Child process of test_recorder_crash.py: record a topic fed at a known rate until killed.

Usage: ``python recorder_crash_child.py OUT.mcap RATE_HZ FLUSH_S``. Publishes ``String(str(i))``
for i = 0, 1, ... at RATE_HZ on an in-process bus with a recorder attached, prints ``ready`` once
recording, and never exits on its own (the test kills it with SIGKILL).
"""

from __future__ import annotations

import sys
import time

from jointbus.bus import Bus
from jointbus.messages.std_msgs import String
from jointbus.tools.recorder import Recorder


def main() -> None:
    path, rate, flush = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    bus = Bus()
    pub = bus.publisher("/counter", String)
    Recorder(bus, path, flush_interval=flush).start()
    print("ready", flush=True)
    period = 1.0 / rate
    next_t = time.monotonic()
    i = 0
    while True:
        pub.publish(String(str(i)))
        i += 1
        next_t += period
        time.sleep(max(0.0, next_t - time.monotonic()))


if __name__ == "__main__":
    main()
