"""The name → driver table behind :func:`jointbus.drivers.open`.

Where it sits: :mod:`jointbus.drivers`. Following python-can, drivers are registered by URL scheme
in one table that plug-ins can extend, and a driver module is imported only when its scheme is
opened (so a robot without CAN never imports python-can's SocketCAN code); an import failure becomes
a typed :class:`~jointbus.drivers.errors.DriverLoadError`. Unlike python-can the table is an
explicit object (:class:`DriverRegistry`), so tests can build their own without touching a global;
:data:`DEFAULT_REGISTRY` holds the bundled drivers plus any registered through the
``jointbus.drivers`` entry-point group of installed packages.

A driver factory is a callable ``(url: DriverURL) -> ActuatorArray``.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

from jointbus.drivers.errors import DriverLoadError, DriverNotFoundError, DriverURLError

if TYPE_CHECKING:
    from jointbus.drivers.actuator_array import ActuatorArray

_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*$")


@dataclass(frozen=True, slots=True)
class DriverURL:
    """A parsed driver URL: ``scheme://host/path?key=value``.

    ``sim://arm6`` → scheme ``sim``, host ``arm6``; ``can://socketcan/can0?model=md80`` → host
    ``socketcan``, path ``can0``, options ``{"model": "md80"}``.
    """

    text: str
    scheme: str
    host: str
    path: str
    options: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str) -> DriverURL:
        if "://" not in text:
            raise DriverURLError(f"driver URL {text!r} has no scheme; expected e.g. 'sim://arm6'")
        parts = urlsplit(text)
        scheme = parts.scheme.lower()
        if not _SCHEME.match(scheme):
            raise DriverURLError(f"driver URL {text!r}: invalid scheme {parts.scheme!r}")
        try:
            pairs = parse_qsl(parts.query, keep_blank_values=True, strict_parsing=bool(parts.query))
        except ValueError as exc:
            raise DriverURLError(f"driver URL {text!r}: malformed query {parts.query!r}") from exc
        options: dict[str, str] = {}
        for key, value in pairs:
            if key in options:
                raise DriverURLError(f"driver URL {text!r}: option {key!r} given twice")
            options[key] = value
        return cls(text, scheme, parts.netloc, parts.path.strip("/"), options)

    def option(self, key: str, default: str | None = None) -> str | None:
        return self.options.get(key, default)

    def unknown_options(self, allowed: set[str]) -> None:
        """Raise :class:`DriverURLError` for options a driver does not understand (typos)."""
        extra = sorted(set(self.options) - allowed)
        if extra:
            raise DriverURLError(
                f"driver URL {self.text!r}: unknown option(s) {', '.join(extra)}; "
                f"this driver accepts: {', '.join(sorted(allowed)) or 'none'}"
            )


DriverFactory = Callable[[DriverURL], "ActuatorArray"]


class DriverRegistry:
    """Scheme → driver factory; entries may be ``"module:attribute"`` strings, imported lazily."""

    def __init__(self, entries: Mapping[str, str | DriverFactory] | None = None) -> None:
        self._entries: dict[str, str | DriverFactory] = dict(entries or {})
        self._lock = threading.Lock()
        self._plugins_loaded = entries is not None

    def register(self, scheme: str, target: str | DriverFactory) -> None:
        """Add (or replace) a driver for ``scheme``."""
        if not _SCHEME.match(scheme):
            raise DriverURLError(f"invalid driver scheme {scheme!r}")
        with self._lock:
            self._entries[scheme] = target

    def schemes(self) -> tuple[str, ...]:
        self._load_plugins()
        return tuple(sorted(self._entries))

    def factory(self, scheme: str) -> DriverFactory:
        self._load_plugins()
        target = self._entries.get(scheme)
        if target is None:
            raise DriverNotFoundError(scheme, tuple(sorted(self._entries)))
        if not isinstance(target, str):
            return target
        module_name, _, attribute = target.partition(":")
        try:
            module = importlib.import_module(module_name)
            loaded: DriverFactory = getattr(module, attribute)
        except (ImportError, AttributeError) as exc:
            raise DriverLoadError(
                f"driver for {scheme!r} ({target}) failed to load: {exc}"
            ) from exc
        with self._lock:
            self._entries[scheme] = loaded
        return loaded

    def open(self, url: str) -> ActuatorArray:
        """Parse ``url`` and open the driver registered for its scheme."""
        parsed = DriverURL.parse(url)
        return self.factory(parsed.scheme)(parsed)

    def _load_plugins(self) -> None:
        if self._plugins_loaded:
            return
        with self._lock:
            self._plugins_loaded = True
            for ep in importlib.metadata.entry_points(group="jointbus.drivers"):
                self._entries.setdefault(ep.name, ep.value)


def _bundled() -> dict[str, Any]:
    return {
        "sim": "jointbus.drivers.sim.driver:open_sim",
        "can": "jointbus.drivers.can.driver:open_can",
        "bus": "jointbus.drivers.bus.driver:open_bus_array",
    }


DEFAULT_REGISTRY = DriverRegistry()
for _scheme, _target in _bundled().items():
    DEFAULT_REGISTRY.register(_scheme, _target)
