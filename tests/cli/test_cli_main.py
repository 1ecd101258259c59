"""Every command the CLI registers imports and shows in ``jointbus --help``."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest
import typer

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


def test_every_registration_imports_its_command() -> None:
    """A broken command module fails here, not only when a user runs that command."""
    for name, (module_name, attribute, _help) in cli._GROUPS.items():
        group = getattr(importlib.import_module(module_name), attribute)
        assert isinstance(group, typer.Typer), name
    for name, (module_name, attribute) in cli._COMMANDS.items():
        assert callable(getattr(importlib.import_module(module_name), attribute)), name


# What a safety command must not wait for: the nodes, the simulator, the terminal UI, the type
# registry of every robot (the modules that made `jointbus estop` take seconds to start).
_HEAVY = (
    "jointbus.stack",
    "jointbus.robots.hb50.control.motion",
    "jointbus.cli.demo",
    "jointbus.tools.known_types",
    "mujoco",
    "textual",
)


@pytest.mark.parametrize("command", ["estop", "mode"])
def test_estop_and_mode_start_without_the_heavy_modules(command: str) -> None:
    script = (
        "import sys\n"
        "from jointbus.cli import main\n"
        f"code = main.main([{command!r}, '--help'])\n"
        "print('\\nMODULES', code, *sorted(sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    help_text, _, listing = done.stdout.rpartition("\nMODULES ")
    code, *modules = listing.split()
    assert code == "0"
    assert f"Usage: jointbus {command}" in help_text
    assert sorted(set(_HEAVY) & set(modules)) == []
    assert "jointbus.cli.launch" in modules
