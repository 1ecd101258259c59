"""The live view: a Foxglove WebSocket server showing every bus topic and the robot in 3-D.

Where it sits: :mod:`jointbus.tools`, beside the nodes — above :mod:`jointbus.bus` (which it
observes), :mod:`jointbus.messages` (schemas) and :mod:`jointbus.model` (URDF and kinematics).
``jointbus foxglove`` is a thin wrapper around :class:`FoxgloveView`; open Foxglove and connect to
``ws://127.0.0.1:8765``.

What a Foxglove client sees:

- **every bus topic** — local ones and, with Zenoh attached, those of other processes, typed
  through :func:`jointbus.tools.known_types.known_registry` (so the nodes' diagnostics and
  parameter lists, and every bundled robot's messages, are shown too) — as a
  channel of the same name, ``cdr`` encoding, the ``ros2msg`` schema from the message class's
  ``msgdef()`` (the schema name is the ROS 2 type name, ``hb50_commons/msg/BridgeData``): Foxglove
  decodes ROS 2 CDR natively, so no JSON conversion is needed and the bytes are the bus's own.
  Topics that appear later are advertised when the next scan (``scan_period_s``) finds them, and
  topics whose last publisher is gone are unadvertised;
- **``/robot_description``** — the URDF generated from the robot model, as ``std_msgs/msg/String``
  (what ROS 2's ``robot_state_publisher`` publishes, transient-local): the 3-D panel's URDF layer
  reads it with the *Topic* source. Foxglove has no latched channels, so the description is sent
  again each time a client subscribes. It is also the ``robot_description`` parameter (the
  *Parameter* source);
- **``/joint_states``** (``sensor_msgs/msg/JointState``), **``/tf``** and **``/tf_static``**
  (``tf2_msgs/msg/TFMessage``), derived from ``/<ns>/bridge_data``: one transform per joint, parent
  link → child link, as ``robot_state_publisher`` computes them (fixed joints on ``/tf_static``).
  The tree is rooted at the model's root link (``body`` for the quadruped); a joint whose
  position is not reported (NaN) keeps its last reported angle. These are published at most
  ``derived_rate_hz`` (default 50 Hz): enough for the eye, and forward kinematics in Python costs
  a few tens of microseconds a frame.

The view only *fills in* what the bus lacks: while a bus topic of one of those four names has a
publisher — the control node publishes ``/tf`` (with the ``odom → body`` pose) and ``/tf_static``
— the bus topic is shown under that name and the view's own channel is withdrawn; it comes back
when the publisher goes. So the 3-D panel works with the bridge alone and is exact with the
control node running.

Cost when nobody watches: nothing. A bus subscription exists only while at least one Foxglove
client is subscribed to the channel (the server tells us through its listener), so an unobserved
500 Hz topic is never delivered to the view in-process and, over Zenoh, never encoded by its
publisher. Each message is encoded **once** (``to_cdr()``) whatever the number of clients, and
only while the channel has a subscriber (``Channel.has_sinks``). Bus subscriptions are
best-effort, which every publisher's QoS can serve, with a 64-deep queue on the view's own
dispatcher thread, so a slow client never delays a control loop; transient-local topics are
subscribed transient-local, so a client also receives their history.

Threads: the SDK's server threads (which only *request* subscription changes from their
listener callbacks: bus calls are never made from inside the SDK), one ``foxglove-view`` thread
that applies those requests and scans the topic list, and one dispatcher thread that forwards
messages. Log times are the wall-clock receive time (ns since the epoch), as ``foxglove_bridge``
stamps them.

Clients: the SDK's server accepts the WebSocket subprotocol ``foxglove.sdk.v1`` (and
``foxglove.sdk.v1.1``) only, with no option for the older name ``foxglove.websocket.v1`` of the
same protocol; a client that offers only the old name gets HTTP 400 "Missing expected
sec-websocket-protocol header" (the README lists which clients work). Since the answer cannot
name what the server accepts, the view does on its side: every refused handshake, which the SDK
logs as "handshake failed", is turned into a call of ``on_client_refused`` with a message naming
the client and :data:`ACCEPTED_SUBPROTOCOLS` (and the SDK's own bare line is not printed).

``on_listening(url)`` is called as soon as the server listens, before the first scan of the bus
(which can take seconds on a loaded host or a large graph): a command prints its "live view on
ws://…" line there, not after the scan.

Only ``127.0.0.1`` is bound by default: the server accepts any client that can reach it and has no
authentication, so exposing it on a robot's network is an explicit choice (``host=``).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

import foxglove
import numpy as np
import numpy.typing as npt
from foxglove.websocket import Capability, ChannelView, Client, ServerListener

from jointbus.bus import MAB_RT, Bus, Dispatcher, QosProfile, Subscriber, TopicInfo
from jointbus.bus.qos import Durability, Reliability
from jointbus.messages.base import Message
from jointbus.messages.geometry_msgs import Quaternion as QuaternionMsg
from jointbus.messages.geometry_msgs import Transform as TransformMsg
from jointbus.messages.geometry_msgs import TransformStamped, Vector3
from jointbus.messages.registry import TypeRegistry, UnknownTypeError
from jointbus.messages.sensor_msgs import JointState
from jointbus.messages.std_msgs import Header, String
from jointbus.messages.tf2_msgs import TFMessage
from jointbus.model.joint import JointType
from jointbus.model.kinematics import Kinematics
from jointbus.model.robot import RobotModel
from jointbus.robots.hb50.messages import BridgeData
from jointbus.tools.errors import ToolError
from jointbus.tools.known_types import known_registry

__all__ = [
    "ACCEPTED_SUBPROTOCOLS",
    "DEFAULT_DERIVED_RATE_HZ",
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "DERIVED_TOPICS",
    "JOINT_STATES_TOPIC",
    "ROBOT_DESCRIPTION_TOPIC",
    "SDK_SERVER_LOGGER",
    "TF_STATIC_TOPIC",
    "TF_TOPIC",
    "FoxgloveView",
    "FoxgloveViewError",
    "JointFrame",
    "JointFrames",
    "refused_client_text",
    "tf_message",
]

_LOG = logging.getLogger("jointbus.tools.foxglove_view")
#: The logger the SDK's WebSocket server reports through (bridged from Rust to Python logging).
SDK_SERVER_LOGGER: Final = "foxglove.websocket.server"
#: The WebSocket subprotocols the SDK's server accepts.
ACCEPTED_SUBPROTOCOLS: Final = ("foxglove.sdk.v1", "foxglove.sdk.v1.1")


def refused_client_text(client: str) -> str:
    """What a refused handshake means, naming what the server accepts (see the module
    docstring)."""
    return (
        f"Foxglove client {client} refused (HTTP 400): this server speaks the WebSocket "
        f"subprotocol {' or '.join(ACCEPTED_SUBPROTOCOLS)}; a client that offers only the older "
        "name foxglove.websocket.v1 (older Foxglove Studio, Lichtblick and bridges' clients) "
        "cannot connect — use a client that offers foxglove.sdk.v1"
    )


class _RefusedHandshakes(logging.Filter):
    """On the SDK server's logger: turns "Dropping client ADDR: handshake failed" into a call of
    ``report`` with :func:`refused_client_text`, and drops the SDK's bare line."""

    def __init__(self, report: Callable[[str], None]) -> None:
        super().__init__()
        self._report = report

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if "handshake failed" not in message:
            return True
        client = message.removeprefix("Dropping client ").split(": handshake failed", 1)[0]
        try:
            self._report(refused_client_text(client))
        except Exception:
            _LOG.exception("foxglove view: reporting a refused client failed")
        return False

