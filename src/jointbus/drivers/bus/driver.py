"""``bus://NAME``: an :class:`ActuatorArray` whose calls reach an array served on the bus.

Where it sits: :mod:`jointbus.drivers.bus`, registered as scheme ``bus`` in
:mod:`jointbus.drivers.registry`; the server is an array node (``jointbus serve URL --name NAME``,
:mod:`jointbus.nodes.array`). Player's client: the same API as the served array, over the network.

**How a call travels.** The client is a real :class:`ActuatorArray` built from the server's
``describe`` and ``get_geometry`` answers (names, types, limits, policy, capabilities, geometry),
so the base class checks every call *locally* exactly as it checks a local array — unknown joint,
wrong length, NaN, limits, what the served driver can carry (its
:meth:`~jointbus.drivers.ActuatorArray.command_ranges`, in the description: a CAN motor's wire
range), unsupported capability — and raises the same errors before anything is sent. What only
the server knows (motor power, e-stop, the driver's own refusals, soft limits) is checked there:
each hook sends the call to the node's service of the same name and a NACK comes back as the
very error the served array raised (:mod:`.errors_on_wire`), e.g.
``RequestRejected(reason=POWERED_OFF)``. The clamps the server applied are returned by the command
as they would be locally. Calibration is the server's business: the client works in joint space.

**Reading.** :meth:`read` / :meth:`read_joints` return the latest ``actarray/data`` sample the
node published (at its rate, e.g. 100 Hz: a reading is about one period plus transport old),
stamped with the server's sample time (``read().header.stamp`` and ``read_joints().time``), never
the time of the call, so a reading from a server that stopped looks as old as it is; not a round
trip — except right after an ACKed call, whose reply carries the array read just after the
call, so the caller's next ``read()`` reflects its own call (a move is ``MOVING`` at once, as
locally). **A reading that is late is flagged at once:** when the newest sample arrived more
than :data:`STALE_PERIODS` (3) of the server's periods ago — the period measured from the
samples' own stamps, :attr:`BusActuatorArray.server_period_s` — every actuator of the reading
carries ``ActuatorState.STALE`` (so does ``read().actuators[i].state`` and the array state): its
values are the last ones received, and the server may be gone. Why not wait for the timeout: a
client that stopped hearing a 100 Hz server was handed the old state as current for a whole
second (the default timeout) before it raised; 3 periods are 30 ms. :attr:`~BusActuatorArray.age_s`
gives the age. If no sample arrived for longer than the call timeout, reading raises
:class:`ArrayServerError`: a stale state is no longer returned at all.

**Failure.** A call whose server is gone or silent raises :class:`ArrayServerError` (a
:class:`~jointbus.drivers.errors.DriverIOError`) within the call timeout — never hangs — and says
which it was (``server_alive``): *the server is there* (it still offers the service on the bus)
*but did not answer within T s* — busy, or a loaded host: wait longer — or *nothing serves it*
where the client looked (hub port, endpoints, domain). Opening fails the same way if no server
answers within the timeout.

**Timeout.** ``bus://NAME?timeout=SECONDS`` (default :data:`DEFAULT_TIMEOUT_S` = 1 s) bounds
every call's wait for its answer, opening, and the silence of the data topic before
:meth:`read` refuses stale data. The default is ≈ 300 times the measured round trip
(``bench/bench_array_server.py``: p50 1.4 ms, p99 3.3 ms on this shared 2-core VM at load
average 13.5), so only a stalled server or host reaches it; raise it on a host that stalls
for longer.

**Impedance** (:meth:`~jointbus.drivers.ActuatorArray.impedance`) is a stream, not a call: after
the local checks the command is published on the node's impedance topic as a
``jointbus_msgs/msg/JointImpedance`` (float64, so a value at a limit arrives exactly at it) with
this client's ``source`` as its ``source_node`` (default ``control_node``, the node's default
source; arbitration ranks sources by it). Refusals only the server sees (a source not on its
allow-list, the e-stop) go to its status topic.

URL: ``bus://NAME?hub_port=7447&connect=tcp/10.0.0.2:7447&timeout=1.0&source=teleop`` — ``NAME``
is the served namespace; ``hub_port`` / ``connect`` / ``router`` join Zenoh as the CLI does
(default: the local hub on ``JOINTBUS_HUB_PORT`` if set — the variable ``jointbus serve`` reads —
else 7447; ``connect`` and ``router`` default to ``JOINTBUS_CONNECT`` and ``JOINTBUS_ROUTER``);
``source`` is the ``source_node`` of impedance commands. With ``JOINTBUS_TLS_CERT``,
``JOINTBUS_TLS_KEY`` and ``JOINTBUS_TLS_CA`` set, the client joins over mutual TLS only, as the
CLI does: it dials ``connect`` (``tls/…``) and listens nowhere.
:meth:`BusActuatorArray.attach` uses an existing :class:`~jointbus.bus.Bus` instead
(in-process clients, tests).
"""

