"""Bench: an actuator array served on the bus — ``bus://`` round trips, read staleness, server CPU.

No goals (information rows, each against an anchor measured in the same run):

- **bus:// request round trip** (p50 / p99): ``arm.set_accel("elbow", 3.0)`` through
  ``bus://arm6`` — checked locally, sent as a service call over Zenoh (two sessions on loopback),
  answered by the array node's worker thread calling the served ``sim://arm6`` and reading it
  once for the state the ACK carries, ACK back. Anchors:
  the *same call in process* on the ``sim://arm6`` driver itself, and *raw Zenoh get/reply* between
  two sessions of the same process with the same request and reply bytes (the server replies from
  its callback, no thread hop) — the floor for any request/reply on Zenoh here.
- **bus:// read staleness** (p50 / p99): at random instants, the age of the data ``read()``
  returns (wall clock now − the sample's header stamp) from a node publishing at 100 Hz. Anchor:
  half the publishing period, the mean age of a sample read at a random instant with zero
  transport delay.
- **served arm6 at 500 Hz, CPU**: ``jointbus serve sim://arm6 --rate 500`` in its own process
  with no client, CPU time over wall time (% of one core, from ``/proc/<pid>/stat``). Anchor: a
  process that only opens ``sim://arm6`` (the simulator's own thread) for the same time.

Run: ``python -m bench.bench_array_server`` (``--quick`` for a short run).
"""

from __future__ import annotations

import os
import random
import socket
import statistics
import subprocess
import sys
import time
from typing import Any

import zenoh

from jointbus import drivers
from jointbus.bus import Bus, ZenohConfig
from jointbus.drivers.bus.errors_on_wire import ack
from jointbus.messages.jointbus_msgs import ActuatorAccelConfigRequest
from jointbus.nodes.array import ArrayNode, ArrayNodeConfig

_CLK_TCK = os.sysconf("SC_CLK_TCK")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _quantiles(samples_s: list[float]) -> tuple[float, float]:
    ordered = sorted(samples_s)
    p50 = statistics.median(ordered) * 1e6
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] * 1e6
    return p50, p99


def _row(
    metric: str, value: float, unit: str, anchor: str | None, anchor_value: float | None
) -> dict[str, Any]:
    ratio = value / anchor_value if anchor_value else None
    return {
        "metric": metric,
        "value": value,
        "unit": unit,
        "anchor": anchor,
        "anchor_value": anchor_value,
        "ratio": ratio,
        "goal": None,
        "pass": None,
    }


