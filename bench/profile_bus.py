"""Profile: where a Zenoh sample's time goes, on the receive path and on the send path.

Where it sits: ``bench/``, beside ``bench_bus.py`` (whose rows it explains); not a benchmark
module (no ``run``), so ``bench.run`` does not collect it. Run it by hand:
``python -m bench.profile_bus [--n N] [--cprofile]``.

What it measures, for one 12-joint ``BridgeData`` (the 500 Hz topic), against raw eclipse-zenoh
with the same bytes in the same run:

1. **Warm, stage by stage** (``replay``): real samples are captured from a real jointbus publisher
   by a raw Zenoh subscriber in this process, then fed again and again to the real
   ``TopicSubscription._on_sample`` of a second bus (one realtime subscriber, empty callback), and
   to the raw anchor's callback body (payload and attachment copied out). Each stage of the receive
   path is timed alone by repeating exactly what the path does (``perf_counter_ns`` around a loop
   of ``N``; per-sample mean). ``--cprofile`` adds the cProfile listing of the replay.
2. **In situ, per sample** (``situ``): two processes, the sender publishing at 1 kHz and then
   back-to-back (reliable); in the receiver the Zenoh callback is timed from entry to return
   (wall ``perf_counter_ns`` and the receive thread's CPU ``thread_time_ns``), for jointbus's
   ``_on_sample`` and for the raw anchor's callback. The sender's ``publish`` / ``put`` call is
   timed the same way. This is the figure that matters at 1 kHz: every sample meets cold caches.

Also per message, for the back-to-back run: the CPU time of the whole sender process and of the
whole receiver process (every thread, Zenoh's included) divided by the messages — the figure that
bounds throughput on a 2-core host, and one that other load on the host moves far less than
wall-clock rates.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import zenoh

from bench.bench_bus import (
    DOMAIN,
    RAW_KEY,
    TOPIC,
    _free_port,
    _message,
    _raw_config,
    _raw_publisher_qos,
)
from jointbus.bus import MAB_RT, RELIABLE, Bus, ZenohConfig, attachment
from jointbus.bus.zenoh_transport import TopicSubscription
from jointbus.robots.hb50.messages import BridgeData


def _mean_ns(fn: Callable[[], object], n: int) -> float:
    """Mean ns of one call of ``fn`` (``n`` calls, best of 5 rounds: the host is shared)."""
    best = float("inf")
    clock = time.perf_counter_ns
    for _ in range(5):
        t0 = clock()
        for _ in range(n):
            fn()
        best = min(best, (clock() - t0) / n)
    return best


# ---- 1. warm replay ------------------------------------------------------------------------------
def _capture(n: int) -> list[zenoh.Sample]:
    """``n`` real samples of a jointbus publisher, as Zenoh hands them to a subscriber."""
    port = _free_port()
    captured: list[zenoh.Sample] = []
    done = threading.Event()
    session = zenoh.open(_raw_config((f"tcp/127.0.0.1:{port}",), ()))

    def keep(sample: zenoh.Sample) -> None:
        captured.append(sample)
        if len(captured) >= n:
            done.set()

    sub = session.declare_subscriber(RAW_KEY, keep)
    with Bus(
        name="profile-tx",
        zenoh=ZenohConfig(
            listen=("tcp/127.0.0.1:0",), connect=(f"tcp/127.0.0.1:{port}",), domain_id=DOMAIN
        ),
    ) as bus:
        pub = bus.publisher(TOPIC, BridgeData, RELIABLE)
        deadline = time.monotonic() + 10
        while not pub.remote_matched and time.monotonic() < deadline:
            time.sleep(0.01)
        for i in range(n):
            pub.publish(_message(i))
        done.wait(10)
    sub.undeclare()  # type: ignore[no-untyped-call]
    session.close()  # type: ignore[no-untyped-call]
    return captured


def replay(n: int, with_cprofile: bool) -> dict[str, float]:
    """Per-sample ns of each receive stage, warm, from captured real samples."""
    samples = _capture(200)
    sample = samples[-1]
    with Bus(
        name="profile-rx", zenoh=ZenohConfig(listen=("tcp/127.0.0.1:0",), domain_id=DOMAIN)
    ) as bus:
        hits = [0]

        def callback(_m: BridgeData) -> None:
            hits[0] += 1

        bus.subscribe(TOPIC, BridgeData, callback, MAB_RT.with_(depth=1000), realtime=True)
        transport = bus.zenoh
        assert transport is not None
        subscription = transport.subscription(TOPIC)
        assert isinstance(subscription, TopicSubscription)
        on_sample = subscription._on_sample
        it = iter(range(10**12))
        # Cycle through the captured samples in order: the sequence numbers advance as live ones
        # do (the wrap-around goes backwards, which is no gap either).
        pos = [0]
        count = len(samples)

        def full() -> None:
            on_sample(samples[pos[0] % count])
            pos[0] += 1

        raw_payload = sample.payload.to_bytes()
        raw_att = sample.attachment.to_bytes() if sample.attachment is not None else b""

        def raw_body() -> None:
            payload = sample.payload.to_bytes()
            att = sample.attachment
            int.from_bytes(att.to_bytes()[:8], "little") if att is not None else -1
            del payload

        subs = bus.local_subscribers(TOPIC)
        sub = subs[0]
        plans: dict[Any, Any] = subscription._plans
        stages: dict[str, float] = {}
        stages["raw anchor callback body (payload + attachment copied out)"] = _mean_ns(raw_body, n)
        stages["clocks (time_ns + monotonic_ns)"] = _mean_ns(
            lambda: (time.time_ns(), time.monotonic_ns()), n
        )
        stages["attachment: sample.attachment.to_bytes() + checks"] = _mean_ns(
            lambda: (
                (a := sample.attachment.to_bytes())  # type: ignore[union-attr]
                and len(a) == attachment.SIZE
                and a[16] == attachment.GID_SIZE
            ),
            n,
        )
        stages["bus.local_subscribers(topic)"] = _mean_ns(
            lambda: bus.local_subscribers(TOPIC), n
        )
        stages["attachment unpack + gid int + remote_info"] = _mean_ns(
            lambda: transport.remote_info(
                int.from_bytes(attachment.FIELDS.unpack(raw_att)[3], "little")
            ),
            n,
        )
        last_seq: dict[int, int] = {}

        def gap_bookkeeping() -> None:
            seq = next(it)
            last = last_seq.get(7)
            if last is not None and seq > last + 1:
                raise AssertionError("no gap here")
            last_seq[7] = seq

        stages["sequence-gap bookkeeping (dict get/compare/set)"] = _mean_ns(gap_bookkeeping, n)
        stages["payload: sample.payload.to_bytes()"] = _mean_ns(sample.payload.to_bytes, n)
        stages["decode: BridgeData.from_cdr"] = _mean_ns(
            lambda: BridgeData.from_cdr(raw_payload), n
        )
        stages["latency + birth time + delivery plan lookup"] = _mean_ns(
            lambda: (
                (lat := time.time_ns() - 5),
                time.monotonic_ns() - lat,
                plans.get(b""),
            ),
            n,
        )
        stages["sub._note_latency"] = _mean_ns(lambda: sub._note_latency(1000), n)
        msg = BridgeData.from_cdr(raw_payload)
        now = time.monotonic_ns()
        stages["sub.offer (lifespan check, counters, empty callback)"] = _mean_ns(
            lambda: sub.offer(msg, now, now), n
        )
        stages["whole _on_sample (jointbus receive path)"] = _mean_ns(full, n // 5)
        if with_cprofile:
            prof = cProfile.Profile()
            prof.enable()
            for _ in range(n // 5):
                full()
            prof.disable()
            out = io.StringIO()
            pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(15)
            print(out.getvalue())
        assert hits[0] > 0
    return stages


# ---- 2. in situ ----------------------------------------------------------------------------------
def _receiver(kind: str, port: int, n: int) -> None:
    """Child: time every Zenoh callback; print ``ready`` then one JSON record."""
    wall: list[int] = []
    cpu: list[int] = []
    finished = threading.Event()
    clock, tclock = time.perf_counter_ns, time.thread_time_ns
    listen = (f"tcp/127.0.0.1:{port}",)
    count = [0]

    def counted(_m: object) -> None:
        count[0] += 1
        if count[0] >= n:
            finished.set()

    if kind == "jointbus":
        bus = Bus(name="profile-rx", zenoh=ZenohConfig(listen=listen, domain_id=DOMAIN))
        bus.subscribe(TOPIC, BridgeData, counted, MAB_RT.with_(depth=1000), realtime=True)
        transport = bus.zenoh
        assert transport is not None
        subscription = transport.subscription(TOPIC)
        assert subscription is not None
        inner = subscription._on_sample

        def timed(sample: zenoh.Sample) -> None:
            t0, c0 = clock(), tclock()
            inner(sample)
            wall.append(clock() - t0)
            cpu.append(tclock() - c0)

        # The Zenoh subscriber holds the bound method: re-declare it with the timed wrapper.
        subscription._zsub.undeclare()  # type: ignore[no-untyped-call]
        subscription._zsub = transport.session.declare_subscriber(
            subscription.key, timed, allowed_origin=zenoh.Locality.REMOTE
        )
        closer: Callable[[], None] = bus.close
    else:
        session = zenoh.open(_raw_config(listen, ()))

        def on_sample(sample: zenoh.Sample) -> None:
            t0, c0 = clock(), tclock()
            payload = sample.payload.to_bytes()
            att = sample.attachment
            index = int.from_bytes(att.to_bytes()[:8], "little") if att is not None else -1
            del payload, index
            counted(None)
            wall.append(clock() - t0)
            cpu.append(tclock() - c0)

        zsub = session.declare_subscriber(RAW_KEY, on_sample)

        def closer() -> None:
            zsub.undeclare()  # type: ignore[no-untyped-call]
            session.close()  # type: ignore[no-untyped-call]

    cpu_start = time.process_time()
    print("ready", flush=True)
    finished.wait(60)
    process_cpu = time.process_time() - cpu_start
    closer()
    print(
        json.dumps(
            {
                "wall_p50": statistics.median(wall),
                "cpu_p50": statistics.median(cpu),
                "wall_mean": statistics.fmean(wall),
                "n": len(wall),
                "process_cpu_per_msg": process_cpu / max(1, len(wall)),
            }
        ),
        flush=True,
    )


def situ(kind: str, n: int, rate_hz: float | None) -> dict[str, Any]:
    """Per-sample callback time (receiver) and send-call time (sender) for one run."""
    port = _free_port()
    child = subprocess.Popen(
        [sys.executable, "-m", "bench.profile_bus", "--receiver", kind, str(port), str(n)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    if child.stdout.readline().strip() != "ready":
        raise RuntimeError("receiver did not start")
    connect = (f"tcp/127.0.0.1:{port}",)
    period = 1.0 / rate_hz if rate_hz else 0.0
    reliable = rate_hz is None
    messages = [_message(i) for i in range(n)]
    send: list[int] = []
    clock = time.perf_counter_ns
    if kind == "jointbus":
        bus = Bus(
            name="profile-tx",
            zenoh=ZenohConfig(listen=("tcp/127.0.0.1:0",), connect=connect, domain_id=DOMAIN),
        )
        pub = bus.publisher(TOPIC, BridgeData, RELIABLE if reliable else MAB_RT)
        deadline = time.monotonic() + 10
        while not pub.remote_matched and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.2)
        send_one: Callable[[int], None] = lambda i: pub.publish(messages[i])  # noqa: E731
        closer: Callable[[], None] = bus.close
    else:
        session = zenoh.open(_raw_config(("tcp/127.0.0.1:0",), connect))
        zpub = session.declare_publisher(RAW_KEY, **_raw_publisher_qos(reliable))
        payloads = [m.to_cdr() for m in messages]
        atts = [i.to_bytes(8, "little") + bytes(attachment.SIZE - 8) for i in range(n)]
        deadline = time.monotonic() + 10
        while not getattr(zpub.matching_status, "matching", False) and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.2)
        send_one = lambda i: zpub.put(payloads[i], attachment=atts[i])  # noqa: E731

        def closer() -> None:
            zpub.undeclare()  # type: ignore[no-untyped-call]
            session.close()  # type: ignore[no-untyped-call]

    next_t = time.monotonic()
    cpu_start = time.process_time()
    for i in range(n):
        if period:
            next_t += period
            while time.monotonic() < next_t:
                time.sleep(max(0.0, next_t - time.monotonic() - 0.0002))
        t0 = clock()
        send_one(i)
        send.append(clock() - t0)
    out, _ = child.communicate(timeout=120)
    sender_cpu = time.process_time() - cpu_start
    closer()
    record: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    record["send_p50"] = statistics.median(send)
    record["sender_cpu_per_msg"] = sender_cpu / n
    return record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=20_000, help="replay iterations per stage")
    parser.add_argument("--cprofile", action="store_true", help="print cProfile of the replay")
    parser.add_argument("--receiver", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.receiver:
        _receiver(args.receiver[0], int(args.receiver[1]), int(args.receiver[2]))
        return
    print("warm replay, ns per sample:")
    for stage, ns in replay(args.n, args.cprofile).items():
        print(f"  {ns:8.0f}  {stage}")
    for rate, n in ((1000.0, 2000), (None, 20000)):
        label = "1 kHz" if rate else "back-to-back"
        for kind in ("raw", "jointbus"):
            rec = situ(kind, n, rate)
            print(
                f"{label:>12} {kind:>8}: rx callback wall p50 {rec['wall_p50'] / 1e3:6.2f} µs, "
                f"cpu p50 {rec['cpu_p50'] / 1e3:6.2f} µs, mean wall "
                f"{rec['wall_mean'] / 1e3:6.2f} µs (n={rec['n']}); "
                f"send call p50 {rec['send_p50'] / 1e3:6.2f} µs; process CPU per message: "
                f"sender {rec['sender_cpu_per_msg'] * 1e6:5.2f} µs, receiver "
                f"{rec['process_cpu_per_msg'] * 1e6:5.2f} µs"
            )


if __name__ == "__main__":
    main()