from __future__ import annotations

import collections
import dataclasses
import math
import os
import statistics
import threading
import time
import weakref
from typing import Any, Final, Self

import numpy as np

from jointbus.bus import (
    MAB_RT,
    Bus,
    ServiceClient,
    ServiceDeniedError,
    ServiceError,
    ServiceTimeoutError,
    ZenohConfig,
)
from jointbus.drivers.actuator_array import (
    ActuatorArray,
    ActuatorArrayConfig,
    BoolArray,
    FloatArray,
    ImpedanceTargets,
    IntArray,
    JointReading,
    RawReading,
)
from jointbus.drivers.bus.array_names import DEFAULT_IMPEDANCE_SOURCE, ArrayNames
from jointbus.drivers.bus.errors_on_wire import error_from_reply, saturations_from_reply
from jointbus.drivers.capabilities import Capability
from jointbus.drivers.command_ranges import COMMAND_RANGE_FIELDS
from jointbus.drivers.errors import DriverIOError, DriverURLError
from jointbus.drivers.impedance import ImpedanceCommand
from jointbus.drivers.limits import LimitPolicy, Saturation
from jointbus.drivers.registry import DriverURL
from jointbus.messages import jointbus_msgs
from jointbus.messages.actarray.commands import (
    MultiCurrentCommand,
    MultiPositionCommand,
    MultiSpeedCommand,
)
from jointbus.messages.actarray.data import ActuatorArrayData
from jointbus.messages.actarray.description import ArrayDescription
from jointbus.messages.actarray.geometry import ArrayGeometry
from jointbus.messages.actarray.reply import ActuatorReply
from jointbus.messages.actarray.requests import BrakesRequest, GeometryRequest, PowerRequest
from jointbus.messages.actarray.state import ActuatorState
from jointbus.messages.base import Message
from jointbus.messages.joint_impedance import JointImpedance
from jointbus.messages.joints import Joints
from jointbus.messages.std_msgs import Header
from jointbus.model.calibration import JointCalibration
from jointbus.model.limits import JointLimitSpec

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "STALE_PERIODS",
    "ArrayServerError",
    "BusActuatorArray",
    "open_bus_array",
]

#: Default time a call waits for the server's answer (s).
DEFAULT_TIMEOUT_S: Final = 1.0
#: A reading is ``STALE`` once its newest sample is this many server periods old.
STALE_PERIODS: Final = 3
#: s: how long a read that finds its newest sample older than the timeout waits for a newer one
#: before it blames the server. A client stopped for 1.5 s (SIGSTOP, a debugger, a starved host)
#: was told "array server unreachable … no data for 1.52 s" while the server had published every
#: 10 ms: its samples were waiting in this process's sockets, delivered a few ms after it ran
#: again (a user's trial, 2026-12-06).
SILENCE_GRACE_S: Final = 0.1
#: The server period assumed until two published samples have been timed (s): 100 Hz, what
#: ``jointbus serve`` and the hb50 bridge publish ``actarray/data`` at.
ASSUMED_PERIOD_S: Final = 0.01
#: Sample-to-sample intervals the period estimate is the median of.
_PERIOD_SAMPLES: Final = 16
_STALE: Final = np.uint8(ActuatorState.STALE)

_URL_OPTIONS: Final = {"hub_port", "connect", "router", "timeout", "source"}
_ALL: Final = jointbus_msgs.ALL_JOINTS