#: Loopback only, unless the caller asks otherwise (see the module docstring).
DEFAULT_HOST: Final = "127.0.0.1"
#: Foxglove's default WebSocket port.
DEFAULT_PORT: Final = 8765
#: Upper bound of the derived ``/joint_states`` and ``/tf`` rate (Hz).
DEFAULT_DERIVED_RATE_HZ: Final = 50.0
ROBOT_DESCRIPTION_TOPIC: Final = "/robot_description"
JOINT_STATES_TOPIC: Final = "/joint_states"
TF_TOPIC: Final = "/tf"
TF_STATIC_TOPIC: Final = "/tf_static"
#: Channels the view makes from the robot model, and their types; each only while no bus topic of
#: that name has a publisher (the bus's own, e.g. the control node's ``/tf``, is shown instead).
DERIVED_TOPICS: Final[dict[str, type[Message]]] = {
    ROBOT_DESCRIPTION_TOPIC: String,
    JOINT_STATES_TOPIC: JointState,
    TF_TOPIC: TFMessage,
    TF_STATIC_TOPIC: TFMessage,
}
#: The view's node name on the bus (its own subscriptions are not "topics to show").
_NODE: Final = "foxglove_view"
_QUEUE_DEPTH: Final = 64
_NS_PER_S: Final = 1_000_000_000
#: Configuration entries of the multi-DoF joint types (as :mod:`jointbus.model.kinematics`).
_NQ: Final = {JointType.PLANAR: 3, JointType.FLOATING: 7}


