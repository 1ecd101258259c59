"""Recorder throughput against rosbags' rosbag2 MCAP writer, in the same run.

What is measured (12-joint HB50 ``BridgeData``, ≈ 400 B of CDR per message):

- **ours, received bytes** (the goal row): CDR payloads handed to :class:`Recorder` the way its
  Zenoh source does (``enqueue``: already-encoded bytes, stored without re-encoding), through the
  queue and the writer thread into a chunked, zstd-compressed MCAP file, ``stop()`` included (the
  summary is written and the file closed);
- **ours, in-process**: message objects published on an in-process bus with the recorder attached
  (publish, realtime callback, queue, one ``to_cdr()`` on the writer thread, MCAP) — information;
- **anchor**: rosbags' ``rosbag2.Writer(version=9, storage_plugin=MCAP)`` writing the same content
  from rosbags message objects with its own serialisation (``serialize_cdr`` + ``write``), which is
  what a rosbags-based recorder has to do.

Messages per second = N / wall time; rounds alternate (ours, anchor, ...) and the best round of
each counts, so a noisy neighbour on the shared VM penalises neither side alone. Goal from the
issue: ≥ 4× rosbags.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_types_from_msg, get_typestore

from jointbus.bus import MAB_RT, Bus
from jointbus.messages.std_msgs import Header
from jointbus.robots.hb50.messages.bridge_data import BridgeData
from jointbus.tools.recorder import Recorder

GOAL_SPEEDUP = 4.0
JOINTS = tuple(f"{leg}_j{i}" for leg in ("fr", "fl", "rr", "rl") for i in range(3))
TOPIC = "/hb50/bridge_data"


def _messages(n: int) -> list[BridgeData]:
    return [
        BridgeData(
            header=Header.at_ns(1_700_000_000_000_000_000 + 2_000_000 * i),
            joint_name=JOINTS,
            joint_position=[0.001 * i + 0.1 * k for k in range(12)],
            joint_velocity=[0.01 * k for k in range(12)],
            joint_effort=[0.5 - 0.05 * k for k in range(12)],
            joint_temperature=bytes(30 + k for k in range(12)),
            joint_status=[0] * 12,
        )
        for i in range(n)
    ]


def _ours_bytes(payloads: list[bytes], path: Path) -> float:
    with Bus(name="bench-rec") as bus:
        rec = Recorder(bus, path, local=True)
        rec.start()
        channel = rec.channel(TOPIC, BridgeData.TYPE_NAME)
        enqueue = rec.enqueue
        t0 = time.perf_counter()
        for i, data in enumerate(payloads):
            now = 1_700_000_000_000_000_000 + i
            enqueue(channel, data, now, now, i + 1)
        stats = rec.stop()
        elapsed = time.perf_counter() - t0
    if stats.messages != len(payloads):
        raise RuntimeError(f"recorded {stats.messages} of {len(payloads)}")
    return len(payloads) / elapsed


def _ours_inprocess(messages: list[BridgeData], path: Path) -> float:
    with Bus(name="bench-rec-local") as bus:
        pub = bus.publisher(TOPIC, BridgeData, MAB_RT)
        rec = Recorder(bus, path)
        rec.start()
        t0 = time.perf_counter()
        for msg in messages:
            pub.publish(msg)
        stats = rec.stop()
        elapsed = time.perf_counter() - t0
    if stats.messages != len(messages):
        raise RuntimeError(f"recorded {stats.messages} of {len(messages)}")
    return len(messages) / elapsed


def _rosbags(objects: list[Any], store: Any, path: Path) -> float:
    t0 = time.perf_counter()
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        conn = writer.add_connection(TOPIC, BridgeData.TYPE_NAME, typestore=store)
        for i, obj in enumerate(objects):
            writer.write(conn, 1_700_000_000_000_000_000 + i,
                         store.serialize_cdr(obj, BridgeData.TYPE_NAME))
    return len(objects) / (time.perf_counter() - t0)


def run(quick: bool) -> list[dict[str, Any]]:
    n = 20_000 if quick else 100_000
    rounds = 3 if quick else 5
    messages = _messages(n)
    payloads = [m.to_cdr() for m in messages]
    store = get_typestore(Stores.ROS2_HUMBLE)
    store.register(get_types_from_msg(BridgeData.msgdef(), BridgeData.TYPE_NAME))
    objects = [store.deserialize_cdr(p, BridgeData.TYPE_NAME) for p in payloads]
    tmp = Path(tempfile.mkdtemp(prefix="jb-bench-rec-"))
    try:
        # warm-up: rosbags compiles its serialiser on first use; our codec builds its plan
        _rosbags(objects[:200], store, tmp / "warm_rb")
        _ours_bytes(payloads[:200], tmp / "warm.mcap")
        _ours_inprocess(messages[:200], tmp / "warm2.mcap")
        ours: list[float] = []
        local: list[float] = []
        anchor: list[float] = []
        for r in range(rounds):
            ours.append(_ours_bytes(payloads, tmp / f"ours{r}.mcap"))
            anchor.append(_rosbags(objects, store, tmp / f"rb{r}"))
            local.append(_ours_inprocess(messages, tmp / f"local{r}.mcap"))
        size_ours = (tmp / "ours0.mcap").stat().st_size
        size_rb = sum(p.stat().st_size for p in (tmp / "rb0").glob("*.mcap"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    best_ours, best_local, best_anchor = max(ours), max(local), max(anchor)
    ratio = best_ours / best_anchor
    return [
        {
            "metric": "recorder msg/s, received CDR bytes -> MCAP (zstd chunks), BridgeData",
            "value": best_ours,
            "unit": "msg/s",
            "anchor": "rosbags rosbag2.Writer MCAP + serialize_cdr",
            "anchor_value": best_anchor,
            "ratio": ratio,
            "goal": f">= {GOAL_SPEEDUP:g}x",
            "pass": ratio >= GOAL_SPEEDUP,
        },
        {
            "metric": "recorder msg/s, in-process publish -> MCAP (to_cdr on writer thread)",
            "value": best_local,
            "unit": "msg/s",
            "anchor": "rosbags rosbag2.Writer MCAP + serialize_cdr",
            "anchor_value": best_anchor,
            "ratio": best_local / best_anchor,
            "goal": None,
            "pass": None,
        },
        {
            "metric": "recorder file size per message (zstd) vs rosbags (uncompressed)",
            "value": size_ours / n,
            "unit": "B/msg",
            "anchor": "rosbags rosbag2.Writer MCAP",
            "anchor_value": size_rb / n,
            "ratio": size_ours / size_rb if size_rb else None,
            "goal": None,
            "pass": None,
        },
    ]


if __name__ == "__main__":
    for row in run(quick=True):
        print(row)
