"""``jointbus plot``: fields of recorded messages over time, as a PNG.

Where it sits: :mod:`jointbus.tools`, over :mod:`jointbus.tools.bag_reader` and the message
registry; matplotlib is imported only here (and only when plotting).

A *series* is one field of one topic, over time (s from the bag's start, its first message's log
time). A field is an attribute path (``joint_position``, ``orientation.w``, ``header.stamp.sec``)
of the message's data fields (class attributes such as ``TYPE_NAME`` are not fields). When it is
a per-joint array, the message's joint-name field (``joint_name``, ``name`` or ``names``) labels
the elements and ``joints`` picks some by name; the default is every joint. Series of the same
joint share one subplot, so commanded and measured position of a joint appear together::

    jointbus plot run.mcap --topic /hb50/joint_command --field t_pos \\
        --topic /hb50/bridge_data --field joint_position --joints fr_j1 -o pos.png

**Which time.** A message is placed at its own time, its ``header.stamp`` (wall clock by the
project's rule, or a stepped simulator's time anchored on it: :mod:`jointbus.messages.stamp`),
where its topic's messages have one; the receive (log) time is the fallback, for messages without
a header and for a topic whose stamps cannot be placed on the bag's clock (a 0 stamp, stamps going
back, or stamps a median of more than :data:`MAX_STAMP_SKEW_S` from the receive times: a
simulator counting from 0, an unset clock). Receive times show the transport, not the robot:
zenoh delivers the 500 Hz bridge topics in bursts (a median 0.21 ms apart where the stamps are
2.0 ms apart, a new user's recording, 2026-12-05). The x axis says which time it shows. Stamps
that lag the receive times by more than :data:`STAMP_LAG_SHIFTED_S` (a simulated robot that lost
time to stalls runs behind the wall clock: 7 s in a new user's recording, whose axis then began
at -7 s) are drawn shifted by their median lag, the same shift for every stamped line (a command
stays aligned with the frame it answers), and the axis label gives the shift.

**Units.** The y axis names the unit of each plotted quantity, taken from the field
(:data:`FIELD_UNITS`): ``joint_position`` / ``t_pos`` in rad, velocities in rad/s, efforts and
torques in N·m, gains in N·m/rad and N·m·s/rad, temperatures in °C... — m, m/s and N instead for
a prismatic joint of the robot model. Messages store SI units (the project's rule), so the field
says the unit; a field the table does not know gets no unit rather than a guessed one.

**Joint roles.** A robot model (``robot``; by default the bundled robot whose joints include every
plotted joint) can give joints a role (``knee`` for ``fr_j2`` on the quadruped): labels read
``fr_j2 (knee)``, and ``joints`` takes a role as well as a name (``knee`` selects every knee).

**Only what happened.** A position target with no stiffness behind it commands nothing: damping
and idle commands carry ``kp = 0`` with ``t_pos = 0``, which drawn would show a "commanded"
straight knee at 0 rad. So ``t_pos`` of a joint whose ``kp`` is 0 in that message is not plotted
(:data:`TARGET_GAINS`). And a line is broken where consecutive messages of its topic are more
than :data:`GAP_FACTOR` × the topic's typical period apart on the plotted time (a stack paused
8.1–11.4 s would otherwise be drawn as a ramp across the pause). The typical period around a
gap is the median of the mean periods of the runs of :data:`PERIOD_WINDOW` periods near it
(:func:`local_periods`), not the median of single periods: bursts of a few messages (near-zero
periods) do not shrink it, a stall is too short a part of its neighbourhood to stretch it, and a
stretch at a lower rate (a simulator publishing every sixth step while it catches up, stamps
12 ms apart in a 2 ms topic) is no gap. A point with a break on both sides is drawn as a marker
(a line through one point draws nothing).

The legend sits right of each subplot, outside the data.

:func:`plot_bag` returns the matplotlib ``Figure`` it saved (tests read the plotted data back).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import numpy.typing as npt

from jointbus.messages.registry import TypeRegistry, UnknownTypeError
from jointbus.messages.stamp import Time
from jointbus.messages.std_msgs import Header
from jointbus.model import JointType, RobotModel
from jointbus.tools.bag_reader import Bag, open_bag
from jointbus.tools.errors import PlotError
from jointbus.tools.known_types import known_registry

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: Fields that name the elements of a message's per-joint arrays, in the order they are tried.
NAME_FIELDS = ("joint_name", "name", "names")

# Quantities whose unit depends on the joint: (rotary unit, linear unit).
_POSITION: Final = ("rad", "m")
_VELOCITY: Final = ("rad/s", "m/s")
_EFFORT: Final = ("N·m", "N")
_STIFFNESS: Final = ("N·m/rad", "N/m")
_DAMPING: Final = ("N·m·s/rad", "N·s/m")

#: Unit of a field, by the last part of its path (the first entries by the whole path): a pair
#: is (rotary joint, linear joint). Every jointbus message stores SI units, so the name decides.
FIELD_UNITS: Final[dict[str, str | tuple[str, str]]] = {
    "joint_position": _POSITION,
    "t_pos": _POSITION,
    "position": _POSITION,
    "positions": _POSITION,
    "joint_velocity": _VELOCITY,
    "t_vel": _VELOCITY,
    "velocity": _VELOCITY,
    "velocities": _VELOCITY,
    "speed": _VELOCITY,
    "joint_effort": _EFFORT,
    "t_trq": _EFFORT,
    "effort": _EFFORT,
    "efforts": _EFFORT,
    "torque": _EFFORT,
    "kp": _STIFFNESS,
    "kd": _DAMPING,
    "joint_temperature": "°C",
    "temperature": "°C",
    "current": "A",
    "sec": "s",
    "nanosec": "ns",
    "battery": "%",
    "bus_v": "V",
    "bus_i": "A",
    "bus_p": "W",
    "bus_pt": "kWh",
    "legs_v": "V",
    "charger_v": "V",
    "bridge_t": "°C",
    "up_time": "s",
}
#: Target fields that command nothing where the gain beside them (same message, same joint) is 0:
#: their values there are not plotted.
TARGET_GAINS: Final[dict[str, str]] = {"t_pos": "kp"}
#: A line breaks where consecutive messages are further apart than this many typical periods.
GAP_FACTOR: Final = 5.0
#: The typical period is the median mean period of this many consecutive periods (fewer for a
#: series shorter than 4 × this), so bursts of messages do not make it near 0.
PERIOD_WINDOW: Final = 10
#: Header stamps further than this (s, median) from their messages' receive times are taken to be
#: on another clock than the bag's: the topic is plotted over receive time.
MAX_STAMP_SKEW_S: Final = 3600.0
#: Stamps lagging (or leading) the receive times by more than this (s, median) are drawn shifted
#: by their lag, so the time axis is the bag's; a smaller lag (delivery: ms) is drawn as stamped.
STAMP_LAG_SHIFTED_S: Final = 0.5

#: Units of the members of a vector field, by the field's name (``angular_velocity.x``).
VECTOR_UNITS: Final[dict[str, str]] = {
    "angular_velocity": "rad/s",
    "linear_acceleration": "m/s²",
    "linear_velocity": "m/s",
    "foot_pos_body": "m",
    "foot_vel_body": "m/s",
    "foot_force": "N",
}


@dataclass(frozen=True)
class Series:
    """One plotted line: ``values`` of ``topic``'s ``field`` (for ``joint``) at ``times_s`` (s
    since the bag's start, on ``clock``), in ``unit`` (``""``: not known)."""

    topic: str
    field: str
    joint: str | None
    times_s: npt.NDArray[np.float64]
    values: npt.NDArray[np.float64]
    unit: str = ""
    #: ``"stamp"``: ``times_s`` are header stamps; ``"receive"``: the bag's log times
    clock: str = "receive"
    #: On the stamp clock: the median of receive time − stamp (s) over the messages — how far
    #: the robot's clock ran behind the recording's (a simulator that lost time to a stall)
    stamp_lag_s: float = 0.0

    @property
    def label(self) -> str:
        """Legend text: topic and field."""
        return f"{self.topic} {self.field}"


