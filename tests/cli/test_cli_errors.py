"""How a command fails: the errors a user can fix are one ``error:`` line and exit code 1, found
without importing the libraries that raise them (so declaring a command stays cheap)."""

from __future__ import annotations

import pytest
import typer

from jointbus.bus import BusError
from jointbus.cli.errors import FAILED, CliError, user_errors
from jointbus.cli.values import ValuesError
from jointbus.messages.registry import UnknownTypeError
from jointbus.runtime.node import DuplicateNodeError


@pytest.mark.parametrize(
    "error",
    [
        CliError("no topics found (looked on hub port 7447, domain 0)"),
        BusError("topic name 'x' must start with '/'"),
        ValuesError("level", "loud", "an integer"),
        UnknownTypeError("pkg/msg/Nope", ["std_msgs/msg/String"]),
        DuplicateNodeError("bridge_node", "hb50", "hub port 7447, domain 0", ["this process"]),
    ],
    ids=["cli", "bus", "values", "type", "duplicate-node"],
)
def test_a_users_error_is_one_line_and_exit_1(
    error: Exception, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(typer.Exit) as ended, user_errors():
        raise error
    assert ended.value.exit_code == FAILED == 1
    err = capsys.readouterr().err
    assert err == f"error: {error}\n"


def test_a_bug_is_not_turned_into_a_user_error() -> None:
    with pytest.raises(ZeroDivisionError), user_errors():
        _ = 1 / 0


@pytest.mark.parametrize("interrupt", [KeyboardInterrupt(), BrokenPipeError()])
def test_ctrl_c_and_a_closed_pipe_end_quietly(interrupt: BaseException) -> None:
    with pytest.raises(typer.Exit) as ended, user_errors():
        raise interrupt
    assert ended.value.exit_code == 0


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["topic", "pub", "/t", "std_msgs/msg/Strin", "{data: x}", "--once"], 1),
        (["topic", "pub", "/t", "std_msgs/msg/String", "{dat: x}", "--once"], 1),
        (["topic", "pub", "/t", "std_msgs/msg/String", "{data: [", "--once"], 1),
        (["service", "call", "/s", "jointbus_msgs/msg/ActuatorPowerRequest", "{on: false}"], 1),
        (["service", "call", "/s", "jointbus_msgs/msg/ActuatorPowerRequest", '{"engage": 0}'], 1),
        (["topic", "pub", "/t", "std_msgs/msg/String", "{data: x}", "--nosuchoption"], 2),
        (["topic", "pub", "/t", "std_msgs/msg/String", "{data: x}", "--rate", "-5"], 2),
        (["topic", "pub", "/t"], 2),
        (["service", "call", "/s", "std_msgs/msg/String", "{}", "--timeout", "0"], 2),
    ],
    ids=[
        "unknown-type", "field-typo", "broken-yaml", "bare-on", "no-such-field",
        "unknown-option", "option-out-of-range", "missing-argument", "service-option",
    ],
)
def test_a_bad_value_exits_1_and_a_usage_error_2_as_the_readme_says(
    args: list[str], code: int
) -> None:
    """README § The bus: what the command itself checks (type, VALUES) is an ``error:`` line and
    exit 1; what the command-line parser refuses (options, arguments) is a usage error, exit 2."""
    from typer.testing import CliRunner

    from jointbus.cli.main import app

    result = CliRunner().invoke(app, args)
    assert result.exit_code == code, result.output
    if code == 1:
        assert result.output.startswith("error: "), result.output
    else:
        assert "Usage:" in result.output, result.output
