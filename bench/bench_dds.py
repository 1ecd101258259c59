"""Bench: the bus on DDS (``RMW_IMPLEMENTATION=rmw_cyclonedds_cpp``) against raw Cyclone DDS
Python and against the bus on Zenoh, same run.

Goals (issue 23): one-way latency of a 12-joint ``BridgeData`` at 1 kHz between two processes
≤ 1.2 × raw Cyclone DDS Python's (p50), throughput ≥ 0.8 × raw's; the bus on Zenoh beside both,
and the 500 Hz stack's CPU on DDS beside the same stack on Zenoh. Each row shows the absolute
figures beside the ratio; the load average is in the run's ``machine.json``.

What is measured:

- **latency, two processes, 1 kHz**: sender wall time right before ``publish`` / the write →
  receiver wall time in the callback (one host, one clock). jointbus: a publisher of
  ``BridgeData`` (MAB_RT: best effort, depth 1) on a DDS bus, the receiver a ``realtime=True``
  subscriber on another process's DDS bus, which decodes (and validates) the message on
  Cyclone's receive thread. Raw: cyclonedds-python in both processes, the topic ``rt/hb50/
  bridge_data`` of the same DDS type, the writer handing the binding the same CDR bytes
  pre-encoded (``_clayer.ddspy_write``, what ``DataWriter.write`` calls after serialising), the
  reader's listener taking the raw samples (``ddspy_take``) without deserialising. Both on the
  same loopback configuration (:class:`jointbus.bus.DdsConfig`'s default). Zenoh: the bus on
  Zenoh, as ``bench_bus.py`` measures it. Runs of each kind interleave and each keeps its best
  median: the VM is noisy, and other work only ever adds latency.
- **throughput**: messages/s received when the sender writes back to back, reliable with a
  history deep enough (1000) that nothing is overwritten; each kind keeps its best run.
- **the write itself**: jointbus writes pre-encoded bytes through ``ctypes`` (``dds_write``, the
  GIL released: see :mod:`jointbus.bus.dds_transport`); the binding's ``ddspy_write`` is the
  anchor, both on a writer with no reader, in this process.
- **the 500 Hz stack's CPU**: :class:`jointbus.stack.Stack` (bridge, control, MuJoCo), standing,
  with a remote subscriber of ``bridge_data`` in another process so the wire carries every frame:
  process CPU / wall over a window, on DDS and on Zenoh.

Run: ``python bench/bench_dds.py`` (``--quick`` for a short run).
"""

from __future__ import annotations

import json
import os
import random
import socket
import statistics
import subprocess
import sys
import threading
import time
from typing import Any

from jointbus.bus import MAB_RT, RELIABLE, Bus, DdsConfig, ZenohConfig
from jointbus.messages.std_msgs import Header
from jointbus.robots.hb50.messages import BridgeData

#: jointbus on DDS: one-way latency at 1 kHz (p50) at most this times raw Cyclone DDS Python's.
GOAL_LATENCY_RATIO = 1.2
#: jointbus on DDS: msg/s at least this times raw Cyclone DDS Python's.
GOAL_THROUGHPUT_RATIO = 0.8
N_JOINTS = 12
TOPIC = "/hb50/bridge_data"
KINDS = ("raw", "dds", "zenoh")
#: Samples a throughput run's reader and writer keep (nothing overwritten back to back).
DEEP = 1000


def _message(index: int) -> BridgeData:
    """A 12-joint BridgeData; ``index`` is stored in the header stamp to identify it."""
    names = tuple(f"{leg}_j{j}" for leg in ("fl", "fr", "rl", "rr") for j in range(3))
    return BridgeData(
        Header.at_ns(index, "base_link"),
        joint_name=names,
        joint_position=[0.1 * i for i in range(N_JOINTS)],
        joint_velocity=[0.0] * N_JOINTS,
        joint_effort=[0.0] * N_JOINTS,
        joint_temperature=bytes([30] * N_JOINTS),
        joint_status=[0] * N_JOINTS,
    )


def _index_of(payload: bytes) -> int:
    """The message index of a BridgeData's CDR bytes (the header stamp, read raw)."""
    sec = int.from_bytes(payload[4:8], "little", signed=True)
    nanosec = int.from_bytes(payload[8:12], "little")
    return sec * 1_000_000_000 + nanosec