class FoxgloveViewError(ToolError):
    """The live view could not start (port taken, bad option) or was used after closing."""


# ---- forward kinematics → transforms ------------------------------------------------------------


class JointFrames:
    """Per-joint transforms (parent link → child link) of ``model`` at given joint positions.

    What ``robot_state_publisher`` computes from ``/joint_states``: for every moving joint, the
    joint origin composed with its motion; fixed joints are constant (:meth:`static`). Positions
    are matched by joint name; a joint absent from the input or reported as NaN keeps its last
    value (0 rad / 0 m before the first report), so the robot is never drawn with a made-up jump.
    """

    def __init__(self, model: RobotModel) -> None:
        self.model = model
        self._kin = Kinematics(model)
        moving = {j.name for j in model.moving_joints()}
        self._q = self._kin.zero_q()
        self._q_index = self._single_q_indices()
        links = self._kin.link_names
        index = {name: i for i, name in enumerate(links)}
        joints = model.tree_order
        self._moving = [(j.parent, j.child) for j in joints if j.name in moving]
        self._fixed = [(j.parent, j.child) for j in joints if j.name not in moving]
        self._moving_idx = (
            np.array([index[p] for p, _ in self._moving], dtype=np.intp),
            np.array([index[c] for _, c in self._moving], dtype=np.intp),
        )
        self._fixed_idx = (
            np.array([index[p] for p, _ in self._fixed], dtype=np.intp),
            np.array([index[c] for _, c in self._fixed], dtype=np.intp),
        )

    def _single_q_indices(self) -> dict[str, int]:
        """Index in the flat configuration of each single-DoF joint's value."""
        out: dict[str, int] = {}
        offset = 0
        for joint in self.model.moving_joints():
            if joint.dof == 1:
                out[joint.name] = offset
            offset += _NQ.get(joint.type, 1)
        return out

    @property
    def root(self) -> str:
        """The root link: the frame every transform tree here hangs from."""
        return self.model.root

    def update(self, names: Iterable[str], positions: Iterable[float]) -> None:
        """Take the reported positions (rad or m) of single-DoF joints; others are ignored."""
        q = self._q
        q_index = self._q_index
        for name, value in zip(names, positions, strict=False):
            k = q_index.get(name)
            if k is not None and math.isfinite(value):
                q[k] = value

    def moving(self) -> list[JointFrame]:
        """The frame of every moving joint at the current values, in tree order."""
        return self._relative(self._moving, self._moving_idx)

    def static(self) -> list[JointFrame]:
        """The frame of every fixed joint."""
        return self._relative(self._fixed, self._fixed_idx)

    def _relative(
        self,
        pairs: list[tuple[str, str]],
        idx: tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]],
    ) -> list[JointFrame]:
        if not pairs:
            return []
        frames = self._kin.frames(self._q)
        parent, child = frames[idx[0]], frames[idx[1]]
        # parent⁻¹ · child, with the rigid inverse (Rᵀ, −Rᵀt): exact and cheaper than inv().
        rot_t = np.swapaxes(parent[:, :3, :3], 1, 2)
        rotation = rot_t @ child[:, :3, :3]
        translation = np.einsum("nij,nj->ni", rot_t, child[:, :3, 3] - parent[:, :3, 3])
        quats = _quaternions(rotation)
        return [
            JointFrame(p, c, (t[0], t[1], t[2]), (q[0], q[1], q[2], q[3]))
            for (p, c), t, q in zip(pairs, translation.tolist(), quats.tolist(), strict=True)
        ]


