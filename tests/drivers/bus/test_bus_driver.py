"""Opening ``bus://``: URL checks, and no server is a typed error within the timeout."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from jointbus import drivers
from jointbus.drivers.bus.driver import ArrayServerError, BusActuatorArray
from jointbus.drivers.errors import DriverIOError, DriverURLError, RequestRejected
from jointbus.messages.actarray import ActuatorState
from support.array_server import served
from support.bus import free_port


def test_no_server_is_a_typed_error_within_the_timeout_not_a_hang() -> None:
    start = time.monotonic()
    port = free_port()
    with pytest.raises(ArrayServerError) as err:
        drivers.open(f"bus://nobody?hub_port={port}&timeout=0.5")
    assert isinstance(err.value, DriverIOError)
    assert "/nobody/actarray/describe" in str(err.value)
    # It says where it looked, so a wrong port or domain shows at once.
    assert f"looked on hub port {port}, domain " in str(err.value), str(err.value)
    assert err.value.where.startswith(f"hub port {port}")
    assert time.monotonic() - start < 0.5 + 1.5  # the timeout plus opening a Zenoh session


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("bus://arm6?speed=3", "unknown option(s) speed"),
        ("bus://arm6?timeout=soon", "timeout='soon'; expected seconds"),
        ("bus://arm6?timeout=-1", "timeout = -1.0; expected a number of seconds > 0"),
        ("bus://", "expected bus://<served name>"),
        ("bus://arm6/left", "expected bus://<served name>"),
    ],
)
def test_bad_urls_are_refused_before_joining_the_bus(url: str, message: str) -> None:
    with pytest.raises(DriverURLError, match=message.replace("(", r"\(").replace(")", r"\)")):
        drivers.open(url)


def test_a_busy_server_is_told_apart_from_no_server_and_the_timeout_is_the_urls() -> None:
    """Issue 12 item 4: a server that is there but did not answer within the timeout (here its
    node holds its array lock — as a loaded host delays it) must not read as "nothing there"."""
    with (
        served("sim://arm6?noise=false", "arm6") as server,
        drivers.open(server.url(timeout="0.3")) as arm,
    ):
        assert arm.timeout_s == 0.3
        with server.node._array_lock:  # the node is alive but cannot answer
            start = time.monotonic()
            with pytest.raises(ArrayServerError) as busy:
                arm.power(True)
            waited = time.monotonic() - start
        text = str(busy.value)
        assert "did not answer within 0.3 s" in text, text
        assert "is there" in text and "/arm6/actarray/power" in text, text
        assert "timeout=" in text, text  # says how to wait longer
        assert "is `jointbus serve` running there?" not in text, text
        assert busy.value.server_alive is True
        assert 0.3 <= waited < 0.3 + 1.0
        server.node.shutdown()  # now nothing serves /arm6
        with pytest.raises(ArrayServerError) as gone:
            arm.power(True)
        assert gone.value.server_alive is False
        assert "is `jointbus serve` running there?" in str(gone.value), str(gone.value)


def test_a_reading_is_stamped_when_the_server_sampled_it_not_when_read() -> None:
    """Issue 12 item 5: after the server stopped, ``read()`` returned 0.2 s-old data stamped as
    fresh. Its header stamp is the server's sample time, as ``read_joints().time`` is."""
    with (
        served("sim://arm6?noise=false", "arm6") as server,
        drivers.open(server.url(timeout="2.0")) as arm,
    ):
        server.node.shutdown()  # nothing publishes from now on
        time.sleep(0.3)
        last = arm.latest
        assert last is not None
        data = arm.read()
        assert data.header.stamp == last.header.stamp  # the very sample, to the nanosecond
        stamp = data.header.stamp.sec + data.header.stamp.nanosec * 1e-9
        assert time.time() - stamp >= 0.3  # as old as it is
        assert stamp == pytest.approx(arm.read_joints().time, abs=1e-6)


