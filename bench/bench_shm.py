"""Bench: same-host shared memory (iceoryx2) against Zenoh, one-way latency at 1 kHz.

Where it sits: ``bench/``, run by ``python -m bench.run`` or alone
(``python -m bench.bench_shm [--full]``). It answers one question of the performance issue: is a
shared-memory transport at least 3× faster one-way than Zenoh for a 1 kHz loop on this machine? If
so it would be worth adding as an optional transport behind the bus's API; if not, it is not worth
a second transport to maintain (the answer and the numbers are in docs/PERFORMANCE.md).

What is measured: two processes on this host, this one sending at 1 kHz (sleep to 200 µs before
each deadline, then spin), a child receiving. The payload is the same for both transports: an
8-byte message index followed by the CDR of a 12-joint ``BridgeData`` (≈ 0.5 KB), pre-encoded, so
neither the codec nor the bus is in the measurement — only the transport. Latency = receiver wall
time after copying the bytes out − sender wall time right before the send call (one host, one
clock). Two wake-up strategies, the same on both sides:

- **blocking**: the receiver sleeps until data arrives. Zenoh: a subscriber callback (Zenoh's
  receive thread wakes on the socket). iceoryx2: ``Listener.timed_wait`` on an event service that
  the sender notifies after each ``send``, then ``Subscriber.receive``. Both pay the cost of
  waking a sleeping process on the other vCPU (≈ 50 µs on this VM, see the library notes).
- **busy-poll**: the receiver never sleeps and burns a whole core. Zenoh: ``try_recv`` on a ring
  channel in a spin loop (Zenoh's own receive thread still sleeps on its socket — Zenoh offers no
  way around that). iceoryx2: ``Subscriber.receive`` in a spin loop, no event.

Best effort on both (Zenoh: ``BEST_EFFORT`` + ``DROP``; iceoryx2: a subscriber buffer of 16 —
a buffer of 1 silently drops samples). Each variant runs ``rounds`` times, interleaved, and its
best median counts (the VM is noisy). Latency rows: ``ratio`` = Zenoh / iceoryx2, i.e.
iceoryx2's speed-up; receiver CPU rows (% of one core over the receiving window, the child's
process time): ``ratio`` = iceoryx2 / Zenoh.

The decision rule (adopt at ≥ 3×) compares iceoryx2 with **our Zenoh path**, the third transport
measured (blocking only): a jointbus bus publishing the same ``BridgeData`` (index in the header
stamp) to a ``realtime=True`` subscriber of another process — encode, rmw_zenoh attachment,
sequence-gap and latency bookkeeping and decode included, as a user gets it. iceoryx2 carries
pre-encoded bytes there, so the ratio is an upper bound on what swapping the transport would
gain. It is applied to the blocking strategy, the only one a bus whose subscribers are callbacks
can use without burning a core per receiving process; the busy-poll rows say what a dedicated
spinning receiver would gain over raw Zenoh.

iceoryx2 is not a jointbus dependency: without it (``pip install iceoryx2==0.10.0``) the module
returns one information row saying so. Services are named per run (pid); the files iceoryx2 leaves
behind (its management segment in ``/dev/shm``, empty directories under ``/tmp/iceoryx2``) are
removed at the end when this run created them.
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import importlib
import importlib.util
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from typing import Any

import zenoh

from jointbus.bus import MAB_RT, Bus, ZenohConfig
from jointbus.messages.std_msgs import Header
from jointbus.robots.hb50.messages import BridgeData

ADOPT_SPEEDUP = 3.0
RATE_HZ = 1000.0
KEY = "bench/shm/bridge_data"
BUFFER = 16
MODES = ("blocking", "busy-poll")
IDLE_NS = 500_000_000  # a receiver stops once nothing arrived for this long (lost messages)
#: The topic of the jointbus runs (domain 0, its own key: never the demo's).
JB_TOPIC = "/bench/shm/bridge_data"


def payload_cdr() -> bytes:
    """CDR of a 12-joint BridgeData (the bridge's 500 Hz message)."""
    names = tuple(f"{leg}_j{j}" for leg in ("fl", "fr", "rl", "rr") for j in range(3))
    msg = BridgeData(
        Header.at_ns(1_700_000_000_000_000_000, "base_link"),
        joint_name=names,
        joint_position=tuple(0.1 * i for i in range(12)),
        joint_velocity=tuple(0.01 * i for i in range(12)),
        joint_effort=(0.5,) * 12,
        joint_temperature=bytes(range(30, 42)),
        joint_status=tuple(range(12)),
    )
    return msg.to_cdr()


def iceoryx2_available() -> bool:
    return importlib.util.find_spec("iceoryx2") is not None


def _iox() -> Any:
    """The iceoryx2 module (an optional package, untyped: imported in one place)."""
    return importlib.import_module("iceoryx2")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _zenoh_config(listen: tuple[str, ...], connect: tuple[str, ...]) -> zenoh.Config:
    config = zenoh.Config()
    config.insert_json5("mode", '"peer"')
    config.insert_json5("scouting/multicast/enabled", "false")
    config.insert_json5("scouting/gossip/enabled", "false")
    config.insert_json5("listen/endpoints", json.dumps(list(listen)))
    config.insert_json5("connect/endpoints", json.dumps(list(connect)))
    return config


# ---- receiver (child process) -------------------------------------------------------------------
_START: list[float] = []


def _ready(_out: list[tuple[int, int]]) -> None:
    """Tell the sender we listen, and start the receiver's CPU clock."""
    _START[:] = [time.process_time(), time.monotonic()]
    print("ready", flush=True)


def _receive_zenoh(mode: str, n: int, port: int, out: list[tuple[int, int]]) -> None:
    session = zenoh.open(_zenoh_config((f"tcp/127.0.0.1:{port}",), ()))
    clock = time.time_ns
    try:
        if mode == "blocking":
            done = threading.Event()

            def on_sample(sample: zenoh.Sample) -> None:
                data = sample.payload.to_bytes()
                out.append((int.from_bytes(data[:8], "little"), clock()))
                if len(out) >= n:
                    done.set()

            sub: Any = session.declare_subscriber(KEY, on_sample)
            _ready(out)
            end = time.monotonic() + 60.0
            while not done.wait(0.05) and time.monotonic() < end:
                if out and clock() - out[-1][1] > IDLE_NS:
                    break  # best effort: the last messages may be lost
        else:
            sub = session.declare_subscriber(KEY, zenoh.handlers.RingChannel(BUFFER))
            _ready(out)
            try_recv = sub.try_recv
            end = time.monotonic() + 60.0
            while len(out) < n and time.monotonic() < end:
                if out and clock() - out[-1][1] > IDLE_NS:
                    break
                sample = try_recv()
                if sample is not None:
                    data = sample.payload.to_bytes()
                    out.append((int.from_bytes(data[:8], "little"), clock()))
        sub.undeclare()
    finally:
        session.close()  # type: ignore[no-untyped-call]


def _receive_iceoryx2(mode: str, n: int, service: str, out: list[tuple[int, int]]) -> None:
    iox2 = _iox()
    node = iox2.NodeBuilder.new().create(iox2.ServiceType.Ipc)
    data_service = (
        node.service_builder(iox2.ServiceName.new(service))
        .publish_subscribe(iox2.Slice[ctypes.c_uint8])
        .subscriber_max_buffer_size(BUFFER)
        .open_or_create()
    )
    events = node.service_builder(iox2.ServiceName.new(service + "/event")).event().open_or_create()
    sub = data_service.subscriber_builder().buffer_size(BUFFER).create()
    listener = events.listener_builder().create()
    _ready(out)
    clock = time.time_ns
    receive = sub.receive
    end = time.monotonic() + 60.0
    wait = listener.timed_wait
    timeout = iox2.Duration.from_millis(100)
    blocking = mode == "blocking"
    while len(out) < n and time.monotonic() < end:
        if out and clock() - out[-1][1] > IDLE_NS:
            break
        if blocking:
            wait(timeout)
        sample = receive()
        while sample is not None:
            data = bytes(sample.payload().as_memory_view())
            out.append((int.from_bytes(data[:8], "little"), clock()))
            sample.delete()
            sample = receive()
    listener.delete()
    sub.delete()


def _receive_jointbus(n: int, port: int, out: list[tuple[int, int]]) -> None:
    """Our Zenoh path: a realtime subscriber of a jointbus bus (decoded ``BridgeData``; the index
    travels in the header stamp)."""
    clock = time.time_ns
    done = threading.Event()

    def on_message(msg: BridgeData) -> None:
        stamp = msg.header.stamp
        out.append((stamp.sec * 1_000_000_000 + stamp.nanosec, clock()))
        if len(out) >= n:
            done.set()

    config = ZenohConfig(listen=(f"tcp/127.0.0.1:{port}",), domain_id=0)
    with Bus(name="bench-shm-rx", zenoh=config) as bus:
        bus.subscribe(JB_TOPIC, BridgeData, on_message, MAB_RT.with_(depth=BUFFER), realtime=True)
        _ready(out)
        end = time.monotonic() + 60.0
        while not done.wait(0.05) and time.monotonic() < end:
            if out and clock() - out[-1][1] > IDLE_NS:
                break


def receiver_main(transport: str, mode: str, n: int, where: str) -> None:
    """Child: receive ``n`` messages, print ``ready`` then JSON {arrivals: [(index, wall ns)],
    cpu_pct: this process's CPU over the receiving window, % of one core}."""
    out: list[tuple[int, int]] = []
    if transport == "zenoh":
        _receive_zenoh(mode, n, int(where), out)
    elif transport == "jointbus":
        _receive_jointbus(n, int(where), out)
    else:
        _receive_iceoryx2(mode, n, where, out)
    cpu = time.process_time() - _START[0]
    wall = time.monotonic() - _START[1]
    print(json.dumps({"arrivals": out, "cpu_pct": 100.0 * cpu / wall}), flush=True)


# ---- sender (this process) ----------------------------------------------------------------------
def _pace(n: int, send: Any) -> list[int]:
    """Call ``send(i)`` at :data:`RATE_HZ` (sleep to 200 µs before the deadline, then spin);
    returns the wall time taken right before each call."""
    sent = [0] * n
    period = 1.0 / RATE_HZ
    next_t = time.monotonic()
    for i in range(n):
        next_t += period
        while (left := next_t - time.monotonic()) > 0:
            if left > 0.0002:
                time.sleep(left - 0.0002)
        sent[i] = time.time_ns()
        send(i)
    return sent


def _spawn(transport: str, mode: str, n: int, where: str) -> subprocess.Popen[str]:
    child = subprocess.Popen(
        [sys.executable, "-m", "bench.bench_shm", "--receiver", transport, mode, str(n), where],
        stdout=subprocess.PIPE,
        text=True,
        cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    )
    assert child.stdout is not None
    if child.stdout.readline().strip() != "ready":
        child.kill()
        raise RuntimeError(f"{transport} receiver did not start")
    return child


def _latencies(child: subprocess.Popen[str], sent: list[int]) -> tuple[list[int], float]:
    """One-way latencies (ns) of the messages received, and the receiver's CPU (%)."""
    out, _ = child.communicate(timeout=120)
    report = json.loads(out.strip().splitlines()[-1])
    lat = [t - sent[i] for i, t in report["arrivals"] if 0 <= i < len(sent)]
    return lat, float(report["cpu_pct"])


def run_zenoh(mode: str, n: int, cdr: bytes) -> tuple[list[int], float]:
    """One-way latencies (ns) of ``n`` messages over raw Zenoh, receiver strategy ``mode``, and
    the receiver's CPU (%)."""
    port = _free_port()
    child = _spawn("zenoh", mode, n, str(port))
    session = zenoh.open(_zenoh_config(("tcp/127.0.0.1:0",), (f"tcp/127.0.0.1:{port}",)))
    try:
        pub = session.declare_publisher(
            KEY,
            reliability=zenoh.Reliability.BEST_EFFORT,
            congestion_control=zenoh.CongestionControl.DROP,
        )
        deadline = time.monotonic() + 10.0
        while not getattr(pub.matching_status, "matching", False) and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.2)
        payloads = [i.to_bytes(8, "little") + cdr for i in range(n)]
        put = pub.put
        sent = _pace(n, lambda i: put(payloads[i]))
        result = _latencies(child, sent)
        pub.undeclare()  # type: ignore[no-untyped-call]
    finally:
        if child.poll() is None:
            child.kill()
        session.close()  # type: ignore[no-untyped-call]
    return result


