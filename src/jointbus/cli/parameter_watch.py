"""What ``jointbus param`` hears and says on one namespace: nodes' parameter lists, their answers.

Where it sits: :mod:`jointbus.cli`, imported by the commands of :mod:`jointbus.cli.param` when they
run (not to show their ``--help``). It speaks the protocol of :mod:`jointbus.runtime.parameters`:
lists latched on ``/<ns>/parameters``, updates on ``/<ns>/config_update`` with a request id, the
node's answer on ``/<ns>/status``.
"""

from __future__ import annotations

import dataclasses
import math
import threading
import time
import uuid
from typing import Any, Final

from jointbus.bus import LATCHED, RELIABLE, Bus, QosProfile, validate_topic_name
from jointbus.cli.errors import CliError
from jointbus.cli.options import cli_node_name, looked_on, refuse_denied
from jointbus.model.errors import ParameterError
from jointbus.robots.hb50.messages import Level, Status
from jointbus.runtime.parameter_messages import (
    Parameter,
    ParameterKind,
    ParameterList,
    ParameterUpdate,
    format_value,
)
from jointbus.runtime.parameters import CONFIG_UPDATE_TOPIC, PARAMETERS_TOPIC, parse_value

#: How long ``set`` waits for the OK status once the list shows the new value (s).
_ANSWER_GRACE_S: Final = 0.5
#: Queue depth of the CLI's status subscription (the status topic can be busy).
_STATUS_DEPTH: Final = 100
#: QoS of the CLI's parameter-list subscription: latched, with a queue deep enough for the lists
#: of every node of the namespace arriving at once (with depth 1 one node's would overwrite
#: another's before the callback runs).
LIST_QOS: Final = LATCHED.with_(depth=100)


def _topic(namespace: str, name: str) -> str:
    return validate_topic_name(f"/{namespace}/{name}" if namespace else f"/{name}")


class ParameterWatch:
    """What the CLI hears on one namespace: every node's latest parameter list, and statuses.

    Lists arrive latched (a node's current list at once) and then live; statuses only live, from
    the moment of construction.
    """

    def __init__(self, bus: Bus, namespace: str) -> None:
        self.bus = bus
        self.namespace = namespace
        self.parameters_topic = _topic(namespace, PARAMETERS_TOPIC)
        self.status_topic = _topic(namespace, "status")
        self.update_topic = _topic(namespace, CONFIG_UPDATE_TOPIC)
        self._cond = threading.Condition()
        self._lists: dict[str, tuple[ParameterList, int]] = {}  # node -> (latest, arrival no.)
        self._arrivals = 0
        self._statuses: list[Status] = []
        node = cli_node_name()
        bus.subscribe(
            self.status_topic,
            Status,
            self._on_status,
            QosProfile(depth=_STATUS_DEPTH, name="cli-status"),
            node=node,
        )
        bus.subscribe(self.parameters_topic, ParameterList, self._on_list, LIST_QOS, node=node)

    def _on_list(self, msg: ParameterList) -> None:
        with self._cond:
            self._arrivals += 1
            self._lists[msg.node] = (msg, self._arrivals)
            self._cond.notify_all()

    def _on_status(self, msg: Status) -> None:
        with self._cond:
            self._statuses.append(msg)
            self._cond.notify_all()

    @property
    def arrivals(self) -> int:
        """How many lists have arrived so far (marks a point in time for :meth:`wait_list`)."""
        with self._cond:
            return self._arrivals

    def lists(self) -> dict[str, ParameterList]:
        """The latest list of every node heard so far, by node name."""
        with self._cond:
            return {name: entry[0] for name, entry in sorted(self._lists.items())}

    def running_nodes(self, timeout_s: float) -> list[str]:
        """The nodes discovery shows running in the namespace (a ``/<ns>/heartbeat`` publisher:
        every node has one), parameters or not; this CLI's own hidden nodes left out."""
        heartbeat = _topic(self.namespace, "heartbeat")
        return sorted(
            {
                e.node
                for t in self.bus.discover(timeout_s)
                if t.name == heartbeat
                for e in t.publishers
                if e.node and not e.node.startswith("_")
            }
        )

    def publishing_nodes(self, timeout_s: float) -> set[str]:
        """Nodes that discovery shows publishing on ``/<ns>/parameters``."""
        return {
            e.node
            for t in self.bus.discover(timeout_s)
            if t.name == self.parameters_topic
            for e in t.publishers
            if e.node
        }

    def wait_all(self, node: str | None, wait_s: float) -> dict[str, ParameterList]:
        """The lists of every node that publishes parameters (or of ``node`` only).

        Waits until each node discovery knows of has sent its list, or ``wait_s`` passes.
        """
        end = time.monotonic() + wait_s
        expected = self.publishing_nodes(min(1.0, wait_s))
        if node is not None:
            expected = {node}
        with self._cond:
            self._cond.wait_for(
                lambda: bool(expected) and expected <= set(self._lists),
                timeout=max(0.0, end - time.monotonic()),
            )
        lists = self.lists()
        return lists if node is None else {n: m for n, m in lists.items() if n == node}

    def wait_list(self, node: str, after: int, accept: Any, end: float) -> ParameterList | None:
        """The first list of ``node`` that arrived after arrival ``after`` and that ``accept``s."""

        def found() -> bool:
            entry = self._lists.get(node)
            return entry is not None and entry[1] > after and bool(accept(entry[0]))

        with self._cond:
            if self._cond.wait_for(found, timeout=max(0.0, end - time.monotonic())):
                return self._lists[node][0]
        return None

    def wait_status(self, node: str, request_id: str, end: float) -> Status | None:
        """The status ``node`` published in answer to ``request_id``, or None by ``end``."""
        tag = request_id.encode()

        def answer() -> Status | None:
            for status in self._statuses:
                if status.reporting_node == node and status.data == tag:
                    return status
            return None

        with self._cond:
            self._cond.wait_for(
                lambda: answer() is not None, timeout=max(0.0, end - time.monotonic())
            )
            return answer()


