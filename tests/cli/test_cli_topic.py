"""``jointbus topic list | echo | hz | pub`` run as a user runs them: separate processes, Zenoh.

A talker process (``cli_support.py``) publishes ``Status`` at 50 Hz with a heartbeating node; each
CLI command is a new ``python -m jointbus.cli.main`` process that reaches it with nothing but
``JOINTBUS_HUB_PORT`` (the default no-flag scheme, on a free port instead of 7447).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.bus import LATCHED, MAB_RT, RELIABLE, Bus, EndpointInfo, QosProfile, ZenohConfig
from jointbus.cli.errors import CliError
from jointbus.cli.topic import (
    ArrivalRecorder,
    PublishTimes,
    RateWindow,
    StampRecorder,
    measured_rate,
    pub_summary,
    rate_text,
    resolve_type,
    stamp_rate,
    subscriber_qos,
    summed_rate,
)
from jointbus.messages.joint_state import JointState
from jointbus.messages.stamp import Time
from jointbus.messages.std_msgs import Header
from jointbus.robots.hb50.messages import Level, Status
from support.cli import (
    TALK_RATE_HZ,
    TALK_TOPIC,
    TALKER_NODE,
    free_port,
    run_cli,
    start_cli,
    start_talker,
    stop,
    wait_until,
)


@pytest.fixture(scope="module")
def hub_port() -> Iterator[int]:
    port = free_port()
    talker = start_talker(port)
    yield port
    stop(talker)


def _rate_bounds_ok(rate: float) -> bool:
    # Loose: a loaded 2-core VM delays processes; the point is "about 50 Hz", not a timing test.
    return 0.5 * TALK_RATE_HZ <= rate <= 1.5 * TALK_RATE_HZ


# ---- topic list ----------------------------------------------------------------------------------
def test_list_shows_topic_type_publisher_and_rate(hub_port: int) -> None:
    result = run_cli(hub_port, "topic", "list", "--measure", "1")
    assert result.returncode == 0, result.stderr
    line = next(row for row in result.stdout.splitlines() if row.startswith(TALK_TOPIC + " "))
    assert "hb50_commons/msg/Status" in line
    assert TALKER_NODE in line
    rate = re.search(r"([\d.]+) Hz", line)
    assert rate is not None and _rate_bounds_ok(float(rate[1])), line
    assert any(row.startswith("/hb50/heartbeat ") for row in result.stdout.splitlines())


def test_list_names_publishers_without_a_node_by_count_and_process() -> None:
    from jointbus.messages.std_msgs import String

    hub_port = free_port()
    with Bus(name="anon", zenoh=ZenohConfig(hub_port=hub_port)) as bus:  # the hub itself
        first = bus.publisher("/cli_test/anonymous", String, RELIABLE)  # no node given
        second = bus.publisher("/cli_test/anonymous", String, RELIABLE)
        assert bus.zenoh is not None
        zid = str(bus.zenoh.session.info.zid())
        result = run_cli(hub_port, "topic", "list", "--measure", "0", "--timeout", "2")
        first.close()
        second.close()
    assert result.returncode == 0, result.stderr
    rows = [r for r in result.stdout.splitlines() if r.startswith("/cli_test/anonymous ")]
    assert len(rows) == 1, result.stdout + result.stderr
    line = rows[0]
    assert "?" not in line
    assert f"2 without node (session {zid[:8]})" in line


def test_list_says_latched_of_a_topic_published_on_change_not_no_rate() -> None:
    """New-user trial, 2026-12-05: ``/tf_static`` read ``— (0 msgs)``, as if dead."""
    from jointbus.messages.std_msgs import String

    hub_port = free_port()
    with Bus(name="latched", zenoh=ZenohConfig(hub_port=hub_port)) as bus:
        latched = bus.publisher("/cli_test/description", String, LATCHED)
        latched.publish(String("once"))
        feed = bus.publisher("/cli_test/quiet_feed", String, RELIABLE)  # volatile, silent
        table = run_cli(hub_port, "topic", "list", "--measure", "0.3", "--timeout", "2")
        as_json = run_cli(hub_port, "topic", "list", "--json", "--measure", "0.3", "--timeout", "2")
        latched.close()
        feed.close()
    assert table.returncode == 0, table.stderr
    rows = {r.split()[0]: r for r in table.stdout.splitlines()[1:]}
    assert "latched (0 msgs)" in rows["/cli_test/description"], table.stdout
    assert "— (0 msgs)" in rows["/cli_test/quiet_feed"], table.stdout
    topics = {t["name"]: t for t in json.loads(as_json.stdout)}
    assert topics["/cli_test/description"]["latched"] is True
    assert topics["/cli_test/quiet_feed"]["latched"] is False


def test_list_json(hub_port: int) -> None:
    result = run_cli(hub_port, "topic", "list", "--json", "--measure", "0.5")
    assert result.returncode == 0, result.stderr
    topics = {t["name"]: t for t in json.loads(result.stdout)}
    feed = topics[TALK_TOPIC]
    assert feed["type"] == "hb50_commons/msg/Status"
    assert [p["node"] for p in feed["publishers"]] == [TALKER_NODE]
    assert _rate_bounds_ok(feed["rate_hz"])


# ---- topic echo ----------------------------------------------------------------------------------
def test_echo_once_prints_the_decoded_fields(hub_port: int) -> None:
    result = run_cli(hub_port, "topic", "echo", TALK_TOPIC, "--once")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.endswith("---\n")
    assert out.count("---") == 1
    assert "level: 2  # WARN\n" in out
    assert f"reporting_node: {TALKER_NODE}\n" in out
    assert re.search(r"^status: tick \d+$", out, re.M)
    assert "data: [1, 2]\n" in out
    assert re.search(r"^    sec: \d+$", out, re.M)


def test_echo_json_lines_parse(hub_port: int) -> None:
    result = run_cli(hub_port, "topic", "echo", TALK_TOPIC, "--json", "--count", "3")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 3
    records = [json.loads(line) for line in lines]
    assert all(r["reporting_node"] == TALKER_NODE and r["level"] == 2 for r in records)
    assert all(r["data"] == [1, 2] for r in records)
    ticks = [int(r["status"].split()[1]) for r in records]
    assert ticks == sorted(ticks) and len(set(ticks)) == 3


def test_echo_of_a_missing_topic_fails_clearly(hub_port: int) -> None:
    result = run_cli(hub_port, "topic", "echo", "/cli_test/nothing_here", "--timeout", "0.5")
    assert result.returncode == 1
    assert result.stderr.startswith("error: topic /cli_test/nothing_here has no publisher")
    assert f"looked on hub port {hub_port}, domain " in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_echo_once_ends_when_the_topic_loses_its_last_publisher() -> None:
    """New-user trial, 2026-12-06: ``topic echo /tf_static --once --timeout 4`` started during a
    bag's replay waited 11 minutes, after the player had left, until Ctrl-C: ``--timeout`` bounds
    the wait for the topic to appear, and the wait for a message had no end. Now a topic whose
    last publisher has left ends ``--once`` with an error that says so."""
    from jointbus.messages.std_msgs import String

    hub_port = free_port()
    with Bus(name="leaving", zenoh=ZenohConfig(hub_port=hub_port)) as bus:
        silent = bus.publisher("/cli_test/leaving", String, RELIABLE)  # announced, never sends
        proc = start_cli(hub_port, "topic", "echo", "/cli_test/leaving", "--once")
        try:
            # its subscriber matched: it found the publisher and waits for a message
            assert wait_until(lambda: silent.remote_matched, 60.0), proc.poll()
            silent.close()
            left = time.monotonic()
            out, err = proc.communicate(timeout=30)
            ended_after_s = time.monotonic() - left
        finally:
            stop(proc)
    assert proc.returncode == 1, err
    assert "received 0 of 1 message(s) on /cli_test/leaving: it has no publisher any more" in err
    assert f"looked on hub port {hub_port}" in err, err
    assert out == ""
    assert ended_after_s < 10.0  # two checks 1 s apart, each a discovery round trip


def test_echo_with_type_waits_and_reports_a_short_count(hub_port: int) -> None:
    result = run_cli(
        hub_port,
        "topic",
        "echo",
        "/cli_test/silent",
        "--type",
        "std_msgs/msg/String",
        "--once",
        "--duration",
        "0.5",
    )
    assert result.returncode == 1
    assert "received 0 of 1 message(s) on /cli_test/silent" in result.stderr


# ---- topic hz ------------------------------------------------------------------------------------
def test_hz_reports_about_the_publishing_rate(hub_port: int) -> None:
    result = run_cli(hub_port, "topic", "hz", TALK_TOPIC, "--duration", "2.5")
    assert result.returncode == 0, result.stderr
    reports = re.findall(
        r"average rate: ([\d.]+)\n\tmin: ([\d.]+)s max: ([\d.]+)s std dev: ([\d.]+)s "
        r"window: (\d+)",
        result.stdout,
    )
    assert len(reports) >= 2, result.stdout
    rate, lo, hi, std, window = reports[-1]
    assert _rate_bounds_ok(float(rate))
    assert float(lo) - 0.0005 <= 1 / float(rate) <= float(hi) + 0.0005  # printed to 1 ms
    assert float(std) >= 0
    assert int(window) > int(reports[0][4])  # the window grows with every report


def test_hz_json_and_no_messages(hub_port: int) -> None:
    result = run_cli(hub_port, "topic", "hz", "/cli_test/silent", "--duration", "1.2", "--json")
    assert result.returncode == 1  # nothing arrived during --duration
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert records and all(r["new_messages"] is False for r in records)
    assert "does not appear to be published yet" in result.stderr
    # both say where they looked (a new user's wrong port, 2026-12-05: "no messages" alone)
    assert f"yet (looked on hub port {hub_port}, domain " in result.stderr, result.stderr
    assert f"within 1.2 s (looked on hub port {hub_port}, domain " in result.stderr, result.stderr


@pytest.mark.parametrize("command", ["hz", "echo"])
def test_duration_counts_the_time_listened_not_the_time_the_bus_took_to_open(
    hub_port: int, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--duration`` is listening time: a bus that took longer to open than the whole duration
    (here 1.5 s, on a loaded host a DDS participant took up to 0.45 s) left ``topic hz`` no time
    to listen, and it said "no messages within 1 s" of a 50 Hz topic."""
    from typer.testing import CliRunner

    from jointbus.cli.main import app
    from jointbus.cli.options import BusOptions

    opened = BusOptions.open_bus

    def slow_open(self: BusOptions) -> Bus:
        time.sleep(1.5)
        return opened(self)

    monkeypatch.setattr(BusOptions, "open_bus", slow_open)
    extra = ["--type", "hb50_commons/msg/Status", "--count", "1000"] if command == "echo" else []
    result = CliRunner(env={"JOINTBUS_HUB_PORT": str(hub_port)}).invoke(
        app, ["topic", command, TALK_TOPIC, "--duration", "1", *extra]
    )
    if command == "hz":
        assert result.exit_code == 0, result.output
        assert "average rate" in result.output
    else:  # it listened its second: received some of the 1 000 it asked for
        assert "received 0 of" not in result.output, result.output
        assert re.search(r"received [1-9]\d* of 1000 message\(s\)", result.output), result.output


