"""The terminal monitor: a textual app drawing a :class:`MonitorModel` ten times a second.

Where it sits: the top of :mod:`jointbus.tools.monitor`; ``jointbus monitor`` and the demo (when
run in a terminal) call :func:`run_monitor`. All it does is lay out and format: the data and every
decision about it live in :mod:`.model`, the bus side in :mod:`.feed`.

Layout, top to bottom: a **bridge** panel (command owner, mode, arming, e-stop, thermal and other
bridge strings, the control node's motion mode) beside the **nodes** table (heartbeat state,
lifecycle, seconds since the last heartbeat); the **joints** table (one row per actuator:
position, velocity, effort, temperature and the decoded quick-status flags, errors in red); the
**topics** table (measured rate, publishers, short type name — in that order, so that the rate
stays visible in a 120-column terminal) beside the latest **events** of the status
topic; the **teleop** line (the velocity command the keys send now, and the keys); the footer.

Teleoperation (when the app has a :class:`~jointbus.tools.teleop_keys.TwistStream`, as
:func:`run_monitor` gives it): ``teleop_twist_keyboard``'s keys drive ``/<ns>/velocity_command``
exactly as ``jointbus teleop`` does (:mod:`jointbus.tools.teleop_keys`: ≥ 10 Hz while a key is
held, zero when it is released). The app also sends the zero command when the terminal loses focus
(textual's ``AppBlur``, where the terminal reports focus) and when it exits. Because ``q`` is
teleop's "faster", the monitor quits with **Ctrl+Q** (textual's own quit key) or Ctrl+C; no other
monitor key clashes with the teleop keys (the tables use the arrow keys).

Each refresh (``refresh_s``, default 0.1 s) polls the feed, takes a snapshot and updates only the
table cells that changed, so the cursor and scroll position survive refreshes.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import ClassVar, Final

from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.widgets import DataTable, Footer, Header, Static

from jointbus.bus import MAB_RT, Bus
from jointbus.messages.geometry_msgs import Twist
from jointbus.robots.hb50.messages import Level
from jointbus.tools.monitor.feed import MonitorFeed
from jointbus.tools.monitor.model import (
    ArraySummary,
    MonitorModel,
    MonitorSnapshot,
    NodeState,
    fmt_float,
)
from jointbus.tools.teleop_keys import KEY_HELP, TELEOP_KEYS, TwistStream

__all__ = ["MonitorApp", "run_monitor"]

_JOINT_COLUMNS: Final = (
    ("joint", "Joint"),
    ("index", "#"),
    ("position", "Position rad"),
    ("velocity", "Velocity rad/s"),
    ("effort", "Effort N·m"),
    ("temperature", "Temp °C"),
    ("flags", "Status flags"),
)
_NODE_COLUMNS: Final = (
    ("node", "Node"),
    ("state", "State"),
    ("lifecycle", "Lifecycle"),
    ("age", "Last beat"),
)
# Rate right after the name and the type last, by its short name: a topics panel of 46 columns
# (120-column terminal) shows name, rate and publishers; the type is what gets cut off.
_TOPIC_COLUMNS: Final = (("topic", "Topic"), ("rate", "Rate"), ("pubs", "Pubs"), ("type", "Type"))
_EVENT_COLUMNS: Final = (("time", "Time"), ("level", "Level"), ("node", "Node"), ("text", "Event"))
_LEVEL_STYLE: Final = {
    Level.OK: "green",
    Level.WARN: "yellow",
    Level.ERROR: "bold red",
    Level.STALE: "magenta",
}

Row = tuple[str, tuple[str | Text, ...]]


class MonitorApp(App[None]):
    """Draws ``model`` (polling ``feed`` first when given) every ``refresh_s`` seconds.

    ``clock`` is the monotonic clock in ns used for ages and rates (a test may inject one).
    ``teleop``: the stream the teleop keys drive (None: the keys do nothing, the line says so).
    """

    TITLE = "jointbus monitor"
    CSS = """
    #top { height: auto; max-height: 14; }
    #bridge { width: 1fr; height: auto; padding: 0 1; border: round $accent; }
    #nodes { width: 1fr; height: auto; max-height: 14; border: round $accent; }
    #joints { height: auto; border: round $accent; }
    #bottom { height: 1fr; min-height: 8; }
    #topics { width: 2fr; height: 1fr; border: round $accent; }
    #events { width: 3fr; height: 1fr; border: round $accent; }
    #teleop { height: auto; padding: 0 1; }
    """
    # q is teleop's "faster": quit is Ctrl+Q (textual's default, shown here) or Ctrl+C.
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "Quit", priority=True),
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
        # Ctrl+E, not teleop's e ("turning faster"): latching the e-stop must be deliberate.
        Binding("ctrl+e", "estop", "E-stop", priority=True),
    ]

    def __init__(
        self,
        model: MonitorModel,
        feed: MonitorFeed | None = None,
        *,
        refresh_s: float = 0.1,
        clock: Callable[[], int] = time.monotonic_ns,
        subtitle: str = "",
        teleop: TwistStream | None = None,
    ) -> None:
        super().__init__()
        self.teleop = teleop
        self.model = model
        self.feed = feed
        self.refresh_s = refresh_s
        self.clock = clock
        self.sub_title = subtitle
        self.snapshot: MonitorSnapshot | None = None
        self._keys: dict[str, list[str]] = {}

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="top"):
            yield Static(id="bridge")
            yield DataTable(id="nodes", cursor_type="row", show_cursor=False)
        yield DataTable(id="joints", cursor_type="row", zebra_stripes=True)
        with Horizontal(id="bottom"):
            yield DataTable(id="topics", cursor_type="row", show_cursor=False)
            yield DataTable(id="events", cursor_type="row", show_cursor=False)
        yield Static(id="teleop")
        yield Footer()

    def on_mount(self) -> None:
        for table_id, columns, title in (
            ("joints", _JOINT_COLUMNS, "Joints"),
            ("nodes", _NODE_COLUMNS, "Nodes"),
            ("topics", _TOPIC_COLUMNS, "Topics"),
            ("events", _EVENT_COLUMNS, "Events (newest first)"),
        ):
            table = self.query_one(f"#{table_id}", DataTable)
            table.border_title = title
            for key, label in columns:
                table.add_column(label, key=key)
        self.query_one("#bridge", Static).border_title = "Bridge"
        self.refresh_view()
        self.set_interval(self.refresh_s, self.refresh_view)

    def action_estop(self) -> None:
        """Ctrl+E: latch the robot's e-stop through the feed's open bus. Why here: a session that is
        already running sends at once, while ``jointbus estop`` must first start (seconds on a
        loaded host, docs/SAFETY.md). The latch shows in the Bridge panel (``mode: estop``) when
        the bridge confirms it; ``jointbus estop --reset`` re-arms, as ever."""
        if self.feed is None:
            self.notify("no bus: e-stop NOT sent", severity="error")
            return
        self.feed.send_estop()
        watch = (
            "the Array panel for power off"
            if self.snapshot is not None and self.snapshot.array is not None
            else "the Bridge panel for mode: estop"
        )
        self.notify(f"e-stop sent: watch {watch}", severity="warning")

    # ---- refresh ------------------------------------------------------------------------------

    def refresh_view(self) -> None:
        """Poll the feed, snapshot the model and redraw what changed."""
        if not self.screen.query("#bridge"):
            return  # the app is ending: its widgets are gone while the interval still fires
        now = self.clock()
        if self.feed is not None:
            self.feed.poll(self.model, now)
        snap = self.model.snapshot(now)
        self.snapshot = snap
        panel = self.query_one("#bridge", Static)
        if snap.array is not None:
            panel.border_title = "Array"
            body = _array_text(snap.array)
        else:
            panel.border_title = "Bridge"
            body = _bridge_text(snap)
        if snap.replay_text:  # played back, not live: said above everything the panel shows
            body = Text.assemble((snap.replay_text, "bold black on yellow"), "\n", body)
        panel.update(body)
        self._sync("joints", _joint_rows(snap))
        self._sync("nodes", _node_rows(snap))
        self._sync("topics", _topic_rows(snap))
        self._sync("events", _event_rows(snap))
        joints = self.query_one("#joints", DataTable)
        age = "no data yet" if snap.data_age_s is None else f"data {snap.data_age_s:.1f} s old"
        joints.border_subtitle = age
        self.query_one("#teleop", Static).update(_teleop_text(self.teleop))

    # ---- teleoperation ------------------------------------------------------------------------

    def on_key(self, event: events.Key) -> None:
        """A teleop key (by character: ``,`` and ``<`` have key names of their own) drives the
        stream; other keys go on to the bindings."""
        if self.teleop is None or event.character not in TELEOP_KEYS:
            return
        event.stop()
        event.prevent_default()
        self.teleop.press(event.character)
        self.query_one("#teleop", Static).update(_teleop_text(self.teleop))

    def on_app_blur(self, _event: events.AppBlur) -> None:
        """The terminal lost focus: no key can be released any more, so stop now."""
        if self.teleop is not None:
            self.teleop.release()

    def _sync(self, table_id: str, rows: Sequence[Row]) -> None:
        table: DataTable[str | Text] = self.query_one(f"#{table_id}", DataTable)
        keys = [key for key, _ in rows]
        if keys != self._keys.get(table_id):
            table.clear()
            for key, cells in rows:
                table.add_row(*cells, key=key)
            self._keys[table_id] = keys
            return
        columns = [column.key for column in table.ordered_columns]
        for key, cells in rows:
            for column, cell in zip(columns, cells, strict=True):
                if table.get_cell(key, column) != cell:
                    table.update_cell(key, column, cell)


# ---- formatting (pure functions of the snapshot) ------------------------------------------


def _teleop_text(teleop: TwistStream | None) -> Text:
    text = Text()
    text.append("Teleop  ", style="bold")
    if teleop is None:
        text.append("off (no velocity command publisher)", style="dim")
        return text
    text.append(teleop.describe())
    text.append(f"  {KEY_HELP}; Ctrl+Q quit", style="dim")
    return text


def _bridge_text(snap: MonitorSnapshot) -> Text:
    text = Text()
    bridge = snap.bridge
    if bridge is None:
        text.append("no BridgeState yet", style="dim")
    elif bridge.stale:
        text.append(f"LOST: no BridgeState for {bridge.age_s:.1f} s", style="bold white on red")
        text.append(f"\n(last said owner {bridge.owner or '?'}, mode {bridge.mode or '?'})")
    else:
        text.append("Owner   ", style="bold")
        owner = snap.owner_text
        text.append(owner, style="yellow" if owner != (bridge.owner or "?") else "")
        text.append("\nMode    ", style="bold")
        text.append(bridge.mode or "?")
        text.append("\nArming  ", style="bold")
        text.append(
            f"{bridge.arming} (drives {'on' if bridge.drives_enabled else 'off'})",
            style="green" if bridge.drives_enabled else "yellow",
        )
        text.append("\nE-stop  ", style="bold")
        text.append(bridge.estop, style="bold white on red" if bridge.estop_latched else "green")
        text.append("\nUp      ", style="bold")
        text.append(f"{bridge.up_time_s} s (state {bridge.age_s:.1f} s old)")
        for line in bridge.thermal:
            text.append(f"\n{line}", style="yellow")
        for line in bridge.other:
            text.append(f"\n{line}")
    robot = snap.robot
    if robot is not None and robot.stale and not robot.received:
        text.append("\nMotion  ", style="bold")
        text.append(f"UNKNOWN: {robot.unknown_text}", style="bold red")
    elif robot is not None and robot.stale:
        text.append("\nMotion  ", style="bold")
        text.append(f"UNKNOWN: no RobotState for {robot.age_s:.1f} s", style="bold red")
        text.append(f" (last said {robot.motion_mode})", style="dim")
    elif robot is None:
        text.append("\nMotion  ", style="bold")
        text.append("no RobotState yet", style="dim")
    else:
        text.append("\nMotion  ", style="bold")
        text.append(f"{robot.motion_mode} / {robot.motion_type} / gait {robot.motion_gait}")
    return text


def _array_text(array: ArraySummary) -> Text:
    text = Text()
    if array.stale:
        text.append(f"LOST: no joint_state for {array.age_s:.1f} s", style="bold white on red")
        text.append("\n(the joint values shown are the last ones)")
        return text
    text.append("Joints  ", style="bold")
    text.append(str(len(array.joints)))
    text.append("\nPower   ", style="bold")
    if array.motor_power is None:
        text.append("unknown (no actarray/data)", style="dim")
    else:
        text.append(
            "on" if array.motor_power else "off",
            style="green" if array.motor_power else "yellow",
        )
    text.append("\nState   ", style="bold")
    text.append(f"joint_state {array.age_s:.1f} s old")
    return text


def _array_joint_rows(array: ArraySummary) -> list[Row]:
    rows: list[Row] = []
    for j in array.joints:
        single = not j.pose and j.kind.name == "SINGLE_DOF"
        hot = not math.isnan(j.temperature) and j.temperature >= 80
        rows.append(
            (
                j.name,
                (
                    j.name,
                    str(j.index),
                    fmt_float(j.position, 3) if single else j.pose or "n/a",
                    fmt_float(j.velocity, 3) if single else "",
                    fmt_float(j.effort, 2) if single else "",
                    Text(
                        "n/a" if math.isnan(j.temperature) else f"{j.temperature:.0f}",
                        style="yellow" if hot else "",
                    ),
                    Text(j.state or "-", style="bold red" if j.has_error else "green"),
                ),
            )
        )
    return rows


def _joint_rows(snap: MonitorSnapshot) -> list[Row]:
    if snap.array is not None:
        return _array_joint_rows(snap.array)
    rows: list[Row] = []
    for j in snap.joints:
        hot = j.temperature >= 80
        rows.append(
            (
                j.name,
                (
                    j.name,
                    str(j.index),
                    fmt_float(j.position, 3),
                    fmt_float(j.velocity, 3),
                    fmt_float(j.effort, 2),
                    Text(str(j.temperature), style="yellow" if hot else ""),
                    Text(j.flags, style="bold red" if j.has_error else "green"),
                ),
            )
        )
    return rows


def _node_rows(snap: MonitorSnapshot) -> list[Row]:
    styles = {
        NodeState.OK: "green",
        NodeState.STALE: "bold red",
        NodeState.SHUTDOWN: "dim",
        NodeState.REPLAYED: "bold yellow",
    }
    return [
        (
            node.name,
            (
                node.name,
                Text(node.state.value, style=styles[node.state]),
                node.lifecycle or "?",
                "never seen" if node.age_s is None else f"{node.age_s:.1f} s ago",
            ),
        )
        for node in snap.nodes
    ]


def _topic_rows(snap: MonitorSnapshot) -> list[Row]:
    return [
        (
            topic.name,
            (
                topic.name,
                topic.rate_text,
                str(topic.publishers),
                topic.type_name.rsplit("/", 1)[-1],  # BridgeData, not hb50_commons/msg/...
            ),
        )
        for topic in snap.topics
    ]


def _event_rows(snap: MonitorSnapshot) -> list[Row]:
    rows: list[Row] = []
    for i, event in enumerate(snap.events):
        stamp = (
            datetime.fromtimestamp(event.stamp_ns / 1e9).strftime("%H:%M:%S")
            if event.stamp_ns
            else "-"
        )
        rows.append(
            (
                f"{len(snap.events) - i}:{event.stamp_ns}:{event.node}",
                (
                    stamp,
                    Text(event.level.name, style=_LEVEL_STYLE.get(event.level, "")),
                    event.node,
                    event.text,
                ),
            )
        )
    return rows


def run_monitor(
    bus: Bus,
    *,
    namespace: str = "hb50",
    refresh_s: float = 0.1,
    discover_period_s: float = 2.0,
    duration: float | None = None,
    stop: threading.Event | None = None,
    state_node: str = "",
) -> None:
    """Run the monitor on ``bus`` in this terminal until the user quits (Ctrl+Q or Ctrl+C),
    ``duration`` seconds pass, or ``stop`` is set (from a signal handler, for example).

    The teleop keys publish ``/<namespace>/velocity_command`` (see the module docstring); the zero
    command is sent when the app ends, however it ends. ``state_node``: the node that publishes
    ``RobotState`` (:class:`~jointbus.tools.monitor.model.MonitorModel`)."""
    model = MonitorModel(state_node=state_node)
    ns = namespace.strip("/")
    velocity = bus.publisher(f"/{ns}/velocity_command", Twist, MAB_RT, node="monitor")
    with (
        MonitorFeed(bus, namespace=namespace, discover_period_s=discover_period_s) as feed,
        TwistStream(velocity, publish_idle=False) as teleop,
    ):
        app = MonitorApp(model, feed, refresh_s=refresh_s, subtitle=f"/{namespace}", teleop=teleop)
        ended = threading.Event()
        stop = stop if stop is not None else threading.Event()

        def watch() -> None:
            # Ends the app from outside its event loop: at the deadline or when asked to stop.
            deadline = None if duration is None else time.monotonic() + duration
            while not ended.is_set():
                left = None if deadline is None else deadline - time.monotonic()
                if (left is not None and left <= 0) or stop.wait(
                    0.1 if left is None else min(0.1, left)
                ):
                    with contextlib.suppress(RuntimeError):  # the app already ended
                        app.call_from_thread(app.exit)
                    return

        threading.Thread(target=watch, name="monitor-stop", daemon=True).start()
        try:
            app.run()
        finally:
            ended.set()
