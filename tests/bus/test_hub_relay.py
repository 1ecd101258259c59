"""The hub port stays answered after the hub leaves (``src/jointbus/bus/hub_relay.py``).

Real Zenoh sessions on loopback. The defect these tests guard against was met in a new-user
trial: a ``jointbus record`` became the hub, the demo joined it, and after the recorder stopped,
``jointbus topic list`` said "no topics found" beside the running robot.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable

import zenoh

from jointbus.bus import MAB_RT, Bus, Publisher, ZenohConfig
from jointbus.bus.hub_relay import WATCH_PERIOD_S, HubRelay, port_is_free
from support.bus import Count, free_port, wait_until

#: Seconds within which a peer of the old hub must answer on the port (a few watch periods and
#: the peers' 0.5 s reconnection, with room for a loaded host).
TAKE_OVER_S = 5.0


def _relay(bus: Bus) -> HubRelay:
    assert bus.zenoh is not None
    relay = bus.zenoh.hub_relay
    assert relay is not None
    return relay


def _assert_reaches(tool: Bus, pub: Publisher[Count]) -> None:
    """A message of ``pub`` reaches a subscriber ``tool`` declares now."""
    got: list[Count] = []
    tool.subscribe(pub.topic, Count, got.append, MAB_RT)
    assert wait_until(lambda: pub.remote_matched)
    pub.publish(Count(7))
    assert wait_until(lambda: got == [Count(7)])


def _open(mode: str, endpoints: str, port: int) -> zenoh.Session:
    """A plain Zenoh session in ``mode`` whose ``listen`` or ``connect`` endpoint is ``port``."""
    config = zenoh.Config()
    config.insert_json5("mode", f'"{mode}"')
    config.insert_json5("scouting/multicast/enabled", "false")
    config.insert_json5(f"{endpoints}/endpoints", f'["tcp/127.0.0.1:{port}"]')
    return zenoh.open(config)


def _router(port: int) -> zenoh.Session:
    """A Zenoh router on ``port``, as ``rmw_zenohd`` runs one."""
    return _open("router", "listen", port)


def _assert_left_free(config: ZenohConfig, close_holder: Callable[[], None]) -> None:
    """A bus of ``config`` that joined the holder of the hub port does not watch it: once the
    holder has closed, the port stays free."""
    with Bus(name="node", zenoh=config) as node:
        assert node.zenoh is not None
        assert node.zenoh.hub_relay is None
        assert not port_is_free(config.hub_port)
        close_holder()
        time.sleep(3 * WATCH_PERIOD_S)
        assert port_is_free(config.hub_port)


def test_a_port_someone_listens_on_is_not_free() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        assert not port_is_free(port)
    assert port_is_free(port)


def test_a_tool_started_after_the_hub_left_finds_the_peers_that_stayed() -> None:
    port = free_port()
    hub = Bus(name="recorder", zenoh=ZenohConfig(hub_port=port))
    robot = Bus(name="robot", zenoh=ZenohConfig(hub_port=port))
    try:
        pub = robot.publisher("/joint_states", Count, MAB_RT)
        relay = _relay(robot)
        assert not relay.holding  # the hub still answers
        hub.close()
        assert wait_until(lambda: relay.holding and relay.peers() >= 1, TAKE_OVER_S)
        assert not port_is_free(port)
        # what `jointbus topic list` does: open, ask the graph at once
        with Bus(name="tool", zenoh=ZenohConfig(hub_port=port)) as tool:
            assert tool.zenoh is not None
            assert "taken by another jointbus process" in tool.zenoh.joined()
            assert "/joint_states" in {t.name for t in tool.discover(1.0)}
            _assert_reaches(tool, pub)
    finally:
        robot.close()
        hub.close()
    assert port_is_free(port)  # closing the holder gives the port back


def test_one_peer_takes_the_port_and_another_takes_over_when_it_leaves() -> None:
    port = free_port()
    hub = Bus(name="hub", zenoh=ZenohConfig(hub_port=port))
    a = Bus(name="a", zenoh=ZenohConfig(hub_port=port))
    b = Bus(name="b", zenoh=ZenohConfig(hub_port=port))
    try:
        hub.close()
        assert wait_until(lambda: _relay(a).holding or _relay(b).holding, TAKE_OVER_S)
        time.sleep(3 * WATCH_PERIOD_S)  # the other keeps watching and fails to open
        holder, other = (a, b) if _relay(a).holding else (b, a)
        assert not _relay(other).holding
        holder.close()
        assert wait_until(lambda: _relay(other).holding, TAKE_OVER_S)
        with Bus(name="tool", zenoh=ZenohConfig(hub_port=port)) as tool:
            _assert_reaches(tool, other.publisher("/x", Count, MAB_RT))
    finally:
        b.close()
        a.close()


def test_a_routers_port_is_left_for_the_router() -> None:
    """rmw_zenohd restarted must get its port back: a session that found a router there does
    not watch it."""
    port = free_port()
    router = _router(port)
    try:
        _assert_left_free(ZenohConfig(hub_port=port), router.close)
    finally:
        router.close()


def test_a_launchers_children_leave_the_port_to_the_launcher() -> None:
    port = free_port()
    launcher = Bus(name="launcher", zenoh=ZenohConfig(hub_port=port))
    try:
        child_config = ZenohConfig(hub_port=port).for_sibling()
        assert ZenohConfig.from_json(child_config.to_json()) == child_config
        _assert_left_free(child_config, launcher.close)
    finally:
        launcher.close()


def test_a_router_seen_only_after_the_watch_began_keeps_its_port() -> None:
    """A session waits at most ``CONNECT_WAIT_S`` for its first link; one whose link to a slow
    router came up later starts watching the port as if a jointbus peer held it. At its next
    check it sees the router and stops, so a restarted router still gets its port back."""
    port = free_port()
    router = _router(port)
    session = _open("peer", "connect", port)
    relay = HubRelay(
        ZenohConfig(hub_port=port),
        router_seen=lambda: any(True for _ in session.info.routers_zid()),
    )
    try:
        assert wait_until(lambda: not relay.watching, timeout=TAKE_OVER_S)
        router.close()
        time.sleep(3 * WATCH_PERIOD_S)
        assert not relay.holding
        assert port_is_free(port)
    finally:
        relay.close()
        session.close()
        router.close()
