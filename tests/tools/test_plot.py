"""Plots: the figure holds exactly the recorded series, and the PNG shows them."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from matplotlib.colors import to_rgb

from jointbus.messages.std_msgs import Header
from jointbus.robots.hb50.messages.bridge_data import BridgeData
from jointbus.robots.hb50.messages.joint_command import JointCommand
from jointbus.tools.errors import BagError, PlotError
from jointbus.tools.plot import GAP_FACTOR, break_at_gaps, message_times, plot_bag
from support.tools import JOINTS, bridge_data, joint_command, write_mcap

matplotlib.use("Agg")
T0 = 1_800_000_000_000_000_000
N = 40


@pytest.fixture
def bag(tmp_path: Path) -> Path:
    entries = [("/hb50/bridge_data", bridge_data(i), T0 + i * 10_000_000) for i in range(N)]
    entries += [
        ("/hb50/joint_command", joint_command(i), T0 + i * 20_000_000 + 5) for i in range(N // 2)
    ]
    return write_mcap(tmp_path / "run.mcap", entries)


def test_commanded_against_measured_position_per_joint(bag: Path, tmp_path: Path):
    out = tmp_path / "pos.png"
    fig = plot_bag(
        bag,
        ["/hb50/joint_command", "/hb50/bridge_data"],
        ["t_pos", "joint_position"],
        out,
        joints=["fr_j1", "fr_j2"],
    )
    assert [ax.get_ylabel() for ax in fig.axes] == [
        "fr_j1 (hip_flexion) [rad]",
        "fr_j2 (knee) [rad]",
    ]
    for k, ax in zip((1, 2), fig.axes, strict=True):
        commanded, measured = ax.get_lines()
        assert commanded.get_label() == "/hb50/joint_command t_pos"
        np.testing.assert_allclose(commanded.get_xdata(), [0.02 * i + 5e-9 for i in range(N // 2)])
        np.testing.assert_array_equal(
            commanded.get_ydata(), [joint_command(i).t_pos[k] for i in range(N // 2)]
        )
        np.testing.assert_allclose(measured.get_xdata(), [0.01 * i for i in range(N)])
        np.testing.assert_array_equal(
            measured.get_ydata(), [bridge_data(i).joint_position[k] for i in range(N)]
        )

    # the PNG exists, is a real image, and shows both lines' colours
    image = matplotlib.image.imread(out)
    assert image.shape[0] > 200 and image.shape[1] > 400
    rgb = image[..., :3]
    for line in fig.axes[0].get_lines():
        colour = np.array(to_rgb(line.get_color()))
        close = np.all(np.abs(rgb - colour) < 0.08, axis=-1)
        assert close.sum() > 100, f"{line.get_label()} not visible in the PNG"


def test_all_joints_by_default_and_scalar_fields(bag: Path, tmp_path: Path):
    fig = plot_bag(bag, ["/hb50/bridge_data"], ["joint_position"], tmp_path / "all.png")
    assert [ax.get_ylabel() for ax in fig.axes] == [
        "fr_j0 (hip_abduction) [rad]",
        "fr_j1 (hip_flexion) [rad]",
        "fr_j2 (knee) [rad]",
    ]
    fig = plot_bag(bag, ["/hb50/bridge_data"], ["header.stamp.nanosec"], tmp_path / "s.png")
    (ax,) = fig.axes
    assert ax.get_ylabel() == "header.stamp.nanosec [ns]"
    (line,) = ax.get_lines()
    np.testing.assert_array_equal(line.get_ydata(), [1_000_000 * i for i in range(N)])


def test_bad_requests_name_what_is_wrong(bag: Path, tmp_path: Path):
    out = tmp_path / "x.png"
    with pytest.raises(PlotError, match=r"no field 'joint_pos'.*joint_position"):
        plot_bag(bag, ["/hb50/bridge_data"], ["joint_pos"], out)
    with pytest.raises(PlotError, match=r"no joint 'elbow'.*fr_j0 \(index 0, hip_abduction\)"):
        plot_bag(bag, ["/hb50/bridge_data"], ["joint_position"], out, joints=["elbow"])
    with pytest.raises(BagError, match=r"no topic '/nope'.*/hb50/bridge_data"):
        plot_bag(bag, ["/nope"], ["x"], out)
    with pytest.raises(PlotError, match="2 topics and 3 fields"):
        plot_bag(bag, ["/a", "/b"], ["x", "y", "z"], out)
    with pytest.raises(PlotError, match="not a number"):
        plot_bag(bag, ["/hb50/bridge_data"], ["header.frame_id"], out)
    assert not out.exists()


def test_units_of_each_quantity_on_the_y_axis(bag: Path, tmp_path: Path):
    def labels(topic: str, field: str) -> list[str]:
        fig = plot_bag(bag, [topic], [field], tmp_path / "u.png", joints=["fr_j2"])
        return [ax.get_ylabel() for ax in fig.axes]

    assert labels("/hb50/bridge_data", "joint_velocity") == ["fr_j2 (knee) [rad/s]"]
    assert labels("/hb50/bridge_data", "joint_effort") == ["fr_j2 (knee) [N·m]"]
    assert labels("/hb50/joint_command", "kp") == ["fr_j2 (knee) [N·m/rad]"]
    assert labels("/hb50/bridge_data", "angular_velocity.x") == ["angular_velocity.x [rad/s]"]
    # two quantities of one joint share its subplot: both units are named
    fig = plot_bag(
        bag, ["/hb50/bridge_data"], ["joint_position", "joint_velocity"], tmp_path / "pv.png",
        joints=["fr_j2"],
    )
    assert [ax.get_ylabel() for ax in fig.axes] == ["fr_j2 (knee) [rad, rad/s]"]


def test_a_role_selects_the_joints_that_have_it(bag: Path, tmp_path: Path):
    fig = plot_bag(bag, ["/hb50/bridge_data"], ["joint_position"], tmp_path / "k.png",
                   joints=["knee"])
    (ax,) = fig.axes
    assert ax.get_ylabel() == "fr_j2 (knee) [rad]"
    (line,) = ax.get_lines()
    np.testing.assert_array_equal(line.get_ydata(), [bridge_data(i).joint_position[2]
                                                     for i in range(N)])


def test_the_legend_does_not_cover_the_data(bag: Path, tmp_path: Path):
    fig = plot_bag(
        bag, ["/hb50/joint_command", "/hb50/bridge_data"], ["t_pos", "joint_position"],
        tmp_path / "l.png",
    )
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    for ax in fig.axes:
        legend = ax.get_legend()
        assert legend is not None
        box = legend.get_window_extent(renderer)
        plot_area = ax.get_window_extent(renderer)
        assert not box.overlaps(plot_area), f"legend over the data of {ax.get_ylabel()}"


def test_field_errors_list_only_data_fields(bag: Path, tmp_path: Path):
    with pytest.raises(PlotError) as err:
        plot_bag(bag, ["/hb50/joint_command"], ["gains"], tmp_path / "x.png")
    text = str(err.value)
    assert "t_pos" in text and "kp" in text and "header" in text
    for internal in ("TYPE_NAME", "WIRE_RULES", "MSG_CONSTANTS", "msgdef", "to_cdr"):
        assert internal not in text


def test_position_targets_without_stiffness_are_not_plotted(tmp_path: Path):
    """Damping / idle commands (kp = 0, t_pos = 0) command no position: a "commanded" 0 rad must
    not appear; per joint, in the message where its kp is 0."""
    standing = [joint_command(i) for i in range(10)]
    damping = [JointCommand.damping(JOINTS, 1.0) for _ in range(10)]
    # one joint limp (kp 0), the others held
    mixed = [JointCommand.hold(JOINTS, [0.5, 0.6, 0.7], kp=[20.0, 0.0, 20.0], kd=0.5)] * 10
    commands = standing + damping + mixed
    entries = [("/hb50/joint_command", c, T0 + i * 2_000_000) for i, c in enumerate(commands)]
    path = write_mcap(tmp_path / "damp.mcap", entries)
    fig = plot_bag(path, ["/hb50/joint_command"], ["t_pos"], tmp_path / "t.png")
    for k, ax in enumerate(fig.axes):
        (line,) = ax.get_lines()
        y = np.asarray(line.get_ydata(), dtype=float)
        expected = [c.t_pos[k] if c.kp[k] != 0 else np.nan for c in commands]
        np.testing.assert_array_equal(y, expected)
    assert np.isnan(np.asarray(fig.axes[1].get_lines()[0].get_ydata(), dtype=float)[20:]).all()
    assert not np.isnan(np.asarray(fig.axes[0].get_lines()[0].get_ydata(), dtype=float)[20:]).any()


def test_lines_break_where_a_topic_has_no_messages(tmp_path: Path):
    """A pause of 3.3 s in a 100 Hz topic is no ramp: the plotted line has a break (NaN) there
    and nowhere else."""
    before = [("/hb50/bridge_data", bridge_data(i), T0 + i * 10_000_000) for i in range(N)]
    after = [
        ("/hb50/bridge_data", bridge_data(N + i), T0 + 3_700_000_000 + i * 10_000_000)
        for i in range(N)
    ]
    path = write_mcap(tmp_path / "gap.mcap", before + after)
    fig = plot_bag(
        path, ["/hb50/bridge_data"], ["joint_position"], tmp_path / "g.png", joints=["fr_j0"]
    )
    (line,) = fig.axes[0].get_lines()
    x = np.asarray(line.get_xdata(), dtype=float)
    y = np.asarray(line.get_ydata(), dtype=float)
    assert len(y) == 2 * N + 1
    assert np.flatnonzero(np.isnan(y)).tolist() == [N]
    assert x[N - 1] < x[N] < x[N + 1]
    np.testing.assert_array_equal(
        np.delete(y, N), [bridge_data(i).joint_position[0] for i in range(2 * N)]
    )


def stamped(i: int, stamp_ns: int) -> BridgeData:
    """:func:`bridge_data` ``i`` with its header stamped ``stamp_ns`` (wall clock, as the bridge
    stamps it)."""
    return dataclasses.replace(bridge_data(i), header=Header.at_ns(stamp_ns))


def fr_j0_line(path: Path, tmp_path: Path) -> tuple[Any, np.ndarray, np.ndarray]:
    fig = plot_bag(path, ["/hb50/bridge_data"], ["joint_position"], tmp_path / "j.png",
                   joints=["fr_j0"])
    (line,) = fig.axes[0].get_lines()
    return fig, np.asarray(line.get_xdata(), dtype=float), np.asarray(line.get_ydata(), dtype=float)


def test_bursty_delivery_of_regular_stamps_plots_as_one_line(tmp_path: Path):
    """A 500 Hz topic received in bursts (zenoh: 6 frames 20 µs apart every 12 ms, the median
    receive interval 0.02 ms) is placed at its header stamps, 2 ms apart: one unbroken line; the
    axis says which time it shows. On receive times the line broke between every burst."""
    n = 240
    stamps = [T0 + i * 2_000_000 for i in range(n)]
    received = [T0 + (i // 6 + 1) * 12_000_000 + 300_000 + (i % 6) * 20_000 for i in range(n)]
    path = write_mcap(tmp_path / "burst.mcap", [
        ("/hb50/bridge_data", stamped(i, stamps[i]), received[i]) for i in range(n)
    ])
    fig, x, y = fr_j0_line(path, tmp_path)
    assert not np.isnan(y).any()
    np.testing.assert_allclose(x, [(t - received[0]) / 1e9 for t in stamps], atol=1e-9)
    assert fig.axes[0].get_lines()[0].get_marker() == "None"  # no lone point to mark
    assert fig.axes[-1].get_xlabel() == "time since bag start (s, header stamps)"


def test_stamps_lagging_the_recording_are_drawn_on_the_bags_time_with_the_shift_named(
    tmp_path: Path,
):
    """A new user's trial (2026-12-06): the simulated robot lost 7 s to start-up stalls on a
    loaded host, so its stamps ran 7 s behind the recording's clock, and the plot of a 26 s bag
    ran from -7 s to +19 s. Lagging stamps are now drawn shifted by their median lag — one shift
    for every stamped line, so a command stays where its frame is — and the label says so."""
    lag_ns = 6_935_000_000
    n = 100
    frames = [
        ("/hb50/bridge_data", stamped(i, T0 + i * 2_000_000), T0 + lag_ns + i * 2_000_000 + 300_000)
        for i in range(n)
    ]
    commands = [  # each answers the frame it is stamped with, received 0.6 ms after it
        (
            "/hb50/joint_command",
            dataclasses.replace(joint_command(i), header=Header.at_ns(T0 + i * 2_000_000)),
            T0 + lag_ns + i * 2_000_000 + 900_000,
        )
        for i in range(n)
    ]
    path = write_mcap(tmp_path / "lag.mcap", frames + commands)
    fig = plot_bag(
        path,
        ["/hb50/bridge_data", "/hb50/joint_command"],
        ["joint_position", "t_pos"],
        tmp_path / "lag.png",
        joints=["fr_j0"],
    )
    measured, commanded = fig.axes[0].get_lines()[:2]
    x_frames = np.asarray(measured.get_xdata(), dtype=float)
    x_commands = np.asarray(commanded.get_xdata(), dtype=float)
    assert x_frames.min() >= 0.0  # it began at -6.9 s
    np.testing.assert_allclose(x_frames, x_commands, atol=1e-9)  # one shift: still aligned
    np.testing.assert_allclose(np.diff(x_frames), 0.002, atol=1e-9)  # the stamps' own spacing
    assert fig.axes[-1].get_xlabel() == (
        "time since bag start (s, header stamps; stamps shifted by +6.94 s: the robot's clock "
        "ran 6.94 s behind the recording's)"
    )


def test_a_stall_in_the_stamps_breaks_the_line_though_received_without_a_pause(tmp_path: Path):
    """The robot stopped for 0.3 s (its stamps jump) while the frames before and after arrived
    in one burst: the line breaks at the stall, once, and nowhere else."""
    n = 120
    stamps = [T0 + i * 2_000_000 + (300_000_000 if i >= n // 2 else 0) for i in range(n)]
    received = [T0 + (i // 6 + 1) * 12_000_000 + (i % 6) * 20_000 for i in range(n)]
    path = write_mcap(tmp_path / "stall.mcap", [
        ("/hb50/bridge_data", stamped(i, stamps[i]), received[i]) for i in range(n)
    ])
    _, x, y = fr_j0_line(path, tmp_path)
    assert np.flatnonzero(np.isnan(y)).tolist() == [n // 2]
    assert x[n // 2 - 1] < x[n // 2] < x[n // 2 + 1]


def test_a_stretch_at_a_lower_rate_is_no_gap(tmp_path: Path):
    """A simulator catching up publishes every sixth 2 ms step for a while (stamps 12 ms apart,
    6 of the topic's median periods): frames keep coming, so the line goes on."""
    periods = [2_000_000] * 80 + [12_000_000] * 40 + [2_000_000] * 80
    stamps = (T0 + np.concatenate(([0], np.cumsum(periods)))).tolist()
    path = write_mcap(tmp_path / "slow.mcap", [
        ("/hb50/bridge_data", stamped(i, t), t + 1_000_000) for i, t in enumerate(stamps)
    ])
    _, _, y = fr_j0_line(path, tmp_path)
    assert not np.isnan(y).any()


def test_a_lone_point_between_two_gaps_is_drawn(tmp_path: Path):
    """One message between two pauses is a segment of one point, which a line does not draw: it
    gets a marker, and the PNG shows it."""
    times = [T0 + i * 10_000_000 for i in range(30)] + [T0 + 1_300_000_000]
    times += [T0 + 2_600_000_000 + i * 10_000_000 for i in range(30)]
    entries = [("/hb50/bridge_data", bridge_data(i), t) for i, t in enumerate(times)]
    path = write_mcap(tmp_path / "lone.mcap", entries)
    out = tmp_path / "lone.png"
    fig = plot_bag(path, ["/hb50/bridge_data"], ["joint_position"], out, joints=["fr_j0"])
    (ax,) = fig.axes
    (line,) = ax.get_lines()
    y = np.asarray(line.get_ydata(), dtype=float)
    assert np.flatnonzero(np.isnan(y)).tolist() == [30, 32]
    image = matplotlib.image.imread(out)
    px, py = ax.transData.transform((1.3, bridge_data(30).joint_position[0]))
    row, col = image.shape[0] - round(py), round(px)
    box = image[row - 4 : row + 5, col - 4 : col + 5, :3]
    colour = np.array(to_rgb(line.get_color()))
    assert np.all(np.abs(box - colour) < 0.08, axis=-1).sum() >= 4, "the lone point is not drawn"
    assert line.get_markevery() == [31]  # a marker there only: the lines stay lines
    assert ax.get_xlabel() == "time since bag start (s, receive time)"  # stamps not on the clock


@pytest.mark.parametrize(
    ("stamps", "clock"),
    [
        ([T0 + 1_000, T0 + 2_000, T0 + 3_000], "stamp"),
        ([T0 - 3_000_000_000_000 + i for i in (1, 2, 3)], "stamp"),  # 50 min behind: a slow sim
        ([None, None, None], "receive"),  # no header
        ([0, 0, 0], "receive"),  # never stamped
        ([T0 + 2_000, T0 + 1_000, T0 + 3_000], "receive"),  # going back: two clocks on one topic
        ([2_000_000, 4_000_000, 6_000_000], "receive"),  # another clock (a simulator's, from 0)
    ],
)
def test_header_stamps_are_the_time_where_they_are_on_the_bags_clock(
    stamps: list[int | None], clock: str
):
    received = [T0 + 10_000_000, T0 + 20_000_000, T0 + 30_000_000]
    times, used, lag_s = message_times(received, stamps, T0)
    assert used == clock
    lag = float(np.median(np.subtract(received, stamps))) / 1e9 if clock == "stamp" else 0.0
    assert lag_s == lag
    expected = stamps if clock == "stamp" else received
    np.testing.assert_allclose(times, [(t - T0) / 1e9 for t in expected])  # type: ignore[operator]


@given(
    period=st.floats(min_value=1e-4, max_value=1.0),
    jitter=st.lists(st.floats(min_value=1.0, max_value=1.5), min_size=3, max_size=80),
    stall=st.floats(min_value=GAP_FACTOR * 1.6, max_value=1000.0),
    where=st.floats(min_value=0.0, max_value=1.0),
)
def test_break_at_gaps_keeps_every_point_and_breaks_only_at_a_stall(
    period: float, jitter: list[float], stall: float, where: float
):
    """A regular series (periods within 1.5 × of each other) has no break; one stall of more than
    GAP_FACTOR × 1.5 periods in it is one break, there; every message is still plotted."""
    periods = np.asarray(jitter) * period
    times = np.concatenate([[0.0], np.cumsum(periods)])
    values = np.arange(len(times), dtype=float)
    x, y = break_at_gaps(times, values)
    assert not np.isnan(y).any()

    at = min(int(where * len(periods)), len(periods) - 1)
    periods[at] = stall * period
    times = np.concatenate([[0.0], np.cumsum(periods)])
    x, y = break_at_gaps(times, values)
    kept = ~np.isnan(y)
    np.testing.assert_array_equal(x[kept], times)  # every message is still plotted, in order
    np.testing.assert_array_equal(y[kept], values)
    assert np.flatnonzero(~kept).tolist() == [at + 1]
