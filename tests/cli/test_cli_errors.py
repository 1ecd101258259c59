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
