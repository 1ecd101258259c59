"""``jointbus security rules``: the rules file a user generates is what the robot enforces.

What a user relies on: the command prints an ``access_control`` block Zenoh accepts, giving each
certificate name exactly its role; the example in ``examples/`` is that command's output (so it
cannot drift from the role table); bad input (a name given two roles, no name) is one ``error:``
line and exit code 1. What each role may do on the wire is tested in
``tests/bus/test_zenoh_acl.py``.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
import zenoh

from jointbus.bus.access_roles import AccessPolicy
from jointbus.bus.zenoh_security import ZenohAccessControl
from jointbus.cli import main as cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "zenoh_acl.json5"


def _rules(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(["security", "rules", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_example_is_the_output_of_its_own_command(capsys: pytest.CaptureFixture[str]) -> None:
    text = EXAMPLE.read_text()
    command = next(line for line in text.splitlines() if "jointbus security rules" in line)
    args = shlex.split(command.split("jointbus", 1)[1].split(">")[0])
    code, out, _ = _rules(capsys, *args[2:])
    assert code == 0
    assert text.endswith(out)


def test_rules_are_accepted_by_zenoh_and_give_each_name_its_role(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = _rules(capsys, "--observer", "a.x", "--controller", "c.x", "--observer", "b.x")
    assert code == 0
    acl = ZenohAccessControl(out)
    zenoh.Config().insert_json5(*acl.json5_items()[0])
    policy = AccessPolicy.parse(out)
    assert policy is not None
    power = "0/hb50/actarray/power/jointbus_msgs::srv::dds_::X_/RIHS01_00"
    for name, allowed in (("a.x", False), ("b.x", False), ("c.x", True), ("stranger", False)):
        subjects = policy.subjects_of(name, "tls", "1234")
        assert subjects is not None
        assert policy.allows(subjects, "ingress", "query", power) is allowed, name


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "no certificate names"),
        (("--observer", "a.x", "--controller", "a.x"), "two roles"),
        (("--observer", " a.x"), "empty or padded"),
    ],
)
def test_bad_names_are_one_error_line(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...], message: str
) -> None:
    code, out, err = _rules(capsys, *args)
    assert code == 1
    assert out == ""
    assert err.startswith("error: ") and message in err
