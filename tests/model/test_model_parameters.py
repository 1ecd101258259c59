"""Typed, bounded parameters: checks on values and declarations, the robot-file section."""

from __future__ import annotations

import math
import textwrap

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from jointbus.model.errors import ParameterError, RobotFileError
from jointbus.model.file_node import FileNode
from jointbus.model.parameters import (
    ParameterSpec,
    ParameterType,
    parameter_defaults,
    parse_parameters,
)
from jointbus.model.yaml_loader import load_robot

SPEED = ParameterSpec("cmd_vel_lin", ParameterType.FLOAT, 1.0, 0.0, 2.0, "m/s", "top speed")


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_float_values_are_accepted_exactly_when_inside_the_bounds(value: float) -> None:
    if math.isfinite(value) and 0.0 <= value <= 2.0:
        assert SPEED.check(value) == value
    else:
        with pytest.raises(ParameterError) as err:
            SPEED.check(value)
        assert err.value.name == "cmd_vel_lin"
        assert "[0.0, 2.0] m/s" in str(err.value)


@given(st.integers(-10, 10))
def test_int_parameters_take_ints_only(value: int) -> None:
    spec = ParameterSpec("retries", ParameterType.INT, 3, 0, 5)
    if 0 <= value <= 5:
        assert spec.check(value) == value
    else:
        with pytest.raises(ParameterError):
            spec.check(value)
    with pytest.raises(ParameterError, match="integer"):
        spec.check(float(value) + 0.5)


@given(
    st.one_of(st.booleans(), st.text(max_size=3), st.none(), st.lists(st.floats(0, 1), max_size=2))
)
def test_non_numbers_are_never_numbers(value: object) -> None:
    with pytest.raises(ParameterError):
        SPEED.check(value)


def test_ints_become_floats_and_bools_are_strict() -> None:
    assert SPEED.check(1) == 1.0 and isinstance(SPEED.check(1), float)
    flag = ParameterSpec("enabled", ParameterType.BOOL, True)
    assert flag.check(False) is False
    with pytest.raises(ParameterError):
        flag.check(1)


def test_declarations_are_checked() -> None:
    with pytest.raises(ParameterError, match="min ≤ max"):
        ParameterSpec("x", ParameterType.FLOAT, 1.0, 2.0, 0.0)
    with pytest.raises(ParameterError, match=r"\[0.0, 2.0\]"):
        ParameterSpec("x", ParameterType.FLOAT, 3.0, 0.0, 2.0)  # default out of bounds
    with pytest.raises(ParameterError, match="bool"):
        ParameterSpec("x", ParameterType.BOOL, True, 0.0)
    with pytest.raises(ParameterError, match="integer"):
        ParameterSpec("x", ParameterType.INT, 1, 0.5)


def _parse(text: str) -> tuple[ParameterSpec, ...]:
    return parse_parameters(FileNode(yaml.safe_load(textwrap.dedent(text)), "p.yaml", "parameters"))


def test_section_parses_to_specs() -> None:
    specs = _parse(
        """\
        kp: {type: float, default: 80, min: 0, max: 500, unit: N·m/rad, description: gain}
        enabled: {type: bool, default: true}
        """
    )
    assert specs[0] == ParameterSpec("kp", ParameterType.FLOAT, 80.0, 0.0, 500.0, "N·m/rad", "gain")
    assert parameter_defaults(specs) == {"kp": 80.0, "enabled": True}


def test_yaml_booleans_as_names_are_explained() -> None:
    with pytest.raises(RobotFileError, match="quote names") as err:
        _parse("on: {type: bool, default: true}")
    assert err.value.key == "parameters.True"


@pytest.mark.parametrize(
    ("text", "key", "fragment"),
    [
        ("kp: {type: double, default: 1}", "parameters.kp.type", "one of"),
        ("kp: {type: float}", "parameters.kp.default", "required"),
        ("kp: {type: float, default: 1, max: high}", "parameters.kp.max", "a number"),
        ("kp: {type: float, default: 9, max: 5}", "parameters.kp", "[-inf, 5.0]"),
        ("kp: {type: float, default: 1, maximum: 5}", "parameters.kp.maximum", "one of the keys"),
    ],
)
def test_section_errors_name_the_key(text: str, key: str, fragment: str) -> None:
    with pytest.raises(RobotFileError) as err:
        _parse(text)
    assert err.value.key == key and err.value.source == "p.yaml"
    assert fragment in str(err.value)


def test_hb50_parameters_from_the_issue() -> None:
    model = load_robot("hb50")
    defaults = parameter_defaults(model.parameters)
    assert defaults["stand_height"] == 0.34
    assert (defaults["kp"], defaults["kd"]) == (80.0, 3.0)
    assert defaults["watchdog_time"] == 0.25  # the drives' 250 ms communication watchdog
    assert defaults["arbitration_threshold"] == 10.0
    assert defaults["cmd_vel_lin"] > 0 and defaults["cmd_vel_ang"] > 0
    assert defaults["thermal_warn"] < defaults["thermal_derate"] < defaults["thermal_shutdown"]
    assert defaults["thermal_shutdown"] == 100.0  # the driver's own shutdown temperature
    for spec in model.parameters:
        assert spec.unit or spec.name in ("speed_scale",), spec.name
        assert spec.description
