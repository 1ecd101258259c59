"""What :meth:`Stack.summary` says of a layout whose processes die, are respawned or are starved:
every figure is of the robot now, or says which part of the run it covers. Driven with
constructed messages on an unstarted stack and a fake clock (no process, no bus); the demo run
end to end, with a real SIGKILL, is ``cli/test_cli_demo.py``."""

from __future__ import annotations

import dataclasses
import math
import signal
from pathlib import Path

import pytest

import jointbus.stack as stack_module
from jointbus.cli.demo import final_line
from jointbus.messages.nav_msgs import Odometry
from jointbus.messages.stamp import Time
from jointbus.messages.std_msgs import Header
from jointbus.robots.hb50.messages import BridgeData, BridgeState, RobotState
from jointbus.runtime import LoopDiagnostics
from jointbus.runtime.launch import LaunchDescription
from jointbus.stack import Stack

#: The fake wall clock's epoch (s since 1970) at monotonic 0.
WALL0 = 1_800_000_000.0


class FakeTime:
    """``time`` as :mod:`jointbus.stack` uses it: a monotonic clock the test moves, the wall
    clock at a fixed offset from it, and CPU time at ``cores`` per second of it."""

    def __init__(self, cores: float = 0.0) -> None:
        self.now = 100.0
        self.cores = cores

    def monotonic(self) -> float:
        return self.now

    def time_ns(self) -> int:
        return round((WALL0 + self.now) * 1e9)

    def monotonic_ns(self) -> int:
        return round(self.now * 1e9)

    def time(self) -> float:
        return WALL0 + self.now

    def process_time(self) -> float:
        return self.cores * self.now

    def thread_time_ns(self) -> int:
        return 0


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeTime:
    fake = FakeTime()
    monkeypatch.setattr(stack_module, "time", fake)
    return fake


def _layout_stack(clock: FakeTime) -> Stack:
    """A stack of the bundled layout (bridge, control), "started" at the fake clock's now."""
    stack = Stack("hb50")
    assert stack.layout is not None
    stack._started_at = clock.now
    stack._started_wall_ns = clock.time_ns()
    stack._bridge_process = "bridge"
    return stack


def _frame(stamp_s: float) -> BridgeData:
    return BridgeData(header=Header(stamp=Time.from_ns(round(stamp_s * 1e9))))


