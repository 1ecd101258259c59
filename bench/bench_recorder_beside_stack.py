"""``jointbus record`` in its own process beside the running 500 Hz demo stack: does it keep up?

Issue 20 item 20: a recorder started before the demo, in its own process, reported "lost 1577
(sequence gaps…)" of ≈ 14 000 on a loaded host. A recorder must lose nothing of the reliable
topics, and keep up with the 500 Hz best-effort ones while the stack runs.

What runs, as a user runs it: ``jointbus demo --headless`` (bridge + control node + MuJoCo in one
process, 500 Hz) on a free hub port; once it stands, ``jointbus record FILE`` and the anchor
start together, each in its own process, for :data:`RECORD_S` (quick) seconds.

- **ours**: the file ``jointbus record`` wrote, read back with ``mcap``: per topic, the messages
  and the gaps in each publisher's sequence numbers (published, never recorded); a topic is
  reliable or best-effort by the QoS its channel records.
- **anchor**: a bare Zenoh subscriber on the same key space in its own process (a FIFO handler
  drained in a loop, counting each sample's rmw_zenoh sequence number, storing nothing): what
  the transport delivers to a process beside this stack on this host, right now.

Rows: the share of best-effort messages kept (1 − gaps / (received + gaps)), ours against the
anchor's (goal: ratio ≥ 0.99 — the recorder keeps what the transport delivers); reliable
messages lost (goal: 0); the 500 Hz ``/hb50/bridge_data`` rate as recorded (information). The
load average is in the machine record of the run; a shared host's neighbours drop frames at the
publisher too, which is why the anchor runs beside the recorder rather than the goal being 100 %.
"""

from __future__ import annotations

import collections
import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

from mcap.reader import make_reader

#: Seconds the recorder and the anchor run (quick / full).
RECORD_S = 10.0
RECORD_FULL_S = 30.0
#: The 500 Hz topic whose recorded rate is reported.
FAST_TOPIC = "/hb50/bridge_data"
GOAL_KEPT_RATIO = 0.99

_ANCHOR = textwrap.dedent(
    """
    import json, sys, time, zenoh
    from jointbus.bus import Bus, ZenohConfig, attachment
    from jointbus.bus.names import domain_selector
    port, seconds = int(sys.argv[1]), float(sys.argv[2])
    bus = Bus(name="anchor", zenoh=ZenohConfig(hub_port=port))
    t = bus.zenoh
    sub = t.session.declare_subscriber(
        domain_selector(t.domain_id), zenoh.handlers.FifoChannel(65536),
        allowed_origin=zenoh.Locality.REMOTE)
    last, received, gaps = {}, 0, 0
    end = time.monotonic() + seconds
    print("ready", flush=True)
    while time.monotonic() < end:
        s = sub.handler.try_recv()
        if s is None:
            time.sleep(0.005)
            continue
        raw = s.attachment
        att = attachment.unpack(None if raw is None else raw.to_bytes())
        if att is None:
            continue
        received += 1
        prev = last.get(att.gid)
        if prev is not None and att.seq > prev + 1:
            gaps += att.seq - prev - 1
        last[att.gid] = att.seq
    sub.undeclare()
    bus.close()
    print(json.dumps({"received": received, "gaps": gaps}), flush=True)
    """
)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _env(port: int) -> dict[str, str]:
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, JOINTBUS_HUB_PORT=str(port))
    env["PYTHONPATH"] = os.pathsep.join([str(root / "src"), *filter(None, [env.get("PYTHONPATH")])])
    return env


def _jointbus(port: int, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "jointbus.cli.main", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(port),
    )


def _wait_standing(demo: subprocess.Popen[str], timeout: float) -> None:
    """Until the demo's plain summary line says STAND (it prints one a second)."""
    assert demo.stdout is not None
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        line = demo.stdout.readline()
        if not line and demo.poll() is not None:
            raise RuntimeError(f"the demo exited: {demo.stderr.read() if demo.stderr else ''}")
        if "mode=STAND" in line:
            return
    raise RuntimeError("the demo did not stand up in time")