def field_unit(field: str, linear: bool = False) -> str:
    """The unit of ``field`` (see :data:`FIELD_UNITS`); ``linear`` for a prismatic joint's."""
    parts = field.split(".")
    if len(parts) >= 2 and parts[-2] in VECTOR_UNITS:
        return VECTOR_UNITS[parts[-2]]
    unit = FIELD_UNITS.get(parts[-1], "")
    if isinstance(unit, tuple):
        return unit[1] if linear else unit[0]
    return unit


def data_fields(value: object) -> list[str]:
    """The data fields of a message (dataclass fields, not class attributes nor ``_private``)."""
    if dataclasses.is_dataclass(value):
        return [f.name for f in dataclasses.fields(value) if not f.name.startswith("_")]
    return []


def _robot_for(joint_names: set[str], robot: RobotModel | str | None) -> RobotModel | None:
    """``robot`` if a model was given; for ``"auto"`` the first bundled robot having every joint."""
    if not isinstance(robot, str):
        return robot
    if robot != "auto" or not joint_names:
        return None
    from jointbus.model import bundled_robots, load_robot

    for name in bundled_robots():
        model = load_robot(name)
        if joint_names <= {j.name for j in model.joints}:
            return model
    return None


def _resolve(msg: object, field: str, topic: str) -> Any:
    value: Any = msg
    for i, part in enumerate(field.split(".")):
        known_fields = data_fields(value)
        if not part or part not in known_fields:
            path = ".".join(field.split(".")[:i]) or "the message"
            known = ", ".join(known_fields) or "none"
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


