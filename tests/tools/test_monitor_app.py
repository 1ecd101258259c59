"""The terminal monitor driven headless by textual's pilot: what is in the tables and on screen."""

from __future__ import annotations

import asyncio
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable

import pytest
from textual import events
from textual.binding import Binding
from textual.pilot import Pilot
from textual.widgets import DataTable

from jointbus.bus import MAB_RT, RELIABLE, Bus, ZenohConfig
from jointbus.bus.discovery import TopicInfo
from jointbus.messages.geometry_msgs import Twist
from jointbus.messages.std_msgs import Header, String
from jointbus.messages.tf2_msgs import TFMessage
from jointbus.robots.hb50.messages import (
    BridgeData,
    BridgeState,
    JointStatusFlag,
    MotionMode,
    RobotState,
    Status,
)
from jointbus.tools.monitor.app import MonitorApp
from jointbus.tools.monitor.feed import MonitorFeed
from jointbus.tools.monitor.model import MonitorModel
from jointbus.tools.teleop_keys import KEY_HELP, TeleopKeys, TwistStream

S = 1_000_000_000
NAMES = ("fr_j0", "fr_j1", "fr_j2", "fl_j0")


class FakeClock:
    def __init__(self) -> None:
        self.now = 10 * S

    def __call__(self) -> int:
        return self.now


def frame(status: tuple[int, ...] = (0, 0, 0, 0), shift: float = 0.0) -> BridgeData:
    return BridgeData(
        Header.now("body"),
        joint_name=NAMES,
        joint_position=(0.05 + shift, 0.7, -1.4, -0.05),
        joint_velocity=(0.0, 1.25, 0.0, 0.0),
        joint_effort=(0.5, -3.5, 2.0, 0.0),
        joint_temperature=bytes([30, 91, 40, 33]),
        joint_status=status,
    )


def screen_text(app: MonitorApp) -> str:
    """The characters on the (virtual) terminal, line by line."""
    strips = app.screen._compositor.render_strips()
    return "\n".join(strip.text for strip in strips)


def run(app: MonitorApp, body: Callable[[MonitorApp], Awaitable[None]]) -> None:
    async def main() -> None:
        async with app.run_test(size=(150, 50)) as pilot:
            await pilot.pause()
            await body(app)
            await pilot.press("ctrl+q")  # q is teleop's "faster"

    asyncio.run(main())


def cells(app: MonitorApp, table_id: str) -> list[list[str]]:
    table: DataTable[object] = app.query_one(f"#{table_id}", DataTable)
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


def test_joint_rows_nodes_owner_estop_and_events_are_shown() -> None:
    clock = FakeClock()
    model = MonitorModel()
    error = int(JointStatusFlag.COMMUNICATION_ERROR | JointStatusFlag.MOTION_ERROR)
    model.on_bridge_data(frame((0, error, int(JointStatusFlag.TARGET_REACHED), 0)), clock.now)
    model.on_bridge_state(
        BridgeState(
            drives_enabled=False, status=("owner: user_node", "mode: estop", "estop: jointbus_cli")
        ),
        clock.now,
    )
    model.on_heartbeat(Status.ok("bridge_node", "alive", b"active"), clock.now - 3 * S)
    model.on_heartbeat(Status.ok("control_node", "alive", b"active"), clock.now)
    model.on_status(Status.error("bridge_node", "e-stop latched: jointbus_cli"), clock.now)
    app = MonitorApp(model, clock=clock)

    async def body(app: MonitorApp) -> None:
        joints = cells(app, "joints")
        assert [row[0] for row in joints] == list(NAMES)
        assert joints[1] == [
            "fr_j1",
            "1",
            "+0.700",
            "+1.250",
            "-3.50",
            "91",
            "communication, motion",
        ]
        assert joints[2][-1] == "target-reached"
        assert joints[0][-1] == "ok"
        nodes = {row[0]: row[1:] for row in cells(app, "nodes")}
        assert nodes["bridge_node"][0] == "STALE"  # 3 s without a heartbeat
        assert nodes["control_node"][:2] == ["OK", "active"]
        events = cells(app, "events")
        assert events[0][1:] == ["ERROR", "bridge_node", "e-stop latched: jointbus_cli"]
        text = screen_text(app)
        for expected in (
            "Owner   user_node",
            "DISARMED",
            "LATCHED (jointbus_cli)",
            "fr_j1",
            "communication, motion",
            "e-stop latched",
        ):
            assert expected in text, expected

    run(app, body)


