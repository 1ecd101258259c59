"""A ``bus://`` client refuses what the served driver cannot carry, before it sends.

The served array is hb50's twelve md80 motors on a virtual CAN bus answered by the firmware twin,
behind an array node on its own Zenoh session (loopback, peer mode, no multicast scouting — as
``support.array_server`` serves every ``bus://`` test). The md80's wire range for ``kp`` is
0…500: the client learns it from the server's description and raises the same typed error the
server's check would (naming joint and index, ``kp``, 600 and the range with why), so the
command never leaves the client. Before, the client published it without a word, and the served
array's driver refused every write of the stream.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Iterator

import numpy as np
import pytest

from jointbus import drivers
from jointbus.drivers.can.config import VIRTUAL_REPLY_TIMEOUT_S, CanArrayConfig
from jointbus.drivers.can.twin_server import TwinServer
from jointbus.drivers.impedance import ImpedanceCommand
from jointbus.drivers.registry import DriverURL
from jointbus.messages.errors import LimitError
from jointbus.model.yaml_loader import load_robot
from support.array_server import Served, served


@contextlib.contextmanager
def served_can_legs() -> Iterator[Served]:
    """hb50's md80 legs on the firmware twin, served as ``/legs``."""
    hb50 = load_robot("hb50")
    url = (
        f"can://virtual/jb-bus-ranges-{uuid.uuid4().hex}?robot=hb50&model=md80"
        f"&timeout={VIRTUAL_REPLY_TIMEOUT_S}"
    )
    home = [hb50.pose("home")[n] for n in hb50.actuator_order]
    twin = TwinServer(CanArrayConfig.from_url(DriverURL.parse(url)), noise=False,
                      initial_positions=home)
    with twin, served(url, "legs") as server:
        yield server


def test_a_bus_client_refuses_a_gain_over_the_served_motors_wire_range() -> None:
    with served_can_legs() as server, drivers.open(server.url(timeout="5.0")) as legs:
        legs.power(True)
        home = legs.read_joints().position
        kp = np.full(12, 20.0)
        kp[4] = 600.0  # fl_j1
        with pytest.raises(LimitError) as info:
            legs.impedance(ImpedanceCommand.hold(home, kp, 1.0))
        error = info.value
        assert (error.joint, error.index, error.field, error.value) == ("fl_j1", 4, "kp", 600.0)
        assert error.expected == "within [0, 500] (the md80's wire range)"
        assert "joint 'fl_j1' (index 4)" in str(error)
        ranges = legs.command_ranges()  # from the server's description
        assert ranges.bounds("kp", 4) == (0.0, 500.0)
        assert ranges.bound_by[4] == "the md80's wire range"
        legs.impedance(ImpedanceCommand.hold(home, 20.0, 1.0))  # within it: sent
        deadline = time.monotonic() + 5.0
        while server.node.last_applied is None and time.monotonic() < deadline:
            time.sleep(0.02)
        applied = server.node.last_applied
        assert applied is not None and applied.kp.tolist() == [20.0] * 12
        assert server.node.rejected == 0  # the refused command never reached the server
