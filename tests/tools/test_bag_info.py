"""``jointbus info``'s rates: each topic's own (n − 1) / (t_last − t_first), as ``topic list``."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from jointbus.cli.topic import measured_rate
from jointbus.messages.geometry_msgs import Twist
from jointbus.messages.std_msgs import String
from jointbus.tools.bag_info import bag_info
from jointbus.tools.message_rate import interval_rate
from support.cli_tools import tools_app
from support.tools import write_mcap

S = 1_000_000_000  # ns


def _recording(path: Path) -> Path:
    """The issue's 22 s recording: a heartbeat over all of it, a 20 Hz ``topic pub --count 200``
    in the middle of it (9.95 s), and one status message."""
    start = 1_700_000_000 * S
    entries: list[tuple[str, object, int]] = [
        ("/hb50/heartbeat", String(f"beat {k}"), start + k * S) for k in range(23)
    ]
    entries += [
        ("/hb50/velocity_command", Twist(), start + 5 * S + k * 50_000_000) for k in range(200)
    ]
    entries.append(("/hb50/status", String("standing"), start + 7 * S))
    entries.sort(key=lambda e: e[2])
    return write_mcap(path, entries)  # type: ignore[arg-type]


def test_a_topic_rate_is_its_own_not_its_count_over_the_bag(tmp_path: Path) -> None:
    """Issue 12 (CLI 2): the 20 Hz stream read 9.10 Hz, the single status 0.00 Hz."""
    info = bag_info(_recording(tmp_path / "run.mcap"))
    assert round(info.duration_s, 3) == 22.0
    topics = {t.name: t for t in info.topics}
    assert topics["/hb50/velocity_command"].count == 200
    assert topics["/hb50/velocity_command"].rate_hz == 199 / 9.95  # 20.00 Hz
    assert topics["/hb50/heartbeat"].rate_hz == 1.0
    assert topics["/hb50/status"].rate_hz is None  # one message: no interval to measure
    out = CliRunner().invoke(tools_app(), ["info", str(tmp_path / "run.mcap")])
    assert out.exit_code == 0, out.output
    rows = {line.split("Topic: ")[1].split()[0]: line for line in out.output.splitlines()
            if "Topic: " in line}  # fmt: skip
    assert re.search(r"Count: 200 \| Rate:     20\.00 Hz \|", rows["/hb50/velocity_command"])
    assert re.search(r"Count:   1 \| Rate: +- \|", rows["/hb50/status"]), rows
    assert not re.search(r"Rate: +0\.00 Hz", out.output)


@given(st.lists(st.integers(0, 10**12), max_size=30).map(sorted))
def test_info_and_topic_list_share_one_measure(times: list[int]) -> None:
    expected = interval_rate(len(times), times[0], times[-1]) if times else None
    assert measured_rate(times) == expected
    if len(times) < 2 or times[-1] == times[0]:
        assert expected is None
    else:
        assert expected == (len(times) - 1) / ((times[-1] - times[0]) / 1e9)


def test_the_index_spans_equal_the_messages_read_whole(tmp_path: Path) -> None:
    """The MCAP message indexes give each topic's count and first / last log time without
    decompressing a chunk; they must agree with reading every message."""
    from jointbus.tools.bag_reader import Bag, open_bag

    path = _recording(tmp_path / "run.mcap")
    with open_bag(path) as bag:
        spans = bag.topic_spans()
        assert spans == Bag.topic_spans(bag)
        assert spans["/hb50/velocity_command"].messages == 200
    cut = tmp_path / "cut.mcap"  # a recorder killed mid-run: no summary, read whole
    cut.write_bytes(path.read_bytes()[: path.stat().st_size * 2 // 3])
    with open_bag(cut) as bag:
        assert bag.truncated
        assert bag.topic_spans() == Bag.topic_spans(bag)


def test_a_rate_is_timed_by_when_the_publisher_sent_not_when_the_recorder_received(
    tmp_path: Path,
) -> None:
    """A new user's demo recording (2026-12-07): the recorder received the first 500 Hz frame
    0.195 s late and the rest on time, and ``info`` read 513.38 Hz — by log times. The file
    also holds when each frame was sent: timed by those, the rate is the publisher's. A file
    whose publish times are unset (0) keeps the log-time rate."""
    from jointbus.tools.mcap_writer import McapChunkWriter

    start = 1_700_000_000 * S
    period = 2_000_000  # 500 Hz
    late = 195_000_000

    def write(path: Path, publish: bool) -> Path:
        with path.open("wb") as f:
            writer = McapChunkWriter(f, chunk_size=4096)
            schema = writer.add_schema(String.TYPE_NAME, String.msgdef().encode())
            channel = writer.add_channel("/hb50/bridge_data", schema)
            for k in range(1000):
                sent = start + k * period
                # the first late, the next ones queued behind it and handed over in a burst
                received = max(sent + 1_000_000, start + late + k * 10_000)
                writer.add_message(
                    channel, received, sent if publish else 0, k + 1, String("f").to_cdr()
                )
            writer.finish()
        return path

    (topic,) = bag_info(write(tmp_path / "late.mcap", publish=True)).topics
    assert topic.rate_hz == 500.0
    (unset,) = bag_info(write(tmp_path / "unset.mcap", publish=False)).topics
    received_span = (start + 999 * period + 1_000_000) - (start + late)
    assert unset.rate_hz == 999 / (received_span / 1e9)  # ≈ 552 Hz: the receive times'
