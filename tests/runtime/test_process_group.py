"""ProcessGroup on real child processes: ready, failures named, ordered stop, deaths noticed,
respawn, CPU counted, and no orphan when the launcher itself is SIGKILLed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from jointbus.runtime.process_group import (
    ChildProcess,
    ProcessGroup,
    ProcessGroupError,
    progress_of,
)
from support.bus import wait_until

SRC = str(Path(__file__).resolve().parents[2] / "src")


def script(body: str) -> tuple[str, ...]:
    """A child running ``body`` (plain Python: it starts in milliseconds)."""
    return (sys.executable, "-c", "import os, signal, sys, time\n" + textwrap.dedent(body))


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_children_start_together_and_stop_in_reverse_order(tmp_path: Path) -> None:
    """The controller stops before the bridge: the bridge must see its controller go."""
    log = tmp_path / "stops.log"
    body = f"""
        name = sys.argv[1]
        def stop(*_):
            with open({str(log)!r}, "a") as f:
                f.write(name + "\\n")
            sys.exit(0)
        signal.signal(signal.SIGTERM, stop)
        print("ready", flush=True)
        while True:
            time.sleep(0.05)
    """
    group = ProcessGroup()
    pids = group.start_all(
        [ChildProcess(n, (*script(body), n)) for n in ("bridge", "control")]
    )
    assert len(set(pids)) == 2 and all(alive(p) for p in pids)
    assert group.names == ("bridge", "control")
    group.stop()
    assert log.read_text().split() == ["control", "bridge"]
    assert not any(alive(p) for p in pids)
    assert group.names == ()
    with pytest.raises(ProcessGroupError, match="group is stopped"):
        group.start(ChildProcess("late", script("print('ready', flush=True)")))


def test_a_child_that_fails_to_start_is_named_with_its_last_words() -> None:
    group = ProcessGroup(on_line=lambda *_: None)
    body = """
        sys.stderr.write("error: cannot open sim://nope\\n")
        sys.exit(3)
    """
    with pytest.raises(ProcessGroupError) as info:
        group.start(ChildProcess("bridge", script(body)), ready_timeout_s=20.0)
    assert "process 'bridge' exited with code 3" in str(info.value)
    assert str(info.value).endswith(": cannot open sim://nope")  # one "error:", the caller's


def test_a_silent_child_times_out_and_is_stopped() -> None:
    group = ProcessGroup(on_line=lambda *_: None, stop_timeout_s=2.0)
    with pytest.raises(ProcessGroupError, match="'mute' not ready after 1 s"):
        group.start(ChildProcess("mute", script("time.sleep(60)")), ready_timeout_s=1.0)
    assert group.names == ()


def test_a_death_is_reported_with_its_signal_and_a_respawned_child_comes_back() -> None:
    exits: list[tuple[str, int]] = []
    group = ProcessGroup(on_exit=lambda n, c: exits.append((n, c)))
    body = """
        print("ready", flush=True)
        while True:
            time.sleep(0.05)
    """
    try:
        first = group.start(ChildProcess("control", script(body), respawn=True))
        group.start(ChildProcess("recorder", script(body)))
        os.kill(first, signal.SIGKILL)
        assert wait_until(lambda: ("control", -signal.SIGKILL) in exits, 5.0)
        assert wait_until(lambda: group.pid("control") not in (None, first), 30.0)
        recorder = group.pid("recorder")
        assert recorder is not None
        group.signal("recorder", signal.SIGTERM)
        assert wait_until(lambda: ("recorder", -signal.SIGTERM) in exits, 5.0)
        assert group.pid("recorder") is None  # not respawned: its spec does not say so
    finally:
        group.stop()


def test_a_respawned_child_bound_to_its_launcher_keeps_running() -> None:
    """A layout process asks for SIGTERM when its launcher dies (PR_SET_PDEATHSIG). The kernel
    sends it when the *thread* that forked the child ends: a child respawned by the watcher
    thread of its predecessor, which ends right after, was stopped at once (exit 0), respawned,
    stopped... — the chaos campaign's control node never came back after a SIGKILL."""
    exits: list[tuple[str, int]] = []
    group = ProcessGroup(on_exit=lambda n, c: exits.append((n, c)))
    body = f"""
        sys.path.insert(0, {SRC!r})
        from jointbus.runtime.process_group import bind_to_parent
        bind_to_parent()
        print("ready", flush=True)
        while True:
            time.sleep(0.05)
    """
    try:
        first = group.start(ChildProcess("control", script(body), respawn=True))
        os.kill(first, signal.SIGKILL)
        assert wait_until(lambda: group.pid("control") not in (None, first), 30.0)
        second = group.pid("control")
        assert second is not None
        threading.Event().wait(1.5)
        assert exits == [("control", -signal.SIGKILL)], exits  # nothing after the kill
        assert group.pid("control") == second and alive(second)
    finally:
        group.stop()