# ---- topic pub -----------------------------------------------------------------------------------
@pytest.mark.parametrize("command", ["pub", "hz"])
def test_sigterm_ends_a_running_topic_command_as_ctrl_c_does(hub_port: int, command: str) -> None:
    """A new user's trial (2026-12-05): ``topic pub`` stopped by SIGTERM (``timeout``, a process
    manager) exited 143 without the line that says how many messages it published; Ctrl-C gave
    exit 0 and the line. SIGTERM now ends ``topic pub``, ``echo`` and ``hz`` as Ctrl-C does."""
    import signal

    args = (
        ["topic", "pub", "/cli_test/term", "std_msgs/msg/String", "{data: hi}", "--rate", "20",
         "--wait-matching", "0"]
        if command == "pub"
        else ["topic", "hz", "/cli_test/term"]
    )
    # the first line the command prints comes after its SIGTERM handler is in place; a fixed
    # 2.5 s sleep sent the signal before it on a loaded host (load 7: exit 143, as before start)
    started = "publishing on /cli_test/term" if command == "pub" else "/cli_test/term"
    proc = start_cli(hub_port, *args)
    lines: list[str] = []
    try:
        assert proc.stderr is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(started in line for line in lines):
            line = proc.stderr.readline()
            if not line:
                break
            lines.append(line)
        assert proc.poll() is None and any(started in line for line in lines), lines
        if command == "pub":
            time.sleep(0.3)  # publishing at 20 Hz: a few messages out
        proc.send_signal(signal.SIGTERM)
        _out, rest = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = "".join(lines) + rest
    assert proc.returncode == 0, err
    if command == "pub":
        assert re.search(r"published \d+ messages on /cli_test/term", err), err


