"""A robot's process layout as data: which node runs in which process, on which core, how urgently.

Where it sits: :mod:`jointbus.runtime`, pure data and its loader (YAML, via PyYAML); it opens no
process and knows no robot. :class:`jointbus.stack.Stack` reads a robot's bundled description
(``jointbus/robots/<robot>/launch.yaml``) or one a user gives (``jointbus demo --layout FILE``) and
starts one process per entry with :class:`~jointbus.runtime.process_group.ProcessGroup`.

**Why a description, not code.** Which node shares an interpreter with which is the decision that
makes a 500 Hz Python robot real-time or not: in one process the simulator, the bridge, the control
node and the recorder share one interpreter lock, and their per-cycle costs add up to more than the
2 ms period on a small computer. Split, each hard-timed loop owns an interpreter and, where the host
has the cores, a core. Where that split lies depends on the robot and the computer, so it is a file
a user reads and changes — as ROS 2's launch files and dora-rs's dataflow YAML are — rather than
code spread over the command line::

    # hb50: the simulator with the bridge on one core, the controller on another
    processes:
      - name: bridge
        nodes: [bridge]
        cpu: 0          # pin its loop thread here (where the host has that CPU)
        priority: 50    # SCHED_FIFO priority of its loop (where the OS allows it)
      - name: control
        nodes: [control]
        cpu: 1
        priority: 49
        respawn: false

Keys of a process: ``name`` (unique, ``[a-z][a-z0-9_]*``), ``nodes`` (the node names it runs, each
in exactly one process; which names exist is the stack's to say), ``cpu`` (a CPU index for the
process's loop thread — the bridge's rate loop, the controller's step thread — while its other
threads, the bus's, run on any CPU; absent: not pinned), ``priority`` (SCHED_FIFO 1–99 of its loop
thread — the bridge's rate loop, else the controller's step thread; beside the bridge in one
process the controller's step runs one below it, so that the bridge's cycle pre-empts it; the
process's other threads run 10 below, at least 1 — or absent: the normal scheduler), ``respawn``
(start it again when it dies; default false).
A top-level ``same_host_link`` (default true) says how the processes exchange the per-cycle
streams (best-effort topics: the bridge's frames and state, the joint commands): ``true``, by
same-host links between them (:mod:`jointbus.bus.sibling_link`: a socket each way, no Zenoh thread
woken per message; everything else, and whoever else listens, still over Zenoh); ``false``, all
over Zenoh, as between machines.

Processes start in the order listed and stop in the reverse order. Every error names the file, the
process (name and index), the key, the value and what was expected, and nothing is started from a
description that does not load. A ``cpu`` the host does not have (or does not let the process use)
and a ``priority`` the OS refuses are no errors — the bundled layout runs on a 1-CPU computer —
but what runs says what it applied instead (:attr:`jointbus.stack.Stack.placements`: ``jointbus
demo``'s start-up line reads ``bridge on CPU 7 — not on this 2-CPU host: not pinned``, with a
WARN). A layout without the control node is allowed too (a controller of one's own publishes the
joint commands); the demo says once at start that nothing else commands the robot.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

from jointbus.runtime.realtime import FIFO_PRIORITY_MAX, FIFO_PRIORITY_MIN

__all__ = ["LaunchDescription", "LaunchDescriptionError", "ProcessSpec"]

_NAME: Final = re.compile(r"[a-z][a-z0-9_]*\Z")
_PROCESS_KEYS: Final = ("name", "nodes", "cpu", "priority", "respawn")


class LaunchDescriptionError(ValueError):
    """A launch description that cannot be run: names the source, the place, the value and what
    was expected."""


@dataclass(frozen=True, slots=True)
class ProcessSpec:
    """One process of a layout (see the module docstring): ``cpu`` and ``priority`` ``None`` when
    not set."""

    name: str
    nodes: tuple[str, ...]
    cpu: int | None = None
    priority: int | None = None
    respawn: bool = False


@dataclass(frozen=True, slots=True)
class LaunchDescription:
    """The processes of a robot's layout, in start order; ``source`` says where it came from."""

    processes: tuple[ProcessSpec, ...]
    source: str = "<launch description>"
    same_host_link: bool = True

    def __post_init__(self) -> None:
        if not self.processes:
            raise LaunchDescriptionError(f"{self.source}: 'processes' is empty; expected ≥ 1")
        names: dict[str, int] = {}
        owner: dict[str, str] = {}
        for i, spec in enumerate(self.processes):
            where = f"{self.source}: process {spec.name!r} (index {i})"
            if spec.name in names:
                raise LaunchDescriptionError(
                    f"{where}: name already used by index {names[spec.name]}; expected unique names"
                )
            names[spec.name] = i
            for node in spec.nodes:
                if node in owner:
                    raise LaunchDescriptionError(
                        f"{where}: node {node!r} already runs in process {owner[node]!r}; "
                        "expected each node in one process"
                    )
                owner[node] = spec.name

    @property
    def nodes(self) -> tuple[str, ...]:
        """Every node of the layout, in process order."""
        return tuple(node for spec in self.processes for node in spec.nodes)

    def process(self, name: str) -> ProcessSpec:
        """The process called ``name`` (``KeyError`` naming the ones there are)."""
        for spec in self.processes:
            if spec.name == name:
                return spec
        raise KeyError(
            f"{self.source}: no process {name!r}; processes: "
            + ", ".join(spec.name for spec in self.processes)
        )

    def check_nodes(self, known: Sequence[str]) -> None:
        """Refuse a node name not in ``known`` (the nodes the runner can start)."""
        for i, spec in enumerate(self.processes):
            for node in spec.nodes:
                if node not in known:
                    raise LaunchDescriptionError(
                        f"{self.source}: process {spec.name!r} (index {i}): node {node!r} is "
                        f"unknown; expected one of {', '.join(known)}"
                    )

    @classmethod
    def load(cls, path: str | Path) -> LaunchDescription:
        """Read a description from a YAML file (:class:`LaunchDescriptionError` if it cannot)."""
        file = Path(path)
        try:
            text = file.read_text(encoding="utf-8")
        except OSError as exc:
            raise LaunchDescriptionError(
                f"{file}: cannot read the launch description: {exc}"
            ) from None
        return cls.loads(text, source=str(file))

    @classmethod
    def loads(cls, text: str, *, source: str = "<launch description>") -> LaunchDescription:
        """Parse a description from YAML text."""
        try:
            document = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise LaunchDescriptionError(_yaml_error(source, exc)) from None
        if not isinstance(document, Mapping):
            raise LaunchDescriptionError(f"{source}: expected a mapping with 'processes'")
        unknown = sorted(set(map(str, document)) - {"processes", "same_host_link"})
        if unknown:
            raise LaunchDescriptionError(
                f"{source}: unknown key(s) {', '.join(unknown)}; expected 'processes' "
                "(and 'same_host_link')"
            )
        link = document.get("same_host_link", True)
        if not isinstance(link, bool):
            raise LaunchDescriptionError(
                f"{source}: 'same_host_link' = {link!r}; expected true or false"
            )
        entries = document.get("processes")
        if not isinstance(entries, list):
            raise LaunchDescriptionError(
                f"{source}: 'processes' = {entries!r}; expected a list of processes"
            )
        return cls(
            tuple(_process(source, i, e) for i, e in enumerate(entries)),
            source=source,
            same_host_link=link,
        )

    def dumps(self) -> str:
        """The description as YAML text (:meth:`loads` reads it back to an equal one)."""
        processes: list[dict[str, Any]] = []
        for spec in self.processes:
            entry: dict[str, Any] = {"name": spec.name, "nodes": list(spec.nodes)}
            if spec.cpu is not None:
                entry["cpu"] = spec.cpu
            if spec.priority is not None:
                entry["priority"] = spec.priority
            if spec.respawn:
                entry["respawn"] = True
            processes.append(entry)
        document: dict[str, Any] = {"processes": processes}
        if not self.same_host_link:
            document["same_host_link"] = False
        return yaml.safe_dump(document, sort_keys=False)


