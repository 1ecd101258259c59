"""What a stack says about its layout and its rate before anything starts: a layout's error is
the loader's own message; a rate it cannot run is refused at construction."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from jointbus.bus import ZenohConfig
from jointbus.drivers.sim.driver import MIN_RATE, SimArrayConfig
from jointbus.drivers.sim.robots import _timestep
from jointbus.model.yaml_loader import load_robot
from jointbus.stack import SIM_CONTROL_PERIOD_S, SIM_TIMESTEP_S, Stack, StackConfigError
from support.bus import free_port


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
    [
        (-5.0, "a rate in [50, 2000] Hz"),
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