def test_refusals_name_the_call_made_and_a_silent_data_topic_is_a_topic() -> None:
    """Issue 12 item 9: ``positions()`` refused while powered off said ``request 'position'``
    over bus://; with three joints braked, the refusal names them all (name and index); the
    data-timeout error called the ``actarray/data`` topic a "service"."""
    with (
        served("sim://arm6?noise=false", "arm6") as server,
        drivers.open(server.url(timeout="0.5")) as arm,
    ):
        with pytest.raises(RequestRejected) as off:
            arm.positions([0.0] * arm.count)  # every value equal: still the positions() call
        assert off.value.request == "positions", off.value
        arm.power(True)
        arm.brakes(True)
        braked = [i for i, a in enumerate(arm.config.geometry.actuators) if a.has_brakes]
        assert len(braked) >= 2
        with pytest.raises(RequestRejected) as info:
            arm.positions(arm.read_joints().position + 0.05)
        for i in braked:
            assert f"{arm.names[i]!r} (index {i})" in str(info.value), info.value
        server.node.shutdown()
        time.sleep(0.8)
        with pytest.raises(ArrayServerError) as silent:
            arm.read()
        text = str(silent.value)
        assert "topic '/arm6/actarray/data'" in text and "service" not in text, text


def test_homing_a_rover_base_axis_over_bus_is_refused_as_home() -> None:
    """``rover.home("base_theta")`` over ``bus://rover`` said ``request 'position' refused``: the
    served rover's refusal crosses the wire naming the request the user made."""
    with (
        served("sim://rover", "rover") as server,
        drivers.open(server.url(timeout="1.0")) as rover,
    ):
        rover.power(True)
        with pytest.raises(RequestRejected) as info:
            rover.home("base_theta")
        assert (info.value.request, info.value.joint, info.value.index) == (
            "home",
            "base_theta",
            2,
        ), info.value
        assert "unsupported" in str(info.value), info.value


def test_a_reading_is_flagged_stale_within_a_few_server_periods_then_refused() -> None:
    """Issue 20 item 8: after its server died, ``read()`` returned the old state unflagged for
    ≈ 1.0 s (the timeout) before raising. It is flagged ``STALE`` once the newest sample is
    more than 3 server periods old; the timeout still ends it with ArrayServerError."""
    stale = ActuatorState.STALE
    with (
        served("sim://arm6?noise=false", "arm6") as server,
        drivers.open(server.url(timeout="1.0")) as arm,
    ):
        assert isinstance(arm, BusActuatorArray)
        time.sleep(0.3)  # ≥ 2 samples: the server's period is measured from their stamps
        # served at 100 Hz: a loaded host's server publishes late (a longer period), never early
        assert 0.008 <= arm.server_period_s <= 0.02, arm.server_period_s
        live = arm.read()
        assert not any(a.state & stale for a in live.actuators)
        server.node.shutdown()
        seen: list[tuple[float, bool, bool]] = []  # (age s, read_joints STALE, read() STALE)
        while True:
            try:
                joints = arm.read_joints()
                data = arm.read()
            except ArrayServerError:
                break
            age = arm.age_s
            seen.append(
                (
                    age,
                    all(s & stale for s in joints.state),
                    all(a.state & stale for a in data.actuators)
                    and bool(joints.array_state() & stale),
                )
            )
            time.sleep(0.005)
        flagged = [s for s in seen if s[1]]
        assert flagged, seen[-5:]
        # flagged as soon as the reading is 3 periods old, long before the 1 s timeout ...
        assert min(age for age, *_ in flagged) < 0.5
        assert all(f[2] for f in flagged)  # read() and the array state say it too
        # ... and every reading older than that was flagged (none handed out as current)
        assert all(is_stale for age, is_stale, _ in seen if age > arm.stale_after_s + 0.005)
        assert arm.age_s >= 1.0  # then refused at the timeout