class ArrayServerError(DriverIOError):
    """The array server did not answer (gone, unreachable or too slow); ``service`` names the
    call. Whether a timed-out call was carried out is unknown.

    ``server_alive`` tells the two cases apart, because their remedies differ: ``True`` — the
    server is there (it still offers the service on the bus) but did not answer within the
    timeout (busy, or a loaded host: wait longer with ``bus://NS?timeout=SECONDS``); ``False`` —
    nothing serves it where the client looked (wrong port or domain, or the server is gone);
    ``None`` — not asked (a silent data topic)."""

    def __init__(
        self,
        service: str,
        cause: ServiceError,
        where: str = "",
        *,
        server_alive: bool | None = None,
    ) -> None:
        self.service = service
        self.cause = cause
        self.where = where
        """Where the client looked (hub port, connect endpoints, router, domain)."""
        self.server_alive = server_alive
        if isinstance(cause, ServiceDeniedError):
            # a TLS-only robot's access rules: nothing was sent (a trial's watch-only client
            # read "did not answer … the call may still be carried out", 2026-12-07)
            text = f"array server not called: {cause}"
        elif server_alive and isinstance(cause, ServiceTimeoutError):
            on = f" on {where}" if where else ""
            namespace = service.split("/")[1] if service.count("/") > 1 else "NAME"
            text = (
                f"array server is there (it offers {service!r}{on}) but did not answer within "
                f"{cause.timeout_s:g} s: busy, or a loaded host? The call may still be carried "
                f"out. Wait longer with bus://{namespace}?timeout=SECONDS"
            )
        else:
            looked = f" (looked on {where}: is `jointbus serve` running there?)" if where else ""
            text = f"array server unreachable: {cause}{looked}"
        super().__init__(text)


class _TopicSilent(ServiceError):
    """The array's data *topic* fell silent (no call failed): worded as a topic, not a service."""

    def __init__(self, topic: str, text: str) -> None:
        super().__init__(topic, text)
        self.args = (f"topic {topic!r}: {text}",)

    def __str__(self) -> str:
        return str(self.args[0])


def _where_of(bus: Bus) -> str:
    """Where ``bus`` looks for servers, for the errors that say nothing answered."""
    transport = bus.transport
    return transport.where if transport is not None else "this process only (no network)"


def _close_before_exit(array: BusActuatorArray) -> None:
    """Close ``array`` when the interpreter exits, if the program did not.

    Zenoh runs Python callbacks on a non-daemon thread, so a process that leaves its session open
    never exits (``python -c 'drivers.open("bus://arm6").power(True)'`` would hang). Functions
    registered with ``threading._register_atexit`` run before the interpreter waits for
    non-daemon threads (``concurrent.futures`` relies on it); a weak reference keeps the array
    collectable.
    """
    register = getattr(threading, "_register_atexit", None)
    if register is None:
        return
    ref = weakref.ref(array)

    def close() -> None:
        alive = ref()
        if alive is not None:
            alive.close()

    register(close)


def _call(bus: Bus, name: str, request: Message, response: type[Any], timeout_s: float) -> Any:
    return _call_with(
        bus.client(name, type(request), response, timeout_s=timeout_s), request, _where_of(bus)
    )


def _call_with(client: ServiceClient[Any, Any], request: Message, where: str) -> Any:
    try:
        return client.call(request)
    except ServiceError as exc:
        alive = client.available() if isinstance(exc, ServiceTimeoutError) else False
        raise ArrayServerError(client.name, exc, where, server_alive=alive) from exc


def _config(description: ArrayDescription, geometry: ArrayGeometry) -> ActuatorArrayConfig:
    d = description
    limits = tuple(
        JointLimitSpec(lo, hi, v, e, c)
        for lo, hi, v, e, c in zip(
            d.position_min,
            d.position_max,
            d.velocity_max,
            d.effort_max,
            d.current_max,
            strict=True,
        )
    )
    return ActuatorArrayConfig(
        names=d.names,
        types=tuple(a.type for a in geometry.actuators),
        limits=limits,
        calibrations=tuple(JointCalibration() for _ in d.names),
        geometry=geometry,
        policy=LimitPolicy(d.policy),
        accelerations=d.acceleration,
    )


