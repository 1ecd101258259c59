"""``jointbus serve`` + ``bus://`` on DDS: with ``RMW_IMPLEMENTATION=rmw_cyclonedds_cpp`` the
client's bus and the server's are DDS participants in one ROS domain, and the array API works as
over Zenoh — calls carried out by the server, its refusals back as the same typed errors, the
impedance stream arbitrated, the e-stop latched."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from jointbus import drivers
from jointbus.bus.dds_transport import DdsTransport
from jointbus.drivers import RejectReason, RequestRejected
from support.array_server import served
from support.dds_peer import free_domain


@pytest.fixture
def on_dds(monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    domain = free_domain()
    monkeypatch.setenv("RMW_IMPLEMENTATION", "rmw_cyclonedds_cpp")
    monkeypatch.setenv("ROS_DOMAIN_ID", str(domain))
    yield domain


def test_a_bus_client_drives_a_served_array_over_dds(on_dds: int) -> None:
    with served("sim://arm6", "arm6") as server:
        assert isinstance(server.bus.transport, DdsTransport)
        assert server.bus.transport.domain_id == on_dds
        with drivers.open(server.url(timeout="3")) as arm:
            with pytest.raises(RequestRejected) as refused:  # refused by the server, as locally
                arm.position("elbow", 0.5)
            assert refused.value.reason is RejectReason.POWERED_OFF
            assert (refused.value.joint, refused.value.index) == ("elbow", 2)
            arm.power(True)
            arm.position("elbow", 0.5)
            deadline = time.monotonic() + 10.0
            elbow = arm.index("elbow")
            while time.monotonic() < deadline:
                if abs(arm.read().actuators[elbow].position - 0.5) < 0.02:
                    break
                time.sleep(0.05)
            assert abs(arm.read().actuators[elbow].position - 0.5) < 0.02
            assert server.array.read().actuators[elbow].position == pytest.approx(0.5, abs=0.02)
