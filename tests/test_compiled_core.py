"""The optional compiled cores are loaded in one place, and ``JOINTBUS_NO_ACCEL`` switches every
one off the same way (:mod:`jointbus.compiled_core`)."""

from __future__ import annotations

import pytest

from jointbus import compiled_core


@pytest.mark.parametrize(
    ("value", "off"), [(None, False), ("", False), ("0", False), ("1", True), ("yes", True)]
)
def test_jointbus_no_accel_switches_the_cores_off_unless_empty_or_zero(
    value: str | None, off: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if value is None:
        monkeypatch.delenv("JOINTBUS_NO_ACCEL", raising=False)
    else:
        monkeypatch.setenv("JOINTBUS_NO_ACCEL", value)
    assert compiled_core.disabled() is off
    if off:  # whatever is built, nothing is loaded
        assert compiled_core.load("jointbus.codec._cdr_accel") is None


def test_a_core_that_was_not_built_is_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JOINTBUS_NO_ACCEL", raising=False)
    assert compiled_core.load("jointbus.codec._no_such_core") is None