def bridge_data(index: int) -> BridgeData:
    """The 12-joint BridgeData of :func:`payload_cdr`, ``index`` in its header stamp."""
    names = tuple(f"{leg}_j{j}" for leg in ("fl", "fr", "rl", "rr") for j in range(3))
    return BridgeData(
        Header.at_ns(index, "base_link"),
        joint_name=names,
        joint_position=tuple(0.1 * i for i in range(12)),
        joint_velocity=tuple(0.01 * i for i in range(12)),
        joint_effort=(0.5,) * 12,
        joint_temperature=bytes(range(30, 42)),
        joint_status=tuple(range(12)),
    )


def run_jointbus(n: int) -> tuple[list[int], float]:
    """One-way latencies (ns) of ``n`` BridgeData over our Zenoh path (publish → realtime
    subscriber callback: encode, attachment, gap and latency bookkeeping, decode included), and
    the receiver's CPU (%)."""
    port = _free_port()
    child = _spawn("jointbus", "blocking", n, str(port))
    config = ZenohConfig(
        listen=("tcp/127.0.0.1:0",), connect=(f"tcp/127.0.0.1:{port}",), domain_id=0
    )
    try:
        with Bus(name="bench-shm-tx", zenoh=config) as bus:
            pub = bus.publisher(JB_TOPIC, BridgeData, MAB_RT)
            deadline = time.monotonic() + 10.0
            while not pub.remote_matched and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(0.2)
            messages = [bridge_data(i) for i in range(n)]
            publish = pub.publish
            sent = _pace(n, lambda i: publish(messages[i]))
            result = _latencies(child, sent)
    finally:
        if child.poll() is None:
            child.kill()
    return result


