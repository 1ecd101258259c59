"""The grid of a command's periodic lines: missed lines are skipped, not printed in a burst."""

from __future__ import annotations

import pytest

from jointbus.cli.report_times import next_report_at


def test_on_time_the_next_line_is_one_period_on() -> None:
    assert next_report_at(10.0, 10.2, 1.0) == pytest.approx(11.0)
    assert next_report_at(10.0, 11.0, 1.0) == pytest.approx(12.0)  # exactly due: the next one


def test_a_starved_command_skips_the_lines_it_missed_instead_of_printing_them_in_a_burst() -> None:
    """A new user's demo on a loaded host (load 17) printed the lines it had missed back to
    back: two in a row read ``t= 59.0s``. The next line is on the same grid, after now."""
    assert next_report_at(10.0, 13.4, 1.0) == pytest.approx(14.0)
    assert next_report_at(0.0, 0.26, 0.1) == pytest.approx(0.3)
