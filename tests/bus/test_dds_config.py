"""How a bus joins DDS: loopback by default, ROS 2's discovery variables, a user's CYCLONEDDS_URI,
and the sockets a default participant opens."""

from __future__ import annotations

import os
import socket
import struct
from pathlib import Path

import pytest

from jointbus.bus import Bus, BusError
from jointbus.bus.dds_config import DdsConfig, DiscoveryRange, range_from_env
from jointbus.bus.errors import DdsConfigError
from support.dds_peer import free_domain


def test_nothing_set_is_loopback_pinned_with_multicast_off() -> None:
    config = DdsConfig(domain_id=3, static_peers=(), user_config="")
    assert range_from_env({}) is DiscoveryRange.LOCALHOST
    xml = config.xml()
    assert '<NetworkInterface address="127.0.0.1"/>' in xml
    assert "<AllowMulticast>false</AllowMulticast>" in xml
    assert '<Peer address="127.0.0.1"/>' in xml
    assert config.where == "DDS domain 3 (rmw_cyclonedds_cpp, loopback)"


def test_the_ros_variables_choose_the_range() -> None:
    assert range_from_env({"ROS_AUTOMATIC_DISCOVERY_RANGE": "subnet"}) is DiscoveryRange.SUBNET
    assert (
        range_from_env({"ROS_AUTOMATIC_DISCOVERY_RANGE": "SUBNET", "ROS_LOCALHOST_ONLY": "1"})
        is DiscoveryRange.LOCALHOST
    )
    with pytest.raises(DdsConfigError, match="LOCALHOST, SUBNET"):
        range_from_env({"ROS_AUTOMATIC_DISCOVERY_RANGE": "everywhere"})


def test_opening_to_the_network_is_explicit() -> None:
    subnet = DdsConfig(discovery_range=DiscoveryRange.SUBNET, static_peers=(), user_config="")
    xml = subnet.xml()
    assert "NetworkInterface" not in xml and "AllowMulticast" not in xml
    peers = DdsConfig(static_peers=("192.168.1.10",), user_config="")
    assert '<Peer address="192.168.1.10"/>' in peers.xml()
    assert "NetworkInterface" not in peers.xml()  # a peer elsewhere must be reachable
    assert not peers.loopback_only


def test_a_users_cyclonedds_uri_comes_last(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CYCLONEDDS_URI", "file:///etc/cyclonedds.xml")
    config = DdsConfig(static_peers=())
    assert config.xml().endswith(",file:///etc/cyclonedds.xml")
    assert "CYCLONEDDS_URI" in config.where


def test_bad_settings_are_refused() -> None:
    with pytest.raises(DdsConfigError, match="domain_id"):
        DdsConfig(domain_id=300)
    with pytest.raises(DdsConfigError, match="static peer"):
        DdsConfig(static_peers=("bad peer<",))
    with pytest.raises(DdsConfigError, match="rmw"):
        DdsConfig(rmw="rmw_zenoh_cpp")
    with pytest.raises(BusError):
        DdsConfig(static_peers="192.168.1.1")  # type: ignore[arg-type]


def _udp_sockets_of_this_process() -> list[tuple[str, int]]:
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = []
    for line in Path("/proc/self/net/udp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[9] in inodes:
            address, port = fields[1].split(":")
            ip = socket.inet_ntoa(struct.pack("<I", int(address, 16)))
            found.append((ip, int(port, 16)))
    return found


def test_a_default_participant_uses_loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("ROS_AUTOMATIC_DISCOVERY_RANGE", "ROS_STATIC_PEERS", "CYCLONEDDS_URI"):
        monkeypatch.delenv(variable, raising=False)
    domain = free_domain()
    before = set(_udp_sockets_of_this_process())
    with Bus(dds=DdsConfig(domain_id=domain)):
        opened = set(_udp_sockets_of_this_process()) - before
        groups = Path("/proc/net/igmp").read_text()
    assert opened, "the participant opened no UDP socket"
    spdp_multicast_port = 7400 + 250 * domain
    for ip, port in opened:
        # Cyclone binds its unicast sockets to the wildcard when it uses one interface (see
        # jointbus.bus.dds_config); never to another interface's address, never multicast.
        assert ip in ("127.0.0.1", "0.0.0.0"), (ip, port)
        assert port != spdp_multicast_port
    assert "0100FFEF" not in groups  # 239.255.0.1, DDS's discovery group, joined nowhere