def test_refresh_updates_cells_in_place() -> None:
    clock = FakeClock()
    model = MonitorModel()
    model.on_bridge_data(frame(), clock.now)
    model.on_bridge_state(
        BridgeState(drives_enabled=True, status=("owner: control_node", "mode: run")), clock.now
    )
    app = MonitorApp(model, clock=clock, refresh_s=60.0)  # refreshed by hand below

    async def body(app: MonitorApp) -> None:
        table: DataTable[object] = app.query_one("#joints", DataTable)
        table.move_cursor(row=2)
        assert "Owner   control_node" in screen_text(app)
        assert "ARMED (drives on)" in screen_text(app)
        model.on_bridge_data(frame(shift=1.0), clock.now)
        model.on_bridge_state(
            BridgeState(drives_enabled=True, status=("owner: user_node", "mode: run")), clock.now
        )
        app.refresh_view()
        await asyncio.sleep(0.05)
        assert cells(app, "joints")[0][2] == "+1.050"
        assert table.cursor_row == 2  # rows were updated, not rebuilt
        assert "Owner   user_node" in screen_text(app)

    run(app, body)


def test_a_silent_robot_and_bridge_are_shown_unknown_and_lost_not_as_live() -> None:
    clock = FakeClock()
    model = MonitorModel()
    model.on_bridge_state(
        BridgeState(drives_enabled=True, status=("owner: control_node", "mode: run")), clock.now
    )
    model.on_robot_state(RobotState(motion_mode=MotionMode.STAND), clock.now)
    app = MonitorApp(model, clock=clock, refresh_s=60.0)  # refreshed by hand below

    async def body(app: MonitorApp) -> None:
        assert "Motion  STAND" in screen_text(app)
        clock.now += 2 * S  # the mirrors stopped: their publishers died
        app.refresh_view()
        await asyncio.sleep(0.05)
        text = screen_text(app)
        assert "Motion  STAND" not in text
        assert "UNKNOWN: no RobotState for 2.0 s" in text
        assert "LOST: no BridgeState for 2.0 s" in text

    run(app, body)


def test_app_fed_from_a_real_bus() -> None:
    """End to end: publishers on a bus → MonitorFeed → the app's tables and screen."""
    with Bus(name="monitor-app-test") as bus:
        data_pub = bus.publisher("/hb50/bridge_data", BridgeData, MAB_RT, node="bridge_node")
        state_pub = bus.publisher(
            "/hb50/bridge_state_10hz", BridgeState, RELIABLE, node="bridge_node"
        )
        beat_pub = bus.publisher("/hb50/heartbeat", Status, RELIABLE, node="bridge_node")
        with MonitorFeed(bus, discover_period_s=0.05) as feed:
            app = MonitorApp(MonitorModel(), feed, refresh_s=0.05)

            async def body(app: MonitorApp) -> None:
                data_pub.publish(frame(status=(0, 0, 0, int(JointStatusFlag.HARDWARE_ERROR))))
                state = BridgeState(
                    drives_enabled=True, status=("owner: control_node", "mode: run")
                )
                state_pub.publish(state)
                beat_pub.publish(Status.ok("bridge_node", "alive", b"active"))
                for _ in range(300):  # up to 6 s on a loaded host
                    await asyncio.sleep(0.02)
                    state_pub.publish(state)  # a live bridge's mirror: older than 0.5 s is LOST
                    if app.snapshot is not None and app.snapshot.joints and app.snapshot.nodes:
                        break
                for _ in range(3):  # one more refresh draws it
                    await asyncio.sleep(0.05)
                    state_pub.publish(state)
                joints = cells(app, "joints")
                assert joints[3][0] == "fl_j0" and joints[3][-1] == "hardware"
                topics = [row[0] for row in cells(app, "topics")]
                assert {"/hb50/bridge_data", "/hb50/bridge_state_10hz"} <= set(topics)
                text = screen_text(app)
                assert "Owner   control_node" in text
                assert "bridge_node" in text and "OK" in text

            run(app, body)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_cli_once_prints_a_plain_summary_of_another_process() -> None:
    """``jointbus monitor --once`` in a child process joins this process's bus over Zenoh."""
    port = _free_port()
    with Bus(name="robot", zenoh=ZenohConfig(hub_port=port)) as bus:
        state_pub = bus.publisher(
            "/hb50/bridge_state_10hz", BridgeState, RELIABLE, node="bridge_node"
        )
        beat_pub = bus.publisher("/hb50/heartbeat", Status, RELIABLE, node="bridge_node")
        data_pub = bus.publisher("/hb50/bridge_data", BridgeData, MAB_RT, node="bridge_node")
        tf_pub = bus.publisher("/tf", TFMessage, RELIABLE, node="bridge_node")
        stop = threading.Event()

        def robot() -> None:
            while not stop.wait(0.05):
                tf_pub.publish(TFMessage())
                state_pub.publish(
                    BridgeState(drives_enabled=True, status=("owner: control_node", "mode: run"))
                )
                beat_pub.publish(Status.ok("bridge_node", "alive", b"active"))
                data_pub.publish(frame(status=(0, int(JointStatusFlag.MOTION_ERROR), 0, 0)))

        thread = threading.Thread(target=robot, daemon=True)
        thread.start()
        try:
            result = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "jointbus.cli.main",
                    "monitor",
                    "--once",
                    "--wait",
                    "1.5",
                    "--hub-port",
                    str(port),
                ],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
        finally:
            stop.set()
            thread.join()
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for expected in (
        "owner control_node",
        "mode run",
        "ARMED",
        "e-stop clear",
        "node bridge_node: OK (active",
        "fr_j1",
        "motion",
        "topic /hb50/bridge_state_10hz",
    ):
        assert expected in out, (expected, out)
    # a topic the monitor has no use for is counted too, from when discovery finds it
    assert re.search(r"^topic /tf \[tf2_msgs/msg/TFMessage\] \d+\.\d Hz$", out, re.M), out


