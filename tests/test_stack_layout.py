"""What a stack says about its layout and its rate before anything starts: a layout's error is
the loader's own message; a rate it cannot run is refused at construction; the processes' CPU
and SCHED_FIFO are reported as this host applies them, not as the file asks (no process runs
here: the start-up line is built from an unstarted stack)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from jointbus.bus import ZenohConfig
from jointbus.cli.demo import _where, start_notes
from jointbus.drivers.sim.driver import MIN_RATE, SimArrayConfig
from jointbus.drivers.sim.robots import _timestep
from jointbus.model.yaml_loader import load_robot
from jointbus.runtime.launch import ProcessSpec
from jointbus.runtime.process_group import READY
from jointbus.runtime.realtime import realtime_of
from jointbus.stack import (
    DEFAULT_REALTIME,
    SIM_CONTROL_PERIOD_S,
    SIM_TIMESTEP_S,
    Stack,
    StackConfigError,
    _fifo_refused,
)
from support.bus import free_port

BUNDLED = """\
processes:
  - name: bridge
    nodes: [bridge]
    cpu: {cpu}
    priority: 50
  - name: control
    nodes: [control]
    cpu: 1
    priority: 49
"""


class _Unstarted(Stack):
    """A stack that is not started, with a bus that says where it would join: its start-up line
    without any process."""

    @property
    def bus(self) -> Any:
        return SimpleNamespace(transport=SimpleNamespace(where="hub port 1, domain 0"))


def _stack(tmp_path: Path, text: str) -> _Unstarted:
    path = tmp_path / "mine.yaml"
    path.write_text(text, encoding="utf-8")
    return _Unstarted(zenoh=ZenohConfig(hub_port=free_port()), layout=path)


def test_a_layout_error_is_the_loaders_own_message(tmp_path: Path) -> None:
    """15 of 15 broken files read ``Stack layout = '…' is invalid: expected …: process …``."""
    path = tmp_path / "typo.yaml"
    path.write_text("processes:\n  - name: bridge\n    nodes: [bridge]\n    prioity: 50\n")
    with pytest.raises(StackConfigError) as info:
        Stack(zenoh=ZenohConfig(hub_port=free_port()), layout=path)
    assert info.value.field == "layout"
    assert str(info.value) == (
        f"{path}: process 'bridge' (index 0): unknown key(s) prioity; expected name, nodes, cpu, "
        "priority, respawn"
    )


@pytest.mark.parametrize(
    ("rate", "expected"),
    [  # (the range, --rate -5, was refused here before: test_stack.py)
        (700.0, "whole number of the simulator's 0.5 ms physics steps"),
        (400.0, "whole number of the simulator's 0.5 ms physics steps"),
    ],
)
@pytest.mark.parametrize("layout", ["inproc", "processes"])
def test_a_rate_the_simulator_cannot_step_is_refused_before_anything_starts(
    rate: float, expected: str, layout: str
) -> None:
    """``--rate 700`` started the layout's processes, and its bridge process refused it."""
    threads = threading.active_count()
    with pytest.raises(StackConfigError) as info:
        Stack(zenoh=ZenohConfig(hub_port=free_port()), rate_hz=rate, layout=layout)
    assert info.value.field == "rate_hz" and expected in str(info.value)
    assert threading.active_count() == threads


def test_the_rate_check_knows_the_default_simulators_steps() -> None:
    """The check opens no simulator: its figures are the driver's, spelled out."""
    control = SimArrayConfig.from_model(load_robot("hb50")).control_period
    assert SIM_CONTROL_PERIOD_S == control
    assert _timestep(MIN_RATE, control) == pytest.approx(SIM_TIMESTEP_S, abs=1e-15)
    for rate in (250.0, 500.0, 1000.0, 2000.0):
        Stack(zenoh=None, rate_hz=rate)  # accepted


def test_a_cpu_the_host_lacks_is_said_not_pinned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``cpu: 7`` on a 2-CPU host: the start-up line said ``bridge on CPU 7`` while the loop ran on
    CPUs 0-1. It says it is not pinned, once as a WARN, and :attr:`Stack.placements` holds it."""
    monkeypatch.setattr("jointbus.stack._host_cpus", lambda: (2, frozenset({0, 1})))
    monkeypatch.setattr("jointbus.stack._fifo_refused", lambda _priority: None)
    stack = _stack(tmp_path, BUNDLED.format(cpu=7))
    line = _where(stack)
    assert "bridge (bridge on CPU 7 — not on this 2-CPU host: not pinned, SCHED_FIFO 50)" in line
    assert "control (control on CPU 1, SCHED_FIFO 49)" in line
    bridge, control = stack.placements
    assert (bridge.cpu_asked, bridge.cpu, bridge.priority) == (7, None, 50)
    assert (control.cpu, control.priority) == (1, 49)
    warnings = [line for line in start_notes(stack) if line.startswith("WARN")]
    assert warnings == [
        "WARN process 'bridge': CPU 7 is not on this 2-CPU host: its loop is not pinned, it runs "
        "on any CPU (a layout's cpu applies where the host has that CPU)"
    ]


def test_a_cpu_this_process_may_not_use_is_said_not_pinned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("jointbus.stack._host_cpus", lambda: (4, frozenset({0, 2, 3})))
    monkeypatch.setattr("jointbus.stack._fifo_refused", lambda _priority: None)
    stack = _stack(tmp_path, BUNDLED.format(cpu=0))
    assert "bridge (bridge on CPU 0, SCHED_FIFO 50)" in _where(stack)
    assert "control on CPU 1 — not one this process may use (0,2-3): not pinned" in _where(stack)


def test_a_refused_sched_fifo_is_said_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the OS refuses SCHED_FIFO the line claimed it all the same."""
    monkeypatch.setattr("jointbus.stack._host_cpus", lambda: (2, frozenset({0, 1})))
    monkeypatch.setattr(
        "jointbus.stack._fifo_refused", lambda _p: "PermissionError: Operation not permitted"
    )
    stack = _stack(tmp_path, BUNDLED.format(cpu=0))
    assert stack.realtime == DEFAULT_REALTIME
    line = _where(stack)
    assert "bridge (bridge on CPU 0, SCHED_FIFO 50 refused: normal scheduler)" in line
    assert "control (control on CPU 1, SCHED_FIFO 49 refused: normal scheduler)" in line
    assert all(p.priority is None for p in stack.placements)
    warnings = [line for line in start_notes(stack) if line.startswith("WARN")]
    assert len(warnings) == 2 and "SCHED_FIFO 50 refused (PermissionError" in warnings[0]


