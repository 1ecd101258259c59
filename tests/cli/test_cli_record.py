"""``jointbus record``: records another process's topics over Zenoh; ``info`` reads the file."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from cli_tools_support import free_port, tools_app
from typer.testing import CliRunner

from jointbus.bus import Bus, ZenohConfig
from jointbus.messages.std_msgs import String
from jointbus.tools.bag_reader import open_bag


def test_record_stores_every_message_published_while_it_runs(tmp_path: Path):
    port = free_port()
    robot = Bus(zenoh=ZenohConfig.loopback(port), name="robot")
    pub = robot.publisher("/counter", String)
    other = robot.publisher("/other", String)
    stop = threading.Event()
    sent: list[int] = []

    def feed() -> None:
        i = 0
        while not stop.is_set():
            if pub.remote_matched:  # count only what the recorder can see
                pub.publish(String(str(i)))
                other.publish(String("x"))
                sent.append(i)
                i += 1
            time.sleep(0.005)

    feeder = threading.Thread(target=feed)
    out = tmp_path / "rec.mcap"
    try:
        feeder.start()
        args = [
            "record",
            str(out),
            "/counter",
            "--duration",
            "2.0",
            "--connect",
            f"tcp/127.0.0.1:{port}",
            "--listen",
            "tcp/127.0.0.1:0",
            "--quiet",
        ]
        result = CliRunner().invoke(tools_app(), args)
    finally:
        stop.set()
        feeder.join()
        robot.close()
    assert result.exit_code == 0, result.output
    assert "recorded" in result.output and "1 topics" in result.output
    with open_bag(out) as bag:
        assert not bag.truncated
        assert [t.name for t in bag.topics] == ["/counter"]
        values = [int(String.from_cdr(m.data).data) for m in bag.messages()]
    # a contiguous run of what was published: nothing lost while recording
    assert len(values) > 50
    assert values == list(range(values[0], values[0] + len(values)))
    info = CliRunner().invoke(tools_app(), ["info", str(out)])
    assert info.exit_code == 0 and f"Count: {len(values)}" in info.output
