"""The motor twin of a ``can://`` URL: where its motors start, and its fault injection.

Issue 20 item 16: the twin started every motor at 0 rad — on the knee's limit [-2.705, 0] — so
the README's "hold where you are" pattern (read the positions, command them back as an
impedance hold) was refused on its very first command.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import numpy as np
import pytest

from jointbus import drivers
from jointbus.drivers import ImpedanceCommand
from jointbus.drivers.actuator_array import ActuatorArrayConfigError
from jointbus.drivers.can.config import CanArrayConfig
from jointbus.drivers.can.twin_server import TwinServer, rest_positions
from jointbus.drivers.registry import DriverURL
from jointbus.drivers.sim.robots import HB50_LYING_POSE
from jointbus.model.yaml_loader import load_robot


def fresh_url(robot: str = "hb50") -> str:
    return f"can://virtual/jb-twin-{uuid.uuid4().hex}?robot={robot}&model=md80"


@pytest.mark.parametrize("noise", [True, False])
def test_holding_where_the_motors_are_is_accepted_on_the_first_command(noise: bool) -> None:
    url = fresh_url()
    with TwinServer.from_url(url, noise=noise), drivers.open(url) as legs:
        legs.power(True)
        here = legs.read_joints().position.copy()  # rad, actuator order
        limits = legs.config.limits
        for i, spec in enumerate(limits):
            assert spec.position_min < here[i] < spec.position_max, legs.names[i]
        hold = ImpedanceCommand.hold(here, kp=20.0, kd=1.0)
        for _ in range(50):  # the README's pattern: a short impedance stream, nothing refused
            legs.impedance(hold)
            reading = legs.read_joints()
        assert np.abs(reading.position - here).max() < 0.05


def test_hb50s_twin_starts_where_the_simulated_robot_lies() -> None:
    """One rest pose: the robot file's ``rest``, which ``sim://hb50`` starts in too."""
    model = load_robot("hb50")
    rest = model.pose("rest")
    home = model.pose("home")
    for leg in range(4):
        names = model.actuator_order[3 * leg : 3 * leg + 3]
        expected = [np.sign(home[n]) * v for n, v in zip(names, HB50_LYING_POSE, strict=True)]
        assert [rest[n] for n in names] == pytest.approx(expected)
    url = fresh_url()
    config = CanArrayConfig.from_url(DriverURL.parse(url))
    assert rest_positions(config) == pytest.approx([rest[n] for n in model.actuator_order])
    with TwinServer.from_url(url, noise=False) as server:
        assert server.twin.positions == pytest.approx([rest[n] for n in model.actuator_order])


def test_a_robot_without_a_rest_pose_starts_at_home_moved_inside_its_limits(
    tmp_path: Path,
) -> None:
    robot = tmp_path / "wrist.yaml"
    robot.write_text(
        """
name: wrist
links: [{name: base}, {name: a}, {name: b}]
joints:
  - {name: flex, type: revolute, parent: base, child: a, axis: [0, 1, 0],
     limits: {position: [-2.0, 0.0], velocity: 3.0, effort: 5.0, current: 4.0}}
  - {name: roll, type: revolute, parent: a, child: b, axis: [1, 0, 0],
     limits: {position: [-1.0, 1.0], velocity: 3.0, effort: 5.0, current: 4.0}}
""",
        encoding="utf-8",
    )
    url = f"can://virtual/jb-twin-{uuid.uuid4().hex}?robot={robot}&model=md80"
    start = rest_positions(CanArrayConfig.from_url(DriverURL.parse(url)))
    assert -2.0 < start[0] < 0.0  # home 0 is on flex's upper limit: moved inside
    assert start[0] == pytest.approx(-0.05)
    assert start[1] == 0.0  # roll's home is inside already


def test_a_chosen_start_is_where_the_motors_are_and_a_wrong_one_is_refused() -> None:
    url = fresh_url()
    config = CanArrayConfig.from_url(DriverURL.parse(url))
    home = load_robot("hb50").pose("home")
    start = [home[n] for n in config.array.names]
    with TwinServer(config, noise=False, initial_positions=start) as server:
        assert server.twin.positions == pytest.approx(start)
    with pytest.raises(ActuatorArrayConfigError, match="expected 12 finite positions"):
        TwinServer(config, initial_positions=[0.0, 0.0])
