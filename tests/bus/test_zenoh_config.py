"""Zenoh configuration: validation, the default hub scheme, router mode, session fallback."""

from __future__ import annotations

import json

import pytest

from jointbus.bus import MAB_RT, Bus, ZenohConfig, ZenohConfigError
from support.bus import Count, free_port, wait_until


def test_default_scheme_is_loopback_hub_then_fallback() -> None:
    config = ZenohConfig()
    assert config.mode == "peer"
    assert config.attempts() == [
        (("tcp/127.0.0.1:7447",), ()),
        (("tcp/127.0.0.1:0",), ("tcp/127.0.0.1:7447",)),
    ]
    items = dict(config.json5_items(*config.attempts()[0]))
    assert json.loads(items["scouting/multicast/enabled"]) is False
    assert json.loads(items["listen/endpoints"]) == ["tcp/127.0.0.1:7447"]
    # Lost links are retried within 0.5 s (Zenoh's default waits up to 4 s): the 2 s recovery
    # bound of a restarted peer or router depends on it.
    retry = json.loads(items["connect/retry"])
    assert retry["period_init_ms"] <= 100
    assert retry["period_max_ms"] <= 500


def test_explicit_endpoints_replace_the_scheme() -> None:
    config = ZenohConfig(listen=["tcp/127.0.0.1:7600"], connect=["tcp/127.0.0.1:7601"])  # type: ignore[arg-type]
    assert config.attempts() == [(("tcp/127.0.0.1:7600",), ("tcp/127.0.0.1:7601",))]


def test_router_means_client_mode_without_listening() -> None:
    config = ZenohConfig.for_router("tcp/192.168.1.10:7447")
    assert config.mode == "client"
    assert config.attempts() == [((), ("tcp/192.168.1.10:7447",))]
    assert json.loads(dict(config.json5_items((), ()))["mode"]) == "client"


def test_multicast_only_when_asked() -> None:
    items = dict(ZenohConfig(multicast_scouting=True).json5_items((), ()))
    assert json.loads(items["scouting/multicast/enabled"]) is True


@pytest.mark.parametrize(
    "kwargs",
    [
        {"listen": "tcp/127.0.0.1:1"},
        {"listen": ["127.0.0.1:7447"]},
        {"connect": ["tcp/"]},
        {"router": "localhost"},
        {"hub_port": 0},
        {"hub_port": 70000},
        {"multicast_scouting": "no"},
        {"options": [("mode",)]},
    ],
)
def test_invalid_config_is_rejected(kwargs: dict[str, object]) -> None:
    with pytest.raises(ZenohConfigError):
        ZenohConfig(**kwargs)  # type: ignore[arg-type]


def test_second_bus_falls_back_to_the_hub_and_both_talk() -> None:
    hub_port = free_port()
    first = Bus(name="hub", zenoh=ZenohConfig(hub_port=hub_port))
    second = Bus(name="joiner", zenoh=ZenohConfig(hub_port=hub_port))
    try:
        got: list[Count] = []
        second.subscribe("/x", Count, got.append, MAB_RT)
        pub = first.publisher("/x", Count, MAB_RT)
        assert wait_until(lambda: pub.remote_matched)
        pub.publish(Count(1))
        assert wait_until(lambda: got == [Count(1)])
    finally:
        second.close()
        first.close()


def test_unusable_listen_endpoint_is_a_config_error() -> None:
    port = free_port()
    holder = Bus(name="holder", zenoh=ZenohConfig.loopback(port))
    try:
        with pytest.raises(ZenohConfigError, match="could not open"):
            Bus(name="clash", zenoh=ZenohConfig.loopback(port))
    finally:
        holder.close()
