"""``stop_on_interrupt``: the first Ctrl-C / SIGTERM stops a command, later ones cannot cut its
shutdown short (real signals sent to this process)."""

from __future__ import annotations

import os
import signal

import pytest

from jointbus.cli.interrupts import STOPPING_NOTE, stop_on_interrupt


@pytest.mark.parametrize("first", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_the_first_signal_stops_and_later_ones_only_say_so_once(
    first: signal.Signals, capsys: pytest.CaptureFixture[str]
) -> None:
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    shutdown_steps: list[str] = []
    with stop_on_interrupt():
        try:
            with pytest.raises(KeyboardInterrupt):
                os.kill(os.getpid(), first)  # the handler runs before the next line
                pytest.fail("the first signal did not interrupt")
        finally:  # the shutdown the first signal began: more signals arrive meanwhile
            for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGTERM):
                os.kill(os.getpid(), sig)
                shutdown_steps.append(sig.name)
    assert shutdown_steps == ["SIGTERM", "SIGINT", "SIGTERM"]  # none of them cut it short
    assert capsys.readouterr().err.count(STOPPING_NOTE) == 1
    assert {sig: signal.getsignal(sig) for sig in before} == before  # handlers restored


def test_without_a_signal_nothing_changes(capsys: pytest.CaptureFixture[str]) -> None:
    before = signal.getsignal(signal.SIGTERM)
    with stop_on_interrupt():
        pass
    assert signal.getsignal(signal.SIGTERM) is before
    assert capsys.readouterr().err == ""
