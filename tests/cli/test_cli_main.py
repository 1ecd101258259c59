"""``jointbus``'s command table: every command loads, ``--help`` lists them without loading them,
and no ``--help`` imports what the commands run on (issue 20, item 11: ``jointbus --help`` cost
1.4–2.0 s of CPU, ``estop`` 3.5–3.9 s to start under load)."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from jointbus import __version__
from jointbus.cli import main as cli


def test_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in [*cli.COMMANDS, "version"]:
        assert f"\n  {name} " in out, f"{name} missing from --help"


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["version"]) == 0
    assert capsys.readouterr().out.strip() == __version__


def test_unknown_command_is_a_usage_error_that_suggests_the_closest(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["no-such-command"]) == 2
    assert "No such command" in capsys.readouterr().err
    assert cli.main(["topc"]) == 2
    assert "Did you mean 'topic'" in capsys.readouterr().err


def test_every_command_loads_and_its_table_help_is_its_own() -> None:
    """A broken command module fails here, not only when a user runs that command; the line
    ``jointbus --help`` shows from the table is the command's own first line (no drift)."""
    for name, entry in cli.COMMANDS.items():
        command = cli.load_command(name)
        own = " ".join((command.help or "").split("\n\n")[0].split())
        assert own == entry.help, f"{name}: table says {entry.help!r}, the command {own!r}"
        if hasattr(command, "commands"):
            assert command.commands, f"{name} is a group without commands"


def test_a_group_with_one_command_stays_a_group(capsys: pytest.CaptureFixture[str]) -> None:
    """``jointbus node`` has one sub-command; ``node list`` must still be ``node list``."""
    assert cli.main(["node", "--help"]) == 0
    assert "\n  list " in capsys.readouterr().out


# What a --help must not load: the libraries the commands run on and the jointbus layers that
# pull them in. The CLI's own modules (jointbus.cli.*), typer and the standard library are
# what declaring the commands needs.
_HEAVY = (
    "numpy",
    "zenoh",
    "mujoco",
    "rosbags",
    "mcap",
    "mcap_ros2",
    "textual",
    "rich",
    "yaml",
    "foxglove",
    "can",
    "ruckig",
    "matplotlib",
    "xxhash",
    "zstandard",
    "jointbus.bus",
    "jointbus.runtime",
    "jointbus.drivers",
    "jointbus.nodes",
    "jointbus.robots",
    "jointbus.stack",
    "jointbus.model",
    "jointbus.messages",
    "jointbus.codec",
)

_HELP_IMPORTS = """
import contextlib, io, json, sys
from jointbus.cli import main

HEAVY = tuple(sys.argv[1].split(","))

def heavy():
    return {m for m in sys.modules if any(m == p or m.startswith(p + ".") for p in HEAVY)}

found = {}
def run(path):
    before = heavy()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main.main([*path, "--help"])
    found[" ".join(path) or "(root)"] = {
        "code": code, "new": sorted(heavy() - before), "text": out.getvalue()
    }

run([])
for name in main.COMMANDS:
    run([name])
    for sub in getattr(main.load_command(name), "commands", {}):
        run([name, sub])
print(json.dumps(found))
"""


@pytest.fixture(scope="module")
def help_runs() -> dict[str, dict[str, object]]:
    """Every ``jointbus [CMD [SUB]] --help`` in one fresh interpreter: its exit code, the heavy
    modules it imported first, its text."""
    done = subprocess.run(
        [sys.executable, "-c", _HELP_IMPORTS, ",".join(_HEAVY)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    runs: dict[str, dict[str, object]] = json.loads(done.stdout)
    return runs


def test_no_help_imports_what_the_commands_run_on(help_runs: dict[str, dict[str, object]]) -> None:
    assert "(root)" in help_runs and "estop" in help_runs and "topic pub" in help_runs
    loaded = {path: run["new"] for path, run in help_runs.items() if run["new"]}
    assert loaded == {}, "these --help imported heavy modules"
    assert all(run["code"] == 0 for run in help_runs.values())


def test_a_flag_shows_no_type_and_help_text_is_rewrapped(
    help_runs: dict[str, dict[str, object]],
) -> None:
    """Issue 20, item 12: every flag showed ``<bool>`` (even ``--help <bool>``), and the
    descriptions of ``demo`` / ``estop`` kept the docstrings' line breaks mid-sentence."""
    for path, run in help_runs.items():
        text = str(run["text"])
        assert "<bool>" not in text, path
        assert "--help  " in text or "--help " in text, path
    estop = str(help_runs["estop"]["text"])
    assert "  --reset  " in estop
    assert "--reason REASON" in estop and "--hub-port PORT" in estop
    # One paragraph, wrapped to the terminal, not the source's "... to confirm;\n--reset".
    assert "wait for it to confirm; --reset re-arms." in " ".join(estop.split())
    for line in estop.splitlines():
        assert not line.strip().startswith("--reset re-arms"), estop
    root = str(help_runs["(root)"]["text"])
    demo_line = " ".join(root.split("  demo", 1)[1].split("monitor", maxsplit=1)[0].split())
    assert demo_line.startswith("Run a simulated robot: hb50 stands up under its control node;")


def test_a_library_warning_is_printed_with_time_level_and_logger() -> None:
    """Issue 20, item 25: a QoS warning of an endpoint without a handler (the simulator's ground
    truth publisher met by a reliable ROS subscriber) reached the demo's console as a bare line,
    without level or time, beside the status lines that have both."""
    script = (
        "import logging\n"
        "from jointbus.cli import main\n"
        "main.main(['version'])\n"
        "logging.getLogger('jointbus.bus').warning('incompatible QoS on /x')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert re.fullmatch(
        r"\d\d:\d\d:\d\d WARNING jointbus\.bus: incompatible QoS on /x\n", done.stderr
    ), done.stderr
