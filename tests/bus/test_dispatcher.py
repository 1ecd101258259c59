"""Dispatchers: the threaded one and the one a host's thread serves (jointbus.bus.dispatcher)."""

from __future__ import annotations

import threading

from jointbus.bus.dispatcher import Dispatcher, HostedDispatcher
from support.bus import wait_until


class _Recorder:
    """A drainable that notes the thread that drained it; ``again`` reschedules itself once."""

    def __init__(self, dispatcher: Dispatcher | None = None, again: bool = False) -> None:
        self.threads: list[str] = []
        self._dispatcher = dispatcher
        self._again = again

    def _drain(self) -> None:
        self.threads.append(threading.current_thread().name)
        if self._again and self._dispatcher is not None:
            self._again = False
            self._dispatcher.schedule(self)


def test_a_threaded_dispatcher_drains_on_its_own_thread() -> None:
    dispatcher = Dispatcher("own-thread")
    try:
        drained = _Recorder()
        dispatcher.schedule(drained)
        assert wait_until(lambda: drained.threads == ["own-thread"], timeout=5.0)
    finally:
        dispatcher.close()


def test_a_hosted_dispatcher_runs_on_the_host_thread_and_wakes_it_only_from_elsewhere() -> None:
    wakes: list[str] = []
    started: list[str] = []
    dispatcher = HostedDispatcher(
        "hosted",
        lambda: wakes.append(threading.current_thread().name),
        lambda: started.append(threading.current_thread().name),
    )
    from_elsewhere = _Recorder()
    from_host = _Recorder()

    def host() -> None:
        dispatcher.start()
        dispatcher.schedule(from_host)  # as a message the host itself received
        dispatcher.serve()

    outside = threading.Thread(target=dispatcher.schedule, args=(from_elsewhere,), name="zenoh")
    outside.start()
    outside.join()
    assert wakes == ["zenoh"]  # a callback from another thread wakes the host
    thread = threading.Thread(target=host, name="links")
    thread.start()
    thread.join()
    assert started == ["links"]  # on_start ran on the host thread (its priority, its CPU)
    assert from_elsewhere.threads == ["links"]
    assert from_host.threads == ["links"]
    assert wakes == ["zenoh"]  # the host's own scheduling cost no wake-up
    assert not dispatcher.pending


def test_a_hosted_dispatcher_serves_what_was_scheduled_before_the_call_only() -> None:
    dispatcher = HostedDispatcher("hosted", lambda: None)
    dispatcher.start()
    busy = _Recorder(dispatcher, again=True)
    dispatcher.schedule(busy)
    dispatcher.serve()
    assert busy.threads == [threading.current_thread().name]
    assert dispatcher.pending  # its second turn waits: the host must not sleep meanwhile
    dispatcher.serve()
    assert len(busy.threads) == 2
    assert not dispatcher.pending


def test_a_closed_hosted_dispatcher_runs_nothing_more() -> None:
    dispatcher = HostedDispatcher("hosted", lambda: None)
    dispatcher.start()
    drained = _Recorder()
    dispatcher.schedule(drained)
    dispatcher.close()
    assert dispatcher.closed
    dispatcher.schedule(drained)
    dispatcher.serve()
    assert drained.threads == []