def recorded_gaps(path: Path) -> dict[str, dict[str, Any]]:
    """Per topic of an MCAP file: messages, sequence gaps (per publisher: the sequence numbers
    of one topic's single publisher), reliable (by the channel's offered QoS), first/last log
    time (ns)."""
    seqs: dict[str, list[int]] = collections.defaultdict(list)
    times: dict[str, list[int]] = collections.defaultdict(list)
    with path.open("rb") as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        reliable = {
            c.topic: "reliability: 1" in c.metadata.get("offered_qos_profiles", "")
            for c in (summary.channels.values() if summary is not None else ())
        }
        for _schema, channel, message in reader.iter_messages(log_time_order=False):
            seqs[channel.topic].append(message.sequence)
            times[channel.topic].append(message.log_time)
    out: dict[str, dict[str, Any]] = {}
    for topic, numbers in seqs.items():
        ordered = sorted(numbers)
        gaps = sum(b - a - 1 for a, b in itertools.pairwise(ordered) if b > a + 1)
        out[topic] = {
            "messages": len(ordered),
            "gaps": gaps,
            "reliable": reliable.get(topic, False),
            "span_s": (max(times[topic]) - min(times[topic])) / 1e9,
        }
    return out


def measure(seconds: float) -> dict[str, Any]:
    """One run: the demo, then the recorder and the anchor beside it for ``seconds``."""
    port = _free_port()
    tmp = Path(tempfile.mkdtemp(prefix="jb-bench-rec-beside-"))
    demo = _jointbus(port, "demo", "--headless", "--duration", str(seconds + 60))
    procs = [demo]
    try:
        _wait_standing(demo, 90.0)
        path = tmp / "run.mcap"
        recorder = _jointbus(port, "record", str(path), "--duration", str(seconds), "-q")
        anchor = subprocess.Popen(
            [sys.executable, "-c", _ANCHOR, str(port), str(seconds)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(port),
        )
        procs += [recorder, anchor]
        _out, rec_err = recorder.communicate(timeout=seconds + 120)
        anchor_out, anchor_err = anchor.communicate(timeout=seconds + 120)
        if recorder.returncode != 0:
            raise RuntimeError(f"jointbus record failed: {rec_err}")
        lines = [ln for ln in anchor_out.splitlines() if ln.startswith("{")]
        if not lines:
            raise RuntimeError(f"the anchor failed: {anchor_err}")
        topics = recorded_gaps(path)
        return {"topics": topics, "anchor": json.loads(lines[-1]), "record_stderr": rec_err}
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)


def run(quick: bool) -> list[dict[str, Any]]:
    seconds = RECORD_S if quick else RECORD_FULL_S
    result = measure(seconds)
    topics = result["topics"]
    best = [t for t in topics.values() if not t["reliable"]]
    reliable = [t for t in topics.values() if t["reliable"]]
    kept_msgs = sum(t["messages"] for t in best)
    lost = sum(t["gaps"] for t in best)
    ours = kept_msgs / (kept_msgs + lost) if kept_msgs + lost else float("nan")
    anchor = result["anchor"]
    anchor_kept = (
        anchor["received"] / (anchor["received"] + anchor["gaps"])
        if anchor["received"] + anchor["gaps"]
        else float("nan")
    )
    ratio = ours / anchor_kept if anchor_kept else None
    lost_reliable = sum(t["gaps"] for t in reliable)
    fast = topics.get(FAST_TOPIC, {"messages": 0, "gaps": 0, "span_s": 0.0})
    fast_hz = (fast["messages"] - 1) / fast["span_s"] if fast["span_s"] > 0 else 0.0
    return [
        {
            "metric": "recorder beside the 500 Hz stack: best-effort messages kept (own process)",
            "value": ours,
            "unit": "fraction",
            "anchor": "bare Zenoh FIFO subscriber beside it, same run",
            "anchor_value": anchor_kept,
            "ratio": ratio,
            "goal": f">= {GOAL_KEPT_RATIO:g}x the anchor",
            "pass": ratio is not None and ratio >= GOAL_KEPT_RATIO,
        },
        {
            "metric": "recorder beside the 500 Hz stack: best-effort messages lost",
            "value": lost,
            "unit": "msgs",
            "anchor": "bare Zenoh FIFO subscriber beside it, same run",
            "anchor_value": anchor["gaps"],
            "ratio": None,
            "goal": None,
            "pass": None,
        },
        {
            "metric": "recorder beside the 500 Hz stack: reliable messages lost",
            "value": lost_reliable,
            "unit": f"msgs (of {sum(t['messages'] for t in reliable) + lost_reliable})",
            "anchor": None,
            "anchor_value": None,
            "ratio": None,
            "goal": "0",
            "pass": lost_reliable == 0,
        },
        {
            "metric": f"recorder beside the 500 Hz stack: {FAST_TOPIC} rate recorded",
            "value": fast_hz,
            "unit": "Hz (wall clock, log times)",
            "anchor": "the bridge's 500 Hz",
            "anchor_value": 500.0,
            "ratio": fast_hz / 500.0,
            "goal": None,
            "pass": None,
        },
    ]


if __name__ == "__main__":
    for row in run(quick=True):
        print(row)