class JointFrame(NamedTuple):
    """One joint's transform: ``child`` link pose in the ``parent`` link frame.

    ``translation`` (x, y, z) in m; ``rotation`` a unit quaternion (x, y, z, w), the order of
    ``geometry_msgs/Quaternion``.
    """

    parent: str
    child: str
    translation: tuple[float, float, float]
    rotation: tuple[float, float, float, float]


def _quaternions(r: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Unit quaternions (x, y, z, w) of a stack of rotation matrices ``(n, 3, 3)``.

    Shepperd's method, vectorised: each matrix uses the formula built on its largest of
    ``w², x², y², z²``, so no component is taken from the square root of a tiny difference
    (which would lose half the digits). ``w ≥ 0``.
    """
    m00, m11, m22 = r[:, 0, 0], r[:, 1, 1], r[:, 2, 2]
    d21, d02, d10 = r[:, 2, 1] - r[:, 1, 2], r[:, 0, 2] - r[:, 2, 0], r[:, 1, 0] - r[:, 0, 1]
    s01, s02, s12 = r[:, 0, 1] + r[:, 1, 0], r[:, 0, 2] + r[:, 2, 0], r[:, 1, 2] + r[:, 2, 1]
    big = np.stack(
        [m00 + m11 + m22, m00 - m11 - m22, m11 - m00 - m22, m22 - m00 - m11], axis=1
    ).argmax(axis=1)
    out = np.empty((len(r), 4))
    for case in range(4):
        sel = big == case
        if not sel.any():
            continue
        if case == 0:
            w = 0.5 * np.sqrt(1.0 + m00[sel] + m11[sel] + m22[sel])
            f = 0.25 / w
            out[sel] = np.stack([d21[sel] * f, d02[sel] * f, d10[sel] * f, w], axis=1)
        elif case == 1:
            x = 0.5 * np.sqrt(1.0 + m00[sel] - m11[sel] - m22[sel])
            f = 0.25 / x
            out[sel] = np.stack([x, s01[sel] * f, s02[sel] * f, d21[sel] * f], axis=1)
        elif case == 2:
            y = 0.5 * np.sqrt(1.0 - m00[sel] + m11[sel] - m22[sel])
            f = 0.25 / y
            out[sel] = np.stack([s01[sel] * f, y, s12[sel] * f, d02[sel] * f], axis=1)
        else:
            z = 0.5 * np.sqrt(1.0 - m00[sel] - m11[sel] + m22[sel])
            f = 0.25 / z
            out[sel] = np.stack([s02[sel] * f, s12[sel] * f, z, d10[sel] * f], axis=1)
    out[out[:, 3] < 0] *= -1.0
    result: npt.NDArray[np.float64] = out / np.linalg.norm(out, axis=1, keepdims=True)
    return result


def tf_message(stamp_ns: int, frames: Iterable[JointFrame]) -> TFMessage:
    """A ``TFMessage`` of joint frames, every header stamped ``stamp_ns`` (wall ns)."""
    stamp = Header.at_ns(stamp_ns).stamp
    return TFMessage(
        tuple(
            TransformStamped(
                Header(stamp, f.parent),
                f.child,
                TransformMsg(Vector3(*f.translation), QuaternionMsg(*f.rotation)),
            )
            for f in frames
        )
    )


# ---- channels -----------------------------------------------------------------------------------


def _channel(topic: str, msg_type: type[Message], context: foxglove.Context) -> foxglove.Channel:
    """A ``cdr`` channel whose schema is the type's ``ros2msg`` definition."""
    schema = foxglove.Schema(
        name=msg_type.TYPE_NAME, encoding="ros2msg", data=msg_type.msgdef().encode("utf-8")
    )
    return foxglove.Channel(topic, message_encoding="cdr", schema=schema, context=context)


@dataclass(eq=False)
class _BusChannel:
    """One bus topic shown as a Foxglove channel, and its on-demand bus subscription."""

    topic: str
    msg_type: type[Message]
    qos: QosProfile
    channel: foxglove.Channel
    demand: int = 0
    subscription: Subscriber[Any] | None = None
    forwarded: int = 0

    def forward(self, msg: Message) -> None:
        """Bus callback (the view's dispatcher thread): encode once and log if anyone listens."""
        channel = self.channel
        if channel.has_sinks():
            channel.log(msg.to_cdr(), log_time=time.time_ns())
            self.forwarded += 1


class _Listener(ServerListener):
    """The server's listener: turns client (un)subscriptions into requests for the view thread.

    Called on the SDK's threads; it only records the request and wakes the view thread, so no bus
    call (which may take locks or talk to Zenoh) ever runs inside the SDK.
    """

    def __init__(self, view: FoxgloveView) -> None:
        self._view = view

    def on_subscribe(self, client: Client, channel: ChannelView) -> None:
        self._view._request(channel.id, +1)

    def on_unsubscribe(self, client: Client, channel: ChannelView) -> None:
        self._view._request(channel.id, -1)

    def on_get_parameters(
        self, client: Client, param_names: list[str], request_id: str | None = None
    ) -> list[foxglove.Parameter]:
        return self._view._parameters(param_names)


class FoxgloveView:
    """A Foxglove WebSocket server showing the bus (see the module docstring).

    ``port`` 0 picks a free port (read it back from :attr:`port`). ``robot`` gives the robot
    description and the derived joint states and transforms (``None``: bus topics only);
    ``namespace`` locates ``bridge_data`` for them. ``scan_period_s`` is how often the topic list
    is refreshed (s); ``discover_timeout_s`` bounds the wait for remote topics in each scan.
    ``on_listening(url)`` is called once the server listens, before the first scan;
    ``on_client_refused(text)`` for every client whose handshake the server refused (default: a
    warning on this module's logger). Raises :class:`FoxgloveViewError` if the server cannot
    start. Use as a context manager or call :meth:`close`.
    """

    def __init__(
        self,
        bus: Bus,
        *,
        host: str = DEFAULT_HOST,
        port: int = DEFAULT_PORT,
        robot: RobotModel | None = None,
        namespace: str = "hb50",
        registry: TypeRegistry | None = None,
        scan_period_s: float = 0.5,
        discover_timeout_s: float = 0.2,
        derived_rate_hz: float = DEFAULT_DERIVED_RATE_HZ,
        name: str = "jointbus",
        on_listening: Callable[[str], None] | None = None,
        on_client_refused: Callable[[str], None] | None = None,
    ) -> None:
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise FoxgloveViewError(f"port = {port!r}; expected an int in [0, 65535]")
        for label, value in (
            ("scan_period_s", scan_period_s),
            ("discover_timeout_s", discover_timeout_s),
            ("derived_rate_hz", derived_rate_hz),
        ):
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise FoxgloveViewError(f"{label} = {value!r}; expected a number > 0")
            if not (math.isfinite(value) and value > 0):
                raise FoxgloveViewError(f"{label} = {value!r}; expected a finite number > 0")
        if bus.closed:
            raise FoxgloveViewError(f"bus {bus.name!r} is closed")
        self.bus = bus
        self.robot = robot
        self.namespace = namespace.strip("/")
        self.data_topic = f"/{self.namespace}/bridge_data" if self.namespace else "/bridge_data"
        # known_registry: the loop diagnostics and parameter lists every node publishes are
        # runtime types and hb50's are a robot's, which the messages layer's registry cannot list
        self._registry = registry if registry is not None else known_registry()
        self._scan_period_s = float(scan_period_s)
        self._discover_timeout_s = float(discover_timeout_s)
        self._derived_period_ns = round(_NS_PER_S / derived_rate_hz)
        # _lock guards the request list, the closed flag and the tables' shape for readers;
        # _ops serialises every change of channels and bus subscriptions (view thread, scan()).
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._ops = threading.RLock()
        self._requests: list[tuple[int, int]] = []
        self._channels: dict[str, _BusChannel] = {}
        self._by_id: dict[int, _BusChannel] = {}
        self._skipped: set[str] = set()
        self._closed = False
        self._context = foxglove.Context()
        self._urdf = robot.to_urdf() if robot is not None else ""
        self._frames = JointFrames(robot) if robot is not None else None
        # Derived channels open now (topic → channel), their ids, and client demand per topic.
        self._derived: dict[str, foxglove.Channel] = {}
        self._derived_ids: dict[int, str] = {}
        self._derived_demand: dict[str, int] = {}
        self._data_subscription: Subscriber[BridgeData] | None = None
        self._last_derived_ns = 0
        self._dispatcher: Dispatcher = bus.dispatcher("foxglove-view")
        try:
            self._server = foxglove.start_server(
                name=name,
                host=host,
                port=port,
                capabilities=[Capability.Parameters],
                server_listener=_Listener(self),
                context=self._context,
            )
        except Exception as exc:
            self._dispatcher.close()
            raise FoxgloveViewError(
                f"cannot start the Foxglove server on {host}:{port}: {exc}"
            ) from exc
        self.host = host
        self.port: int = int(self._server.port)
        self._refused = _RefusedHandshakes(
            on_client_refused if on_client_refused is not None else _LOG.warning
        )
        logging.getLogger(SDK_SERVER_LOGGER).addFilter(self._refused)
        if on_listening is not None:
            on_listening(self.url)  # the port listens now; the first scan may take seconds
        self._thread = threading.Thread(target=self._run, name="foxglove-view", daemon=True)
        try:
            self._scan()
        except BaseException:
            self._closed = True
            self._teardown()
            raise
        self._thread.start()

    # ---- public ------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """``ws://host:port``: what to open in Foxglove."""
        return f"ws://{self.host}:{self.port}"

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._closed

    def topics(self) -> list[str]:
        """Bus topics currently advertised to clients, sorted."""
        with self._lock:
            return sorted(self._channels)

    def subscribed(self) -> list[str]:
        """Bus topics the view subscribes to now (those some client is watching), sorted."""
        with self._lock:
            return sorted(t for t, c in self._channels.items() if c.subscription is not None)

    def forwarded(self, topic: str) -> int:
        """Messages of ``topic`` sent to clients so far (0 for an unknown topic)."""
        with self._lock:
            entry = self._channels.get(topic)
            return entry.forwarded if entry is not None else 0

    def scan(self) -> None:
        """Refresh the topic list now (the view thread also does it every ``scan_period_s``)."""
        self._scan()

    def close(self) -> None:
        """Stop the server, close every channel and bus subscription. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._wake.notify_all()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout=5.0)
        self._teardown()

    def __enter__(self) -> FoxgloveView:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _teardown(self) -> None:
        with self._ops:
            with self._lock:
                entries = list(self._channels.values())
                self._channels.clear()
                self._by_id.clear()
            derived = list(self._derived.values())
            self._derived.clear()
            self._derived_ids.clear()
            data_sub, self._data_subscription = self._data_subscription, None
            for entry in entries:
                if entry.subscription is not None:
                    entry.subscription.close()
            if data_sub is not None:
                data_sub.close()
            self._server.stop()
            logging.getLogger(SDK_SERVER_LOGGER).removeFilter(self._refused)
            for entry in entries:
                entry.channel.close()
            for channel in derived:
                channel.close()
            self._dispatcher.close()

    # ---- the view thread -----------------------------------------------------------------------

    def _request(self, channel_id: int, delta: int) -> None:
        with self._lock:
            if self._closed:
                return
            self._requests.append((channel_id, delta))
            self._wake.notify_all()

    def _run(self) -> None:
        next_scan = time.monotonic() + self._scan_period_s
        while True:
            with self._lock:
                while not self._closed and not self._requests:
                    remaining = next_scan - time.monotonic()
                    if remaining <= 0:
                        break
                    self._wake.wait(remaining)
                if self._closed:
                    return
                requests, self._requests = self._requests, []
            for channel_id, delta in requests:
                try:
                    self._apply(channel_id, delta)
                except Exception:
                    _LOG.exception("foxglove view: a subscription change (%d) failed", channel_id)
            if time.monotonic() >= next_scan:
                try:
                    self._scan()
                except Exception:
                    _LOG.exception("foxglove view: scanning the bus topics failed")
                next_scan = time.monotonic() + self._scan_period_s

    def _apply(self, channel_id: int, delta: int) -> None:
        """A client (un)subscribed to a channel: adjust its demand and the bus subscriptions."""
        with self._ops:
            if self._closed:
                return
            topic = self._derived_ids.get(channel_id)
            if topic is not None:
                self._apply_derived(topic, delta)
                return
            with self._lock:
                entry = self._by_id.get(channel_id)
            if entry is None:  # a channel already removed (its topic went away)
                return
            entry.demand = max(0, entry.demand + delta)
            if entry.demand > 0 and entry.subscription is None and not self.bus.closed:
                entry.subscription = self.bus.subscribe(
                    entry.topic,
                    entry.msg_type,
                    entry.forward,
                    entry.qos,
                    node=_NODE,
                    dispatcher=self._dispatcher,
                )
            elif entry.demand == 0 and entry.subscription is not None:
                entry.subscription.close()
                entry.subscription = None

    # ---- topic list --------------------------------------------------------------------------

    def _scan(self) -> None:
        with self._ops:
            if self._closed or self.bus.closed:
                return
            infos = (
                self.bus.discover(self._discover_timeout_s)
                if self.bus.transport is not None
                else self.bus.topics()
            )
            wanted: dict[str, tuple[type[Message], QosProfile]] = {}
            for info in infos:
                resolved = self._resolve(info)
                if resolved is not None:
                    wanted[info.name] = resolved
            if self.robot is not None:
                for topic in [t for t in self._derived if t in wanted]:
                    self._close_derived(topic)  # the bus offers it: show the bus's
            for topic in [t for t in self._channels if t not in wanted]:
                with self._lock:
                    entry = self._channels.pop(topic)
                    self._by_id.pop(entry.channel.id(), None)
                if entry.subscription is not None:
                    entry.subscription.close()
                entry.channel.close()
            for topic, (msg_type, qos) in wanted.items():
                if topic in self._channels:
                    continue
                channel = _channel(topic, msg_type, self._context)
                entry = _BusChannel(topic, msg_type, qos, channel)
                with self._lock:
                    self._channels[topic] = entry
                    self._by_id[channel.id()] = entry
            if self.robot is not None:
                for topic, derived_type in DERIVED_TOPICS.items():
                    if topic not in wanted and topic not in self._derived:
                        made = _channel(topic, derived_type, self._context)
                        self._derived[topic] = made
                        self._derived_ids[made.id()] = topic

    def _resolve(self, info: TopicInfo) -> tuple[type[Message], QosProfile] | None:
        """The class and subscription QoS to show ``info`` with, or None to leave it out."""
        publishers = [p for p in info.publishers if p.node != _NODE]
        if not publishers:
            return None
        msg_type = self.bus.local_type(info.name)
        if msg_type is None:
            try:
                found = self._registry.by_type_name(info.type_name)
            except UnknownTypeError:
                self._skip_once(info.name, f"type {info.type_name!r} is not in the registry")
                return None
            # a Python-facing type that is not a Message (Player's single-joint commands) is
            # carried by its wire record, whose bytes and schema are the same
            wire = found if issubclass(found, Message) else getattr(found, "WIRE", None)
            if not (isinstance(wire, type) and issubclass(wire, Message)):
                self._skip_once(info.name, f"type {info.type_name!r} has no wire record")
                return None
            msg_type = wire
        latched = all(p.qos.transient_local for p in publishers)
        depth = max([_QUEUE_DEPTH, *(p.qos.depth for p in publishers if latched)])
        qos = QosProfile(
            Reliability.BEST_EFFORT,
            depth,
            Durability.TRANSIENT_LOCAL if latched else Durability.VOLATILE,
            name="foxglove_view",
        )
        return msg_type, qos

    def _skip_once(self, topic: str, why: str) -> None:
        if topic not in self._skipped:
            self._skipped.add(topic)
            _LOG.warning("foxglove view: not showing %s: %s", topic, why)

    # ---- robot description, joint states, transforms ---------------------------------------------

    def _close_derived(self, topic: str) -> None:
        channel = self._derived.pop(topic)
        self._derived_ids.pop(channel.id(), None)
        self._derived_demand.pop(topic, None)
        channel.close()
        self._update_data_subscription()

    def _apply_derived(self, topic: str, delta: int) -> None:
        channel = self._derived.get(topic)
        if channel is None:
            return
        self._derived_demand[topic] = max(0, self._derived_demand.get(topic, 0) + delta)
        if delta > 0 and topic == ROBOT_DESCRIPTION_TOPIC:
            channel.log(String(self._urdf).to_cdr(), log_time=time.time_ns())
        elif delta > 0 and topic == TF_STATIC_TOPIC and self._frames is not None:
            now = time.time_ns()
            channel.log(tf_message(now, self._frames.static()).to_cdr(), log_time=now)
        self._update_data_subscription()

    def _update_data_subscription(self) -> None:
        """Receive ``bridge_data`` while a client watches a derived ``/joint_states`` or ``/tf``."""
        demand = self._derived_demand
        wanted = demand.get(JOINT_STATES_TOPIC, 0) + demand.get(TF_TOPIC, 0) > 0
        if wanted and self._data_subscription is None and not self.bus.closed:
            self._data_subscription = self.bus.subscribe(
                self.data_topic,
                BridgeData,
                self._on_data,
                MAB_RT.with_(depth=_QUEUE_DEPTH),
                node=_NODE,
                dispatcher=self._dispatcher,
            )
        elif not wanted and self._data_subscription is not None:
            self._data_subscription.close()
            self._data_subscription = None

    def _parameters(self, names: list[str]) -> list[foxglove.Parameter]:
        if not self._urdf or (names and "robot_description" not in names):
            return []
        return [foxglove.Parameter("robot_description", value=self._urdf)]

    def _on_data(self, msg: BridgeData) -> None:
        """Joint positions arrived (dispatcher thread): publish joint states and transforms."""
        frames = self._frames
        if frames is None:
            return
        now = time.monotonic_ns()
        if now - self._last_derived_ns < self._derived_period_ns:
            return
        self._last_derived_ns = now
        log_time = time.time_ns()
        stamp = msg.header.stamp.to_ns() or log_time
        joint_states = self._derived.get(JOINT_STATES_TOPIC)
        if joint_states is not None and joint_states.has_sinks():
            state = JointState(
                Header.at_ns(stamp),
                msg.joint_name,
                msg.joint_position,
                msg.joint_velocity,
                msg.joint_effort,
            )
            joint_states.log(state.to_cdr(), log_time=log_time)
        tf = self._derived.get(TF_TOPIC)
        if tf is not None and tf.has_sinks():
            frames.update(msg.joint_name, msg.joint_position)
            tf.log(tf_message(stamp, frames.moving()).to_cdr(), log_time=log_time)
