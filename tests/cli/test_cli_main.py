"""Every command the CLI registers imports and shows in ``jointbus --help``."""

from __future__ import annotations

import pytest

from jointbus import __version__
from jointbus.cli import main as cli


def test_help_lists_every_registered_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in [*cli._GROUPS, *cli._COMMANDS, "version"]:
        assert f" {name} " in out, f"{name} missing from --help"


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["version"]) == 0
    assert capsys.readouterr().out.strip() == __version__


def test_unknown_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["no-such-command"]) == 2
    assert "No such command" in capsys.readouterr().err