def test_a_client_that_was_itself_held_up_does_not_blame_the_server() -> None:
    """A user's trial: a client SIGSTOPped for 1.5 s read at once after SIGCONT and was told
    "array server unreachable … no data for 1.52 s" while the server had published every 10 ms;
    its samples were waiting in its own process. Here the client's sample callbacks are held up
    for 1.5 s (the server keeps publishing): the first read after waits the short grace for the
    samples that wait, and reads a fresh one."""
    with (
        served("sim://arm6?noise=false", "arm6") as server,
        drivers.open(server.url(timeout="1.0")) as arm,
    ):
        assert isinstance(arm, BusActuatorArray)
        arm.read_joints()
        with arm._data_lock:  # the callbacks wait here, as a stopped process's samples do
            time.sleep(1.5)
            assert arm.age_s > 1.4
        reading = arm.read_joints()  # no ArrayServerError
        assert arm.age_s < 0.1 and not any(s & ActuatorState.STALE for s in reading.state)
        # a server that is really gone is still refused after the timeout and the grace
        server.node.shutdown()
        time.sleep(1.2)
        started = time.monotonic()
        with pytest.raises(ArrayServerError):
            arm.read_joints()
        assert time.monotonic() - started < 0.5


def test_a_bus_url_takes_the_clis_connect_router_and_tls_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A trial (2026-12-07): with ``JOINTBUS_TLS_CERT``, ``_KEY`` and ``_CA`` set, ``bus://hb50?
    connect=tls/…`` was refused as "this host has no certificate … give --tls-cert … (
    JOINTBUS_TLS_CERT …)", and ``JOINTBUS_CONNECT`` was ignored. The URL's settings come first;
    what it leaves out comes from the CLI's variables."""
    from jointbus.bus.zenoh_security import security_of
    from jointbus.drivers.bus.driver import _zenoh
    from jointbus.drivers.registry import DriverURL

    folder = tmp_path
    for name in ("cert.pem", "key.pem", "ca.pem"):
        (folder / name).write_text("-----BEGIN PEM-----\n")
    for name in ("JOINTBUS_TLS_CERT", "JOINTBUS_TLS_KEY", "JOINTBUS_TLS_CA", "JOINTBUS_ROUTER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("JOINTBUS_CONNECT", "tcp/127.0.0.1:7001 tcp/127.0.0.1:7002")
    plain = _zenoh(DriverURL.parse("bus://hb50"))
    assert plain.connect == ("tcp/127.0.0.1:7001", "tcp/127.0.0.1:7002")
    assert _zenoh(DriverURL.parse("bus://hb50?connect=tcp/127.0.0.1:7003")).connect == (
        "tcp/127.0.0.1:7003",  # the URL's own
    )
    monkeypatch.setenv("JOINTBUS_TLS_CERT", str(folder / "cert.pem"))
    monkeypatch.setenv("JOINTBUS_TLS_KEY", str(folder / "key.pem"))
    with pytest.raises(DriverURLError, match="JOINTBUS_TLS_CA not set"):
        _zenoh(DriverURL.parse("bus://hb50?connect=tls/127.0.0.1:7993"))
    monkeypatch.setenv("JOINTBUS_TLS_CA", str(folder / "ca.pem"))
    secured = _zenoh(DriverURL.parse("bus://hb50?connect=tls/127.0.0.1:7993"))
    assert secured.connect == ("tls/127.0.0.1:7993",) and secured.listen == ()
    assert security_of(secured), secured  # TLS, not the plain loopback hub
    with pytest.raises(DriverURLError, match="tls/"):  # JOINTBUS_CONNECT's plain tcp endpoints
        _zenoh(DriverURL.parse("bus://hb50"))
    monkeypatch.delenv("JOINTBUS_CONNECT")
    with pytest.raises(DriverURLError, match="give the robot's endpoint"):
        _zenoh(DriverURL.parse("bus://hb50"))


def test_a_call_the_access_rules_drop_is_said_denied_not_maybe_carried_out() -> None:
    """A trial (2026-12-07): a watch-only certificate's ``power(False)`` over ``bus://`` read
    "did not answer within 1 s … The call may still be carried out" — the robot's access rules
    had dropped it, and nothing was sent."""
    from jointbus.bus import ServiceDeniedError

    denied = ServiceDeniedError("/hb50/actarray/power", 1.0, "certificate 'robot.hb50'")
    text = str(ArrayServerError("/hb50/actarray/power", denied, "x", server_alive=True))
    assert text.startswith("array server not called: service '/hb50/actarray/power': denied:")
    assert "nothing was sent" in text and "may still be carried out" not in text, text