class BusActuatorArray(ActuatorArray):
    """The client of an array node (see the module docstring)."""

    def __init__(
        self,
        bus: Bus,
        namespace: str,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        owns_bus: bool = False,
        source: str = DEFAULT_IMPEDANCE_SOURCE,
    ) -> None:
        if not (math.isfinite(timeout_s) and timeout_s > 0.0):
            if owns_bus:
                bus.close()
            raise DriverURLError(f"timeout = {timeout_s!r}; expected a number of seconds > 0")
        if type(source) is not str or not source:
            if owns_bus:
                bus.close()
            raise DriverURLError(f"source = {source!r}; expected a non-empty node name")
        self._bus = bus
        self._owns_bus = owns_bus
        self.timeout_s = timeout_s
        self.source = source
        """The ``source_node`` of this client's impedance commands (arbitration ranks by it)."""
        self.array_names = ArrayNames(namespace)
        n = self.array_names
        try:
            description = self._wait_for_server(
                lambda: _call(
                    bus, n.request("describe"), GeometryRequest(), ArrayDescription, timeout_s
                )
            )
            geometry = _call(
                bus, n.request("get_geometry"), GeometryRequest(), ArrayGeometry, timeout_s
            )
            super().__init__(_config(description, geometry))
            self._description = description
            self._capability_set = frozenset(Capability(c) for c in description.capabilities)
            self._latest: ActuatorArrayData | None = None
            #: Header of the sample the last read used (its server stamp, for :meth:`read`).
            self._read_header: Header | None = None
            #: True inside positions() / speeds() / currents() (see :meth:`_array_command`).
            self._whole_array_call = False
            self._arrived = threading.Event()
            self._arrived_at = -math.inf
            #: Server stamp (s) of the last *published* sample, and the intervals between them.
            self._published_stamp: float | None = None
            self._intervals: collections.deque[float] = collections.deque(maxlen=_PERIOD_SAMPLES)
            self._period_s = ASSUMED_PERIOD_S
            #: Whether the reading :meth:`_read_raw` built last was stale (under the API lock).
            self._read_stale = False
            self._data_lock = threading.Lock()
            self._remote_saturations: tuple[Saturation, ...] = ()
            self._pending_impedance: ImpedanceCommand | None = None
            self._clients: dict[str, ServiceClient[Any, ActuatorReply]] = {}
            self._sub = bus.subscribe(
                n.data, ActuatorArrayData, self._on_published, MAB_RT, realtime=True
            )
            if not self._arrived.wait(timeout_s):
                raise ArrayServerError(
                    n.data, _TopicSilent(n.data, f"no data within {timeout_s:g} s"), _where_of(bus)
                )
        except BaseException:
            if owns_bus:
                bus.close()
            raise
        if owns_bus:
            _close_before_exit(self)

    def _wait_for_server(self, ask: Any) -> Any:
        """Ask once the Zenoh links are up: a just-opened session may not see the server yet."""
        deadline = time.monotonic() + self.timeout_s
        while True:
            try:
                return ask()
            except ArrayServerError:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.05)

    @classmethod
    def attach(
        cls,
        bus: Bus,
        namespace: str,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        source: str = DEFAULT_IMPEDANCE_SOURCE,
    ) -> Self:
        """A client on an existing bus (not closed with the client)."""
        return cls(bus, namespace, timeout_s=timeout_s, source=source)

    def _on_data(self, data: ActuatorArrayData) -> None:
        """Keep the newest sample by the server's stamp: a periodic sample published before a call
        was applied may arrive after the ACK that carried the state after it."""
        with self._data_lock:
            latest = self._latest
            stamp = data.header.stamp
            if latest is None or (stamp.sec, stamp.nanosec) >= (
                latest.header.stamp.sec,
                latest.header.stamp.nanosec,
            ):
                self._latest = data
            self._arrived_at = time.monotonic()
        self._arrived.set()

    def _await_newer(self, grace_s: float) -> None:
        """Wait up to ``grace_s`` for a sample newer than the one held (see
        :data:`SILENCE_GRACE_S`)."""
        held = self._arrived_at
        deadline = time.monotonic() + grace_s
        while self._arrived_at == held:
            remaining = deadline - time.monotonic()
            if remaining <= 0.0:
                return
            self._arrived.clear()
            if self._arrived_at != held:  # arrived between the check and the clear
                return
            self._arrived.wait(remaining)

    def _on_published(self, data: ActuatorArrayData) -> None:
        """A sample of the data topic: time the server's period from the samples' own stamps
        (transport jitter does not enter it; a reply's state, stamped at the call, is not
        timed), then keep it as :meth:`_on_data` does."""
        stamp = data.header.stamp
        at = stamp.sec + stamp.nanosec * 1e-9
        with self._data_lock:
            last, self._published_stamp = self._published_stamp, at
            if last is not None and at > last:
                self._intervals.append(at - last)
                self._period_s = statistics.median(self._intervals)
        self._on_data(data)

    @property
    def latest(self) -> ActuatorArrayData | None:
        """The latest data sample received (``None`` before the first)."""
        return self._latest

    @property
    def age_s(self) -> float:
        """Seconds since the newest sample (published, or carried by a reply) arrived."""
        return time.monotonic() - self._arrived_at

    @property
    def server_period_s(self) -> float:
        """The server's publishing period (s): the median interval between its last 16
        samples' stamps (:data:`ASSUMED_PERIOD_S` until two have arrived)."""
        return self._period_s

    @property
    def stale_after_s(self) -> float:
        """Age (s) from which a reading is ``STALE``: :data:`STALE_PERIODS` server periods."""
        return STALE_PERIODS * self._period_s

    @property
    def stale(self) -> bool:
        """True when a reading now would be ``STALE`` (see the module docstring)."""
        return self.age_s > self.stale_after_s

    # ---- hooks ---------------------------------------------------------------------------------
    def _capabilities(self) -> frozenset[Capability]:
        return self._capability_set

    def read_joints(self) -> JointReading:
        """The latest sample in joint space; every actuator flagged ``STALE`` when it is older
        than :attr:`stale_after_s` (see the module docstring)."""
        with self._api_lock:
            reading = super().read_joints()
            if not self._read_stale:
                return reading
            return dataclasses.replace(reading, state=reading.state | _STALE)

    def read(self) -> ActuatorArrayData:
        """The latest sample as Player's array data, its header stamped when the *server* sampled
        it (not now: a reading from a server that stopped must look as old as it is), each
        actuator ``STALE`` as in :meth:`read_joints`."""
        with self._api_lock:
            data = super().read()
            sampled = self._read_header
            if sampled is None:  # only if a subclass skipped the constructor's wait
                return data
            return dataclasses.replace(data, header=sampled)

    def _read_raw(self) -> RawReading:
        if time.monotonic() - self._arrived_at > self.timeout_s:
            self._await_newer(SILENCE_GRACE_S)
        data = self._latest
        if data is None:  # only if a subclass skipped the constructor's wait
            raise DriverIOError(f"no data from {self.array_names.data} yet")
        silence = time.monotonic() - self._arrived_at
        self._read_stale = silence > self.stale_after_s
        if silence > self.timeout_s:
            name = self.array_names.data
            raise ArrayServerError(
                name,
                _TopicSilent(name, f"no data for {silence:.2f} s (timeout {self.timeout_s:g} s)"),
                _where_of(self._bus),
            )
        acts = data.actuators
        state = np.array([int(a.state) for a in acts], dtype=np.uint8)
        self._read_header = data.header
        stamp = data.header.stamp
        return RawReading(
            time=stamp.sec + stamp.nanosec * 1e-9,
            position=np.array([a.position for a in acts]),
            velocity=np.array([a.speed for a in acts]),
            acceleration=np.array([a.acceleration for a in acts]),
            current=np.array([a.current for a in acts]),
            effort=np.array([a.effort for a in acts]),
            temperature=np.array([a.temperature for a in acts]),
            status=np.array([a.status for a in acts], dtype=np.uint32),
            moving=(state & int(ActuatorState.MOVING)) != 0,
            braked=(state & int(ActuatorState.BRAKED)) != 0,
            stalled=(state & int(ActuatorState.STALLED)) != 0,
            motor_power=data.motor_power,
            # a joint whose own drive is off (joint_power) is UNPOWERED while the array's is on
            powered=data.motor_power & ((state & int(ActuatorState.UNPOWERED)) == 0),
            limited=(state & int(ActuatorState.LIMITED)) != 0,  # the served drive's limit guard
        )

    def _motor_power(self) -> bool:
        return True  # the server decides (it answers POWERED_OFF): the data may be a cycle old

    def _engaged_brakes(self) -> BoolArray:
        # The server decides (it answers BRAKED with the joint): the latest data may predate an
        # ACKed brakes(False), and refusing here from it would refuse a legal command.
        return np.zeros(self.count, dtype=np.bool_)

    def _send(self, method: str, name: str, request: Message) -> None:
        client = self._clients.get(name)
        if client is None or client.request_type is not type(request):
            client = self._clients[name] = self._bus.client(
                name, type(request), ActuatorReply, timeout_s=self.timeout_s
            )
        reply: ActuatorReply = _call_with(client, request, _where_of(self._bus))
        if not reply.accepted:
            raise error_from_reply(reply)
        self._remote_saturations = saturations_from_reply(reply)
        if reply.state:  # read() after an ACKed call reflects the call (MOVING, power on, ...)
            self._on_data(reply.state[0])

    def _request_power(self, on: bool) -> None:
        self._send("power", self.array_names.request("power"), PowerRequest(on))

    def _request_brakes(self, on: bool) -> None:
        self._send("brakes", self.array_names.request("brakes"), BrakesRequest(on))

    def _request_joint_power(self, indices: IntArray, on: bool) -> None:
        joint = int(indices[0]) if indices.size == 1 else _ALL  # one joint or all (the API's)
        self._send(
            "joint_power",
            self.array_names.request("joint_power"),
            jointbus_msgs.ActuatorJointPowerRequest(joint, on),
        )

    def _joint_of(self, indices: IntArray, values: FloatArray) -> tuple[int, float] | None:
        """(wire joint, value) if one request covers ``indices``: one joint, or all with one
        value; ``None`` otherwise."""
        if indices.size == 1:
            return int(indices[0]), float(values[0])
        if indices.size == self.count and bool(np.all(values == values[0])):
            return _ALL, float(values[0])
        return None

    def _request_speed(self, indices: IntArray, speeds: FloatArray) -> None:
        joint, value = self._joint_of(indices, speeds) or (_ALL, float(speeds[0]))
        self._send(
            "set_speed",
            self.array_names.request("speed_config"),
            jointbus_msgs.ActuatorSpeedConfigRequest(joint, value),
        )

    def _request_accel(self, indices: IntArray, accels: FloatArray) -> None:
        joint, value = self._joint_of(indices, accels) or (_ALL, float(accels[0]))
        self._send(
            "set_accel",
            self.array_names.request("accel_config"),
            jointbus_msgs.ActuatorAccelConfigRequest(joint, value),
        )

    def _write(
        self,
        method: str,
        indices: IntArray,
        values: FloatArray,
        single: Any,
        multi: Any,
    ) -> None:
        n = self.array_names
        if indices.size == 1:
            self._send(method, n.command(method), single(int(indices[0]), float(values[0])))
        elif indices.size != self.count or bool(np.any(indices != np.arange(self.count))):
            # some joints (joints_command): one Rock command, which the server applies whole
            self._send(method, n.joints_command, self._rock_command(method, indices, values))
        elif (
            not self._whole_array_call
            and indices.size == self.count
            and bool(np.all(values == values[0]))
        ):
            self._send(method, n.command(method), single(_ALL, float(values[0])))
        else:
            self._send(method, n.command(f"multi_{method}"), multi(tuple(values.tolist())))

    def _rock_command(self, method: str, indices: IntArray, values: FloatArray) -> Joints:
        """A Rock ``Joints`` command setting ``method``'s field (position, speed, or raw for a
        current) of each listed joint; NaN elsewhere (unset)."""
        unset = np.full(indices.size, math.nan)
        columns = {"position": unset, "speed": unset, "raw": unset}
        columns["raw" if method == "current" else method] = np.asarray(values, dtype=np.float64)
        return Joints.from_arrays(
            Header.now(),
            tuple(self.names[i] for i in indices.tolist()),
            position=columns["position"],
            speed=columns["speed"],
            effort=unset,
            raw=columns["raw"],
            acceleration=unset,
        )

    def _array_command(
        self,
        capability: Capability,
        field_name: str,
        values: Any,
        write: Any,
    ) -> tuple[Saturation, ...]:
        """``positions()`` / ``speeds()`` / ``currents()``: sent as the multi command even when
        every value is equal, so a refusal names the call made (``'positions'``, not
        ``'position'``)."""
        with self._api_lock:
            self._whole_array_call = True
            try:
                return super()._array_command(capability, field_name, values, write)
            finally:
                self._whole_array_call = False

    def _write_positions(self, indices: IntArray, positions: FloatArray) -> None:
        self._write(
            "position",
            indices,
            positions,
            jointbus_msgs.ActuatorPositionCommand,
            MultiPositionCommand,
        )

    def _write_speeds(self, indices: IntArray, speeds: FloatArray) -> None:
        self._write("speed", indices, speeds, jointbus_msgs.ActuatorSpeedCommand, MultiSpeedCommand)

    def _write_currents(self, indices: IntArray, currents: FloatArray) -> None:
        self._write(
            "current",
            indices,
            currents,
            jointbus_msgs.ActuatorCurrentCommand,
            MultiCurrentCommand,
        )

    def _write_home(self, indices: IntArray, home_positions: FloatArray) -> None:
        joint = int(indices[0]) if indices.size == 1 else _ALL
        self._send(
            "home", self.array_names.command("home"), jointbus_msgs.ActuatorHomeCommand(joint)
        )

    def _actuator_command_ranges(self) -> tuple[FloatArray, FloatArray, tuple[str, ...]] | None:
        """What the served driver can carry, from the server's description (joint space: the
        client's calibration is the identity); ``None`` when the server declares none."""
        d = self._description
        if not d.command_fields:
            return None
        n = self.count
        lower = np.full((len(COMMAND_RANGE_FIELDS), n), -math.inf)
        upper = np.full((len(COMMAND_RANGE_FIELDS), n), math.inf)
        low = np.array(d.command_min, dtype=np.float64).reshape(-1, n)
        high = np.array(d.command_max, dtype=np.float64).reshape(-1, n)
        for k, field in enumerate(d.command_fields):
            if field in COMMAND_RANGE_FIELDS:  # a field this client does not know: not checked
                row = COMMAND_RANGE_FIELDS.index(field)
                lower[row] = low[k]
                upper[row] = high[k]
        return lower, upper, d.command_bound_by

    def impedance(self, command: ImpedanceCommand) -> tuple[Saturation, ...]:
        """Checked locally as any array checks it, then published on the node's impedance stream
        as a ``JointImpedance`` from :attr:`source` (arbitrated and watched there). Errors that
        only the server sees (a source not on its allow-list, the e-stop) are reported on its
        status topic, not raised here."""
        with self._api_lock:
            self._pending_impedance = command
            try:
                return super().impedance(command)
            finally:
                self._pending_impedance = None

    def _write_impedance(self, targets: ImpedanceTargets) -> None:
        command = self._pending_impedance
        if command is None:
            return
        pub = getattr(self, "_impedance_pub", None)
        if pub is None:
            pub = self._impedance_pub = self._bus.publisher(
                self.array_names.impedance_command, JointImpedance, MAB_RT
            )
        pub.publish(
            JointImpedance(
                Header.now(),
                self.source,
                self.names,
                tuple(command.position.tolist()),
                tuple(command.velocity.tolist()),
                tuple(command.effort.tolist()),
                tuple(command.kp.tolist()),
                tuple(command.kd.tolist()),
                tuple(command.brake.tolist()),
            )
        )

    def _report(self, saturations: Any) -> tuple[Saturation, ...]:
        remote, self._remote_saturations = self._remote_saturations, ()
        return super()._report((*tuple(saturations), *remote))

    def _close(self) -> None:
        self._sub.close()
        pub = getattr(self, "_impedance_pub", None)
        if pub is not None:
            pub.close()
        if self._owns_bus:
            self._bus.close()