def test_pub_stopped_while_it_waits_for_a_subscriber_still_says_how_many_it_published(
    hub_port: int,
) -> None:
    """A user's ``timeout -s INT 10 jointbus topic pub …`` on a busy host ended while the command
    still waited for a subscriber, and it printed nothing, where ``--help`` promises one line
    when it ends."""
    import signal

    proc = start_cli(
        hub_port, "topic", "pub", "/cli_test/nobody", "std_msgs/msg/String", "{data: hi}",
        "--wait-matching", "60",
    )
    try:
        # Joined and waiting for a subscriber that never comes: its publisher is on the bus. (A
        # fixed 3 s wait sent SIGINT before the command had started on a host at load 10: 130.)
        with Bus(name="watch", zenoh=ZenohConfig(hub_port=hub_port)) as watch:
            announced = wait_until(
                lambda: any(
                    t.name == "/cli_test/nobody" and t.publishers
                    for t in watch.discover(timeout=0.5)
                ),
                timeout=60.0,
                step=0.2,
            )
        assert announced and proc.poll() is None, proc.communicate()
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert "published 0 messages on /cli_test/nobody" in err, err


def test_pub_once_reaches_a_subscriber_in_another_process(hub_port: int) -> None:
    got: list[Status] = []
    with Bus(name="test", zenoh=ZenohConfig(hub_port=hub_port)) as bus:
        bus.subscribe("/cli_test/commands", Status, got.append, RELIABLE)
        before = time.time_ns()
        result = run_cli(
            hub_port,
            "topic",
            "pub",
            "/cli_test/commands",
            "hb50_commons/msg/Status",
            "{level: 2, reporting_node: me, status: hello}",
            "--once",
        )
        assert result.returncode == 0, result.stderr
        assert wait_until(lambda: len(got) == 1, timeout=5.0)
    msg = got[0]
    assert (msg.level, msg.reporting_node, msg.status, msg.data) == (Level.WARN, "me", "hello", b"")
    assert before <= msg.header.stamp.to_ns() <= time.time_ns()  # auto-stamped when published
    assert result.stdout == ""  # quiet by default
    assert "published 1 message on /cli_test/commands" in result.stderr
    assert "no subscriber" not in result.stderr


def test_pub_verbose_echoes_each_message(hub_port: int) -> None:
    result = run_cli(
        hub_port, "topic", "pub", "/cli_test/verbose", "std_msgs/msg/String", "{data: hi}",
        "--count", "3", "--rate", "50", "--verbose", "--wait-matching", "0",
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == [f"publishing #{i}" for i in (1, 2, 3)]
    assert all(line.endswith('{"data": "hi"}') for line in lines)


def test_pub_count_at_rate_sends_fresh_stamps(hub_port: int) -> None:
    got: list[Status] = []
    with Bus(name="test", zenoh=ZenohConfig(hub_port=hub_port)) as bus:
        bus.subscribe("/cli_test/counted", Status, got.append, RELIABLE)
        result = run_cli(
            hub_port,
            "topic",
            "pub",
            "/cli_test/counted",
            "hb50_commons/Status",
            '{"status": "n", "data": "hi"}',
            "--count",
            "3",
            "--rate",
            "20",
        )
        assert result.returncode == 0, result.stderr
        assert wait_until(lambda: len(got) == 3, timeout=5.0)
    assert result.stdout == ""
    assert [m.data for m in got] == [b"hi"] * 3
    stamps = [m.header.stamp.to_ns() for m in got]
    assert stamps == sorted(stamps) and len(set(stamps)) == 3


def _publish_times(times_s: list[float]) -> PublishTimes:
    times = PublishTimes()
    for t in times_s:
        times.add(t)
    return times


def test_pub_that_falls_short_of_its_rate_says_the_rate_it_achieved_and_the_longest_gap() -> None:
    """A user's ``--rate 20`` on a host at load 33 (2026-12-06) averaged 13.8 Hz with gaps up
    to 1.9 s and printed only ``published 199 messages``. The publish times of such a stream:
    197 intervals of 0.0625 s and one of 1.9 s: 199 messages in 14.21 s."""
    times = [0.0625 * k for k in range(150)]
    times += [times[-1] + 1.9 + 0.0625 * k for k in range(49)]
    line = pub_summary("/hb50/velocity_command", 199, 20.0, _publish_times(times))
    assert line == (
        "published 199 messages on /hb50/velocity_command: 13.9 Hz by the wall clock, short of "
        "the 20 Hz asked (longest gap 1.90 s; a busy host?)"
    )


def test_pub_at_its_rate_or_once_says_only_how_many() -> None:
    on_time = _publish_times([0.05 * k for k in range(100)])
    assert pub_summary("/t", 100, 20.0, on_time) == "published 100 messages on /t"
    slightly_late = _publish_times([0.052 * k for k in range(100)])  # 19.2 Hz: within 5 %
    assert pub_summary("/t", 100, 20.0, slightly_late) == "published 100 messages on /t"
    assert pub_summary("/t", 1, 20.0, _publish_times([3.0])) == "published 1 message on /t"
    assert pub_summary("/t", 0, 20.0, PublishTimes()) == "published 0 messages on /t"


def test_typed_joint_state_from_pub_to_echo(hub_port: int) -> None:
    echo = start_cli(
        hub_port,
        "topic",
        "echo",
        "/cli_test/joints",
        "--type",
        "jointbus_msgs/msg/JointState",
        "--once",
        "--duration",
        "15",
    )
    try:
        result = run_cli(
            hub_port,
            "topic",
            "pub",
            "/cli_test/joints",
            "jointbus_msgs/msg/JointState",
            "{names: [hip, base], positions: [0.5, {x: 1, y: 2, theta: 0.25}]}",
            "--once",
            "--wait-matching",
            "15",  # until the echo process (started just before) subscribes
        )
        assert result.returncode == 0, result.stderr
        out, err = echo.communicate(timeout=20)
    finally:
        if echo.poll() is None:
            echo.kill()
            echo.wait()
    assert echo.returncode == 0, err
    assert "names: [hip, base]\npositions:\n- 0.5\n- x: 1.0\n  y: 2.0\n  theta: 0.25\n" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["/t", "foo_msgs/msg/Nope", "{}"], "error: unknown message type 'foo_msgs/msg/Nope'"),
        (["/t", "hb50_commons/msg/Statu", "{}"], "did you mean hb50_commons/msg/Status"),
        (["/t", "hb50_commons/msg/Status", "{lvl: 1}"], "field 'lvl' = 1"),
        (["/t", "hb50_commons/msg/Status", "{level: 7}"], "field 'level' = 7; expected one of"),
        (["/t", "hb50_commons/msg/Status", "{level: [}"], "YAML or JSON"),
        (["t", "hb50_commons/msg/Status", "{}"], "does not start with '/'"),
        (["/t", "hb50_commons/msg/Status", "{}", "--qos", "FAST"], "--qos 'FAST'"),
    ],
)
def test_pub_rejects_bad_input_without_a_traceback(
    hub_port: int, args: list[str], message: str
) -> None:
    result = run_cli(hub_port, "topic", "pub", *args)
    assert result.returncode == 1
    assert message in result.stderr
    assert result.stderr.startswith("error: ")
    assert "Traceback" not in result.stderr