def _timed(call: Any, n: int) -> list[float]:
    for _ in range(max(10, n // 10)):  # warm-up
        call()
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        call()
        out.append(time.perf_counter() - t0)
    return out


def _raw_zenoh_round_trips(n: int, request: bytes, reply: bytes) -> list[float]:
    port = _free_port()
    configs = []
    for listen, connect in ((f"tcp/127.0.0.1:{port}", None), (None, f"tcp/127.0.0.1:{port}")):
        c = zenoh.Config()
        c.insert_json5("mode", '"peer"')
        c.insert_json5("scouting/multicast/enabled", "false")
        c.insert_json5("listen/endpoints", f'["{listen}"]' if listen else "[]")
        c.insert_json5("connect/endpoints", f'["{connect}"]' if connect else "[]")
        configs.append(c)
    server, client = zenoh.open(configs[0]), zenoh.open(configs[1])
    try:

        def answer(query: zenoh.Query) -> None:
            query.reply("bench/raw/service", reply)

        queryable = server.declare_queryable("bench/raw/service", answer, complete=True)
        time.sleep(0.5)

        def call() -> None:
            for _ in client.get("bench/raw/service", payload=request, timeout=2.0):
                pass

        samples = _timed(call, n)
        queryable.undeclare()
        return samples
    finally:
        client.close()
        server.close()


def _round_trips(n: int) -> list[dict[str, Any]]:
    port = _free_port()
    with (
        drivers.open("sim://arm6?noise=false") as served,
        Bus(name="bench-server", zenoh=ZenohConfig(hub_port=port)) as bus,
    ):
        node = ArrayNode(served, bus, namespace="arm6")
        node.start()
        try:
            # the ACK as the node sends it: with the array's state after the call (6 actuators)
            ack_bytes = ack("set_accel", (), served.read()).to_cdr()
            with drivers.open(f"bus://arm6?hub_port={port}&timeout=2.0") as remote:
                remote_samples = _timed(lambda: remote.set_accel("elbow", 3.0), n)
                staleness = _staleness(remote, 400 if n < 1000 else 2000)
        finally:
            node.shutdown()
    with drivers.open("sim://arm6?noise=false") as local:
        local_samples = _timed(lambda: local.set_accel("elbow", 3.0), n)
    request = ActuatorAccelConfigRequest(2, 3.0).to_cdr()
    reply = ack_bytes
    raw_samples = _raw_zenoh_round_trips(n, request, reply)
    remote_p50, remote_p99 = _quantiles(remote_samples)
    local_p50, local_p99 = _quantiles(local_samples)
    raw_p50, raw_p99 = _quantiles(raw_samples)
    period_ms = 1e3 / ArrayNodeConfig().rate_hz
    stale_p50, stale_p99 = (v / 1e3 for v in _quantiles(staleness))
    return [
        _row("array.bus_request.set_accel.p50", remote_p50, "us",
             "same call in process (sim://arm6)", local_p50),
        _row("array.bus_request.set_accel.p99", remote_p99, "us",
             "same call in process (sim://arm6)", local_p99),
        _row("array.bus_request.vs_raw_zenoh.p50", remote_p50, "us",
             "raw Zenoh get/reply, same sizes", raw_p50),
        _row("array.bus_request.vs_raw_zenoh.p99", remote_p99, "us",
             "raw Zenoh get/reply, same sizes", raw_p99),
        _row("array.bus_read_staleness.p50", stale_p50, "ms",
             "half the 100 Hz publishing period", period_ms / 2),
        _row("array.bus_read_staleness.p99", stale_p99, "ms",
             "half the 100 Hz publishing period", period_ms / 2),
    ]


def _staleness(remote: Any, n: int) -> list[float]:
    """Ages (s) of the data ``read`` returns at random instants: now − the sample's stamp."""
    ages = []
    for _ in range(n):
        time.sleep(random.uniform(0.0, 0.01))
        latest = remote.latest
        stamp = latest.header.stamp
        ages.append(time.time() - (stamp.sec + stamp.nanosec * 1e-9))
    return ages


def _cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _CLK_TCK


def _process_cpu_pct(argv: list[str], ready: str, seconds: float, env: dict[str, str]) -> float:
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.startswith(ready):
            raise RuntimeError(f"{argv} did not start: {line!r}")
        time.sleep(1.0)  # past start-up
        cpu0, t0 = _cpu_s(proc.pid), time.monotonic()
        time.sleep(seconds)
        cpu1, t1 = _cpu_s(proc.pid), time.monotonic()
        return (cpu1 - cpu0) / (t1 - t0) * 100.0
    finally:
        proc.terminate()
        proc.wait(timeout=10.0)


_SIM_ONLY = (
    "import sys, time\n"
    "from jointbus import drivers\n"
    "with drivers.open('sim://arm6') as arm:\n"
    "    print('ready', flush=True)\n"
    "    time.sleep(float(sys.argv[1]) + 5.0)\n"
)


def _cpu_rows(seconds: float) -> list[dict[str, Any]]:
    env = dict(os.environ)
    env["JOINTBUS_HUB_PORT"] = str(_free_port())
    served = _process_cpu_pct(
        [sys.executable, "-m", "jointbus.cli.main", "serve", "sim://arm6", "--rate", "500"],
        "serving",
        seconds,
        env,
    )
    sim_only = _process_cpu_pct(
        [sys.executable, "-c", _SIM_ONLY, str(seconds)], "ready", seconds, env
    )
    return [
        _row("array.serve_arm6_500hz.cpu", served, "% core",
             "a process running sim://arm6 alone", sim_only),
    ]


def run(quick: bool = True) -> list[dict[str, Any]]:
    """The rows (see the module docstring); quick: 300 calls and 4 s of CPU sampling."""
    n = 300 if quick else 3000
    return _round_trips(n) + _cpu_rows(4.0 if quick else 15.0)


if __name__ == "__main__":
    from bench.run import format_table

    print(format_table(run(quick="--quick" in sys.argv)))