# ---- teleoperation inside the monitor ------------------------------------------------------------


class _Twists:
    """Every Twist received, with its arrival time (monotonic s)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.items: list[tuple[float, Twist]] = []

    def __call__(self, msg: Twist) -> None:
        with self.lock:
            self.items.append((time.monotonic(), msg))

    def since(self, t: float) -> list[Twist]:
        with self.lock:
            return [m for s, m in self.items if s >= t]


async def _wait_for(done: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


def _run_teleop(body: Callable[[MonitorApp, Pilot[None], _Twists], Awaitable[None]]) -> _Twists:
    """A monitor whose teleop stream publishes on a real bus; the body drives it with the pilot.
    Returns what a subscriber of /hb50/velocity_command received, the app's exit included."""
    got = _Twists()
    with Bus(name="monitor-teleop-test") as bus:
        bus.subscribe("/hb50/velocity_command", Twist, got, MAB_RT, realtime=True)
        pub = bus.publisher("/hb50/velocity_command", Twist, MAB_RT, node="monitor")
        # released after 1.5 s without a key: long enough that a loaded host's stall between two
        # repeats of a held key does not count as letting go
        stream = TwistStream(pub, TeleopKeys(release=1.5), publish_idle=False)
        app = MonitorApp(MonitorModel(), refresh_s=0.05, teleop=stream)

        async def main() -> None:
            async with app.run_test(size=(150, 50)) as pilot:
                await pilot.pause()
                await body(app, pilot, got)
                await pilot.press("ctrl+q")

        try:
            asyncio.run(main())
        finally:
            stream.close()  # what run_monitor does when the app ends
    return got