def test_pub_refuses_a_topic_of_another_type(hub_port: int) -> None:
    result = run_cli(hub_port, "topic", "pub", TALK_TOPIC, "std_msgs/msg/String", "{data: x}")
    assert result.returncode == 1
    assert f"topic {TALK_TOPIC} carries hb50_commons/msg/Status" in result.stderr


# ---- pieces --------------------------------------------------------------------------------------
@given(
    period_ns=st.integers(1_000, 10**10),
    count=st.integers(2, 50),
    window=st.integers(1, 100),
)
def test_rate_window_of_a_steady_stream(period_ns: int, count: int, window: int) -> None:
    rates = RateWindow(window)
    for i in range(count):
        rates.add(10**12 + i * period_ns)
    stats = rates.stats()
    assert stats is not None
    assert stats.window == min(window, count - 1)
    assert stats.rate_hz == pytest.approx(1e9 / period_ns)
    assert stats.min_s == stats.max_s == pytest.approx(period_ns / 1e9)
    assert stats.std_dev_s == pytest.approx(0.0, abs=1e-12)


def test_rate_window_statistics_of_uneven_intervals() -> None:
    rates = RateWindow(10)
    assert rates.stats() is None
    for t in (0, 100_000_000, 300_000_000):  # intervals 0.1 s and 0.2 s
        rates.add(t)
    stats = rates.stats()
    assert stats is not None
    assert (stats.min_s, stats.max_s, stats.window) == (0.1, 0.2, 2)
    assert stats.rate_hz == pytest.approx(1 / 0.15)
    assert stats.std_dev_s == pytest.approx(0.05)
    with pytest.raises(CliError, match="--window"):
        RateWindow(0)


def test_header_stamps_give_the_publishers_rate() -> None:
    assert stamp_rate([0]) is None
    assert stamp_rate([4_000_000, 0, 2_000_000]) == pytest.approx(500.0)  # any arrival order


def test_a_burst_of_queued_samples_is_arrival_rate_not_the_publishers() -> None:
    """A user's ``topic hz /hb50/bridge_data --json`` read ``rate_hz`` 524.89, then 511.0, for
    a 500 Hz publisher: arrival rates count a burst of queued samples as rate. 100 samples
    stamped 2 ms apart (500 Hz), sent in one burst over real Zenoh, arrive far faster; their
    stamps give the 500 Hz the publisher achieved, however fast they arrived."""
    port = free_port()
    with (
        Bus(name="pub", zenoh=ZenohConfig.loopback(port)) as pub_bus,
        Bus(name="hz", zenoh=ZenohConfig.loopback(None, (port,))) as hz_bus,
    ):
        arrivals = ArrivalRecorder(hz_bus, "/cli_test/stamped")
        stamps = StampRecorder(hz_bus, "/cli_test/stamped")
        assert stamps.stamped(Status.TYPE_NAME)
        publisher = pub_bus.publisher("/cli_test/stamped", Status, RELIABLE)
        assert wait_until(lambda: publisher.remote_matched, timeout=10.0)
        t0 = 1_700_000_000 * 10**9
        for k in range(100):
            publisher.publish(Status(header=Header(Time.from_ns(t0 + k * 2_000_000), "")))
        got: list[int] = []

        def all_in() -> bool:
            got.extend(stamps.drain())
            return len(got) == 100

        assert wait_until(all_in, timeout=10.0), len(got)
        assert len(arrivals.drain()) == 100  # the arrival tap saw the same samples
    assert stamp_rate(got) == pytest.approx(500.0)


def test_measured_rate() -> None:
    assert measured_rate([0, 500_000_000, 1_000_000_000]) == pytest.approx(2.0)
    assert measured_rate([123]) is None  # one message: no interval, no rate
    assert measured_rate([]) is None