def _yaml_error(source: str, exc: yaml.YAMLError) -> str:
    """One line for a YAML syntax error: the file, line and column, the problem and its context
    (PyYAML's own text is several lines, each ``in "<unicode string>", line N``)."""
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        mark = exc.problem_mark
        text = f"{source}: line {mark.line + 1}, column {mark.column + 1}: not YAML: {exc.problem}"
        if exc.context is not None:
            context = exc.context_mark
            where = "" if context is None else f" from line {context.line + 1}, column "
            where += "" if context is None else f"{context.column + 1}"
            text += f" ({exc.context}{where})"
        return text
    return f"{source}: not YAML: " + " ".join(str(exc).split())


def _given(entry: Mapping[Any, Any], key: str) -> str:
    """``'nodes' = 3``, or ``'nodes' missing`` for a key the entry lacks (a new user's trial
    read ``'nodes' = None`` for a process without one, 2026-12-07)."""
    return f"'{key}' = {entry[key]!r}" if key in entry else f"'{key}' missing"


def _process(source: str, index: int, entry: object) -> ProcessSpec:
    if not isinstance(entry, Mapping):
        raise LaunchDescriptionError(
            f"{source}: process index {index} = {entry!r}; expected a mapping with "
            f"{', '.join(_PROCESS_KEYS)}"
        )
    name = entry.get("name")
    where = f"{source}: process {name!r} (index {index})"
    if "name" not in entry:
        where = f"{source}: process index {index}"
    if not isinstance(name, str) or not _NAME.match(name):
        raise LaunchDescriptionError(
            f"{where}: {_given(entry, 'name')}; expected a name of lower-case letters, digits "
            "and _"
        )
    unknown = sorted(set(map(str, entry)) - set(_PROCESS_KEYS))
    if unknown:
        raise LaunchDescriptionError(
            f"{where}: unknown key(s) {', '.join(unknown)}; expected {', '.join(_PROCESS_KEYS)}"
        )
    nodes = entry.get("nodes")
    if (
        not isinstance(nodes, list)
        or not nodes
        or not all(isinstance(n, str) and _NAME.match(n) for n in nodes)
    ):
        raise LaunchDescriptionError(
            f"{where}: {_given(entry, 'nodes')}; expected a list of node names"
        )
    cpu = entry.get("cpu")
    if cpu is not None and (isinstance(cpu, bool) or not isinstance(cpu, int) or cpu < 0):
        raise LaunchDescriptionError(f"{where}: 'cpu' = {cpu!r}; expected a CPU index ≥ 0")
    priority = entry.get("priority")
    if priority is not None and (
        isinstance(priority, bool)
        or not isinstance(priority, int)
        or not FIFO_PRIORITY_MIN <= priority <= FIFO_PRIORITY_MAX
    ):
        raise LaunchDescriptionError(
            f"{where}: 'priority' = {priority!r}; expected a SCHED_FIFO priority "
            f"{FIFO_PRIORITY_MIN}–{FIFO_PRIORITY_MAX}"
        )
    respawn = entry.get("respawn", False)
    if not isinstance(respawn, bool):
        raise LaunchDescriptionError(f"{where}: 'respawn' = {respawn!r}; expected true or false")
    return ProcessSpec(name, tuple(nodes), cpu, priority, respawn)