def test_teleop_keys_in_the_monitor_drive_velocity_commands_and_stop_on_release_and_exit() -> None:
    marks: dict[str, float] = {}

    async def body(app: MonitorApp, pilot: Pilot[None], got: _Twists) -> None:
        text = screen_text(app)
        assert "Teleop  fwd +0.00" in text and KEY_HELP[:30] in text
        t0 = time.monotonic()
        await asyncio.sleep(0.3)
        assert got.since(t0) == []  # idle: the monitor sends nothing
        marks["held"] = time.monotonic()
        for _ in range(20):  # a held key: the terminal repeats it
            await pilot.press("i")
            await asyncio.sleep(0.05)
        marks["let_go"] = time.monotonic()
        held = got.since(marks["held"])
        assert held and all(m.linear.x == 0.5 and m.linear.z == 0.0 for m in held[1:])
        assert "Teleop  fwd +0.50" in screen_text(app)
        assert await _wait_for(lambda: any(m.linear.x == 0.0 for m in got.since(marks["let_go"])))
        await asyncio.sleep(0.3)
        marks["silent"] = time.monotonic()
        await asyncio.sleep(0.3)
        assert got.since(marks["silent"]) == []  # after the zeros, silence again
        await pilot.press("q")  # teleop's "faster" (×1.1), not the monitor's quit
        assert app.is_running
        await pilot.press("J")  # sideways left at the new scale
        # sideways at the new scale (a loaded host may already have released it: any message)
        assert await _wait_for(
            lambda: any(
                m.linear.y == pytest.approx(0.55) and m.linear.x == 0.0
                for m in got.since(marks["silent"])
            )
        )
        marks["exit"] = time.monotonic()
        await pilot.press("J")  # still held when the monitor quits

    got = _run_teleop(body)
    held = got.since(marks["held"])
    span = [s for s, m in got.items if marks["held"] <= s < marks["let_go"]]
    assert len(span) / (marks["let_go"] - marks["held"]) >= 10.0  # ≥ 10 Hz while held
    assert len(held) > 0
    last = got.since(marks["exit"])[-1]
    assert (last.linear.x, last.linear.y, last.angular.z) == (0.0, 0.0, 0.0)  # zero on exit


def test_losing_focus_sends_the_zero_command_at_once() -> None:
    marks: dict[str, float] = {}

    async def body(app: MonitorApp, pilot: Pilot[None], got: _Twists) -> None:
        await pilot.press("u")  # forward while turning left
        assert await _wait_for(lambda: any(m.angular.z == 0.5 for m in got.since(0.0)))
        marks["blur"] = time.monotonic()
        app.post_message(events.AppBlur())
        await pilot.pause()
        # a command sent just before the blur may still arrive after it (a loaded host): the
        # zero must follow within 0.2 s, and nothing but zeros after it
        def zero_index() -> int | None:
            since = got.since(marks["blur"])
            zeros = [i for i, m in enumerate(since) if (m.linear.x, m.angular.z) == (0.0, 0.0)]
            return zeros[0] if zeros else None

        assert await _wait_for(lambda: zero_index() is not None, 0.2)
        await asyncio.sleep(0.15)
        after = got.since(marks["blur"])[zero_index() or 0 :]
        assert after and all((m.linear.x, m.angular.z) == (0.0, 0.0) for m in after)

    _run_teleop(body)


def test_ctrl_e_latches_the_robots_estop() -> None:
    """An always-running session is the fast software e-stop: no process to start, the bus is open
    (``jointbus estop`` needs seconds to start on a loaded host, docs/SAFETY.md). Ctrl+E, because
    a plain ``e`` is teleop's "turning faster" key."""
    with Bus(name="monitor-estop-test") as bus:
        sent: list[String] = []
        bus.subscribe("/hb50/hardware_command", String, sent.append, RELIABLE, realtime=True)
        with MonitorFeed(bus, discover_period_s=0.05) as feed:
            app = MonitorApp(MonitorModel(), feed, refresh_s=0.05)

            async def body(app: MonitorApp) -> None:
                await app.run_action("estop")
                for _ in range(50):
                    if sent:
                        break
                    await asyncio.sleep(0.02)
                assert [m.data for m in sent] == ["estop monitor"]
                assert any(
                    isinstance(b, Binding) and (b.key, b.action) == ("ctrl+e", "estop")
                    for b in app.BINDINGS
                )

            run(app, body)


def test_ctrl_e_latches_a_served_arrays_estop() -> None:
    """A served array (``jointbus serve``) has no ``hardware_command``: its e-stop is the
    ``/<ns>/estop`` service, which Ctrl+E calls too (drives off, refusals until a reset)."""
    from jointbus import drivers
    from jointbus.nodes.array import ArrayNode

    with drivers.open("sim://arm6?noise=false") as array, Bus(name="monitor-array-estop") as bus:
        node = ArrayNode(array, bus, namespace="myarm")
        node.start()
        try:
            with MonitorFeed(bus, namespace="myarm", discover_period_s=0.05) as feed:
                app = MonitorApp(MonitorModel(), feed, refresh_s=0.05)

                async def body(app: MonitorApp) -> None:
                    assert not node.estopped
                    await app.run_action("estop")
                    for _ in range(100):
                        if node.estopped:
                            break
                        await asyncio.sleep(0.02)
                    assert node.estopped
                    assert node.estop.reason == "monitor"

                run(app, body)
        finally:
            node.shutdown()