def _zenoh(url: DriverURL) -> ZenohConfig:
    """The URL's Zenoh settings; what it leaves out, from the CLI's variables
    (``JOINTBUS_HUB_PORT``, ``JOINTBUS_CONNECT``, ``JOINTBUS_ROUTER``, and the TLS files
    ``JOINTBUS_TLS_CERT`` / ``_KEY`` / ``_CA``): a trial's client with all three TLS variables
    set was told to set them (2026-12-07), and ``JOINTBUS_CONNECT`` was ignored."""
    port_text = url.option("hub_port")
    connect_text = url.option("connect")
    if connect_text is not None:
        connect = tuple(filter(None, connect_text.split(",")))
    else:  # space-separated, as the CLI reads it
        connect = tuple(os.environ.get("JOINTBUS_CONNECT", "").split())
    router = url.option("router") or os.environ.get("JOINTBUS_ROUTER") or None
    files = {name: os.environ.get(name) or None for name in _TLS_VARIABLES}
    try:
        if any(files.values()):
            return _tls_zenoh(url, connect, router, files)
        if router:
            return ZenohConfig.for_router(router, connect=connect)
        if port_text is None:  # the CLI's variable, so a client meets `jointbus serve` by default
            port_text = os.environ.get("JOINTBUS_HUB_PORT")
        port = int(port_text) if port_text is not None else ZenohConfig().hub_port
        return ZenohConfig(hub_port=port, connect=connect)
    except ValueError as exc:
        raise DriverURLError(f"driver URL {url.text!r}: {exc}") from None