def test_a_layout_without_the_control_node_says_so_once(tmp_path: Path) -> None:
    """Only the bridge: ``in 1 processes`` and nothing said that nothing commands the robot."""
    stack = _stack(tmp_path, "processes:\n  - name: bridge\n    nodes: [bridge]\n")
    assert " in 1 process: bridge (bridge) " in _where(stack)
    assert start_notes(stack) == [
        "jointbus: no control node in this layout: the robot is held until a controller "
        "publishes /hb50/joint_command"
    ]
    whole = _stack(tmp_path, BUNDLED.format(cpu=0))
    assert not any("no control node" in line for line in start_notes(whole))


def test_a_layout_without_the_bridge_names_no_simulator_and_says_what_it_waits_for(
    tmp_path: Path,
) -> None:
    """A new user's trial (2026-12-07): a layout of the control process alone started with
    ``hb50 on sim://hb50?… (stepped by the bridge's loop …)`` — a simulator nothing ran — and
    every status line read ``bridge=?`` with no word why. It now names no actuators and says
    once that the control node waits for a bridge on the bus."""
    stack = _stack(tmp_path, "processes:\n  - name: control\n    nodes: [control]\n")
    line = _where(stack)
    assert "hb50 on no actuators of its own (the layout runs no bridge) in 1 process" in line
    assert "sim://" not in line and "stepped" not in line, line
    (note,) = start_notes(stack)
    assert note.startswith("jointbus: no bridge in this layout: nothing here opens the actuators")
    assert "waits for a bridge of hb50 on the bus" in note and "bridge=?" in note
    whole = _stack(tmp_path, BUNDLED.format(cpu=0))
    assert not any("no bridge" in line for line in start_notes(whole))


def test_a_process_with_both_nodes_says_its_control_step_runs_one_below(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Beside the bridge the control step runs one below the process's priority (the bridge's
    cycle must pre-empt it): the start-up line said only ``SCHED_FIFO 99`` for a process whose
    step thread ran at 98."""
    monkeypatch.setattr("jointbus.stack._host_cpus", lambda: (2, frozenset({0, 1})))
    monkeypatch.setattr("jointbus.stack._fifo_refused", lambda _priority: None)
    stack = _stack(tmp_path, "processes:\n  - name: one\n    nodes: [bridge, control]\n"
                   "    priority: 99\n")  # fmt: skip
    assert " in 1 process: one (bridge + control, SCHED_FIFO 99, its control step 98 on any " in (
        _where(stack)
    )
    assert stack.placements[0].step_priority == 98
    # a CPU is the loop's: the step thread beside it is not pinned (a trial read "bridge +
    # control on CPU 1" as both there, 2026-12-07)
    pinned = _stack(tmp_path, "processes:\n  - name: one\n    nodes: [bridge, control]\n"
                    "    cpu: 1\n    priority: 45\n")  # fmt: skip
    assert (
        " one (bridge + control, its loop on CPU 1, SCHED_FIFO 45, its control step 44 on any "
        "CPU) "
    ) in _where(pinned), _where(pinned)
    alone = _stack(tmp_path, BUNDLED.format(cpu=0))
    assert [p.step_priority for p in alone.placements] == [None, 49]
    assert "its control step" not in _where(alone)


def test_a_control_process_runs_its_step_at_the_layouts_priority() -> None:
    """``priority: 99`` for the control node's process ran its step thread at SCHED_FIFO 98 (the
    process asked for 100 as the bridge's priority, capped at 99, and the step took one off):
    the layout process, started as the stack starts it, runs its step at 99."""
    if _fifo_refused(99) is not None:
        pytest.skip("this host refuses SCHED_FIFO 99")
    spec = ProcessSpec("control", ("control",), None, 99, False)
    child = subprocess.Popen(
        [sys.executable, "-m", "jointbus.stack", "--robot", "hb50",
         "--process", json.dumps(dataclasses.asdict(spec)),
         "--zenoh", ZenohConfig(hub_port=free_port()).to_json()],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == READY, child.stderr
        held = realtime_of(child.pid, "control")
        assert held is not None and held.priority == 99, held
    finally:
        child.terminate()
        child.wait(timeout=30)
    assert child.returncode == 0