def run_iceoryx2(mode: str, n: int, cdr: bytes) -> tuple[list[int], float]:
    """One-way latencies (ns) of ``n`` messages over iceoryx2, receiver strategy ``mode``, and
    the receiver's CPU (%)."""
    iox2 = _iox()
    service = f"jointbus/bench/{os.getpid()}/{mode}/{time.monotonic_ns()}"
    node = iox2.NodeBuilder.new().create(iox2.ServiceType.Ipc)
    data_service = (
        node.service_builder(iox2.ServiceName.new(service))
        .publish_subscribe(iox2.Slice[ctypes.c_uint8])
        .subscriber_max_buffer_size(BUFFER)
        .open_or_create()
    )
    events = node.service_builder(iox2.ServiceName.new(service + "/event")).event().open_or_create()
    size = 8 + len(cdr)
    pub = data_service.publisher_builder().initial_max_slice_len(size).create()
    notifier = events.notifier_builder().create()
    child = _spawn("iceoryx2", mode, n, service)
    try:
        time.sleep(0.2)
        payloads = [i.to_bytes(8, "little") + cdr for i in range(n)]
        loan = pub.loan_slice_uninit
        memmove = ctypes.memmove
        notify = notifier.notify if mode == "blocking" else None

        def send(i: int) -> None:
            sample = loan(size)
            memmove(sample.payload().as_ptr(), payloads[i], size)
            sample.assume_init().send()
            if notify is not None:
                notify()

        sent = _pace(n, send)
        result = _latencies(child, sent)
    finally:
        if child.poll() is None:
            child.kill()
        notifier.delete()
        pub.delete()
    return result