# The demo's topics with their types (as `jointbus info` lists a recording of it).
DEMO_TOPICS = {
    "/hb50/bridge_data": "hb50_commons/msg/BridgeData",
    "/hb50/bridge_data_10hz": "hb50_commons/msg/BridgeData",
    "/hb50/bridge_state": "hb50_commons/msg/BridgeState",
    "/hb50/bridge_state_10hz": "hb50_commons/msg/BridgeState",
    "/hb50/diagnostics": "jointbus_msgs/msg/LoopDiagnostics",
    "/hb50/heartbeat": "hb50_commons/msg/Status",
    "/hb50/joint_command": "hb50_commons/msg/JointCommand",
    "/hb50/parameters": "jointbus_msgs/msg/ParameterList",
    "/hb50/robot_state_10hz": "hb50_commons/msg/RobotState",
    "/hb50/sim/ground_truth": "nav_msgs/msg/Odometry",
    "/tf_static": "tf2_msgs/msg/TFMessage",
}


@pytest.mark.parametrize("size", [(160, 48), (120, 40)])
def test_topic_rates_are_visible_in_a_terminal_of_common_size(size: tuple[int, int]) -> None:
    """In tmux at 160 columns only a "P" column of the topics panel was visible: every topic's
    name and measured rate must be on screen at 160×48 and 120×40, with the hb50's 12 joints."""
    clock = FakeClock()
    model = MonitorModel()
    names = tuple(f"{leg}_j{k}" for leg in ("fr", "fl", "rr", "rl") for k in range(3))
    model.on_bridge_data(
        BridgeData(
            Header.now("body"),
            joint_name=names,
            joint_position=[0.1] * 12,
            joint_velocity=[0.0] * 12,
            joint_effort=[0.0] * 12,
            joint_temperature=bytes([30] * 12),
            joint_status=[0] * 12,
        ),
        clock.now,
    )
    model.on_bridge_state(BridgeState(drives_enabled=True, status=("owner: control_node",)), 0)
    model.on_heartbeat(Status.ok("bridge_node", "alive", b"active"), clock.now)
    model.on_heartbeat(Status.ok("control_node", "alive", b"active"), clock.now)
    model.set_topics(
        TopicInfo(name, (type_name,), (), ()) for name, type_name in DEMO_TOPICS.items()
    )
    rates = {name: 10.0 + 37 * i for i, name in enumerate(DEMO_TOPICS)}
    for name, rate in rates.items():
        model.count(name, 0, clock.now - S)
        model.count(name, round(rate), clock.now)
    app = MonitorApp(model, clock=clock)

    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            lines = screen_text(app).splitlines()
            for name, rate in rates.items():
                shown = [line for line in lines if f" {name} " in line]
                assert shown, f"{name} not on screen at {size}:\n" + "\n".join(lines)
                assert f"{rate:.1f} Hz" in shown[0], f"{name}'s rate not visible: {shown[0]!r}"
            await pilot.press("ctrl+q")

    asyncio.run(main())


def test_a_replayed_node_is_shown_replayed_under_a_replay_line_not_ok() -> None:
    """A heartbeat stamped 42.3 s before it arrived (``jointbus play`` of a recording) showed the
    node OK in green, as a live robot; now the panel's first line says REPLAY and the node's
    state reads REPLAYED."""
    clock = FakeClock()
    model = MonitorModel()
    wall = time.time_ns()
    stamp = Header.at_ns(wall - 42_300_000_000)  # 42.3 s before it arrives
    recorded = Status.ok("array_node", "alive", b"active", header=stamp)
    model.on_heartbeat(recorded, clock.now, wall_ns=wall)
    app = MonitorApp(model, clock=clock, refresh_s=60.0)

    async def body(app: MonitorApp) -> None:
        text = screen_text(app)
        # (the panel wraps the rest of the line)
        assert "REPLAY, not a live robot: the heartbeats of array_node are stamped 42.3" in text
        assert cells(app, "nodes")[0][:2] == ["array_node", "REPLAYED"], cells(app, "nodes")

    run(app, body)
