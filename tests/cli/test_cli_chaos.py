"""``jointbus chaos``'s own options (the campaign is ``tests/test_chaos_campaign.py``): a
``--window`` that is not ``BEGIN:END`` in seconds is refused with exit 2 before anything runs."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from jointbus.cli.main import app


@pytest.mark.parametrize("window", ["2870", "a:b", "2870-2895", ":5"])
def test_a_window_that_is_not_begin_end_is_refused(window: str) -> None:
    result = CliRunner().invoke(app, ["chaos", "--seconds", "3600", "--window", window])
    assert result.exit_code == 2
    assert "BEGIN:END" in result.output


def test_a_window_outside_the_schedule_is_refused_with_the_bounds() -> None:
    result = CliRunner().invoke(app, ["chaos", "--seconds", "60", "--window", "50:70"])
    assert result.exit_code == 2
    assert "window" in result.output and "60" in result.output
