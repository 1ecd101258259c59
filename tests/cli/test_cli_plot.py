"""``jointbus plot``: writes the PNG, refuses bad fields with exit status 1."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from support.cli_tools import tools_app
from support.tools import bridge_data, joint_command, write_mcap

T0 = 1_800_000_000_000_000_000


def test_plot_writes_a_png_with_one_series_per_topic_and_joint(tmp_path: Path):
    entries = [("/hb50/bridge_data", bridge_data(i), T0 + i * 10**7) for i in range(20)]
    entries += [("/hb50/joint_command", joint_command(i), T0 + i * 10**7) for i in range(20)]
    bag = write_mcap(tmp_path / "run.mcap", entries)
    out = tmp_path / "pos.png"
    args = [
        "plot",
        str(bag),
        "--topic",
        "/hb50/joint_command",
        "--field",
        "t_pos",
        "--topic",
        "/hb50/bridge_data",
        "--field",
        "joint_position",
        "--joints",
        "fr_j0",
        "--joints",
        "fr_j2",
        "-o",
        str(out),
    ]
    result = CliRunner().invoke(tools_app(), args)
    assert result.exit_code == 0, result.output
    assert "(4 series)" in result.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_of_an_unknown_field_fails(tmp_path: Path):
    bag = write_mcap(tmp_path / "run.mcap", [("/hb50/bridge_data", bridge_data(0), T0)])
    out = tmp_path / "x.png"
    args = ["plot", str(bag), "--topic", "/hb50/bridge_data", "--field", "nope", "-o", str(out)]
    result = CliRunner().invoke(tools_app(), args)
    assert result.exit_code == 1
    assert "no field 'nope'" in result.output
    assert not out.exists()


def test_plot_selects_joints_by_role_and_names_roles_and_units(tmp_path: Path):
    entries = [("/hb50/bridge_data", bridge_data(i), T0 + i * 10**7) for i in range(20)]
    bag = write_mcap(tmp_path / "run.mcap", entries)
    out = tmp_path / "knee.png"
    args = ["plot", str(bag), "--topic", "/hb50/bridge_data", "--field", "joint_velocity",
            "--joints", "knee", "-o", str(out)]
    result = CliRunner().invoke(tools_app(), args)
    assert result.exit_code == 0, result.output
    assert "(1 series)" in result.output
    args_none = [*args[:-2], "--robot", "", "-o", str(out)]
    result = CliRunner().invoke(tools_app(), args_none)  # without a model there is no role
    assert result.exit_code == 1 and "no joint 'knee'" in result.output
    bad = [*args[:-2], "--robot", "no_such_robot", "-o", str(out)]
    result = CliRunner().invoke(tools_app(), bad)
    assert result.exit_code == 1 and "cannot load robot 'no_such_robot'" in result.output