def test_a_topics_rate_is_the_sum_of_its_publishers_rates() -> None:
    """Two nodes heartbeating at 1 Hz, 0.3 s apart: one rate over both nodes' arrivals read the
    gap between them (2 messages 0.3 s apart: 3.3 Hz). Per publisher, a window holding one
    heartbeat each has no rate; a longer one gives 1 Hz each, 2 Hz in total."""
    s = 1_000_000_000
    one_each = summed_rate({1: [0], 2: [3 * s // 10]})
    assert measured_rate([0, 3 * s // 10]) == pytest.approx(3.33, abs=0.01)  # the old figure
    assert (one_each.rate_hz, one_each.messages, one_each.publishers) == (None, 2, 2)
    assert rate_text(one_each) == "— (2 msgs from 2 publishers)"
    three_each = summed_rate({1: [0, s, 2 * s], 2: [x + 3 * s // 10 for x in (0, s, 2 * s)]})
    assert three_each.rate_hz == pytest.approx(2.0) and not three_each.lower_bound
    assert rate_text(three_each) == "2.0 Hz (6 msgs from 2 publishers)"
    # a 50 Hz feed and a publisher that sent once: the sum is a lower bound, and says so
    partial = summed_rate({1: [i * s // 50 for i in range(51)], 2: [s // 2]})
    assert partial.rate_hz == pytest.approx(50.0) and partial.lower_bound
    assert rate_text(partial) == "≥ 50.0 Hz (52 msgs from 2 publishers)"
    single = summed_rate({None: [0, s // 2, s]})  # one publisher (no attachment): as before
    assert rate_text(single) == "2.0 Hz (3 msgs)"
    assert rate_text(summed_rate({})) == "— (0 msgs)"
    assert rate_text(summed_rate({}), latched=True) == "latched (0 msgs)"
    assert rate_text(three_each, latched=True) == "2.0 Hz (6 msgs from 2 publishers)"


def test_list_sums_the_rates_of_two_publishers_and_says_how_many() -> None:
    port = free_port()
    topic = "/two_feeds/status"
    stop_event = threading.Event()

    def feed(bus: Bus) -> None:
        publisher = bus.publisher(topic, Status, RELIABLE)
        next_at = time.monotonic()
        while not stop_event.is_set():
            publisher.publish(Status(level=Level.OK, status="feed"))
            next_at += 1.0 / 20.0
            time.sleep(max(0.0, next_at - time.monotonic()))

    with (
        Bus(name="feed_a", zenoh=ZenohConfig(hub_port=port)) as a,
        Bus(name="feed_b", zenoh=ZenohConfig(hub_port=port)) as b,
    ):
        threads = [threading.Thread(target=feed, args=(bus,), daemon=True) for bus in (a, b)]
        for thread in threads:
            thread.start()
        try:
            result = run_cli(port, "topic", "list", "--measure", "1.5")
            as_json = run_cli(port, "topic", "list", "--json", "--measure", "1.5")
        finally:
            stop_event.set()
            for thread in threads:
                thread.join(timeout=5.0)
    assert result.returncode == 0, result.stderr
    row = next(r for r in result.stdout.splitlines() if r.startswith(topic + " "))
    found = re.search(r"([\d.]+) Hz \((\d+) msgs from 2 publishers\)", row)
    assert found is not None, row
    # Loose (a loaded VM delays processes): about 2 × 20 Hz, not one publisher's 20 Hz.
    assert 0.5 * 40.0 < float(found[1]) <= 1.5 * 40.0, row
    listed = next(t for t in json.loads(as_json.stdout) if t["name"] == topic)
    assert listed["publishers_measured"] == 2
    assert 0.5 * 40.0 < listed["rate_hz"] <= 1.5 * 40.0, listed


def test_hz_gives_each_publishers_rate_named_by_its_node() -> None:
    """Two nodes at 40 and 10 Hz on one topic: ``hz`` reads about 50 Hz for the topic, as ``ros2
    topic hz`` would, and then each node's own rate, which a user running a controller beside
    the control node needs (trial 2026-12-07: its rate was nowhere)."""
    from jointbus.runtime import Node

    port = free_port()
    topic = "/two_nodes/status"
    stop_event = threading.Event()

    def feed(publisher: Any, rate_hz: float) -> None:
        next_at = time.monotonic()
        while not stop_event.is_set():
            publisher.publish(Status(level=Level.OK, status="feed"))
            next_at += 1.0 / rate_hz
            time.sleep(max(0.0, next_at - time.monotonic()))

    with (
        Bus(name="feed_a", zenoh=ZenohConfig(hub_port=port)) as a,
        Bus(name="feed_b", zenoh=ZenohConfig(hub_port=port)) as b,
        Node("fast_feed", a) as fast,
        Node("slow_feed", b) as slow,
    ):
        threads = []
        for node, rate in ((fast, 40.0), (slow, 10.0)):
            publisher = node.create_publisher(topic, Status, RELIABLE)
            node.start()
            threads.append(threading.Thread(target=feed, args=(publisher, rate), daemon=True))
        for thread in threads:
            thread.start()
        try:
            text = run_cli(port, "topic", "hz", topic, "--duration", "2.5")
            as_json = run_cli(port, "topic", "hz", topic, "--duration", "2.5", "--json")
        finally:
            stop_event.set()
            for thread in threads:
                thread.join(timeout=5.0)
    assert text.returncode == 0, text.stderr
    last = text.stdout.split("average rate: ")[-1]
    assert "2 publishers (the rate above counts them together), each:" in last, text.stdout
    # two publishers' stamps are not one clock's: no rate by stamps for the topic
    assert "by header stamps: none (more than one publisher" in last, last
    rates = dict(re.findall(r"\t  (\w+) \(publisher [0-9a-f]{8}\): ([\d.]+) Hz", last))
    assert set(rates) == {"fast_feed", "slow_feed"}, last
    # Loose (a loaded VM delays processes), but apart: 40 Hz is not 10 Hz, nor their 50 Hz sum.
    assert 0.7 * 40.0 < float(rates["fast_feed"]) <= 1.3 * 40.0, last
    assert 0.7 * 10.0 < float(rates["slow_feed"]) <= 1.3 * 10.0, last
    assert as_json.returncode == 0, as_json.stderr
    record = json.loads(as_json.stdout.splitlines()[-1])
    by_node = {p["node"]: p for p in record["publishers"]}
    assert set(by_node) == {"fast_feed", "slow_feed"}, record
    assert all(len(p["gid"]) == 32 and p["new_messages"] for p in by_node.values()), record
    assert 0.7 * 40.0 < by_node["fast_feed"]["rate_hz"] <= 1.3 * 40.0, record
    assert 0.7 * 50.0 < record["rate_hz"] <= 1.3 * 50.0, record  # the topic's: both together
    assert record["stamp_rate_hz"] is None, record


def test_publisher_windows_keep_each_publishers_intervals_apart() -> None:
    from jointbus.cli.topic import PublisherWindows

    windows = PublisherWindows(10)
    windows.add(1, [0, 10_000_000, 20_000_000])  # 100 Hz
    windows.add(None, [5_000_000, 55_000_000])  # 20 Hz, samples without an id
    first = windows.take()
    assert [(p, round(s.rate_hz), fresh) for p, s, fresh in first if s] == [
        (1, 100, True),
        (None, 20, True),
    ]
    windows.add(1, [30_000_000])
    windows.add(None, [])
    second = {p: fresh for p, _s, fresh in windows.take()}
    assert second == {1: True, None: False}  # the silent one: no new messages


def test_a_publisher_that_left_keeps_the_node_name_the_graph_gave_it() -> None:
    """A trial's ``topic hz --json`` (2026-12-07) reported ``"node": ""`` for a controller's
    last messages: its node had left, and the graph's record of it with it."""
    from types import SimpleNamespace

    from jointbus.cli.topic import PublisherWindows, _publisher_rates

    graph = {7: SimpleNamespace(node="squat_controller")}
    bus = SimpleNamespace(transport=SimpleNamespace(remote_info=graph.get))
    windows = PublisherWindows(10)
    names: dict[int, str] = {}
    windows.add(7, [0, 2_000_000, 4_000_000])
    (first,) = _publisher_rates(bus, windows, names)  # type: ignore[arg-type]
    assert first.label == "squat_controller (publisher 00000000)"  # the id's first 8 hex digits
    graph.clear()  # the node left
    windows.add(7, [6_000_000])
    (later,) = _publisher_rates(bus, windows, names)  # type: ignore[arg-type]
    assert later.node == "squat_controller" and later.fresh
    windows.add(8, [0, 1_000_000])  # never in the graph
    rates = _publisher_rates(bus, windows, names)  # type: ignore[arg-type]
    assert [r.node for r in rates] == ["squat_controller", ""]


def _pub(qos: QosProfile) -> EndpointInfo:
    return EndpointInfo("publisher", "/t", "x/msg/Y", "n", 1, qos, "z", False)


def test_echo_qos_is_served_by_every_publisher() -> None:
    assert subscriber_qos([_pub(RELIABLE)]).reliable
    mixed = subscriber_qos([_pub(RELIABLE), _pub(MAB_RT)])
    assert not mixed.reliable and not mixed.transient_local
    assert subscriber_qos([_pub(LATCHED)]).transient_local
    unknown = subscriber_qos([])
    assert not unknown.reliable and not unknown.transient_local


def test_unchecked_content_is_built_as_the_plain_wire_record() -> None:
    from jointbus.cli.topic import raw_record_type
    from jointbus.cli.values import build_message
    from jointbus.messages import jointbus_msgs

    typed = resolve_type("jointbus_msgs/msg/JointState")
    raw = raw_record_type(typed)
    assert raw.facing is raw.wire is jointbus_msgs.JointState
    assert raw_record_type(resolve_type("hb50_commons/msg/Status")).wire is Status
    # a NaN position the typed class refuses, as bytes a receiver must refuse
    bad = build_message(
        raw.wire, {"name": ["hip"], "kind": [0], "position": [float("nan")]}, unchecked=True
    )
    with pytest.raises(ValueError, match="position"):
        JointState.from_cdr(bad.to_cdr())


def test_typed_types_travel_as_themselves_or_as_their_wire_record() -> None:
    typed = resolve_type("jointbus_msgs/msg/JointState")
    assert typed.facing is typed.wire is JointState  # a Message: published as itself
    from jointbus.messages.actarray.commands import PositionCommand

    single = resolve_type(PositionCommand.TYPE_NAME)
    assert single.facing is PositionCommand and single.wire is PositionCommand.WIRE
    assert resolve_type("hb50_commons/Status").wire is Status
    with pytest.raises(CliError, match="did you mean"):
        resolve_type("hb50_commons/msg/Stats")


# ---- topic pub --unchecked against the real bridge -----------------------------------------------
HB50_JOINTS = [f"{leg}_j{i}" for leg in ("fr", "fl", "rl", "rr") for i in range(3)]


def _command_values(**override: object) -> str:
    zeros = [0.0] * len(HB50_JOINTS)
    values: dict[str, object] = {
        "source_node": "defence_test",
        "name": HB50_JOINTS,
        "kp": zeros, "ki": zeros, "kd": zeros, "t_pos": zeros, "t_vel": zeros, "t_trq": zeros,
        "brake": [False] * len(HB50_JOINTS),
    }
    values.update(override)
    return json.dumps(values).replace("NaN", ".nan")  # YAML's NaN (JSON has none)


@pytest.mark.parametrize(
    ("override", "field"),
    [
        ({"kp": [float("nan")] + [0.0] * 11}, "kp"),  # NaN
        ({"t_pos": [0.0] * 5}, "t_pos"),  # a short array
        ({"kd": [-3.0] + [0.0] * 11}, "kd"),  # a negative gain
    ],
    ids=["nan", "short-array", "negative-gain"],
)
def test_pub_unchecked_sends_what_the_bridge_must_refuse(
    bridge_port: int, override: dict[str, object], field: str
) -> None:
    values = _command_values(**override)
    checked = run_cli(bridge_port, "topic", "pub", "/hb50/joint_command",
                      "hb50_commons/msg/JointCommand", values, "--once")
    assert checked.returncode == 1 and f"field '{field}'" in checked.stderr  # the CLI refuses
    reports: list[Status] = []
    with Bus(name="observer", zenoh=ZenohConfig(hub_port=bridge_port)) as bus:
        bus.subscribe("/hb50/status", Status, reports.append, RELIABLE)
        time.sleep(0.5)  # matched before the command goes out
        sent = run_cli(bridge_port, "topic", "pub", "/hb50/joint_command",
                       "hb50_commons/msg/JointCommand", values, "--once", "--unchecked")
        assert sent.returncode == 0, sent.stderr

        def refused() -> bool:
            return any(
                r.reporting_node == "bridge_node"
                and r.level >= Level.WARN
                and f"field '{field}'" in r.status
                for r in list(reports)
            )

        assert wait_until(refused, timeout=10.0), [r.status for r in reports]


def test_pub_unchecked_with_one_joint_is_refused_for_its_short_name_list(bridge_port: int) -> None:
    """A user sends only fr_j0 (with a NaN): the bridge checks names before values, so the report
    must say the *names* are short — not blame fr_j1's 'name', a joint the user never sent."""
    values = json.dumps(
        {"source_node": "defence_test", "name": ["fr_j0"], "t_pos": [float("nan")]}
    ).replace("NaN", ".nan")
    reports: list[Status] = []
    with Bus(name="observer", zenoh=ZenohConfig(hub_port=bridge_port)) as bus:
        bus.subscribe("/hb50/status", Status, reports.append, RELIABLE)
        time.sleep(0.5)  # matched before the command goes out
        sent = run_cli(bridge_port, "topic", "pub", "/hb50/joint_command",
                       "hb50_commons/msg/JointCommand", values, "--once", "--unchecked")
        assert sent.returncode == 0, sent.stderr

        def refusal() -> str | None:
            return next(
                (r.status for r in list(reports)
                 if r.reporting_node == "bridge_node" and "field 'name'" in r.status),
                None,
            )

        assert wait_until(lambda: refusal() is not None, timeout=10.0), [
            r.status for r in reports
        ]
    text = refusal()
    assert text is not None
    assert "defence_test" in text
    assert "field 'name' = ['fr_j0']" in text
    assert "names only 1 of the 12 actuators" in text
    assert "first missing: 'fr_j1' (index 1)" in text
    assert "joint 'fr_j1' (index 1): field 'name'" not in text


@pytest.fixture(scope="module")
def bridge_port() -> Iterator[int]:
    """The hb50 bridge (MuJoCo) as its own process, hub of a free port."""
    port = free_port()
    bridge = start_cli(port, "bridge", "--headless", "--no-realtime", "--duration", "300")
    try:
        with Bus(name="probe", zenoh=ZenohConfig(hub_port=port)) as bus:
            frames: list[object] = []
            from jointbus.robots.hb50.messages import BridgeState

            bus.subscribe("/hb50/bridge_state_10hz", BridgeState, frames.append, RELIABLE)
            assert wait_until(lambda: bool(frames), timeout=60.0), "the bridge did not start"
        yield port
    finally:
        bridge.terminate()
        try:
            bridge.wait(timeout=15)
        except Exception:
            bridge.kill()
            bridge.wait()


def test_list_rate_is_measured_from_the_messages_received_or_says_too_few(hub_port: int) -> None:
    """Issue 12 item 7: a 1 Hz heartbeat measured over 0.5 s has at most one message: no rate can
    be measured from it, and the listing says so instead of printing 0.0 or 2.0 Hz. A publisher at
    a known rate (the talker, 50 Hz) is reported at about that rate, with the count it rests on."""
    result = run_cli(hub_port, "topic", "list", "--measure", "0.5")
    assert result.returncode == 0, result.stderr
    rows = {r.split()[0]: r for r in result.stdout.splitlines()[1:]}
    heartbeat = rows["/hb50/heartbeat"]
    assert "Hz" not in heartbeat and re.search(r"— \([01] msgs?\)", heartbeat), heartbeat
    feed = re.search(r"([\d.]+) Hz \((\d+) msgs\)", rows[TALK_TOPIC])
    assert feed is not None, rows[TALK_TOPIC]
    assert _rate_bounds_ok(float(feed[1])) and int(feed[2]) >= 2
    as_json = run_cli(hub_port, "topic", "list", "--json", "--measure", "0.5")
    topics = {t["name"]: t for t in json.loads(as_json.stdout)}
    assert topics["/hb50/heartbeat"]["rate_hz"] is None
    assert topics["/hb50/heartbeat"]["messages_measured"] in (0, 1)
    assert _rate_bounds_ok(topics[TALK_TOPIC]["rate_hz"])
    help_text = re.sub(r"[\s│]+", " ", run_cli(hub_port, "topic", "list", "--help").stdout)
    assert "fewer than 2 messages no rate is measured" in help_text, help_text


def test_list_with_nothing_there_says_where_it_looked_and_exits_1() -> None:
    """Issue 12 item 9: as ``node list`` does (hub port, domain); issue 20 item 12: "nothing
    there" exits 1 for every command (--json still prints a valid, empty document)."""
    port = free_port()
    result = run_cli(port, "topic", "list", "--measure", "0", "--timeout", "0.3")
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith("error: no topics found")
    assert f"looked on hub port {port}, domain " in result.stderr, result.stderr
    as_json = run_cli(port, "topic", "list", "--measure", "0", "--timeout", "0.3", "--json")
    assert as_json.returncode == 1
    assert json.loads(as_json.stdout) == []


def test_pub_help_says_which_fields_must_be_given_and_the_error_names_a_missing_one() -> None:
    port = free_port()
    help_text = re.sub(r"[\s│]+", " ", run_cli(port, "topic", "pub", "--help").stdout)
    assert "a per-joint array must be given, one value per name" in help_text, help_text
    values = "{source_node: t, name: [a, b], position: [0, 0], velocity: [0, 0], effort: [0, 0], " \
        "kp: [1, 1], kd: [0, 0]}"
    result = run_cli(port, "topic", "pub", "/arm6/joint_impedance",
                     "jointbus_msgs/msg/JointImpedance", values, "--once")
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert "field 'brake' = '0 values'" in result.stderr
    assert "'brake' was not given and took its default (an empty list)" in result.stderr


@pytest.mark.parametrize(
    ("type_name", "values", "given"),
    [
        ("jointbus_msgs/msg/JointImpedance", "{name: [a], position: [0], velocity: [0], "
         "effort: [0], kp: [1], kd: [0], brake: [false]}", "is missing"),
        ("jointbus_msgs/msg/JointImpedance", "{source_node: '', name: [a], position: [0], "
         "velocity: [0], effort: [0], kp: [1], kd: [0], brake: [false]}", "= ''"),
        ("hb50_commons/msg/JointCommand", "{name: [a], kp: [1], ki: [0], kd: [0], t_pos: [0], "
         "t_vel: [0], t_trq: [0], brake: [false]}", "is missing"),
    ],
    ids=["impedance-missing", "impedance-empty", "hb50-command-missing"],
)
def test_pub_refuses_a_command_without_the_source_its_receiver_requires(
    type_name: str, values: str, given: str
) -> None:
    """A user's trial: a JointImpedance stream without ``source_node`` printed "published 100"
    while the array node refused every one (it cannot rank an anonymous sender). The CLI now
    refuses it before joining the bus, naming the field and how to give it; --unchecked still
    sends it (to test the node's refusal)."""
    port = free_port()
    result = run_cli(port, "topic", "pub", "/t", type_name, values, "--once",
                     "--wait-matching", "0")  # fmt: skip
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.startswith(f"error: field 'source_node' {given}: expected a non-empty "
                                    "node name"), result.stderr  # fmt: skip
    assert "give it in VALUES, e.g. '{source_node: teleop, ...}'" in result.stderr
    assert "published" not in result.stderr
    sent = run_cli(port, "topic", "pub", "/t", type_name, values, "--once", "--unchecked",
                   "--wait-matching", "0")  # fmt: skip
    assert sent.returncode == 0 and "published 1 message on /t" in sent.stderr, sent.stderr


# ---- topic pub --unchecked against a served array (any message type) ----------------------------
ARM6_JOINTS = ["shoulder_pan", "shoulder_lift", "elbow", "wrist_roll", "wrist_pitch", "flange_roll"]


def _impedance_values(**override: object) -> str:
    zeros = [0.0] * len(ARM6_JOINTS)
    values: dict[str, object] = {
        "source_node": "tester", "name": ARM6_JOINTS, "position": zeros, "velocity": zeros,
        "effort": zeros, "kp": [1.0] * len(ARM6_JOINTS), "kd": zeros,
        "brake": [False] * len(ARM6_JOINTS),
    }
    values.update(override)
    return json.dumps(values).replace("NaN", ".nan")  # YAML's NaN (JSON has none)


@pytest.mark.parametrize(
    ("topic", "type_name", "values", "refusal"),
    [
        (
            "/arm6/joint_impedance",
            "jointbus_msgs/msg/JointImpedance",
            _impedance_values(position=[0.0] * 5 + [float("nan")]),
            "joint 'flange_roll' (index 5): field 'position' = nan",
        ),
        (
            "/arm6/joint_impedance",
            "jointbus_msgs/msg/JointImpedance",
            _impedance_values(kp=[1.0, -2.0, 1.0, 1.0, 1.0, 1.0]),
            "joint 'shoulder_lift' (index 1): field 'kp' = -2.0",
        ),
        (
            "/arm6/actarray/multi_position",
            "jointbus_msgs/msg/ActuatorMultiPositionCommand",
            "{positions: [0.1, .nan, 0.3, 0, 0, 0]}",
            "joint 'shoulder_lift' (index 1): field 'positions' = nan",
        ),
    ],
    ids=["impedance-nan", "impedance-negative-gain", "multi-position-nan"],
)
def test_pub_unchecked_reaches_a_served_array_which_refuses_it_by_name(
    arm_port: int, topic: str, type_name: str, values: str, refusal: str
) -> None:
    """The README's promise for every message type, not only hb50's JointCommand: the CLI refuses
    the content itself, ``--unchecked`` sends it (no traceback, one message published), and the
    array node reports the refusal naming the joint, index, field and value on its status."""
    checked = run_cli(arm_port, "topic", "pub", topic, type_name, values, "--once")
    assert checked.returncode == 1 and "Traceback" not in checked.stderr, checked.stderr
    reports: list[Status] = []
    with Bus(name="observer", zenoh=ZenohConfig(hub_port=arm_port)) as bus:
        bus.subscribe("/arm6/status", Status, reports.append, RELIABLE)
        time.sleep(0.5)  # matched before the command goes out
        sent = run_cli(arm_port, "topic", "pub", topic, type_name, values, "--once", "--unchecked")
        assert sent.returncode == 0 and "Traceback" not in sent.stderr, sent.stderr
        assert f"published 1 message on {topic}" in sent.stderr, sent.stderr

        def refused() -> bool:
            return any(
                r.reporting_node == "array_node" and r.level >= Level.WARN and refusal in r.status
                for r in list(reports)
            )

        assert wait_until(refused, timeout=10.0), [r.status for r in reports]


@pytest.fixture(scope="module")
def arm_port() -> Iterator[int]:
    """``jointbus serve sim://arm6`` as its own process, hub of a free port."""
    port = free_port()
    server = start_cli(port, "serve", "sim://arm6?noise=false")
    try:
        line = server.stdout.readline() if server.stdout is not None else ""
        assert line.startswith("serving sim://arm6"), line
        yield port
    finally:
        stop(server)


@pytest.mark.parametrize(
    ("topic", "type_name", "values", "field"),
    [
        ("speed", "ActuatorSpeedCommand", '{"joint": 2, "speed": .nan}', "speed"),
        ("multi_speed", "ActuatorMultiSpeedCommand", '{"speeds": [0, 0, .nan, 0, 0, 0]}',
         "speeds"),
    ],
)
def test_pub_names_the_joint_of_a_player_command_it_refuses_by_index(
    topic: str, type_name: str, values: str, field: str
) -> None:
    """A user's trial (2026-12-06): ``topic pub`` refused a NaN speed before sending it as
    ``…ActuatorSpeedCommand: index 2: field 'speed' = nan`` — no joint name. It asks the served
    array for its joint names (its ``describe`` service); with no array there, it says what the
    message said, after waiting at most a second for one."""
    from support.array_server import served

    args = ("topic", "pub", f"/arm6/actarray/{topic}", f"jointbus_msgs/msg/{type_name}", values)
    with served("sim://arm6?noise=false", "arm6") as server:
        result = run_cli(server.port, *args, "--once")
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert result.stderr.startswith("error: "), result.stderr
    assert f"joint 'elbow' (index 2): field '{field}' = nan" in result.stderr, result.stderr
    alone = run_cli(free_port(), *args, "--once")
    assert alone.returncode == 1, alone.stderr
    assert f"index 2: field '{field}' = nan" in alone.stderr and "elbow" not in alone.stderr


def test_hz_says_when_a_report_is_late(hub_port: int) -> None:
    """A report made after its due time says so and by how much: a trial on a loaded host
    (2026-12-07) had one report come about 4 s after the one before, with nothing said. Here the
    tool is stopped (SIGSTOP) for 2.5 s between two reports, as a starved process is."""
    import signal

    proc = start_cli(hub_port, "topic", "hz", TALK_TOPIC, "--duration", "6", "--json")
    try:
        assert proc.stdout is not None
        first = json.loads(proc.stdout.readline())
        assert first["report_late_s"] < 0.5, first  # not stopped: on time
        proc.send_signal(signal.SIGSTOP)
        time.sleep(2.5)  # the report due 1 s after the first is made ≈ 1.5 s late
        proc.send_signal(signal.SIGCONT)
        out, err = proc.communicate(timeout=30.0)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    lates = [json.loads(line)["report_late_s"] for line in out.splitlines()]
    assert max(lates) > 1.0, lates  # the report due while it was stopped
    assert min(lates[2:]) < 0.5, lates  # and the ones after it on time again


def test_a_late_report_says_so_in_text(capsys: pytest.CaptureFixture[str]) -> None:
    from jointbus.cli.topic import _hz_report, report_is_late

    stats = RateWindow(10)
    for t in range(0, 100_000_000, 10_000_000):
        stats.add(t)
    _hz_report("/t", stats.stats(), True, False, late_s=3.1, period_s=1.0)
    _hz_report("/t", stats.stats(), True, False, late_s=0.05, period_s=1.0)
    _hz_report("/t", None, False, False, late_s=0.5, period_s=1.0)
    lines = capsys.readouterr().out.splitlines()
    late = [line for line in lines if "late" in line]
    assert late[0].startswith("\t(this report is 3.10 s late: this process did not run"), lines
    assert late[1] == (
        "no new messages (this report is 0.50 s late: this process did not run when it was due "
        "(a busy host))"
    ), lines
    assert len(late) == 2, lines  # 50 ms is a sleep's wake-up on a busy host, not late
    # the threshold grows with --period: a quarter of it, 0.1 s at least
    assert not report_is_late(0.09, 0.1) and report_is_late(0.11, 0.1)
    assert not report_is_late(2.4, 10.0) and report_is_late(2.6, 10.0)
