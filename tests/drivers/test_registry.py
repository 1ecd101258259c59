"""The driver table: URL parsing, lazy loading, typed errors for unknown schemes and bad URLs."""

from __future__ import annotations

from typing import Any

import pytest

from jointbus.drivers.errors import DriverLoadError, DriverNotFoundError, DriverURLError
from jointbus.drivers.registry import DriverRegistry, DriverURL


def test_url_parts_and_options() -> None:
    url = DriverURL.parse("can://socketcan/can0?model=md80&timeout=0.01")
    assert (url.scheme, url.host, url.path) == ("can", "socketcan", "can0")
    assert dict(url.options) == {"model": "md80", "timeout": "0.01"}
    assert DriverURL.parse("sim://arm6").host == "arm6"


@pytest.mark.parametrize("text", ["arm6", "sim:arm6", "1x://a", "sim://a?x=1&x=2"])
def test_bad_urls_raise_typed_error(text: str) -> None:
    with pytest.raises(DriverURLError):
        DriverURL.parse(text)


def test_unknown_option_is_named() -> None:
    url = DriverURL.parse("sim://arm6?sed=1")
    with pytest.raises(DriverURLError, match="sed"):
        url.unknown_options({"seed"})


def test_unknown_scheme_lists_known_ones() -> None:
    registry = DriverRegistry({"sim": lambda url: url})
    with pytest.raises(DriverNotFoundError) as info:
        registry.open("serial://x")
    assert info.value.known == ("sim",)
    assert "sim" in str(info.value)


def test_factory_receives_parsed_url() -> None:
    seen: list[Any] = []
    registry = DriverRegistry({"fake": lambda url: seen.append(url) or "device"})
    assert registry.open("fake://robot?seed=3") == "device"
    assert seen[0].host == "robot"


def test_lazy_entry_that_fails_to_import_is_a_load_error() -> None:
    registry = DriverRegistry({"ghost": "jointbus.no_such_module:open"})
    with pytest.raises(DriverLoadError, match="ghost"):
        registry.open("ghost://x")


def test_lazy_entry_is_imported_on_first_use() -> None:
    registry = DriverRegistry({"p": "jointbus.drivers.registry:DriverURL.parse"})
    with pytest.raises(DriverLoadError):
        registry.factory("p")  # attribute paths with dots are not supported: typed error
    registry.register("q", "jointbus.drivers.registry:DriverURL")
    assert registry.factory("q") is DriverURL