def local_periods(times_s: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """For each period of the sorted ``times_s``, the topic's typical period around it (s): the
    median, over the runs of ``k`` consecutive periods centred within ``2k`` periods of it, of a
    run's mean (``k`` = :data:`PERIOD_WINDOW`, or a quarter of the periods of a shorter series, at
    least 1).

    The median of single periods is the period of a regular series but near 0 for one delivered
    in bursts; a run's mean spans the bursts. A stall moves only the ``k`` runs holding it, fewer
    than half of the ``4k + 1`` around it; a stretch at a lower rate (a simulator publishing every
    sixth step while it catches up) has the longer period as its own.
    """
    count = len(times_s) - 1
    if count < 1:
        return np.zeros(0)
    k = max(1, min(PERIOD_WINDOW, count // 4))
    means = (times_s[k:] - times_s[:-k]) / k  # means[j]: periods j .. j + k - 1
    reach, centre = 2 * k, (k - 1) // 2
    # padded[i : i + 2 * reach + 1] holds the runs centred within `reach` of period i (NaN: none)
    padded = np.concatenate(
        (np.full(reach + centre, np.nan), means, np.full(reach + k, np.nan))
    )
    rows = np.lib.stride_tricks.sliding_window_view(padded, 2 * reach + 1)[:count]
    out = np.empty(count)
    for first in range(0, count, 65_536):  # bounded memory: nanmedian copies its rows
        out[first : first + 65_536] = np.nanmedian(rows[first : first + 65_536], axis=1)
    return out


def break_at_gaps(
    times_s: npt.NDArray[np.float64], values: npt.NDArray[np.float64], factor: float = GAP_FACTOR
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """``times_s`` and ``values`` with a NaN point inserted in every gap longer than ``factor``
    × the typical period around it (:func:`local_periods`, s), so that matplotlib does not draw
    a line across it."""
    if len(times_s) < 3:
        return times_s, values
    periods = np.diff(times_s)
    typical = local_periods(times_s)
    # 1 ns of slack: times come in ns, and a gap of exactly `factor` periods is no break
    gaps = np.flatnonzero((periods > factor * typical + 1e-9) & (typical > 0)) + 1
    if len(gaps) == 0:
        return times_s, values
    mid = (times_s[gaps - 1] + times_s[gaps]) / 2
    return np.insert(times_s, gaps, mid), np.insert(values, gaps, math.nan)


def lone_points(values: npt.NDArray[np.float64]) -> npt.NDArray[np.intp]:
    """Indices of the values (not NaN) whose neighbours are both NaN or absent: the segments of
    one point, which a line does not draw."""
    drawn = ~np.isnan(values)
    before = np.concatenate(([False], drawn[:-1]))
    after = np.concatenate((drawn[1:], [False]))
    return np.flatnonzero(drawn & ~before & ~after)


def _stamp_ns(msg: object) -> int | None:
    """The message's ``header.stamp`` (ns), ``None`` when it has no header."""
    header = getattr(msg, "header", None)
    stamp = getattr(header, "stamp", None)
    if not isinstance(header, Header) or not isinstance(stamp, Time):
        return None
    return stamp.to_ns()


def message_times(
    log_ns: Sequence[int], stamps_ns: Sequence[int | None], start_ns: int
) -> tuple[npt.NDArray[np.float64], str, float]:
    """The plotted times (s since ``start_ns``) of a topic's messages, their clock (``"stamp"``
    or ``"receive"``) and, on the stamp clock, the median lag of the stamps behind the receive
    times (s; 0.0 on the receive clock): the header stamps where every message has a usable one
    (not 0, never going back, within :data:`MAX_STAMP_SKEW_S` of the receive times), else the
    receive (log) times."""
    log = np.asarray(log_ns, dtype=np.int64)
    if len(stamps_ns) and all(t is not None and t > 0 for t in stamps_ns):
        stamps = np.asarray(stamps_ns, dtype=np.int64)
        skew_s = float(np.median(log - stamps)) / 1e9
        if np.all(np.diff(stamps) >= 0) and abs(skew_s) <= MAX_STAMP_SKEW_S:
            return (stamps - start_ns).astype(np.float64) / 1e9, "stamp", skew_s
    return (log - start_ns).astype(np.float64) / 1e9, "receive", 0.0


def _gain_is_zero(msg: object, field: str, count: int) -> list[bool] | None:
    """Per joint, whether the gain that gives ``field`` (a target) its effect is 0 in ``msg``;
    ``None`` when ``field`` is no such target or the message has no matching gain array."""
    parts = field.split(".")
    gain_field = TARGET_GAINS.get(parts[-1])
    if gain_field is None:
        return None
    owner: Any = msg
    for part in parts[:-1]:
        owner = getattr(owner, part, None)
    gains = getattr(owner, gain_field, None)
    if not isinstance(gains, (tuple, list, np.ndarray)) or len(gains) != count:
        return None
    return [float(g) == 0.0 for g in gains]


def extract_series(
    bag: Bag,
    topic: str,
    field: str,
    joints: Sequence[str] | None = None,
    *,
    registry: TypeRegistry | None = None,
    robot: RobotModel | str | None = "auto",
) -> list[Series]:
    """The series of ``topic``'s ``field``: one per selected joint, or one for a scalar field.

    ``joints`` are joint names or roles of ``robot`` (a model, ``None``, or ``"auto"``: see the
    module docstring), which also tells rotary from linear units.
    """
    info = bag.topic(topic)  # BagError naming the topics present
    registry = registry if registry is not None else known_registry()
    try:
        cls = registry.by_type_name(info.type_name)
    except UnknownTypeError as exc:
        raise PlotError(f"topic {topic}: cannot decode type {info.type_name!r}: {exc}") from exc
    start = bag.start_ns
    log_ns: list[int] = []  # receive (log) times
    stamps_ns: list[int | None] = []
    scalar: list[float] = []
    per_joint: dict[str, list[float]] = {}
    order: list[str] = []
    is_array: bool | None = None
    model: RobotModel | None = None if robot == "auto" else _robot_for(set(), robot)
    roles: dict[str, str] = {}
    for record in bag.messages([topic]):
        msg = cls.from_cdr(record.data)
        value = _resolve(msg, field, topic)
        array = isinstance(value, (tuple, list, bytes, np.ndarray))
        if is_array is None:
            is_array = array
        elif array != is_array:
            raise PlotError(f"topic {topic}: field {field!r} changes between array and scalar")
        log_ns.append(record.log_time_ns)
        stamps_ns.append(_stamp_ns(msg))
        if not array:
            scalar.append(_number(value, topic, field))
            continue
        names = _names_of(msg, len(value))
        if robot == "auto" and model is None and len(log_ns) == 1:
            model = _robot_for(set(names), robot)
        if model is not None and not roles:
            roles = {j.name: j.role for j in model.joints if j.role}
        wanted: list[str] = []
        for joint in joints if joints else names:
            having_role = [n for n in names if roles.get(n) == joint and n != joint]
            if joint not in names and not having_role:
                raise PlotError(
                    f"topic {topic}: field {field!r}: no joint {joint!r} in the message at "
                    f"t={(log_ns[-1] - start) / 1e9:.3f} s (joints: "
                    + ", ".join(
                        f"{n} (index {i}" + (f", {roles[n]})" if roles.get(n) else ")")
                        for i, n in enumerate(names)
                    )
                    + ")"
                )
            wanted += [joint] if joint in names else having_role
        for joint in wanted:
            if joint not in per_joint:
                # a joint first seen later gets NaN for the messages before (not plotted)
                per_joint[joint] = [math.nan] * (len(log_ns) - 1)
                order.append(joint)
        index = {n: i for i, n in enumerate(names)}
        idle = _gain_is_zero(msg, field, len(value))
        for joint in order:
            i = index.get(joint)
            if i is None or (idle is not None and idle[i]):
                per_joint[joint].append(math.nan)  # absent, or a target that commands nothing
            else:
                per_joint[joint].append(_number(value[i], topic, field))
    t, clock, lag_s = message_times(log_ns, stamps_ns, start)
    if not is_array:
        values = np.asarray(scalar, dtype=np.float64)
        return [Series(topic, field, None, t, values, field_unit(field), clock, lag_s)]
    linear = {j.name for j in model.joints if j.type is JointType.PRISMATIC} if model else set()
    return [
        Series(
            topic,
            field,
            joint if not roles.get(joint) else f"{joint} ({roles[joint]})",
            t,
            np.asarray(per_joint[joint], dtype=np.float64),
            field_unit(field, linear=joint in linear),
            clock,
            lag_s,
        )
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
    # Stamps that lag the recording by more than STAMP_LAG_SHIFTED_S (a simulated robot that
    # lost time to a stall: 7 s in a user's trial, whose axis ran from -7 s) are drawn shifted by
    # their median lag, one shift for all of them: the lines keep their stamps' spacing and
    # stay aligned with each other (a command and the frame it answers), and the axis matches
    # the bag's; the label gives the shift.
    lags = [s.stamp_lag_s for s in series if s.clock == "stamp"]
    shift_s = float(np.median(lags)) if lags else 0.0
    if abs(shift_s) <= STAMP_LAG_SHIFTED_S:
        shift_s = 0.0
    rows = len(groups)
    fig = Figure(figsize=(10, max(3.0, 2.2 * rows)), layout="constrained")
    axes = fig.subplots(rows, 1, sharex=True, squeeze=False)[:, 0]
    for ax, (joint, members) in zip(axes, groups.items(), strict=True):
        for s in members:
            x, y = break_at_gaps(s.times_s + (shift_s if s.clock == "stamp" else 0.0), s.values)
            lone = lone_points(y)
            ax.plot(
                x, y, label=s.label, linewidth=1.0,
                # a segment of one point draws no line: a marker there, on that point only
                marker="o" if len(lone) else "None", markersize=3.0,
                markevery=lone.tolist() if len(lone) else None,
            )
        fields = ", ".join(dict.fromkeys(m.field for m in members))
        units = ", ".join(dict.fromkeys(m.unit for m in members if m.unit))
        ax.set_ylabel((joint if joint is not None else fields) + (f" [{units}]" if units else ""))
        ax.grid(True, alpha=0.3)
        # right of the axes, never over the data (constrained layout makes room for it)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    clocks = {s.clock for s in series}
    on = {
        frozenset({"stamp"}): "header stamps",
        frozenset({"receive"}): "receive time",
    }.get(frozenset(clocks), "header stamps, else receive time")
    if shift_s:
        on += (
            f"; stamps shifted by {shift_s:+.2f} s: the robot's clock ran {abs(shift_s):.2f} s "
            f"{'behind' if shift_s > 0 else 'ahead of'} the recording's"
        )
    axes[-1].set_xlabel(f"time since bag start (s, {on})")
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
    robot: RobotModel | str | None = "auto",
    dpi: int = 100,
) -> Figure:
    """Plot the requested series of the bag at ``path`` into the PNG ``out``; returns the figure.

    ``robot``: the model giving joint roles and kinds (``"auto"``: a bundled robot having every
    plotted joint; ``None``: none).
    """
    requests = pair_requests(topics, fields)
    with open_bag(path) as bag:
        series: list[Series] = []
        for topic, field in requests:
            series += extract_series(bag, topic, field, joints, registry=registry, robot=robot)
    fig = render(series, title=Path(path).name)
    try:
        fig.savefig(out, dpi=dpi, format="png")
    except OSError as exc:
        raise PlotError(f"cannot write {str(out)!r}: {exc.strerror}") from exc
    return fig


__all__ = [
    "FIELD_UNITS",
    "GAP_FACTOR",
    "MAX_STAMP_SKEW_S",
    "NAME_FIELDS",
    "PERIOD_WINDOW",
    "TARGET_GAINS",
    "VECTOR_UNITS",
    "Series",
    "break_at_gaps",
    "data_fields",
    "extract_series",
    "field_unit",
    "local_periods",
    "lone_points",
    "message_times",
    "pair_requests",
    "plot_bag",
    "render",
]
