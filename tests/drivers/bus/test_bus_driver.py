"""Opening ``bus://``: URL checks, and no server is a typed error within the timeout."""

from __future__ import annotations

import time

import pytest

from jointbus import drivers
from jointbus.drivers.bus.driver import ArrayServerError
from jointbus.drivers.errors import DriverIOError, DriverURLError
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
