"""Choosing the middleware as ROS 2 users do: ``RMW_IMPLEMENTATION`` and ``Bus(rmw=...)``."""

from __future__ import annotations

import pytest

from jointbus.bus import Bus, BusError, DdsConfigError, ZenohConfig
from jointbus.bus.dds_transport import DdsTransport
from jointbus.bus.rmw import RMW_ENV, ZENOH_RMW, is_dds, resolve_rmw, rmw_from_env
from jointbus.bus.zenoh_transport import ZenohTransport
from support.bus import free_port
from support.dds_peer import free_domain


def test_unset_or_empty_is_zenoh_and_the_dds_names_are_dds() -> None:
    assert resolve_rmw(None, {}) == ZENOH_RMW
    assert resolve_rmw(None, {RMW_ENV: "  "}) == ZENOH_RMW
    assert resolve_rmw(None, {RMW_ENV: "rmw_cyclonedds_cpp"}) == "rmw_cyclonedds_cpp"
    assert resolve_rmw("rmw_zenoh_cpp", {RMW_ENV: "rmw_cyclonedds_cpp"}) == ZENOH_RMW
    assert is_dds("rmw_cyclonedds_cpp") and is_dds("rmw_fastrtps_cpp")
    assert not is_dds(ZENOH_RMW)


def test_an_unsupported_middleware_is_refused_with_the_choices() -> None:
    with pytest.raises(BusError, match=r"rmw_connextdds.*rmw_zenoh_cpp, rmw_cyclonedds_cpp"):
        rmw_from_env({RMW_ENV: "rmw_connextdds"})
    with pytest.raises(BusError, match="not supported"):
        Bus(zenoh=ZenohConfig.loopback(free_port()), rmw="rmw_typo")


def test_a_bus_asked_for_a_network_follows_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    domain = free_domain()
    monkeypatch.setenv(RMW_ENV, "rmw_cyclonedds_cpp")
    with Bus(zenoh=ZenohConfig(hub_port=free_port(), domain_id=domain)) as bus:
        assert isinstance(bus.transport, DdsTransport)
        assert bus.transport.domain_id == domain
        assert bus.zenoh is None
        assert "DDS domain" in bus.transport.where
    with Bus(zenoh=ZenohConfig.loopback(free_port()), rmw=ZENOH_RMW) as bus:
        assert isinstance(bus.transport, ZenohTransport)
    with Bus() as bus:  # no network asked for: in process, whatever the variable says
        assert bus.transport is None


def test_naming_a_middleware_alone_asks_for_its_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """A user's trial (2026-12-06): ``Bus(rmw="rmw_fastrtps_cpp")`` beside a robot on Fast DDS
    stayed in process (no network had been asked for) and its subscriber got nothing, with no
    word why. Naming the middleware asks for its network, in ``ROS_DOMAIN_ID``'s domain."""
    domain = free_domain()
    monkeypatch.setenv("ROS_DOMAIN_ID", str(domain))
    monkeypatch.delenv(RMW_ENV, raising=False)
    with Bus(rmw="rmw_fastrtps_cpp") as bus:
        assert isinstance(bus.transport, DdsTransport)
        assert bus.transport.domain_id == domain


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ((("transport/link/tls/root_ca_certificate", '"ca.pem"'),), "the TLS certificates given"),
        ((("access_control", "{}"),), "the access rules given"),
    ],
    ids=["tls", "access-rules"],
)
def test_security_settings_on_a_dds_middleware_are_refused_not_dropped(
    options: tuple[tuple[str, str], ...], named: str
) -> None:
    """``RMW_IMPLEMENTATION=rmw_cyclonedds_cpp`` with certificates or access rules: jointbus's
    DDS has no DDS Security, so joining DDS would drop them without a word. Refused, with why."""
    config = ZenohConfig(hub_port=free_port(), domain_id=free_domain(), options=options)
    with pytest.raises(DdsConfigError) as info:
        Bus(zenoh=config, rmw="rmw_cyclonedds_cpp")
    text = str(info.value)
    assert named in text and "no DDS Security" in text and "rmw_zenoh_cpp" in text
    with Bus(zenoh=config, rmw=ZENOH_RMW) as bus:  # on Zenoh they apply (a plain tcp hub here)
        assert isinstance(bus.transport, ZenohTransport)