def test_the_cpu_of_every_child_is_counted() -> None:
    group = ProcessGroup()
    body = """
        print("ready", flush=True)
        end = time.process_time() + 0.6
        while time.process_time() < end:
            pass
        time.sleep(60)
    """
    try:
        group.start(ChildProcess("busy", script(body)))
        assert wait_until(lambda: group.cpu_seconds() >= 0.5, 10.0)
    finally:
        group.stop()
    assert group.cpu_seconds() >= 0.5  # an exited child's CPU still counts


def test_progress_says_whether_a_child_runs_is_stopped_or_gone() -> None:
    """What ``Stack`` reads to tell a bridge heard late (its process runs, its CPU time moves)
    from one lost (stopped: ``T``; gone: None)."""
    group = ProcessGroup()
    body = """
        print("ready", flush=True)
        while True:
            pass
    """
    try:
        group.start(ChildProcess("spinning", script(body)))
        pid = group.pid("spinning")
        assert pid is not None
        first = progress_of(pid)
        assert first is not None and first[0] in "RS"
        assert wait_until(lambda: (p := progress_of(pid)) is not None and p[1] > first[1], 5.0)
        group.signal("spinning", signal.SIGSTOP)
        assert wait_until(lambda: (p := progress_of(pid)) is not None and p[0] == "T", 5.0)
        group.signal("spinning", signal.SIGCONT)
    finally:
        group.stop()
    assert progress_of(pid) is None


def test_a_sigkilled_launcher_leaves_no_child_behind(tmp_path: Path) -> None:
    """The kernel sends its children SIGTERM when the launcher dies (PR_SET_PDEATHSIG): a dead
    bridge process must not leave an orphan simulator, nor a dead launcher its robot."""
    pids = tmp_path / "pids"
    launcher = textwrap.dedent(
        f"""
        import sys, time
        from jointbus.runtime.process_group import ChildProcess, ProcessGroup
        child = (sys.executable, "-c",
                 "from jointbus.runtime.process_group import bind_to_parent; bind_to_parent(); "
                 "import time; print('ready', flush=True); time.sleep(120)")
        group = ProcessGroup()
        p = group.start_all([ChildProcess("a", child), ChildProcess("b", child)])
        open({str(pids)!r}, "w").write(" ".join(map(str, p)))
        print("started", flush=True)
        time.sleep(120)
        """
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen(
        [sys.executable, "-c", launcher], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert proc.stdout is not None
        line = [""]
        reader = threading.Thread(target=lambda: line.__setitem__(0, proc.stdout.readline()))
        reader.start()
        reader.join(60.0)
        assert line[0].strip() == "started"
        children = [int(p) for p in pids.read_text().split()]
        assert all(alive(p) for p in children)
        proc.kill()
        proc.wait(10)
        assert wait_until(lambda: not any(alive(p) for p in children), 10.0)
    finally:
        if proc.poll() is None:
            proc.kill()
