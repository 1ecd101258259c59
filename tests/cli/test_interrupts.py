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
    # After the block the command is ending: a late signal (a recorder done in < 20 ms, before
    # the second SIGTERM came) still only notes, where it used to kill the process (-15).
    os.kill(os.getpid(), signal.SIGTERM)
    assert capsys.readouterr().err.count(STOPPING_NOTE) == 1
    for sig, handler in before.items():  # leave this test process as it was
        signal.signal(sig, handler)


def test_without_a_signal_the_handlers_are_restored(capsys: pytest.CaptureFixture[str]) -> None:
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    with stop_on_interrupt():
        pass
    assert {sig: signal.getsignal(sig) for sig in before} == before
    assert capsys.readouterr().err == ""