# ---- clean-up ---------------------------------------------------------------------------------
_SHM_GLOB = "/dev/shm/iox2_*"
_TMP_DIR = "/tmp/iceoryx2"


def _iceoryx2_files() -> set[str]:
    return set(glob.glob(_SHM_GLOB)) | {
        os.path.join(root, d) for root, dirs, _ in os.walk(_TMP_DIR) for d in dirs
    } | ({_TMP_DIR} if os.path.isdir(_TMP_DIR) else set())


def remove_new_files(before: set[str]) -> list[str]:
    """Remove the iceoryx2 files (``/dev/shm``) and empty directories (``/tmp/iceoryx2``) that
    appeared since ``before``: our processes have exited, and iceoryx2 keeps its management
    segment after the last node is gone. Returns what was removed."""
    removed: list[str] = []
    for path in sorted(_iceoryx2_files() - before, key=len, reverse=True):
        try:
            if os.path.isdir(path):
                os.rmdir(path)  # only if empty: never remove another user's services
            else:
                os.unlink(path)
            removed.append(path)
        except OSError:
            pass
    return removed


# ---- table --------------------------------------------------------------------------------------
def _p(samples: list[int], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] / 1e3


def _median_us(samples: list[int]) -> float:
    return statistics.median(samples) / 1e3


