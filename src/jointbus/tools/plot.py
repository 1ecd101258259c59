"""``jointbus plot``: fields of recorded messages over time, as a PNG.

Where it sits: :mod:`jointbus.tools`, over :mod:`jointbus.tools.bag_reader` and the message
registry; matplotlib is imported only here (and only when plotting).

A *series* is one field of one topic, over the bag's log time (s from the bag's first message).
A field is an attribute path (``joint_position``, ``orientation.w``, ``header.stamp.sec``). When it
is a per-joint array, the message's joint-name field (``joint_name``, ``name`` or ``names``) labels
the elements and ``joints`` picks some by name; the default is every joint. Series of the same
joint share one subplot, so commanded and measured position of a joint appear together::

    jointbus plot run.mcap --topic /hb50/joint_command --field t_pos \\
        --topic /hb50/bridge_data --field joint_position --joints fr_j1 -o pos.png

:func:`plot_bag` returns the matplotlib ``Figure`` it saved (tests read the plotted data back).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from jointbus.messages.registry import TypeRegistry, UnknownTypeError
from jointbus.runtime.message_types import runtime_registry
from jointbus.tools.bag_reader import Bag, open_bag
from jointbus.tools.errors import PlotError

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: Fields that name the elements of a message's per-joint arrays, in the order they are tried.
NAME_FIELDS = ("joint_name", "name", "names")


@dataclass(frozen=True)
class Series:
    """One plotted line: ``values`` of ``topic``'s ``field`` (for ``joint``) at ``times_s``."""

    topic: str
    field: str
    joint: str | None
    times_s: npt.NDArray[np.float64]
    values: npt.NDArray[np.float64]

    @property
    def label(self) -> str:
        """Legend text: topic and field."""
        return f"{self.topic} {self.field}"


def _resolve(msg: object, field: str, topic: str) -> Any:
    value: Any = msg
    for i, part in enumerate(field.split(".")):
        if not part or not hasattr(value, part):
            path = ".".join(field.split(".")[:i]) or "the message"
            fields: Any = getattr(type(value), "__dataclass_fields__", None) or getattr(
                value, "__slots__", ()
            )
            known = ", ".join(str(f) for f in fields if not str(f).startswith("_")) or "none"
            raise PlotError(
                f"topic {topic}: field {field!r}: {path} has no field {part!r} "
                f"(fields: {known})"
            )
        value = getattr(value, part)
    return value


def _names_of(msg: object, count: int) -> tuple[str, ...]:
    for name_field in NAME_FIELDS:
        names = getattr(msg, name_field, None)
        if isinstance(names, (tuple, list)) and len(names) == count:
            return tuple(str(n) for n in names)
    return tuple(str(i) for i in range(count))


def _number(value: object, topic: str, field: str) -> float:
    if isinstance(value, (bool, int, float, np.integer, np.floating)):
        return float(value)
    raise PlotError(
        f"topic {topic}: field {field!r} is {type(value).__name__}, not a number or an array "
        "of numbers; name a numeric field (e.g. joint_position, orientation.w)"
    )


