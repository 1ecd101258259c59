"""Keeps the hub port answered after the hub exits, so a tool started later still finds the robot.

Where it sits: :mod:`jointbus.bus`, started by :class:`jointbus.bus.zenoh_transport.ZenohTransport`
for a session of the default scheme (:mod:`jointbus.bus.zenoh_config`) that found the hub port
taken by another jointbus process and joined it as a peer. Reads only the
:class:`~jointbus.bus.zenoh_config.ZenohConfig`.

Why: the first jointbus process on the host listens on the hub port; every later one connects to
it. When the hub exits, the others keep talking (gossip gave them direct links), but nothing
listens on the port any more. A tool started afterwards connects there, finds nothing, and says
"no topics found" while the robot runs. A new-user trial met exactly this (2026-12-07): a
``jointbus record`` started half a second before the demo became the hub; once it stopped,
``jointbus topic list`` could no longer find the running robot.

How: every such process checks about every :data:`WATCH_PERIOD_S` (jittered, so peers do not test
in step) whether the port is free, by binding it with ``SO_REUSEADDR`` as Zenoh's listener does.
That check sends nothing to the hub. When the port is free, the process opens a second Zenoh
session listening there, with the process's own options. It is a second session because Zenoh
1.x cannot add a listener to a session already open (eclipse-zenoh/zenoh#1955).

- The relay declares nothing, so no data flows to it; the peers' sessions reconnect to the hub
  port by themselves (``connect/retry``, within 0.5 s), and a new tool that connects there learns
  the mesh by gossip and links to each peer directly, as it did with the first hub.
- Whoever binds first wins; the others' opens fail and they keep watching. So one relay answers
  at a time, and when its process exits, another process takes over.
- A router's port is never taken: a session that found a router on the hub port (``rmw_zenohd``,
  ``zenohd``, ``jointbus router``) does not watch, so a restarted router gets its port back. A
  session whose link to the router came up only after it started watching (a router slow to
  answer: the transport waits at most ``CONNECT_WAIT_S`` for a first link) stops watching at the
  first check that sees the router (``router_seen``).
"""

from __future__ import annotations

import contextlib
import logging
import random
import socket
import threading
from collections.abc import Callable
from typing import Any, Final, cast

import zenoh

from jointbus.bus.zenoh_config import ZenohConfig

_LOG = logging.getLogger("jointbus.bus.zenoh")

#: Mean seconds between two checks of the hub port (each one is jittered by ±20 %). With the
#: peers' 0.5 s reconnection, a tool finds the network within about 1 s of the hub's exit.
WATCH_PERIOD_S: Final = 0.5


def port_is_free(port: int) -> bool:
    """Whether nothing listens on ``127.0.0.1:port``: binding it succeeds. ``SO_REUSEADDR``, as
    Zenoh's own listener sets it, so the closed hub's connections in TIME_WAIT do not count."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


class HubRelay:
    """Watches the hub port of ``config`` and answers on it once the hub has left.

    Starts watching at once, on a daemon thread; :meth:`close` stops it and closes the relay
    session if this process holds one. ``router_seen``: whether the process's own session is
    linked to a router now; once it is, the watch ends for good (the module docstring says why)."""

    def __init__(
        self,
        config: ZenohConfig,
        *,
        period_s: float = WATCH_PERIOD_S,
        router_seen: Callable[[], bool] = lambda: False,
    ) -> None:
        self.config = config
        self.period_s = period_s
        self._router_seen = router_seen
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._session: zenoh.Session | None = None
        self._thread = threading.Thread(
            target=self._watch, name=f"jointbus-hub-relay-{config.hub_port}", daemon=True
        )
        self._thread.start()

    @property
    def holding(self) -> bool:
        """Whether this process answers on the hub port now."""
        return self._session is not None

    def peers(self) -> int:
        """How many sessions are linked to the relay (0 when this process holds none): the
        processes that joined the old hub reconnect to it within half a second."""
        session = self._session
        if session is None:
            return 0
        try:
            return sum(1 for _ in session.info.peers_zid())
        except zenoh.ZError:  # closed meanwhile
            return 0

    @property
    def watching(self) -> bool:
        """Whether this process still checks the hub port (False once it holds it, has seen a
        router there, or was closed)."""
        return self._thread.is_alive()

    def _watch(self) -> None:
        while not self._stop.wait(self.period_s * random.uniform(0.8, 1.2)):
            if self._router_seen():
                _LOG.debug("hub port %d belongs to a router: left for it", self.config.hub_port)
                return
            if port_is_free(self.config.hub_port) and self._take():
                return

    def _take(self) -> bool:
        """Open the relay session on the hub port; False when another process was quicker (or
        Zenoh refused), and the watch goes on."""
        zconfig = zenoh.Config()
        try:
            for key, value in self.config.json5_items((self.config.hub_endpoint,), ()):
                zconfig.insert_json5(key, value)
            session = zenoh.open(zconfig)
        except zenoh.ZError as exc:
            _LOG.debug("hub port %d: relay not opened: %s", self.config.hub_port, exc)
            return False
        with self._lock:
            if self._stop.is_set():
                cast(Any, session).close()
                return True
            self._session = session
        _LOG.info(
            "hub port %d was left free by the hub: this process now answers on %s, so tools "
            "started later find the network",
            self.config.hub_port,
            self.config.hub_endpoint,
        )
        return True

    def close(self) -> None:
        """Stop watching and release the hub port if this process held it. Idempotent."""
        with self._lock:
            self._stop.set()
            session, self._session = self._session, None
        if session is not None:
            with contextlib.suppress(zenoh.ZError):
                cast(Any, session).close()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=2.0)


__all__ = ["WATCH_PERIOD_S", "HubRelay", "port_is_free"]