def test_the_cpu_figure_divides_the_cpu_by_the_wall_clock_of_the_same_moments(
    clock: FakeTime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``cpu=238%`` on a 2-CPU host (``--rate 2000``): the summary read the clock, then the
    rest, then the CPU — a launcher starved 0.25 s in between counted 0.5 s more CPU into the
    same second. Two cores busy all the time must read 200 %, whatever the delay."""
    clock.cores = 2.0
    stack = Stack("hb50", layout="inproc", zenoh=None)
    stack._started_at = clock.now
    stack._cpu_at_start = clock.process_time()
    delays = iter([0.0, 0.25, 0.0, 0.3])
    real_loop_timing = stack._loop_timing

    def starved() -> tuple[float, float, float, float, int, float, object]:
        clock.now += next(delays)  # the launcher loses the CPU in the middle of a summary
        return real_loop_timing()  # type: ignore[return-value]

    monkeypatch.setattr(stack, "_loop_timing", starved)
    figures = []
    for _ in range(4):
        clock.now += 1.0
        figures.append(stack.summary().cpu_fraction)
    rates = [f for f in figures if not math.isnan(f)]
    assert rates, figures
    assert all(f == pytest.approx(2.0, abs=1e-6) for f in rates), figures


def test_the_status_and_final_lines_say_what_cpu_time_the_vms_host_took(
    clock: FakeTime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Steal: the hypervisor stopping this VM's CPUs while they had work (30–40 ms of every
    100 ms on both CPUs at times here, 2026-12-07), when no process of the robot can run. The
    line gives it per second like ``cpu=`` once it is not 0, and the final line over the run:
    a user reading ``BEHIND REAL TIME`` learns the machine was not theirs for that time."""
    steal = [10.0, 20.0]  # s per CPU since boot, as /proc/stat counts it

    monkeypatch.setattr(stack_module, "read_steal_s", lambda: tuple(steal))
    stack = Stack("hb50", layout="inproc", zenoh=None)
    stack._started_at = clock.now
    stack._steal_at_start = stack_module._steal_s()
    clock.now += 1.0
    stack.summary()  # the rate's first reading
    clock.now += 1.0
    quiet = stack.summary()
    assert quiet.host_steal_fraction == 0.0 and quiet.host_steal_run_s == 0.0
    assert "steal" not in quiet.line() and "steal" not in final_line(quiet)
    steal[0] += 0.04  # 40 ms of cpu0 and 20 ms of cpu1 in the next second
    steal[1] += 0.02
    clock.now += 1.0
    stolen = stack.summary()
    assert stolen.host_steal_fraction == pytest.approx(0.06)
    assert " cpu=" in stolen.line() and stolen.line().split(" cpu=")[1].split()[1] == "steal=6%"
    assert "the VM's host took 0.06 s of CPU time from this machine while it had work (steal)" in (
        final_line(stolen)
    )
    monkeypatch.setattr(stack_module, "read_steal_s", tuple)  # not readable: nothing said
    clock.now += 1.0
    unknown = stack.summary()
    assert math.isnan(unknown.host_steal_fraction) and "steal" not in unknown.line()


def test_the_runs_real_time_factor_does_not_count_a_first_frame_received_late(
    clock: FakeTime,
) -> None:
    """A run at 0.95 of real time (every second said so) ended "robot time 24.9 s in 25.5 s
    (real-time factor 0.98)": its first frame reached the starved launcher 0.55 s late, and the
    run's wall time was counted from that arrival."""
    stack = _layout_stack(clock)
    sent0 = clock.now
    stamp0 = WALL0 + sent0
    for i in range(251):  # 25 s of the 10 Hz mirror, the robot at 0.95 of the wall clock
        sent = sent0 + i * 0.1
        clock.now = sent + (0.55 if i == 0 else 0.002)
        stack._data(_frame(stamp0 + 0.95 * (sent - sent0)))
    summary = stack.summary()
    assert summary.run_robot_s / summary.run_wall_s == pytest.approx(0.95, abs=0.002), summary
    assert "real-time factor 0.95 over the run" in final_line(summary)


def test_the_status_line_names_the_fallbacks_phase_while_it_drives_the_robot(
    clock: FakeTime,
) -> None:
    """A user's trial (2026-12-06): the status line read ``bridge=hold`` for the whole of the
    bridge's fallback, while the robot sat down from 0.342 m to 0.130 m; the bridge says the
    phase in its state (``fallback: sit``), and the line now does too — and nothing once no
    fallback runs."""
    stack = _layout_stack(clock)
    stack._bridge_state(BridgeState(drives_enabled=True, status=("mode: hold", "fallback: sit")))
    clock.now += 0.1
    summary = stack.summary()
    assert summary.bridge_fallback == "sit"
    assert " bridge=hold(fallback sit) " in summary.line(), summary.line()
    stack._bridge_state(BridgeState(drives_enabled=True, status=("mode: run",)))
    clock.now += 0.1
    summary = stack.summary()
    assert summary.bridge_fallback is None and " bridge=run " in summary.line()


def test_the_runs_real_time_factor_dates_frames_by_when_the_bridge_sent_them(
    clock: FakeTime,
) -> None:
    """A user's trial (2026-12-06): a launcher starved of CPU at the end of a run (another
    robot's real-time threads on both CPUs) ended "robot time 2.9 s in 3.5 s … (real-time factor
    0.82 over the run …)" while the bridge's own windows said 0.954–0.960: its last frames
    arrived 0.6 s late and the run's wall time was counted to that arrival. The frames are now
    dated by their send time (the sample's attachment, as the subscription measures latency),
    which a starved receiver does not move."""
    from jointbus.bus import RELIABLE, Bus

    stack = _layout_stack(clock)
    with Bus(name="launcher") as bus:
        sub = bus.subscribe(
            "/hb50/bridge_data_10hz", BridgeData, stack._data, RELIABLE, realtime=True
        )
        stack._data_sub = sub
        sent0 = clock.now
        stamp0 = WALL0 + sent0
        for i in range(61):  # 6 s of the 10 Hz mirror, the robot at 0.96 of the wall clock
            sent = sent0 + i * 0.1
            late = 0.002 if i < 55 else 0.6 + 0.1 * (60 - i)  # the last 0.6 s: one burst
            clock.now = sent + late
            sub.offer(
                _frame(stamp0 + 0.96 * (sent - sent0)), round(sent * 1e9), clock.monotonic_ns()
            )
    summary = stack.summary()
    assert summary.run_robot_s / summary.run_wall_s == pytest.approx(0.96, abs=0.002), summary
    assert "real-time factor 0.96 over the run" in final_line(summary)


def test_the_final_line_says_how_far_the_stamps_fell_behind_the_wall_clock(
    clock: FakeTime,
) -> None:
    """A user's trial (2026-12-06): after 12 min on a loaded host the frames' stamps were 41 ms
    behind the wall clock (stalls the simulator did not catch up), and the final line said
    "robot time 762.3 s in 762.3 s … real-time factor 1.00". The line now says the lag, and a
    transport's delay of a few ms (any frame's) is no lag."""
    stack = _layout_stack(clock)
    sent0 = clock.now
    stamp0 = WALL0 + sent0
    lost = 0.0
    for i in range(300):  # 30 s of the 10 Hz mirror; delays 0.3-11 ms, stalls losing 41 ms
        sent = sent0 + i * 0.1
        if i in (100, 200):
            lost += 0.0205
        clock.now = sent + 0.0003 + 0.0107 * ((i * 7) % 11) / 10
        stack._data(_frame(stamp0 + (sent - sent0) - lost))
        if i == 99:
            assert final_line(stack.summary()).count("behind the wall clock") == 0
    summary = stack.summary()
    assert summary.run_behind_s == pytest.approx(0.041, abs=0.0005), summary
    assert "its last second's frames stamped 41 ms behind the wall clock" in final_line(summary)


class _Group:
    """The layout's process group, as far as the summary asks it: the bridge's pid."""

    def pid(self, name: str) -> int | None:
        return 4242 if name == "bridge" else None

    def cpu_seconds(self) -> float:
        return 0.0


@pytest.mark.parametrize(
    ("state", "cpu_share", "expected"),
    [("R", 0.4, "late"), ("T", 0.0, "lost"), ("S", 0.0, "lost")],
)
def test_a_demo_starved_itself_calls_a_running_bridge_late_not_lost(
    clock: FakeTime, monkeypatch: pytest.MonkeyPatch, state: str, cpu_share: float, expected: str
) -> None:
    """A user's trial (2026-12-06): the demo's process got no CPU for 5.2 s at load 20, and then
    said ``bridge=lost`` of a bridge its probe heard at 499.8 Hz — the last sample of the bridge's
    CPU was older than the 2 s it compares over, and no sample meant "lost". Starved itself, the
    demo now compares with that older sample: a bridge that used its CPU is ``late``; a stopped
    one (``T``), or one that used none, is still ``lost``."""
    stack = _layout_stack(clock)
    stack._group = _Group()  # type: ignore[assignment]
    start = clock.now

    def progress(pid: int) -> tuple[str, float]:
        return (state if clock.now - start > 1.0 else "R"), cpu_share * (clock.now - start)

    monkeypatch.setattr(stack_module, "progress_of", progress)
    for _ in range(3):  # the status line's looks, the bridge heard before each
        clock.now += 0.3
        stack._bridge_state(
            BridgeState(drives_enabled=True, status=("owner: control_node", "mode: run"))
        )
        assert stack.summary().bridge_mode == "run"
    clock.now += 5.2  # starved: no look, no state taken, for 5.2 s
    assert stack.summary().bridge_mode == expected


def test_while_the_lag_grows_the_stamps_behind_figure_is_at_most_a_second_of_growth_short(
    clock: FakeTime,
) -> None:
    """The trial's run at 0.64 of real time: the line said 14 166 ms behind where the last
    frame was 14.54 s behind (the least late frame of the last 1-2 s was the oldest). With the
    window halved the figure is short by at most a second's growth."""
    stack = _layout_stack(clock)
    sent0 = clock.now
    stamp0 = WALL0 + sent0
    for i in range(400):  # 40 s of the 10 Hz mirror at 0.64 of real time
        sent = sent0 + i * 0.1
        clock.now = sent + 0.002
        stack._data(_frame(stamp0 + 0.64 * (sent - sent0)))
    true_lag = 0.36 * 39.9
    behind = stack.summary().run_behind_s
    assert true_lag - 0.36 <= behind <= true_lag, (behind, true_lag)


def test_a_dead_bridges_last_figures_are_not_shown_and_the_blame_is_the_bridges(
    clock: FakeTime,
) -> None:
    """After ``kill -KILL`` of the bridge process the line still said ``loop=497Hz …
    late_p99=577us`` (once ``bridge=run … bridge_data=500Hz``) and the simulator's last height,
    and the summary blamed the control node (alive: it steps on the bridge's frames)."""
    stack = _layout_stack(clock)
    clock.now += 5.0
    state = BridgeState(drives_enabled=True, status=("owner: control_node", "mode: run"))
    stack._bridge_state(state)
    stack._robot_state(RobotState(motion_mode=2))
    stack._ground_truth(Odometry())
    stack._diagnostics(
        LoopDiagnostics(node="bridge_node", loop="bridge", achieved_rate_hz=497.0, cycles=2000)
    )
    before = stack.summary()
    assert before.bridge_mode == "run" and before.loop_run is not None, before
    clock.now += 0.05
    stack._child_exited("bridge", -signal.SIGKILL)
    just_after = stack.summary()  # the 10 Hz state and the diagnostics are still fresh
    assert just_after.bridge_mode == "gone", just_after
    assert just_after.owner is None and math.isnan(just_after.true_base_height_m)
    assert math.isnan(just_after.loop_rate_hz) and just_after.loop_run is None
    line = just_after.line()
    assert "bridge=gone(killed by SIGKILL 0.0s ago)" in line, line
    assert "loop=" not in line and "height=?m" in line, line
    clock.now += 4.0  # the control node hears no frame and sends no RobotState
    later = stack.summary()
    assert later.bridge_gone is not None and later.bridge_gone.how == "killed by SIGKILL"
    last = final_line(later)
    assert "the bridge process was killed by SIGKILL at +5.0 s (4.0 s before the end)" in last
    assert "the control node is gone" not in last, last
    assert "the bridge is gone" in last and "base height" not in last, last
    assert stack.bridge_gone_for_good() is not None  # the layout does not respawn it


def test_a_layout_without_the_control_node_marks_the_owner_the_bridge_names_first(
    clock: FakeTime, tmp_path: Path
) -> None:
    """A new user's trial (2026-12-07): a layout of the bridge alone read ``owner=control_node``
    — the bridge's first owner, named before any command came — of a node that never ran."""
    layout = tmp_path / "bridge_only.yaml"
    layout.write_text("processes:\n  - name: bridge\n    nodes: [bridge]\n")
    stack = Stack("hb50", layout=str(layout))
    stack._started_at = clock.now
    clock.now += 1.0
    stack._bridge_state(RUNNING)
    line = stack.summary().line()
    assert " owner=control_node(not in this layout) " in line, line


RUNNING = BridgeState(drives_enabled=True, status=("owner: control_node", "mode: run"))


def test_a_silent_bridges_last_loop_figures_are_not_shown_and_the_unknown_mode_says_why(
    clock: FakeTime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new user's trial (2026-12-07): the bridge process SIGSTOPped for 2.5 s, and 1.3 s in
    the line read ``mode=UNKNOWN(no RobotState for 1.2s) bridge=lost … | bridge loop, last 10s:
    loop=500Hz skipped=0.0%`` — no reason for the unknown mode, and a stopped loop's figures.
    The line now gives neither old figure, and says the control node has no frames because the
    bridge is silent; once the bridge is heard again, its figures are back."""
    stack = _layout_stack(clock)
    stack._group = _Group()  # type: ignore[assignment]
    monkeypatch.setattr(stack_module, "progress_of", lambda _pid: ("T", 1.0))  # stopped
    clock.now += 5.0
    stack._bridge_state(RUNNING)
    stack._robot_state(RobotState(motion_mode=2))
    report = LoopDiagnostics(node="bridge_node", loop="bridge", achieved_rate_hz=500.0)
    stack._diagnostics(report)
    assert stack.summary().loop_rate_hz == 500.0
    clock.now += 1.3  # stopped: no state, no RobotState, no diagnostics since
    silent = stack.summary()
    assert silent.bridge_mode == "lost" and silent.motion_mode == "UNKNOWN", silent
    assert math.isnan(silent.loop_rate_hz) and silent.loop_run is None
    line = silent.line()
    assert (
        "mode=UNKNOWN(no RobotState for 1.3s; the control node has no frames to step on, the "
        "bridge is silent for 1.3 s (stopped, hung or unreachable))"
    ) in line, line
    assert line.endswith("| bridge loop: none (the bridge is silent)"), line
    clock.now += 0.1  # continued
    stack._bridge_state(RUNNING)
    stack._robot_state(RobotState(motion_mode=2))
    stack._diagnostics(report)
    back = stack.summary()
    assert back.bridge_mode == "run"
    assert back.loop_rate_hz == 500.0 and "| bridge loop, last " in back.line()


def test_a_respawned_bridge_is_said_and_the_run_figures_cover_the_whole_run(
    clock: FakeTime,
) -> None:
    """With ``respawn: true`` and the bridge SIGKILLed, the summary said "robot time 33.9 s in
    33.9 s … 1.00" though no simulator existed for ≈ 2 s, and nothing of the respawn."""
    stack = _layout_stack(clock)
    clock.now += 3.0
    start = clock.now
    for i in range(101):  # 10 s of the first bridge, in real time
        clock.now = start + i * 0.1
        stack._data(_frame(WALL0 + clock.now))
    stack.layout = _respawning(stack)
    clock.now += 0.1
    stack._child_exited("bridge", -signal.SIGKILL)
    clock.now += 2.0  # no bridge, no simulator
    stack._bridge_state(BridgeState(drives_enabled=True, status=("mode: run",)))
    restart = clock.now
    for i in range(101):  # 10 s of the respawned one (its simulator stamps on the wall clock)
        clock.now = restart + i * 0.1
        stack._data(_frame(WALL0 + clock.now))
        stack._bridge_state(BridgeState(drives_enabled=True, status=("mode: run",)))
    stack._diagnostics(
        LoopDiagnostics(node="bridge_node", loop="bridge", achieved_rate_hz=500.0, cycles=5000)
    )
    summary = stack.summary()
    assert summary.run_robot_s == pytest.approx(20.0, abs=0.01), summary
    assert summary.run_wall_s == pytest.approx(22.1, abs=0.01), summary
    assert summary.run_gap_s == pytest.approx(2.1, abs=0.01), summary
    (death,) = summary.exits
    assert death.respawn and death.at_s == pytest.approx(13.1)
    assert death.back_s == pytest.approx(15.1)
    last = final_line(summary)
    assert (
        "respawned once: process 'bridge' was killed by SIGKILL at +13.1 s (started again, "
        "heard from +15.1 s)" in last
    ), last
    assert "bridge loop (of the respawned process only, heard from +15.1 s) over the run" in last
    assert "real-time factor 0.90 over the run" in last, last
    assert "2.1 s of it without a bridge, 1.00 while one ran" in last, last


def _respawning(stack: Stack) -> LaunchDescription:
    """``stack``'s layout with its bridge process respawned."""
    layout = stack.layout
    assert layout is not None
    processes = tuple(
        dataclasses.replace(p, respawn=True) if p.name == "bridge" else p for p in layout.processes
    )
    return dataclasses.replace(layout, processes=processes)