def extract_series(
    bag: Bag,
    topic: str,
    field: str,
    joints: Sequence[str] | None = None,
    registry: TypeRegistry | None = None,
) -> list[Series]:
    """The series of ``topic``'s ``field``: one per selected joint, or one for a scalar field."""
    info = bag.topic(topic)  # BagError naming the topics present
    registry = registry if registry is not None else runtime_registry()
    try:
        cls = registry.by_type_name(info.type_name)
    except UnknownTypeError as exc:
        raise PlotError(f"topic {topic}: cannot decode type {info.type_name!r}: {exc}") from exc
    start = bag.start_ns
    times: list[float] = []
    scalar: list[float] = []
    per_joint: dict[str, list[float]] = {}
    order: list[str] = []
    is_array: bool | None = None
    for record in bag.messages([topic]):
        msg = cls.from_cdr(record.data)
        value = _resolve(msg, field, topic)
        array = isinstance(value, (tuple, list, bytes, np.ndarray))
        if is_array is None:
            is_array = array
        elif array != is_array:
            raise PlotError(f"topic {topic}: field {field!r} changes between array and scalar")
        times.append((record.log_time_ns - start) / 1e9)
        if not array:
            scalar.append(_number(value, topic, field))
            continue
        names = _names_of(msg, len(value))
        wanted = joints if joints else names
        for joint in wanted:
            if joint not in names:
                raise PlotError(
                    f"topic {topic}: field {field!r}: no joint {joint!r} in the message at "
                    f"t={times[-1]:.3f} s (joints: "
                    + ", ".join(f"{n} (index {i})" for i, n in enumerate(names))
                    + ")"
                )
            if joint not in per_joint:
                # a joint first seen later gets NaN for the messages before (not plotted)
                per_joint[joint] = [math.nan] * (len(times) - 1)
                order.append(joint)
        index = {n: i for i, n in enumerate(names)}
        for joint in order:
            i = index.get(joint)
            per_joint[joint].append(_number(value[i], topic, field) if i is not None else math.nan)
    t = np.asarray(times, dtype=np.float64)
    if not is_array:
        return [Series(topic, field, None, t, np.asarray(scalar, dtype=np.float64))]
    return [
        Series(topic, field, joint, t, np.asarray(per_joint[joint], dtype=np.float64))
        for joint in order
    ]


def pair_requests(topics: Sequence[str], fields: Sequence[str]) -> list[tuple[str, str]]:
    """Pair ``--topic`` and ``--field`` options: in order, or one of either side for all."""
    if not topics or not fields:
        raise PlotError("give at least one --topic and one --field")
    if len(fields) == 1:
        return [(t, fields[0]) for t in topics]
    if len(topics) == 1:
        return [(topics[0], f) for f in fields]
    if len(topics) != len(fields):
        raise PlotError(
            f"{len(topics)} topics and {len(fields)} fields: give one field for all topics, one "
            "topic for all fields, or one field per topic (paired in order)"
        )
    return list(zip(topics, fields, strict=True))


def render(series: Sequence[Series], title: str = "") -> Figure:
    """A figure with one subplot per joint (or one for scalar fields), sharing the time axis."""
    from matplotlib.figure import Figure

    if not series:
        raise PlotError("nothing to plot: the selected topics have no messages")
    groups: dict[str | None, list[Series]] = {}
    for s in series:
        groups.setdefault(s.joint, []).append(s)
    rows = len(groups)
    fig = Figure(figsize=(10, max(3.0, 2.2 * rows)), layout="constrained")
    axes = fig.subplots(rows, 1, sharex=True, squeeze=False)[:, 0]
    for ax, (joint, members) in zip(axes, groups.items(), strict=True):
        for s in members:
            ax.plot(s.times_s, s.values, label=s.label, linewidth=1.0)
        fields = ", ".join(dict.fromkeys(m.field for m in members))
        ax.set_ylabel(joint if joint is not None else fields)
        ax.grid(True, alpha=0.3)
        ax.legend(loc="upper right", fontsize="small")
    axes[-1].set_xlabel("time since bag start (s)")
    if title:
        fig.suptitle(title)
    return fig


def plot_bag(
    path: str | Path,
    topics: Sequence[str],
    fields: Sequence[str],
    out: str | Path,
    *,
    joints: Sequence[str] | None = None,
    registry: TypeRegistry | None = None,
    dpi: int = 100,
) -> Figure:
    """Plot the requested series of the bag at ``path`` into the PNG ``out``; returns the figure."""
    requests = pair_requests(topics, fields)
    with open_bag(path) as bag:
        series: list[Series] = []
        for topic, field in requests:
            series += extract_series(bag, topic, field, joints, registry)
    fig = render(series, title=Path(path).name)
    try:
        fig.savefig(out, dpi=dpi, format="png")
    except OSError as exc:
        raise PlotError(f"cannot write {str(out)!r}: {exc.strerror}") from exc
    return fig


__all__ = ["NAME_FIELDS", "Series", "extract_series", "pair_requests", "plot_bag", "render"]
