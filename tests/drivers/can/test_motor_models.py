"""Per-model wire ranges are data: the bundled catalogue, user files and clear errors."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from jointbus.drivers.can.motor_models import (
    MotorModelDataError,
    UnknownMotorModelError,
    bundled_motor_models,
    load_motor_models,
    parse_motor_models,
)


def _entry(**overrides: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "position_rad": [-12.5, 12.5],
        "velocity_rad_s": [-30.0, 30.0],
        "kp_nm_per_rad": [0.0, 500.0],
        "kd_nm_s_per_rad": [0.0, 5.0],
        "torque_nm": [-10.0, 10.0],
        "reply": {"layout": "basic"},
    }
    entry.update(overrides)
    return entry


def test_bundled_catalogue_has_the_documented_models() -> None:
    models = bundled_motor_models()
    assert {"cheetah", "ak80-9", "ak70-10", "md80"} <= set(models)
    cheetah = models["cheetah"]
    assert cheetah.ranges.pairs() == (
        (-12.5, 12.5), (-65.0, 65.0), (0.0, 500.0), (0.0, 5.0), (-18.0, 18.0),
    )
    assert not cheetah.reply.has_temperature_and_error
    assert models["ak80-9"].reply.length == 8


def test_md80_entry_covers_the_hb50_actuator_limits() -> None:
    md80 = bundled_motor_models()["md80"]
    t_lo, t_hi = md80.ranges.bounds("torque")
    v_lo, v_hi = md80.ranges.bounds("velocity")
    assert t_lo <= -24.0 and t_hi >= 24.0
    assert v_lo <= -20.0 and v_hi >= 20.0
    kp_lo, kp_hi = md80.ranges.bounds("kp")
    assert kp_lo <= 80.0 <= kp_hi  # stand gains kp 80, kd 3
    assert md80.ranges.bounds("kd")[1] >= 3.0


def test_models_are_frozen() -> None:
    model = bundled_motor_models()["cheetah"]
    with pytest.raises(AttributeError):
        model.name = "x"  # type: ignore[misc]


def test_unknown_model_lists_known_ones() -> None:
    with pytest.raises(UnknownMotorModelError) as info:
        bundled_motor_models()["ak80-99"]
    assert "ak80-9" in str(info.value)
    assert "cheetah" in info.value.known


def test_user_file_loads(tmp_path: Path) -> None:
    path = tmp_path / "motors.yaml"
    path.write_text(
        "schema_version: 1\n"
        "models:\n"
        "  mine:\n"
        "    position_rad: [-4.0, 4.0]\n"
        "    velocity_rad_s: [-30, 30]\n"
        "    kp_nm_per_rad: [0, 100]\n"
        "    kd_nm_s_per_rad: [0, 2]\n"
        "    torque_nm: [-6, 6]\n"
        "    reply: {layout: extended, temperature_offset_c: -20}\n",
        encoding="utf-8",
    )
    models = load_motor_models(path)
    mine = models["mine"]
    assert mine.ranges.bounds("position") == (-4.0, 4.0)
    assert mine.reply.has_temperature_and_error
    assert mine.reply.temperature_offset_c == -20.0
    assert models.names == ("mine",)


@pytest.mark.parametrize(
    ("entry", "needle"),
    [
        (_entry(torque_nm=[10.0, -10.0]), "torque_nm"),
        (_entry(torque_nm=[-10.0]), "torque_nm"),
        (_entry(kp_nm_per_rad=["a", 5]), "kp_nm_per_rad"),
        (_entry(kd_nm_s_per_rad=[0, math.inf]), "kd_nm_s_per_rad"),
        (_entry(reply={"layout": "fancy"}), "reply.layout"),
        (_entry(reply={"layout": "basic", "temperature_offset_c": 1}), "temperature_offset_c"),
        (_entry(torque=[-1, 1]), "unknown key"),
        ({k: v for k, v in _entry().items() if k != "velocity_rad_s"}, "velocity_rad_s"),
    ],
)
def test_bad_data_names_model_and_key(entry: dict[str, Any], needle: str) -> None:
    with pytest.raises(MotorModelDataError) as info:
        parse_motor_models({"schema_version": 1, "models": {"broken": entry}}, "test.yaml")
    text = str(info.value)
    assert "broken" in text
    assert needle in text


def test_bad_top_level_is_refused(tmp_path: Path) -> None:
    with pytest.raises(MotorModelDataError, match="schema_version"):
        parse_motor_models({"schema_version": 2, "models": {"a": _entry()}})
    with pytest.raises(MotorModelDataError, match="models"):
        parse_motor_models({"schema_version": 1, "models": {}})
    path = tmp_path / "bad.yaml"
    path.write_text("models: [unclosed", encoding="utf-8")
    with pytest.raises(MotorModelDataError, match="YAML"):
        load_motor_models(path)
