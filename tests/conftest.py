"""Test-suite set-up shared by every test folder.

Where it sits: the root of ``tests/``. Test folders have no ``__init__.py`` (rootdir-relative
imports), so shared helpers such as :mod:`rosbags_oracle` are imported by module name; this file
puts ``tests/`` on ``sys.path`` explicitly rather than relying on pytest's import mode.

Hypothesis profiles: ``default`` (no per-example deadline: rosbags' first call compiles code for
several milliseconds, and timing belongs in ``bench/`` anyway) and ``fuzz`` (many more examples,
for ``make fuzz``), chosen with ``HYPOTHESIS_PROFILE``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# The suite chooses each bus's middleware itself: a developer's RMW_IMPLEMENTATION (a ROS 2 machine
# set up for Cyclone DDS) would otherwise move every Zenoh test onto DDS, children included.
os.environ.pop("RMW_IMPLEMENTATION", None)
# Likewise the bus a user's shell selects for their own stack (the README's JOINTBUS_HUB_PORT for a
# second robot on the host): every test picks a free hub port or endpoints of its own and hands
# them to its children; an inherited variable made option tests read the user's port, not theirs.
for _name in (
    "JOINTBUS_HUB_PORT", "JOINTBUS_CONNECT", "JOINTBUS_ROUTER", "JOINTBUS_TLS_CERT",
    "JOINTBUS_TLS_KEY", "JOINTBUS_TLS_CA", "JOINTBUS_ACCESS_RULES",
):
    os.environ.pop(_name, None)

_TESTS = str(Path(__file__).resolve().parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

settings.register_profile(
    "default",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
# `make test` (a new user's first command, held under 5 minutes on this 2-core host): 40 examples
# a property instead of 100. The @given tests took 141 s of the quick suite's 510 s of CPU
# (2026-12-07); a failure hypothesis finds is kept in .hypothesis/ and replayed first next time.
settings.register_profile(
    "quick",
    deadline=None,
    max_examples=40,
    suppress_health_check=[HealthCheck.too_slow],
)
# `make test-long` (and so CI) runs every @given test again with 300 examples a property.
settings.register_profile(
    "thorough",
    deadline=None,
    max_examples=300,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "fuzz",
    deadline=None,
    max_examples=5000,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

#: Tests (a module path relative to ``tests/``, or ``path::test`` for one test) that run the robot
#: in real time, kill processes, time wall-clock bounds or soak. Their bounds hold only when the
#: test has the host to itself, and together they take minutes. They carry the ``long`` marker:
#: ``make test`` (which runs the rest two at a time) skips them; ``make test-long`` and
#: ``.ci/run`` run them one at a time.
LONG_RUNNING: tuple[str, ...] = (
    "faults/",
    "fuzz/",
    "soak/",
    "test_stack.py",
    "test_stack_at_1000_hz.py",
    "test_stack_processes.py",
    "runtime/test_process_group.py::test_a_sigkilled_launcher_leaves_no_child_behind",
    "test_own_controller.py",
    "test_ros2_interop.py",
    "test_ros2_dds_interop.py",  # bridge_data's rate at the peer, walking on the wall clock
    "cli/test_cli_demo.py",
    "cli/test_cli_demo_monitor.py",
    "cli/test_cli_launch.py",
    "cli/test_cli_node.py",  # STALE within bounds after SIGKILL, heartbeat ages
    "cli/test_cli_monitor.py",  # heartbeat ages of a SIGKILLed node against the wall clock
    "cli/test_cli_teleop.py",  # publishing rate while a key is held
    "cli/test_cli_play.py::test_play_of_a_recorded_sit_down_leaves_a_running_demo_standing",
    "cli/test_cli_record.py::test_record_started_after_the_stack_is_up_holds_its_latched_topics",
    "cli/test_cli_bus_options.py::test_a_recorder_that_finds_nothing_warns_early",
    "nodes/array/test_array_node.py::test_a_sigkilled_bus_client_speed_stops_within_the_bound",
    "robots/hb50/legged/test_walking.py",  # ten simulated seconds of MuJoCo per row of the table
    # the bridge's trot to a stop at 1 m/s: 14 simulated seconds of MuJoCo per stride phase
    "robots/hb50/bridge/test_stopping_trot.py::test_a_controller_lost_at_top_speed",
    "runtime/test_rate_loop.py",
    "runtime/test_realtime.py",
    "runtime/test_liveliness.py",
    "runtime/test_namesakes.py",  # start-up waits for a SIGKILLed namesake to vanish
    "tools/test_recorder_crash.py",
    "tools/test_foxglove_view.py::test_a_client_sees_the_walking_robot_move",
    "tools/test_monitor_app.py::test_teleop_keys_in_the_monitor_drive_velocity_commands",
    # Each 6-16 s of served arrays, CAN twins or lock-step MuJoCo stand-ups: moved here to
    # shorten `make test` (their behaviour is still checked in .ci/run).
    "cli/test_cli_serve.py",
    "cli/test_cli_can_twin.py",
    "cli/test_cli_param.py",
    "cli/test_cli_record.py::test_record_status_line_ends_with_a_newline_on_a_terminal",
    "cli/test_cli_record.py::test_record_quiet_prints_no_status_line",
    "cli/test_cli_topic.py::test_pub_unchecked_reaches_a_served_array_which_refuses_it_by_name",
    "cli/test_cli_bus_options.py::test_two_stacks_on_one_hub_in_different_domains_never_see_each",
    "cli/test_cli_ros2.py::test_every_type_a_running_stack_and_served_array_put_on_the_wire",
    "cli/test_cli_router.py::test_the_demo_says_in_its_first_lines_that_it_joined_a_router",
    "bench/test_bench_control.py::test_the_bench_robot_stands_then_walks_at_the_commanded_speed",
    "robots/hb50/control/test_control_node_interrupted.py",
    "robots/hb50/control/test_control_node_fallen.py",
    # seconds of lock-step MuJoCo trotting with the real control node, per refusal pattern
    "robots/hb50/bridge/test_bridge_node.py::test_a_write_the_driver_refuses_mid_trot",
    "robots/hb50/bridge/test_bridge_node.py::test_a_driver_that_refuses_the_returning_controller",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test that :data:`LONG_RUNNING` names ``long``.

    Each test file's path is resolved once, not once per test: ~4 200 ``Path.resolve()`` calls
    (a system call per path component) were redone in each of ``make test``'s five collections
    for ~250 files.
    """
    root = Path(__file__).resolve().parent
    relative: dict[Path, str] = {}
    for item in items:
        where = relative.get(item.path)
        if where is None:
            where = relative[item.path] = item.path.resolve().relative_to(root).as_posix()
        if f"{where}::{item.name}".startswith(LONG_RUNNING):
            item.add_marker(pytest.mark.long)