def run(quick: bool) -> list[dict[str, Any]]:
    """iceoryx2 vs Zenoh rows (one information row if iceoryx2 is not installed)."""
    if not iceoryx2_available():
        return [
            {
                "metric": "iceoryx2 vs Zenoh one-way latency: skipped (pip install iceoryx2)",
                "value": None,
                "unit": None,
                "anchor": "raw eclipse-zenoh",
                "anchor_value": None,
                "ratio": None,
                "goal": None,
                "pass": None,
            }
        ]
    iox2 = _iox()
    iox2.set_log_level_from_env_or(iox2.LogLevel.Error)
    n = 1000 if quick else 5000
    rounds = 2 if quick else 3
    cdr = payload_cdr()
    results: dict[tuple[str, str], list[tuple[list[int], float]]] = {}
    before = _iceoryx2_files()
    try:
        for _ in range(rounds):
            for mode in MODES:
                results.setdefault(("zenoh", mode), []).append(run_zenoh(mode, n, cdr))
                results.setdefault(("iceoryx2", mode), []).append(run_iceoryx2(mode, n, cdr))
            results.setdefault(("jointbus", "blocking"), []).append(run_jointbus(n))
    finally:
        remove_new_files(before)
    best = {key: min(runs, key=lambda r: _median_us(r[0])) for key, runs in results.items()}
    rows: list[dict[str, Any]] = []
    (iox, _), (ours_lat, ours_cpu) = best[("iceoryx2", "blocking")], best[("jointbus", "blocking")]
    for label, q in (("p50", 0.5), ("p99", 0.99)):
        ours, anchor = _p(iox, q), _p(ours_lat, q)
        rows.append(
            {
                "metric": f"iceoryx2 one-way latency at 1 kHz, blocking receiver, vs our Zenoh "
                f"path ({label})",
                "value": round(ours, 1),
                "unit": "µs",
                "anchor": "jointbus over Zenoh: publish -> realtime callback, BridgeData "
                "(codec, attachment, gap and latency bookkeeping included)",
                "anchor_value": round(anchor, 1),
                "ratio": round(anchor / ours, 2) if ours > 0 else None,
                "goal": f"adopt iceoryx2 if >= {ADOPT_SPEEDUP:g}x faster (decision, not a goal)"
                if label == "p50"
                else None,
                "pass": None,
            }
        )
    rows.append(
        {
            "metric": "jointbus Zenoh path receiver process CPU at 1 kHz (realtime subscriber)",
            "value": round(ours_cpu, 1),
            "unit": "% core",
            "anchor": "raw eclipse-zenoh, blocking receiver",
            "anchor_value": round(best[("zenoh", "blocking")][1], 1),
            "ratio": round(ours_cpu / best[("zenoh", "blocking")][1], 2)
            if best[("zenoh", "blocking")][1] > 0
            else None,
            "goal": None,
            "pass": None,
        }
    )
    for mode in MODES:
        (iox, iox_cpu), (zen, zen_cpu) = best[("iceoryx2", mode)], best[("zenoh", mode)]
        for label, q in (("p50", 0.5), ("p99", 0.99)):
            ours, anchor = _p(iox, q), _p(zen, q)
            rows.append(
                {
                    "metric": f"iceoryx2 one-way latency at 1 kHz, {mode} receiver, "
                    f"{8 + len(cdr)} B ({label})",
                    "value": round(ours, 1),
                    "unit": "µs",
                    "anchor": f"raw eclipse-zenoh, {mode} receiver, same bytes",
                    "anchor_value": round(anchor, 1),
                    "ratio": round(anchor / ours, 2) if ours > 0 else None,
                    "goal": None,
                    "pass": None,
                }
            )
        rows.append(
            {
                "metric": f"iceoryx2 receiver process CPU at 1 kHz, {mode} receiver",
                "value": round(iox_cpu, 1),
                "unit": "% core",
                "anchor": f"raw eclipse-zenoh, {mode} receiver",
                "anchor_value": round(zen_cpu, 1),
                "ratio": round(iox_cpu / zen_cpu, 2) if zen_cpu > 0 else None,
                "goal": None,
                "pass": None,
            }
        )
        for name, lat in (("iceoryx2", iox), ("zenoh", zen)):
            if len(lat) < n:
                print(f"note: {name} {mode}: {n - len(lat)} of {n} messages not received "
                      "(best effort) in the round kept", file=sys.stderr)
    return rows


def main() -> None:
    if len(sys.argv) >= 6 and sys.argv[1] == "--receiver":
        if sys.argv[2] == "iceoryx2":
            iox2 = _iox()
            iox2.set_log_level_from_env_or(iox2.LogLevel.Error)
        receiver_main(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--full", action="store_true")
    for row in run(quick=not parser.parse_args().full):
        print(f"{row['metric']:72s} {row['value']!s:>8} {row['unit'] or ''} "
              f"vs {row['anchor_value']!s:>8}  speed-up {row['ratio']}")


if __name__ == "__main__":
    main()
