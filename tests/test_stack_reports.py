"""What a :class:`~jointbus.stack.Stack` makes of the ``/hb50/status`` reports it hands out: the
control node's velocity hold shown in the status line (a user's trial, 2026-12-05, saw one WARN
"velocity held" scroll by and then only ``mode=STAND`` while a 0.5 m/s stream was ignored)."""

from __future__ import annotations

import dataclasses
import math

from jointbus.robots.hb50.messages import Level, Status
from jointbus.stack import Stack, StackSummary

HELD = (
    "velocity held: send zero first — the command asks for 0.50 m/s forward, 0.00 m/s sideways, "
    "0.00 rad/s turn, and no command was neutral since a stall; walking needs a fresh start"
)
RELEASED = "velocity released: a zero command after a stall; the next command walks"


def _standing(**figures: object) -> StackSummary:
    nan = math.nan
    base = StackSummary(
        elapsed_s=12.0, nodes=("bridge", "control"), transport="processes", joints=(),
        motion_mode="STAND", bridge_mode="run", owner="control_node", estop=None,
        drives_enabled=True, base_height_m=0.327, true_base_height_m=nan, bridge_data_hz=500.0,
        command_hz=500.0, loop_rate_hz=500.0, lateness_p50_s=1e-6, lateness_p99_s=1e-5,
        lateness_max_s=1e-4, overruns=0, skipped_fraction=0.0, cpu_fraction=0.5,
        simulator_cpu_fraction=0.0,
    )  # fmt: skip
    return dataclasses.replace(base, **figures)  # type: ignore[arg-type]


def test_the_control_nodes_velocity_hold_is_followed_from_its_reports() -> None:
    stack = Stack()
    stack._on_report(Status.of(Level.WARN, "control_node", HELD))
    assert stack._velocity_held
    stack._on_report(Status.of(Level.WARN, "teleop", HELD))  # another node's words: not its
    stack._on_report(Status.of(Level.OK, "control_node", "motion mode STAND -> STAND"))
    assert stack._velocity_held
    stack._on_report(Status.of(Level.OK, "control_node", RELEASED))
    assert not stack._velocity_held
    assert len(stack.take_reports()) == 4  # every report still handed out


def test_the_status_line_says_the_velocity_is_held() -> None:
    assert "mode=STAND(velocity held: send zero) " in _standing(velocity_held=True).line()
    assert "mode=STAND " in _standing().line()