def _free_domain() -> int:
    while True:
        domain = random.randint(100, 232)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            try:
                sock.bind(("0.0.0.0", 7400 + 250 * domain + 10))
            except OSError:
                continue
        return domain


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class _Raw:
    """cyclonedds-python alone: a participant, the topic, a writer or a raw reader."""

    def __init__(self, domain: int, reliable: bool) -> None:
        from cyclonedds.domain import Domain, DomainParticipant
        from cyclonedds.topic import Topic

        from jointbus.bus.dds_transport import dds_qos
        from jointbus.bus.dds_types import idl_struct_of

        self.domain = Domain(domain, DdsConfig(domain_id=domain).xml())
        self.participant = DomainParticipant(domain)
        self.topic = Topic(self.participant, "rt" + TOPIC, idl_struct_of(BridgeData))
        qos = RELIABLE.with_(depth=DEEP) if reliable else MAB_RT
        self.qos = dds_qos(qos, b"")
        self.reader_qos = dds_qos(qos, b"", reader=True)

    def close(self) -> None:
        """Delete the participant and the domain now: left to the garbage collector, their
        finalisers may run on a Cyclone listener thread, whose ``dds_delete`` then waits for
        that very listener."""
        self.participant.__del__()
        self.domain.__del__()

    def writer(self) -> Any:
        from cyclonedds.pub import DataWriter

        return DataWriter(self.participant, self.topic, self.qos)

    def reader(self, on_payload: Any) -> Any:
        from cyclonedds._clayer import ddspy_take  # type: ignore[import-not-found]
        from cyclonedds.core import Listener
        from cyclonedds.sub import DataReader

        cell: list[int] = []

        def on_data(_reader: object) -> None:
            if not cell:
                return
            while True:
                taken = ddspy_take(cell[0], 0x7F, 256)
                if type(taken) is int or not taken:
                    return
                for data, info in taken:
                    if info.valid_data:
                        on_payload(data)

        reader = DataReader(
            self.participant, self.topic, self.reader_qos, Listener(on_data_available=on_data)
        )
        cell.append(reader._ref)
        return reader


def _bus(kind: str, domain: int, port: int, listen: bool) -> Bus:
    if kind == "dds":
        return Bus(name=f"bench-{kind}", dds=DdsConfig(domain_id=domain))
    endpoint = f"tcp/127.0.0.1:{port}"
    config = (
        ZenohConfig(listen=(endpoint,), domain_id=domain)
        if listen
        else ZenohConfig(listen=("tcp/127.0.0.1:0",), connect=(endpoint,), domain_id=domain)
    )
    return Bus(name=f"bench-{kind}", zenoh=config, rmw="rmw_zenoh_cpp")


def _receiver(kind: str, domain: int, port: int, n: int, reliable: bool) -> None:
    """Child process: receive ``n`` messages; print ``ready``, then JSON [(index, wall ns)]."""
    arrivals: list[tuple[int, int]] = []
    finished = threading.Event()

    def note(index: int) -> None:
        arrivals.append((index, time.time_ns()))
        if len(arrivals) >= n:
            finished.set()

    def wait() -> None:
        # Until all arrived, or 2 s without a new one once they started (a lost sample must not
        # stall the run), or 60 s.
        deadline, seen, quiet_since = time.monotonic() + 60.0, 0, time.monotonic()
        while not finished.wait(0.1) and time.monotonic() < deadline:
            if len(arrivals) != seen:
                seen, quiet_since = len(arrivals), time.monotonic()
            elif seen and time.monotonic() - quiet_since > 2.0:
                return

    if kind == "raw":
        raw = _Raw(domain, reliable)
        keep = raw.reader(lambda data: note(_index_of(data)))
        print("ready", flush=True)
        wait()
        del keep
        raw.close()
    else:
        with _bus(kind, domain, port, listen=True) as bus:
            qos = RELIABLE.with_(depth=DEEP) if reliable else MAB_RT.with_(depth=DEEP)
            bus.subscribe(
                TOPIC,
                BridgeData,
                lambda m: note(m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec),
                qos,
                realtime=True,
            )
            print("ready", flush=True)
            wait()
    print(json.dumps(arrivals), flush=True)


def _pace(next_t: float, period: float) -> float:
    if not period:
        return next_t
    next_t += period
    while time.monotonic() < next_t:
        time.sleep(max(0.0, next_t - time.monotonic() - 0.0002))
    return next_t


