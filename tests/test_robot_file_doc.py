"""docs/ROBOT_FILE.md cannot drift from the loader: its examples load, its refusals are refused.

Every ```` ```yaml ```` block of the page is loaded by the real loader (and, when it gives every
actuated joint a speed, opened as a simulated array); every ```` ```yaml refused ```` block must
raise :class:`~jointbus.model.errors.RobotFileError` with the text of the ```` ```text ```` block
that follows it.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from jointbus import drivers
from jointbus.model import load_robot
from jointbus.model.errors import RobotFileError

DOC = Path(__file__).resolve().parents[1] / "docs" / "ROBOT_FILE.md"
_BLOCK = re.compile(r"```(yaml(?: refused)?|text)\n(.*?)```", re.DOTALL)


def _blocks() -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in _BLOCK.finditer(DOC.read_text(encoding="utf-8"))]


def _examples() -> list[str]:
    return [text for kind, text in _blocks() if kind == "yaml"]


def _refusals() -> list[tuple[str, str]]:
    blocks = _blocks()
    pairs = []
    for (kind, text), (next_kind, error) in itertools.pairwise(blocks):
        if kind == "yaml refused":
            assert next_kind == "text", f"a refused example without its error:\n{text}"
            pairs.append((text, error.strip()))
    return pairs


def test_the_page_has_examples_and_refusals() -> None:
    assert len(_examples()) >= 2
    assert len(_refusals()) >= 10
    readme = (DOC.parents[1] / "README.md").read_text(encoding="utf-8")
    assert "docs/ROBOT_FILE.md" in readme


@pytest.mark.parametrize("text", _examples(), ids=lambda t: t.split("\n", 1)[0])
def test_every_example_loads(text: str, tmp_path: Path) -> None:
    path = tmp_path / "pan_tilt.yaml"
    path.write_text(text, encoding="utf-8")
    model = load_robot(path)
    assert model.actuator_order
    if "velocity:" in text:  # a speed for every joint: it runs as a simulated array
        with drivers.open(f"sim://{path}?realtime=false") as array:
            assert array.names == model.actuator_order


def test_the_full_example_says_what_the_page_says(tmp_path: Path) -> None:
    full = next(t for t in _examples() if t.startswith("name: pan_tilt_full"))
    path = tmp_path / "pan_tilt.yaml"
    path.write_text(full, encoding="utf-8")
    model = load_robot(path)
    pan = model.joint("pan")
    assert pan.limits.soft is not None and pan.limits.soft.k_velocity == 5.0
    assert pan.actuator is not None and pan.actuator.has_brakes
    assert (pan.calibration.direction, pan.calibration.offset) == (-1, 0.1)
    assert model.pose("rest") == {"pan": 0.0, "tilt": -1.0}
    assert model.simulation.timestep == 0.002
    with drivers.open(f"sim://{path}?realtime=false") as array:
        assert array.config_speeds[0] == pytest.approx(1.5)
        # the default acceleration reaches the configured speed in 0.25 s
        assert array.config_accelerations[0] == pytest.approx(1.5 / 0.25)


@pytest.mark.parametrize(
    ("text", "error"), _refusals(), ids=[f"refusal{i}" for i in range(len(_refusals()))]
)
def test_every_refusal_gives_the_error_the_page_quotes(
    text: str, error: str, tmp_path: Path
) -> None:
    path = tmp_path / "pan_tilt.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(RobotFileError) as refused:
        load_robot(path)
    shown = str(refused.value).replace(str(path), path.name)
    assert error in shown, shown
