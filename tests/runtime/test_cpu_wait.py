"""``/proc``'s run-queue waits of this process's threads: a thread that competes for a CPU with
another process's busy loop waits, a sleeping one does not (what tells a starved control node
from a stopped one, :mod:`jointbus.robots.hb50.control.step_pace`)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from jointbus.runtime.cpu_wait import most_waited_s, thread_waits, wait_rates

pytestmark = pytest.mark.skipif(
    not os.path.exists("/proc/thread-self/schedstat"), reason="the kernel counts no run-queue wait"
)


def test_the_waits_of_a_busy_thread_grow_and_a_sleeping_ones_stay() -> None:
    cpu = min(os.sched_getaffinity(0))
    hog = subprocess.Popen(
        [sys.executable, "-c", f"import os; os.sched_setaffinity(0, {{{cpu}}})\nwhile True: pass"]
    )
    readings: dict[str, tuple[int, int]] = {}

    def busy() -> None:
        os.sched_setaffinity(0, {cpu})
        tid = threading.get_native_id()
        first = thread_waits()[tid]
        end = time.monotonic() + 0.5
        while time.monotonic() < end:
            pass
        readings["busy"] = (first, thread_waits()[tid])

    def sleeping() -> None:
        tid = threading.get_native_id()
        first = thread_waits()[tid]
        time.sleep(0.5)
        readings["sleeping"] = (first, thread_waits()[tid])

    try:
        time.sleep(0.2)
        threads = [threading.Thread(target=busy), threading.Thread(target=sleeping)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        hog.kill()
        hog.wait()
    busy_s = (readings["busy"][1] - readings["busy"][0]) / 1e9
    sleeping_s = (readings["sleeping"][1] - readings["sleeping"][0]) / 1e9
    assert busy_s >= 0.1, busy_s  # about half its 0.5 s: the hog had the CPU the rest
    assert sleeping_s < 0.05, sleeping_s
    rates = wait_rates({1: 0}, {1: 500_000_000}, 2.0)
    assert rates == {1: 0.25}
    assert most_waited_s({1: 0, 2: 0}, {1: 10**9, 2: 3 * 10**8}, usual=rates, usual_s=2.0) == 0.5