def _run(kind: str, n: int, rate_hz: float | None) -> list[int]:
    """Latencies (ns) of ``n`` messages sent from here to a receiver process at ``rate_hz``; for
    ``rate_hz=None`` (back to back, reliable) [count, span ns]."""
    domain, port = _free_domain(), _free_port()
    reliable = rate_hz is None
    child = subprocess.Popen(
        [sys.executable, __file__, "--receiver", kind, str(domain), str(port), str(n),
         str(int(reliable))],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    if child.stdout.readline().strip() != "ready":
        raise RuntimeError("receiver did not start")
    messages = [_message(i) for i in range(n)]
    sent = [0] * n
    period = 1.0 / rate_hz if rate_hz else 0.0
    if kind == "raw":
        from cyclonedds._clayer import ddspy_write

        from jointbus.bus.dds_transport import padded

        raw = _Raw(domain, reliable)
        writer = raw.writer()
        payloads = [padded(m.to_cdr()) for m in messages]
        deadline = time.monotonic() + 10.0
        while not writer.get_matched_subscriptions() and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.2)
        ref, next_t = writer._ref, time.monotonic()
        for i in range(n):
            next_t = _pace(next_t, period)
            sent[i] = time.time_ns()
            ddspy_write(ref, payloads[i])
        out, _ = child.communicate(timeout=120)
        del writer
        raw.close()
    else:
        bus = _bus(kind, domain, port, listen=False)
        pub = bus.publisher(TOPIC, BridgeData, RELIABLE.with_(depth=DEEP) if reliable else MAB_RT)
        deadline = time.monotonic() + 10.0
        while not pub.remote_matched and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.2)
        next_t = time.monotonic()
        for i, msg in enumerate(messages):
            next_t = _pace(next_t, period)
            sent[i] = time.time_ns()
            pub.publish(msg)
        out, _ = child.communicate(timeout=120)
        bus.close()
    arrivals = json.loads(out.strip().splitlines()[-1])
    if rate_hz is None:
        times = sorted(t for _, t in arrivals)
        return [len(arrivals), times[-1] - times[0]] if len(times) > 1 else [len(arrivals), 0]
    return [t - sent[i] for i, t in arrivals if 0 <= i < n]


def _median_us(samples: list[int]) -> float:
    return statistics.median(samples) / 1e3 if samples else float("inf")


def _p99_us(samples: list[int]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] / 1e3 if ordered else 0.0


def _write_cost(n: int) -> tuple[float, float]:
    """Median ns per write of pre-encoded bytes on a writer with no reader: ctypes ``dds_write``
    (jointbus) and the binding's ``ddspy_write``."""
    from cyclonedds._clayer import ddspy_write

    from jointbus.bus.dds_transport import padded, write_raw

    raw = _Raw(_free_domain(), False)
    writer = raw.writer()
    payload = padded(_message(1).to_cdr())
    ref = writer._ref
    ours: list[int] = []
    theirs: list[int] = []
    for _ in range(3):
        for out, write in ((ours, write_raw), (theirs, ddspy_write)):
            for _ in range(n):
                t0 = time.perf_counter_ns()
                write(ref, payload)
                out.append(time.perf_counter_ns() - t0)
    del writer
    raw.close()
    return statistics.median(ours), statistics.median(theirs)


def _stack_cpu(rmw: str, window_s: float) -> float:
    """% of one core the standing 500 Hz stack takes on ``rmw``, observed by a remote
    ``bridge_data`` subscriber."""
    from jointbus.stack import Stack

    domain, port = _free_domain(), _free_port()
    saved = os.environ.get("RMW_IMPLEMENTATION")
    os.environ["RMW_IMPLEMENTATION"] = rmw
    try:
        with Stack(zenoh=ZenohConfig(hub_port=port, domain_id=domain)) as stack:
            stack.wait_for(lambda s: s.standing, 30.0)
            kind = "zenoh" if rmw == "rmw_zenoh_cpp" else "dds"
            env = dict(os.environ, RMW_IMPLEMENTATION=rmw)
            child = subprocess.Popen(
                [sys.executable, __file__, "--observer", kind, str(domain), str(port),
                 str(window_s + 3.0)],
                stdout=subprocess.PIPE,
                text=True,
                env=env,
            )
            assert child.stdout is not None
            child.stdout.readline()
            time.sleep(1.0)
            cpu0, t0 = time.process_time(), time.monotonic()
            time.sleep(window_s)
            cpu1, t1 = time.process_time(), time.monotonic()
            child.wait(timeout=30)
            return (cpu1 - cpu0) / (t1 - t0) * 100.0
    finally:
        if saved is None:
            os.environ.pop("RMW_IMPLEMENTATION", None)
        else:
            os.environ["RMW_IMPLEMENTATION"] = saved


