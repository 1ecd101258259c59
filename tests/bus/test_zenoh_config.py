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
    # a peer that stops reading must not stall publishers (the long test below shows why)
    queue = "transport/link/tx/queue/congestion_control"
    assert json.loads(items[f"{queue}/drop/wait_before_drop"]) == 0
    assert json.loads(items[f"{queue}/block/wait_before_close"]) <= 100_000


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


def test_a_sibling_listens_beside_explicit_endpoints_and_connects_to_them() -> None:
    tls = ZenohConfig(
        listen=("tls/127.0.0.10:7450", "tcp/[::1]:7451?rel=1"),
        connect=("tls/127.0.0.20:7450",),
        options=(("transport/link/tls/root_ca_certificate", '"/ca.pem"'),),
    )
    sibling = tls.for_sibling()
    assert sibling.listen == ("tls/127.0.0.10:0", "tcp/[::1]:0?rel=1")
    assert sibling.connect == ("tls/127.0.0.20:7450", "tls/127.0.0.10:7450", "tcp/[::1]:7451?rel=1")
    assert sibling.options == tls.options  # the TLS files and access rules go along
    # schemes where processes already share one configuration are left alone
    router = ZenohConfig.for_router("tcp/127.0.0.1:7447")
    for shared in (router, ZenohConfig(listen=())):
        assert shared.for_sibling() is shared
    # the default scheme: the same hub port, but the launcher alone takes it over
    assert ZenohConfig(hub_port=7961).for_sibling() == ZenohConfig(hub_port=7961, hub_relay=False)
    with pytest.raises(ZenohConfigError, match="no host:port"):
        ZenohConfig(listen=("unixsock-stream//tmp/robot.sock",)).for_sibling()


def test_siblings_of_an_explicit_listener_open_and_talk() -> None:
    """The default process layout hands its children these settings: the launcher holds the
    user's endpoint, a child listening there too failed ("Address already in use")."""
    first_config = ZenohConfig.loopback(free_port())
    first = Bus(name="launcher", zenoh=first_config)
    try:
        with pytest.raises(ZenohConfigError, match="could not open"):
            Bus(name="clash", zenoh=first_config).close()
        got: list[Count] = []
        with (
            Bus(name="child-a", zenoh=first_config.for_sibling()) as a,
            Bus(name="child-b", zenoh=first_config.for_sibling()) as b,
        ):
            b.subscribe("/x", Count, got.append, MAB_RT)
            pub = a.publisher("/x", Count, MAB_RT)
            assert wait_until(lambda: pub.remote_matched)
            pub.publish(Count(1))
            assert wait_until(lambda: got == [Count(1)])
    finally:
        first.close()


_STOPPED_READER = """
import sys, time
from jointbus.bus import MAB_RT, RELIABLE, Bus, ZenohConfig
from jointbus.messages.std_msgs import String
bus = Bus(zenoh=ZenohConfig.loopback(None, (int(sys.argv[1]),)), name="reader")
subs = [bus.subscribe("/fast", String, lambda m: None, MAB_RT),
        bus.subscribe("/slow", String, lambda m: None, RELIABLE)]
print("ready", flush=True)
time.sleep(600)
"""


@pytest.mark.long
@pytest.mark.timeout(120)
def test_a_reader_that_stops_reading_does_not_stall_the_publisher() -> None:
    """A recorder or monitor stopped (SIGSTOP, a starved host) stops reading; its queue fills.
    The robot's publishers must not wait for it: a best-effort sample is dropped at once, a
    reliable one waits at most ``BLOCK_WAIT_BEFORE_CLOSE_US`` before the link to it is closed.
    With Zenoh's defaults every best-effort publish waited 1 ms and a reliable one up to 5 s (a
    bridge loop at 251 Hz and the robot's state off the bus for 9.7 s, measured)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from jointbus.bus import RELIABLE
    from jointbus.bus.zenoh_config import BLOCK_WAIT_BEFORE_CLOSE_US
    from jointbus.messages.std_msgs import String

    port = free_port()
    bus = Bus(zenoh=ZenohConfig.loopback(port), name="robot")
    reader = subprocess.Popen(
        [sys.executable, "-c", _STOPPED_READER, str(port)], stdout=subprocess.PIPE, text=True
    )
    try:
        fast = bus.publisher("/fast", String, MAB_RT)
        slow = bus.publisher("/slow", String, RELIABLE)
        assert reader.stdout is not None and reader.stdout.readline().strip() == "ready"
        assert wait_until(lambda: fast.remote_matched and slow.remote_matched, timeout=10)
        os.kill(reader.pid, signal.SIGSTOP)
        big, small = String("x" * 16_000), String("state")  # 8 MB/s: the queue fills in < 1 s
        waits: list[float] = []
        end = time.monotonic() + 4.0
        i = 0
        while time.monotonic() < end:
            t0 = time.perf_counter()
            fast.publish(big)
            if i % 50 == 0:
                slow.publish(small)
            waits.append(time.perf_counter() - t0)
            i += 1
            time.sleep(0.001)
    finally:
        reader.kill()
        reader.wait(timeout=10)
        bus.close()
    bound = BLOCK_WAIT_BEFORE_CLOSE_US * 1e-6
    assert max(waits) < bound + 0.05, f"longest publish {max(waits) * 1e3:.1f} ms"
    # no per-sample wait: over 4 s, all publishing took little more than one reliable wait
    assert sum(waits) < bound + 0.3, f"{sum(waits):.2f} s publishing, {len(waits)} cycles"