#: The CLI's TLS variables a ``bus://`` client reads too (``--tls-cert``, ``--tls-key``,
#: ``--tls-ca``).
_TLS_VARIABLES: Final = ("JOINTBUS_TLS_CERT", "JOINTBUS_TLS_KEY", "JOINTBUS_TLS_CA")


def _tls_zenoh(
    url: DriverURL, connect: tuple[str, ...], router: str | None, files: dict[str, str | None]
) -> ZenohConfig:
    """A TLS-only client's settings (as the CLI's: it listens nowhere and dials ``connect`` or
    ``router``, every endpoint ``tls/``); DriverURLError naming what is missing."""
    from jointbus.bus.zenoh_security import ZenohTls, secure

    missing = [name for name, value in files.items() if value is None]
    if missing:
        raise DriverURLError(
            f"driver URL {url.text!r}: {' and '.join(missing)} not set: mutual TLS needs this "
            "host's certificate, its key and the robot's CA (JOINTBUS_TLS_CERT, "
            "JOINTBUS_TLS_KEY, JOINTBUS_TLS_CA)"
        )
    if not (connect or router):
        raise DriverURLError(
            f"driver URL {url.text!r}: with TLS, give the robot's endpoint: "
            "connect=tls/ADDRESS:PORT in the URL (or JOINTBUS_CONNECT); the loopback hub is "
            "plain tcp and is not used with TLS"
        )
    cert, key, ca = (files[name] for name in _TLS_VARIABLES)
    assert cert is not None and key is not None and ca is not None
    tls = ZenohTls(ca=ca, certificate=cert, private_key=key)
    base = (
        ZenohConfig.for_router(router, connect=connect)
        if router
        else ZenohConfig(listen=(), connect=connect)
    )
    return secure(base, tls)


