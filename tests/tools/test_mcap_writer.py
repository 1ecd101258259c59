"""The chunked MCAP writer: files that the mcap reader and rosbags both read back exactly."""

from __future__ import annotations

import io
import tracemalloc
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from mcap.reader import make_reader
from rosbags.rosbag2 import Reader

from jointbus.messages.std_msgs import String
from jointbus.tools.mcap_writer import McapChunkWriter

TOPICS = st.sampled_from(["/a", "/b/c", "/d"])
ENTRIES = st.lists(
    st.tuples(TOPICS, st.integers(0, 2**62), st.binary(max_size=300)), max_size=200
)


def write(stream: io.BytesIO | Path, entries: list[tuple[str, int, bytes]], chunk: int) -> None:
    """Write ``entries`` (topic, log time, payload) with publish time ``t + 1``, seq 1, 2, ..."""
    f = stream.open("wb") if isinstance(stream, Path) else stream
    writer = McapChunkWriter(f, chunk_size=chunk)
    schema = writer.add_schema(String.TYPE_NAME, String.msgdef().encode())
    channels: dict[str, int] = {}
    for seq, (topic, t, data) in enumerate(entries, 1):
        if topic not in channels:
            channels[topic] = writer.add_channel(topic, schema)
        writer.add_message(channels[topic], t, t + 1, seq, data)
    writer.finish()
    if isinstance(stream, Path):
        f.close()


@given(ENTRIES, st.sampled_from([1024, 4096, 1 << 20]))
def test_every_message_reads_back_byte_for_byte(entries: list[tuple[str, int, bytes]], chunk: int):
    buf = io.BytesIO()
    write(buf, entries, chunk)
    buf.seek(0)
    reader = make_reader(buf)
    got = [
        (ch.topic, m.log_time, m.publish_time, m.sequence, m.data)
        for _s, ch, m in reader.iter_messages(log_time_order=False)
    ]
    want = [
        (topic, t, t + 1, seq, data) for seq, (topic, t, data) in enumerate(entries, 1)
    ]
    assert sorted(got) == sorted(want)
    stats = reader.get_summary().statistics
    assert stats.message_count == len(entries)
    if entries:
        assert stats.message_start_time == min(t for _, t, _ in entries)
        assert stats.message_end_time == max(t for _, t, _ in entries)


def test_summary_declares_ros2_profile_zstd_chunks_and_per_channel_counts(tmp_path: Path):
    entries = [("/a", i, b"x" * 200) for i in range(500)]
    entries += [("/b/c", 1000 + i, b"y") for i in range(7)]
    path = tmp_path / "f.mcap"
    write(path, entries, 4096)
    with path.open("rb") as f:
        reader = make_reader(f)
        assert reader.get_header().profile == "ros2"
        summary = reader.get_summary()
    assert {s.encoding for s in summary.schemas.values()} == {"ros2msg"}
    assert {c.message_encoding for c in summary.channels.values()} == {"cdr"}
    assert len(summary.chunk_indexes) > 5  # 500 * ~220 B in 4 KiB chunks
    assert {c.compression for c in summary.chunk_indexes} == {"zstd"}
    counts = {summary.channels[k].topic: v
              for k, v in summary.statistics.channel_message_counts.items()}
    assert counts == {"/a": 500, "/b/c": 7}


def test_rosbags_reads_the_file(tmp_path: Path):
    entries = [("/a", 10 + i, String(f"m{i}").to_cdr()) for i in range(50)]
    path = tmp_path / "f.mcap"
    write(path, entries, 1024)
    with Reader(path) as reader:
        assert [(c.topic, c.msgtype, c.msgcount) for c in reader.connections] == [
            ("/a", String.TYPE_NAME, 50)
        ]
        got = [String.from_cdr(raw).data for _c, _t, raw in reader.messages()]
    assert got == [f"m{i}" for i in range(50)]


def _write_chunks(writer: McapChunkWriter, channels: list[int], chunks: int, t0: int) -> int:
    """Write ``chunks`` chunks (closed by ``flush``), a message on every channel in each; returns
    the next log time."""
    t = t0
    for _ in range(chunks):
        for channel in channels:
            writer.add_message(channel, t, t, t, b"z" * 40)
            t += 1
        writer.flush()
    return t


def test_memory_held_does_not_grow_with_the_number_of_chunks(tmp_path: Path):
    # every chunk adds a chunk index (≈ 10 B per channel) that the summary needs at the end; a
    # recording of hours holds tens of thousands of them, so they must not stay in memory
    path = tmp_path / "long.mcap"
    with path.open("wb") as f:
        writer = McapChunkWriter(f, chunk_size=1 << 20)
        schema = writer.add_schema(String.TYPE_NAME, String.msgdef().encode())
        channels = [writer.add_channel(f"/topic_{i}", schema) for i in range(30)]
        t = _write_chunks(writer, channels, 200, 0)  # past any start-up allocation
        tracemalloc.start()
        try:
            before = tracemalloc.take_snapshot()
            _write_chunks(writer, channels, 2000, t)
            after = tracemalloc.take_snapshot()
        finally:
            tracemalloc.stop()
        grown = sum(s.size_diff for s in after.compare_to(before, "filename"))
        writer.finish()
    # 2000 chunk indexes of 30 channels are ≈ 700 KB; what stays in memory must not scale
    assert grown < 64 * 1024, f"the writer's memory grew by {grown} B over 2000 chunks"
    with path.open("rb") as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        assert len(summary.chunk_indexes) == 2200
        assert summary.statistics.chunk_count == 2200
        assert summary.statistics.message_count == 2200 * 30
        # the chunk indexes are right: seeking by them finds every message, in time order
        times = [m.log_time for _s, _c, m in reader.iter_messages(log_time_order=True)]
    assert times == list(range(2200 * 30))
