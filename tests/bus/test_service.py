"""Services: request/reply in process, across two Zenoh sessions and across processes."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import zenoh

from jointbus.bus import (
    Bus,
    ServiceError,
    ServiceRefused,
    ServiceTimeoutError,
    ServiceTypeError,
    ServiceUnavailableError,
    ZenohConfig,
    attachment,
)
from jointbus.bus.service_zenoh import service_key
from support.bus import Count, Reading, free_port, wait_until

NAME = "/test/double"


def double(request: Count) -> Reading:
    if request.value < 0:
        raise ServiceRefused(NAME, f"value {request.value} is negative; expected >= 0")
    return Reading(2.0 * request.value)


@pytest.fixture
def pair() -> Iterator[tuple[Bus, Bus]]:
    """Two buses on two Zenoh sessions connected over loopback."""
    port = free_port()
    server = Bus(name="server", zenoh=ZenohConfig.loopback(port))
    client = Bus(name="client", zenoh=ZenohConfig.loopback(None, (port,)))
    try:
        yield server, client
    finally:
        client.close()
        server.close()


# ---- in process ------------------------------------------------------------------------------
def test_in_process_call_returns_the_handlers_response() -> None:
    with Bus() as bus:
        bus.serve(NAME, Count, Reading, double)
        assert bus.client(NAME, Count, Reading).call(Count(21)) == Reading(42.0)


def test_in_process_refusal_carries_the_reason_and_the_server_keeps_serving() -> None:
    refused: list[tuple[str, str]] = []
    with Bus() as bus:
        server = bus.serve(
            NAME, Count, Reading, double, on_refused=lambda n, r: refused.append((n, r))
        )
        client = bus.client(NAME, Count, Reading)
        with pytest.raises(ServiceRefused) as err:
            client.call(Count(-1))
        assert err.value.reason == "value -1 is negative; expected >= 0"
        assert refused == [(NAME, "value -1 is negative; expected >= 0")]
        assert client.call(Count(1)) == Reading(2.0)
        assert (server.answered, server.refused) == (1, 1)


def test_a_handler_that_raises_is_a_refusal_not_a_dead_server() -> None:
    def broken(request: Count) -> Reading:
        raise ZeroDivisionError("division by zero")

    with Bus() as bus:
        bus.serve(NAME, Count, Reading, broken)
        client = bus.client(NAME, Count, Reading)
        for _ in range(2):
            with pytest.raises(ServiceRefused, match="server error: ZeroDivisionError"):
                client.call(Count(1))


def test_no_server_is_reported_at_once_not_after_the_timeout() -> None:
    with Bus() as bus:
        start = time.monotonic()
        with pytest.raises(ServiceUnavailableError):
            bus.client(NAME, Count, Reading, timeout_s=5.0).call(Count(1))
        assert time.monotonic() - start < 2.5  # far below the 5 s timeout


def test_a_slow_server_times_out_and_later_calls_still_work() -> None:
    release = threading.Event()

    def slow(request: Count) -> Reading:
        if request.value == 0:
            release.wait(5.0)
        return Reading(float(request.value))

    with Bus() as bus:
        bus.serve(NAME, Count, Reading, slow)
        client = bus.client(NAME, Count, Reading)
        with pytest.raises(ServiceTimeoutError) as err:
            client.call(Count(0), timeout_s=0.2)
        assert err.value.timeout_s == 0.2
        release.set()
        assert client.call(Count(7)) == Reading(7.0)


def test_wrong_request_or_response_type_is_a_typed_error() -> None:
    with Bus() as bus:
        bus.serve(NAME, Count, Reading, double)
        with pytest.raises(ServiceTypeError):
            bus.client(NAME, Count, Count).call(Count(1))
        with pytest.raises(ServiceTypeError):
            bus.client(NAME, Count, Reading).call(Reading(1.0))  # type: ignore[arg-type]


def test_one_server_per_name_and_a_closed_server_is_gone() -> None:
    with Bus() as bus:
        server = bus.serve(NAME, Count, Reading, double)
        with pytest.raises(ServiceError, match="already served"):
            bus.serve(NAME, Count, Reading, double)
        assert [s.name for s in bus.services()] == [NAME]
        server.close()
        assert bus.services() == []
        with pytest.raises(ServiceUnavailableError):
            bus.client(NAME, Count, Reading).call(Count(1))


# ---- across two Zenoh sessions ---------------------------------------------------------------
def test_call_across_zenoh_sessions(pair: tuple[Bus, Bus]) -> None:
    server_bus, client_bus = pair
    server_bus.serve(NAME, Count, Reading, double, node="doubler")
    client = client_bus.client(NAME, Count, Reading)
    assert wait_until(client.available, timeout=5.0)
    assert client.call(Count(5)) == Reading(10.0)
    with pytest.raises(ServiceRefused) as err:
        client.call(Count(-3))
    assert err.value.reason == "value -3 is negative; expected >= 0"
    infos = [s for s in client_bus.services() if s.name == NAME]
    assert [(s.request_type, s.response_type, s.node, s.local) for s in infos] == [
        (Count.TYPE_NAME, Reading.TYPE_NAME, "doubler", False)
    ]


def test_remote_no_server_timeout_and_type_mismatch(pair: tuple[Bus, Bus]) -> None:
    server_bus, client_bus = pair
    with pytest.raises(ServiceUnavailableError):
        client_bus.client("/test/nobody", Count, Reading, timeout_s=5.0).call(Count(1))
    release = threading.Event()

    def slow(request: Count) -> Reading:
        release.wait(5.0)
        return Reading(0.0)

    server_bus.serve("/test/slow", Count, Reading, slow)
    server_bus.serve(NAME, Count, Reading, double)
    slow_client = client_bus.client("/test/slow", Count, Reading)
    assert wait_until(slow_client.available, timeout=5.0)
    start = time.monotonic()
    with pytest.raises(ServiceTimeoutError):
        slow_client.call(Count(1), timeout_s=0.3)
    assert time.monotonic() - start >= 0.3
    release.set()
    assert wait_until(client_bus.client(NAME, Count, Reading).available, timeout=5.0)
    with pytest.raises(ServiceTypeError):
        client_bus.client(NAME, Count, Count).call(Count(1))


def test_malformed_request_bytes_are_refused_and_the_server_survives(
    pair: tuple[Bus, Bus],
) -> None:
    server_bus, client_bus = pair
    refused: list[str] = []
    server_bus.serve(NAME, Count, Reading, double, on_refused=lambda _n, r: refused.append(r))
    client = client_bus.client(NAME, Count, Reading)
    assert wait_until(client.available, timeout=5.0)
    transport = client_bus.zenoh
    assert transport is not None
    header = attachment.pack(1, time.time_ns(), bytes(16))
    key = service_key(transport.domain_id, NAME, Count, Reading)
    replies = list(
        transport.session.get(key, payload=b"\x00\x01\xff", attachment=header, timeout=2.0)
    )
    assert len(replies) == 1 and replies[0].err is not None
    assert b"malformed request (3 bytes)" in replies[0].err.payload.to_bytes()
    assert refused and refused[0].startswith("malformed request (3 bytes)")
    assert client.call(Count(4)) == Reading(8.0)


# ---- across processes ------------------------------------------------------------------------
def test_call_across_processes_and_server_gone_is_typed_not_a_hang() -> None:
    port = free_port()
    peer = Path(__file__).with_name("service_peer.py")
    with Bus(name="parent", zenoh=ZenohConfig.loopback(port)) as bus:
        proc = subprocess.Popen(
            [sys.executable, str(peer), str(port), NAME],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
            client = bus.client(NAME, Count, Reading, timeout_s=2.0)
            assert wait_until(client.available, timeout=10.0)
            assert [client.call(Count(i)).x for i in range(5)] == [0.0, 2.0, 4.0, 6.0, 8.0]
            with pytest.raises(ServiceRefused, match="negative"):
                client.call(Count(-1))
            proc.kill()
            proc.wait(timeout=10.0)
            start = time.monotonic()
            with pytest.raises((ServiceUnavailableError, ServiceTimeoutError)):
                client.call(Count(1))
            assert time.monotonic() - start < 2.0 + 1.0
        finally:
            proc.kill()
            proc.wait(timeout=10.0)


def test_zenoh_reports_no_queryable_at_once() -> None:
    """The behaviour ServiceUnavailableError relies on: a get with no queryable ends at once."""
    port = free_port()
    with Bus(name="alone", zenoh=ZenohConfig.loopback(port)) as bus:
        transport = bus.zenoh
        assert transport is not None
        start = time.monotonic()
        key = service_key(transport.domain_id, "/nobody/here", Count, Reading)
        replies = list(transport.session.get(key, timeout=5.0))
        assert replies == [] and time.monotonic() - start < 2.5
        assert isinstance(transport.session, zenoh.Session)