def open_bus_array(url: DriverURL) -> BusActuatorArray:
    """Open ``bus://NAME?hub_port=&connect=&router=&timeout=&source=`` (see the module
    docstring)."""
    url.unknown_options(_URL_OPTIONS)
    if not url.host or url.path:
        raise DriverURLError(
            f"driver URL {url.text!r}: expected bus://<served name>, e.g. bus://arm6"
        )
    timeout_text = url.option("timeout")
    try:
        timeout = float(timeout_text) if timeout_text is not None else DEFAULT_TIMEOUT_S
    except ValueError:
        raise DriverURLError(
            f"driver URL {url.text!r}: timeout={timeout_text!r}; expected seconds"
        ) from None
    if not (math.isfinite(timeout) and timeout > 0.0):
        raise DriverURLError(
            f"driver URL {url.text!r}: timeout = {timeout!r}; expected a number of seconds > 0"
        )
    source = url.option("source")
    if source is not None and not source:
        raise DriverURLError(f"driver URL {url.text!r}: source is empty; expected a node name")
    bus = Bus(name=f"bus-{url.host}", zenoh=_zenoh(url))
    return BusActuatorArray(
        bus,
        url.host,
        timeout_s=timeout,
        owns_bus=True,
        source=source if source is not None else DEFAULT_IMPEDANCE_SOURCE,
    )