def _observer(kind: str, domain: int, port: int, seconds: float) -> None:
    """Child process: subscribe to ``bridge_data`` for ``seconds`` (realtime, decoded)."""
    endpoint = f"tcp/127.0.0.1:{port}"
    config: Any = (
        DdsConfig(domain_id=domain)
        if kind == "dds"
        else ZenohConfig(listen=("tcp/127.0.0.1:0",), connect=(endpoint,), domain_id=domain)
    )
    bus = Bus(dds=config) if kind == "dds" else Bus(zenoh=config, rmw="rmw_zenoh_cpp")
    with bus:
        count = [0]
        bus.subscribe(TOPIC, BridgeData, lambda _m: count.__setitem__(0, count[0] + 1), MAB_RT,
                      realtime=True)
        print("ready", flush=True)
        time.sleep(seconds)
    print(count[0], flush=True)


def _row(
    metric: str, value: float, unit: str, anchor: str | None, anchor_value: float | None,
    goal: str | None = None, passed: bool | None = None, digits: int = 1,
) -> dict[str, Any]:
    return {
        "metric": metric,
        "value": round(value, digits),
        "unit": unit,
        "anchor": anchor,
        "anchor_value": None if anchor_value is None else round(anchor_value, digits),
        "ratio": round(value / anchor_value, 3) if anchor_value else None,
        "goal": goal,
        "pass": passed,
    }


def run(quick: bool) -> list[dict[str, Any]]:
    """All rows; ``quick`` shortens every measurement."""
    n_latency = 500 if quick else 3_000
    n_throughput = 5_000 if quick else 30_000
    latency: dict[str, list[list[int]]] = {k: [] for k in KINDS}
    for _ in range(2 if quick else 5):
        for kind in KINDS:
            latency[kind].append(_run(kind, n_latency, 1000.0))
    best = {k: min(v, key=_median_us) for k, v in latency.items()}
    p50 = {k: _median_us(v) for k, v in best.items()}
    p99 = {k: _p99_us(v) for k, v in best.items()}
    throughput = dict.fromkeys(KINDS, 0.0)
    for _ in range(2 if quick else 3):
        for kind in KINDS:
            count, span = _run(kind, n_throughput, None)
            throughput[kind] = max(throughput[kind], (count - 1) / (span / 1e9) if span else 0.0)
    ours_ns, theirs_ns = _write_cost(2_000 if quick else 20_000)
    window = 4.0 if quick else 15.0
    cpu_dds = _stack_cpu("rmw_cyclonedds_cpp", window)
    cpu_zenoh = _stack_cpu("rmw_zenoh_cpp", window)
    raw_anchor = "raw Cyclone DDS Python, same CDR bytes pre-encoded"
    return [
        _row("dds.latency_1khz.p50 (BridgeData, 2 processes)", p50["dds"], "µs", raw_anchor,
             p50["raw"], f"<= {GOAL_LATENCY_RATIO:g} x raw Cyclone DDS (same run)",
             p50["dds"] <= GOAL_LATENCY_RATIO * p50["raw"]),
        _row("dds.latency_1khz.p50 vs the bus on Zenoh", p50["dds"], "µs",
             "jointbus on Zenoh (same run)", p50["zenoh"]),
        _row("dds.latency_1khz.p99", p99["dds"], "µs", raw_anchor, p99["raw"]),
        _row("dds.throughput (reliable, back to back, received)", throughput["dds"], "msg/s",
             raw_anchor, throughput["raw"], f">= {GOAL_THROUGHPUT_RATIO:g} x raw Cyclone DDS "
             "(same run)", throughput["dds"] >= GOAL_THROUGHPUT_RATIO * throughput["raw"], 0),
        _row("dds.throughput vs the bus on Zenoh", throughput["dds"], "msg/s",
             "jointbus on Zenoh (same run)", throughput["zenoh"], digits=0),
        _row("dds.write of pre-encoded bytes (ctypes dds_write, GIL released)", ours_ns / 1e3,
             "µs", "the binding's ddspy_write", theirs_ns / 1e3, digits=2),
        _row("dds.stack_500hz.cpu (standing, bridge_data observed remotely)", cpu_dds, "% core",
             "the same stack on Zenoh (same run)", cpu_zenoh),
    ]


if __name__ == "__main__":
    if os.environ.get("BENCH_DDS_DEBUG"):
        import faulthandler

        faulthandler.dump_traceback_later(50, exit=True)
    if len(sys.argv) > 1 and sys.argv[1] == "--receiver":
        _receiver(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]),
                  bool(int(sys.argv[6])))
    elif len(sys.argv) > 1 and sys.argv[1] == "--observer":
        _observer(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]))
    else:
        for row in run("--quick" in sys.argv):
            print(row)