def node_list(watch: ParameterWatch, node: str, wait_s: float) -> ParameterList:
    lists = watch.wait_all(node, wait_s)
    if node in lists:
        return lists[node]
    others = sorted(watch.lists()) or sorted(watch.publishing_nodes(0.5))
    if node not in others and node in watch.running_nodes(0.5):
        raise CliError(
            f"node {node!r} runs in /{watch.namespace.strip('/')} but offers no live parameters "
            f"(it publishes nothing on {watch.parameters_topic}; {FIXED_SETTINGS})"
        )
    raise CliError(
        f"no parameters from node {node!r} on {watch.parameters_topic} within {wait_s:g} s; "
        + (f"nodes with parameters: {others}" if others else "no node publishes parameters")
        + f" ({looked_on(watch.bus)}; is it running there? see --namespace / --hub-port)"
    )


#: Why a running node may offer no parameters (``jointbus serve``'s array node has none).
FIXED_SETTINGS: Final = (
    "its settings are fixed when it starts, e.g. jointbus serve's --rate, --watchdog, "
    "--command-timeout and --allowed-source"
)


def parameter_named(params: ParameterList, name: str) -> Parameter:
    found = params.get(name)
    if found is None:
        raise CliError(
            f"node {params.node!r} has no parameter {name!r}; its parameters: {list(params.names)}"
        )
    return found


def range_text(param: Parameter) -> str:
    """``[min, max]`` of a parameter (``-`` for a bool)."""
    if param.type is ParameterKind.BOOL:
        return "-"

    def bound(value: float) -> str:
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return format_value(int(value) if param.type is ParameterKind.INT else value)

    return f"[{bound(param.min)}, {bound(param.max)}]"


@dataclasses.dataclass(frozen=True, slots=True)
class ParameterRow:
    """One line of ``param list``."""

    node: str
    name: str
    type: str
    value: float | int | bool
    value_text: str
    min: float | None
    max: float | None
    unit: str
    description: str

    @classmethod
    def of(cls, node: str, param: Parameter) -> ParameterRow:
        """The row of ``param`` of ``node``."""
        return cls(
            node,
            param.name,
            ParameterKind(param.type).name.lower(),
            param.value,
            param.value_text,
            param.min if math.isfinite(param.min) else None,
            param.max if math.isfinite(param.max) else None,
            param.unit,
            param.description,
        )


def table_text(rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows
    )


def row_json(row: ParameterRow) -> dict[str, Any]:
    record = dataclasses.asdict(row)
    del record["value_text"]
    return record


def set_value(  # noqa: PLR0917 (the command's arguments)
    bus: Bus, namespace: str, node: str, name: str, value: str, wait: float, timeout: float
) -> str:
    """Send the update, wait for the node's answer; returns the OK text or raises CliError."""
    watch = ParameterWatch(bus, namespace)
    before = node_list(watch, node, wait)
    expected: float | int | bool | None = None
    known = before.get(name)
    if known is not None:
        try:
            expected = parse_value(known.to_spec(), value)
        except ParameterError:
            expected = None  # the node will refuse it, and say why
    publisher = bus.publisher(watch.update_topic, ParameterUpdate, RELIABLE, node=cli_node_name())
    end = time.monotonic() + timeout
    while not publisher.remote_matched and time.monotonic() < end:
        time.sleep(0.01)
    if not publisher.remote_matched:
        refuse_denied(bus, publisher, timeout)  # announced, but the access rules route nothing
        raise CliError(f"node {node!r} does not listen on {watch.update_topic} (no subscriber)")
    request_id = f"{cli_node_name()}:{uuid.uuid4().hex[:12]}"
    mark = watch.arrivals
    publisher.publish(ParameterUpdate(node=node, name=name, value=value, request_id=request_id))

    def shows_value(msg: ParameterList) -> bool:
        current = msg.get(name)
        return current is not None and expected is not None and _same(current.value, expected)

    status: Status | None = None
    listed_by: float | None = None  # when the list showed the value but no answer had come
    while time.monotonic() < end:
        step = min(end, time.monotonic() + 0.05)
        if status is None:
            status = watch.wait_status(node, request_id, step)
            if status is not None and status.level >= Level.WARN:
                raise CliError(status.status)
        current = watch.lists().get(node)
        if status is not None and (expected is None or (current and shows_value(current))):
            return status.status
        if listed_by is None:
            if watch.wait_list(node, mark, shows_value, step) is not None:
                listed_by = time.monotonic()
        elif time.monotonic() - listed_by > _ANSWER_GRACE_S:
            # The list shows the new value but the OK status was not heard: the value counts.
            return f"param {name} set to {value}"
    raise CliError(
        f"no answer from node {node!r} to setting {name} = {value!r} within {timeout:g} s "
        f"(on {watch.update_topic}; {looked_on(watch.bus)})"
    )


def _same(a: float | int | bool, b: float | int | bool) -> bool:
    return type(a) is type(b) and a == b


__all__ = [
    "FIXED_SETTINGS",
    "LIST_QOS",
    "ParameterRow",
    "ParameterWatch",
    "node_list",
    "parameter_named",
    "range_text",
    "row_json",
    "set_value",
    "table_text",
]
