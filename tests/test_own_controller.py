"""``examples/own_controller.py`` (the README's "Write your own controller"), run as a user runs
it: its own process, over Zenoh, against the demo stack running in this process.

It takes the actuators from the control node (``owner: squat_controller``), the body really goes
down and comes back, and control returns to ``control_node`` when it stops — and when it is
SIGKILLed, within the bridge's 100 ms fallback plus a couple of cycles (printed; asserted with
VM headroom at 0.3 s).
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from jointbus.bus import MAB_RT, ZenohConfig
from jointbus.robots.hb50.messages import BridgeState, BridgeStatus
from jointbus.stack import Stack
from support.bus import free_port, wait_until

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "own_controller.py"
SRC = str(Path(__file__).resolve().parents[1] / "src")
STAND_HEIGHT = 0.34  # m
FALLBACK_LIMIT_S = 0.3  # target: 0.1 s + two 2 ms cycles; headroom for a loaded VM


class Owners:
    """Owner changes seen in every ``bridge_state`` (500 Hz, in the bridge's thread), and the
    simulator's base height while the squat controller owns."""

    def __init__(self, stack: Stack) -> None:
        self.stack = stack
        self.changes: list[tuple[float, str]] = []
        self.ages: list[tuple[str, int | None]] = []  # (owner, command age p99 in cycles)
        self.lock = threading.Lock()
        stack.bus.subscribe("/hb50/bridge_state", BridgeState, self.on_state, MAB_RT, realtime=True)

    def on_state(self, state: BridgeState) -> None:
        status = BridgeStatus.of(state)
        owner = status.owner
        now = time.monotonic()
        with self.lock:
            if not self.changes or self.changes[-1][1] != owner:
                self.changes.append((now, owner))
            # the bridge's command age over a 1 s window all of whose commands were this owner's
            if now - self.changes[-1][0] > 1.1:
                self.ages.append((owner, status.command_age_p99_cycles))

    @property
    def owner(self) -> str:
        with self.lock:
            return self.changes[-1][1] if self.changes else ""

    def since(self, t: float) -> list[tuple[float, str]]:
        with self.lock:
            return [c for c in self.changes if c[0] >= t]


@pytest.fixture(scope="module")
def demo() -> Iterator[tuple[Stack, Owners, int]]:
    port = free_port()
    with Stack(zenoh=ZenohConfig(hub_port=port)) as stack:
        owners = Owners(stack)
        assert stack.wait_for(lambda s: s.standing, 15.0).standing
        yield stack, owners, port


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _controller(port: int, *args: str, background: bool = False) -> subprocess.Popen[str]:
    """The example in a process of its own; ``background``: with SIGINT ignored, as a shell
    script's ``&`` starts it."""
    env = dict(os.environ, JOINTBUS_HUB_PORT=str(port))
    env["PYTHONPATH"] = os.pathsep.join([SRC, *filter(None, [env.get("PYTHONPATH")])])
    return subprocess.Popen(
        [sys.executable, "-u", str(EXAMPLE), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=_ignore_sigint if background else None,  # noqa: PLW1509 - no threads yet
    )


def _read_lines(proc: subprocess.Popen[str]) -> tuple[list[tuple[float, str]], threading.Thread]:
    """The example's stdout lines as they come, each with the monotonic time it was read."""
    lines: list[tuple[float, str]] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append((time.monotonic(), line.strip()))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return lines, reader


def _stop(proc: subprocess.Popen[str], reader: threading.Thread) -> None:
    """Kill the example if a failed check left it running, and read what it printed."""
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    reader.join(5.0)


def _wait_until_it_owns(owners: Owners, proc: subprocess.Popen[str], lines: object = ()) -> None:
    """Until the example owns the robot, and still owns it half a second later: a stall of the
    loaded host may have handed control back meanwhile (it takes it again after 0.4 s of steady
    commands)."""
    assert wait_until(lambda: owners.owner == "squat_controller", 30.0), (proc.poll(), lines)
    time.sleep(0.5)
    assert wait_until(lambda: owners.owner == "squat_controller", 5.0), (proc.poll(), lines)


def test_controller_squats_and_hands_control_back(demo: tuple[Stack, Owners, int]) -> None:
    stack, owners, port = demo
    stack.take_reports()
    start = time.monotonic()
    proc = _controller(port, "--duration", "2", "--period", "2", "--depth", "0.06")
    lowest = stack.true_base_height()
    while proc.poll() is None and time.monotonic() - start < 40:
        if owners.owner == "squat_controller":
            lowest = min(lowest, stack.true_base_height())
        time.sleep(0.01)
    out, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    seen = [owner for _t, owner in owners.since(start)]
    assert "squat_controller" in seen, (seen, out)
    assert seen[-1] == "control_node", seen
    assert "owner: squat_controller" in out and "owner: control_node" in out
    # it holds the measured pose until the bridge gives it the actuators (after 0.4 s of
    # steady commands), and only then starts the squat: no jump to a squat 0.4 s along
    lines = out.splitlines()
    assert "holding the measured pose until the bridge gives us the actuators" in lines, lines
    squat = next(k for k, line in enumerate(lines) if line.startswith("squatting"))
    assert lines.index("owner: squat_controller") < squat, lines
    assert lowest < STAND_HEIGHT - 0.03  # the squat's commands reached the actuators
    # stamped with the frames they answer, its commands have an age the bridge shows
    ages = [age for owner, age in owners.ages if owner == "squat_controller"]
    assert ages and all(age is not None for age in ages), ages
    s = stack.wait_for(lambda s: s.standing and s.true_base_height_m > 0.3, 3.0)
    assert abs(s.true_base_height_m - STAND_HEIGHT) <= 0.1 * STAND_HEIGHT  # back at the stand
    # a hand-back is no stall: the control node neither says it lost control nor goes to
    # DAMPING (which let the body sag 2 cm before it stood up again)
    time.sleep(1.0)
    texts = [r.status for r in stack.take_reports()]
    assert not any("control lost" in t or "-> DAMPING" in t for t in texts), texts


def _shm_files() -> set[Path]:
    return set(Path("/dev/shm").glob("*.zenoh")) if Path("/dev/shm").is_dir() else set()


def _in_use(path: Path) -> bool:
    """True if any process still maps ``path``."""
    for maps in Path("/proc").glob("[0-9]*/maps"):
        try:
            if str(path) in maps.read_text():
                return True
        except OSError:
            continue
    return False


def _remove_orphans(before: set[Path]) -> None:
    """Zenoh's shared-memory files of a SIGKILLed process stay in /dev/shm: remove the new ones
    that no living process maps."""
    for path in _shm_files() - before:
        if not _in_use(path):
            path.unlink(missing_ok=True)


def test_sigkilled_controller_falls_back_to_the_control_node(
    demo: tuple[Stack, Owners, int],
) -> None:
    stack, owners, port = demo
    before = _shm_files()
    proc = _controller(port, "--duration", "60")
    try:
        _wait_until_it_owns(owners, proc)  # kill it while it owns the robot
        killed = time.monotonic()
        proc.kill()  # SIGKILL: no goodbye, no last command
        assert wait_until(lambda: owners.owner == "control_node", 2.0)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        _remove_orphans(before)
    back = next(t for t, owner in owners.since(killed) if owner == "control_node")
    fallback = back - killed
    print(
        f"\nfallback to control_node after SIGKILL: {fallback * 1e3:.1f} ms "
        f"(target 100 ms + 2 cycles = 104 ms)"
    )
    assert fallback < FALLBACK_LIMIT_S
    assert stack.summary().bridge_mode == "run"  # the control node's commands are applied again


def test_ctrl_c_stops_commanding_at_once_and_says_so_when_the_bridge_does(
    demo: tuple[Stack, Owners, int],
) -> None:
    """Issue 20 item 7: after Ctrl-C the example kept publishing for 0.3 s (control came back
    407–413 ms later) and printed "control is back" 35–60 ms before the owner changed. Now it
    stops at once — control is back within the bridge's 100 ms fallback, as after a SIGKILL —
    and prints that only once ``bridge_state`` names the new owner."""
    _stack, owners, port = demo
    # started from a script in the background (SIGINT ignored): Ctrl-C must still stop it
    proc = _controller(port, "--duration", "60", background=True)
    lines, reader = _read_lines(proc)
    try:
        _wait_until_it_owns(owners, proc, lines)
        interrupted = time.monotonic()
        proc.send_signal(signal.SIGINT)  # Ctrl-C
        assert proc.wait(timeout=20) == 0, proc.stderr.read() if proc.stderr else ""
    finally:
        _stop(proc, reader)
    back = next(t for t, owner in owners.since(interrupted) if owner == "control_node")
    said = next((t for t, line in lines if "control is back with control_node" in line), None)
    print(
        f"\nCtrl-C: control back {(back - interrupted) * 1e3:.1f} ms after SIGINT; the example "
        f"said so {((said or math.nan) - back) * 1e3:+.1f} ms after the bridge's state"
    )
    assert back - interrupted < FALLBACK_LIMIT_S  # as after a SIGKILL: ~100 ms, not 400 ms
    # Said only once the bridge says so: the next test stops the bridge to show the cause. The
    # two processes' sight of the same state differs by their threads' lateness (printed above:
    # −27 to +19 ms on a quiet host, 2026-12-07; −33 ms once in CI).
    assert said is not None, lines


def test_it_says_control_is_back_only_once_the_bridge_says_so(
    demo: tuple[Stack, Owners, int],
) -> None:
    """Issue 20 item 7, by its cause: before, the example printed "control is back" on a timer,
    35–60 ms before the owner changed. With the bridge's process stopped, no ``bridge_state``
    can name a new owner: the example, interrupted then, must wait and say nothing, and say it
    once the bridge runs again and hands control back."""
    stack, owners, port = demo
    group = stack.processes
    if group is None:
        pytest.skip("the bridge runs in this process: it cannot be stopped alone")
    proc = _controller(port, "--duration", "60")
    lines, reader = _read_lines(proc)
    try:
        _wait_until_it_owns(owners, proc, lines)
        group.signal("bridge", signal.SIGSTOP)
        try:
            proc.send_signal(signal.SIGINT)
            # it stops commanding at once; it must then wait, well past the bridge's 100 ms
            # fallback, which a stopped bridge cannot run (0.2 s: under its 250 ms watchdog)
            assert wait_until(lambda: any("interrupted" in line for _t, line in lines), 5.0)
            time.sleep(0.2)
            early = [line for _t, line in lines if "control is back" in line]
        finally:
            group.signal("bridge", signal.SIGCONT)
        resumed = time.monotonic()
        assert not early, lines
        assert proc.wait(timeout=20) == 0, proc.stderr.read() if proc.stderr else ""
    finally:
        _stop(proc, reader)
    said = [t for t, line in lines if "control is back with control_node" in line]
    assert said and said[0] > resumed, lines  # read after it was printed: printed after SIGCONT
    assert wait_until(lambda: owners.owner == "control_node", 2.0), owners.changes[-3:]
    assert stack.wait_for(lambda s: s.standing, 10.0).standing  # for the tests after this one


def test_with_no_robot_on_its_port_it_says_where_it_looked_and_exits() -> None:
    """A user's trial: started on the wrong hub port, the example printed "waiting for
    /hb50/bridge_data" for 10 minutes and nothing else."""
    port = free_port()
    proc = _controller(port, "--wait", "1")
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 1, err
    assert f"no /hb50/bridge_data within 1 s on hub port {port}" in out, out


def test_a_controller_that_lost_the_robot_starts_again_from_the_measured_pose(
    demo: tuple[Stack, Owners, int],
) -> None:
    """A user's trial: after a stall handed the robot back, the example took it again with its
    squat's clock run on, 0.34–0.36 rad from the measured pose (only the bridge's ramp kept the
    legs from jumping). It now holds the measured pose again and restarts its squat."""
    _stack, owners, port = demo
    proc = _controller(port, "--duration", "60")
    lines, reader = _read_lines(proc)
    try:
        assert wait_until(lambda: owners.owner == "squat_controller", 30.0), (proc.poll(), lines)
        time.sleep(1.0)
        proc.send_signal(signal.SIGSTOP)
        time.sleep(0.3)  # > the bridge's 100 ms: it takes the robot back
        proc.send_signal(signal.SIGCONT)
        # it backs off: 0.8 s of steady commands, a loaded host's stalls restart that count
        assert wait_until(
            lambda: sum(line.startswith("squatting") for _t, line in lines) >= 2, 30.0
        ), lines
    finally:
        proc.kill()
        proc.wait()
        reader.join(5.0)
    said = [line for _t, line in lines]
    lost = said.index(
        "lost the actuators: holding the measured pose until the bridge gives them back"
    )
    again = next(k for k, line in enumerate(said) if k > lost and line.startswith("squatting"))
    assert "owner: squat_controller" in said[lost:again], said


def test_a_robot_that_does_not_stand_gets_no_squat() -> None:
    """A user's trial: started (or given the actuators back) while the robot sat, the example
    added its squat's bend to the sitting pose and drove the knees into their limits. It now
    names the joint farthest from standing and stops without commanding the robot."""
    port = free_port()
    with Stack(zenoh=ZenohConfig(hub_port=port), start_command=None) as stack:
        owners = Owners(stack)
        proc = _controller(port, "--duration", "4")
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 1, (out, err)
        said = out.splitlines()
        refusal = [
            line for line in said if line.startswith("the robot is not standing at the start")
        ]
        assert len(refusal) == 1, said
        assert "rad from its standing angle" in refusal[0]
        assert "(index " in refusal[0]
        assert not any(line.startswith("holding") or line.startswith("squatting") for line in said)
        assert "squat_controller" not in [owner for _t, owner in owners.changes]
