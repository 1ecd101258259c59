"""Per-model wire ranges of MIT-mode CAN actuators, loaded from data.

Where it sits: :mod:`jointbus.drivers.can`, above :mod:`.mit_protocol` (whose
:class:`~.mit_protocol.MotorRanges` and :class:`~.mit_protocol.ReplyLayout` it fills in) and below
:mod:`.motor_link`. The ranges are data (``motor_models.yaml`` next to this file, or a user's own
file) because they are a property of how each firmware was built, and adding an actuator should
not need a code change. The catalogue is an explicit object passed around, not a mutable global.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Final

import yaml

from jointbus.drivers.can.mit_protocol import MotorRanges, ReplyLayout

__all__ = [
    "MotorModel",
    "MotorModelCatalog",
    "MotorModelDataError",
    "MotorModelError",
    "UnknownMotorModelError",
    "bundled_motor_models",
    "load_motor_models",
    "parse_motor_models",
]

SCHEMA_VERSION: Final[int] = 1
_RANGE_KEYS: Final[tuple[tuple[str, str, str], ...]] = (
    ("position_rad", "p_min", "p_max"),
    ("velocity_rad_s", "v_min", "v_max"),
    ("kp_nm_per_rad", "kp_min", "kp_max"),
    ("kd_nm_s_per_rad", "kd_min", "kd_max"),
    ("torque_nm", "t_min", "t_max"),
)
_MODEL_KEYS: Final[frozenset[str]] = frozenset(
    {"description", "reply", *(key for key, _, _ in _RANGE_KEYS)}
)
_LAYOUTS: Final[tuple[str, ...]] = ("basic", "extended")


class MotorModelError(ValueError):
    """Base class of motor-model errors."""


class UnknownMotorModelError(MotorModelError, LookupError):
    """A model name not in the catalogue; ``known`` lists the names that are."""

    def __init__(self, name: str, known: tuple[str, ...]) -> None:
        self.name = name
        self.known = known
        super().__init__(f"unknown motor model {name!r}; known models: {', '.join(known)}")


class MotorModelDataError(MotorModelError):
    """Motor-model data that does not follow the schema; says where (``source``, model, key)."""


@dataclass(frozen=True, slots=True)
class MotorModel:
    """One actuator model: its name, wire ranges and reply layout."""

    name: str
    ranges: MotorRanges
    reply: ReplyLayout
    description: str = ""


class MotorModelCatalog(Mapping[str, MotorModel]):
    """Read-only name → :class:`MotorModel` table; unknown names raise a typed error."""

    __slots__ = ("_models", "source")

    def __init__(self, models: Mapping[str, MotorModel], source: str = "<memory>") -> None:
        self._models: dict[str, MotorModel] = dict(models)
        self.source = source

    def __getitem__(self, name: str) -> MotorModel:
        try:
            return self._models[name]
        except KeyError:
            raise UnknownMotorModelError(name, self.names) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._models)

    def __len__(self) -> int:
        return len(self._models)

    @property
    def names(self) -> tuple[str, ...]:
        """Known model names, sorted."""
        return tuple(sorted(self._models))


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise MotorModelDataError(f"{where}: {value!r} is not a number")
    number = float(value)
    if not math.isfinite(number):
        raise MotorModelDataError(f"{where}: {value!r} is not finite")
    return number


def _parse_model(name: str, entry: Any, source: str) -> MotorModel:
    where = f"{source}: model {name!r}"
    if not isinstance(entry, Mapping):
        raise MotorModelDataError(f"{where}: expected a mapping, got {type(entry).__name__}")
    unknown = sorted(set(entry) - _MODEL_KEYS)
    if unknown:
        raise MotorModelDataError(
            f"{where}: unknown key(s) {', '.join(map(str, unknown))}; "
            f"expected {', '.join(sorted(_MODEL_KEYS))}"
        )
    bounds: dict[str, float] = {}
    for key, low_name, high_name in _RANGE_KEYS:
        if key not in entry:
            raise MotorModelDataError(f"{where}: missing {key!r} ([min, max])")
        pair = entry[key]
        if not isinstance(pair, list) or len(pair) != 2:
            raise MotorModelDataError(f"{where}: {key} = {pair!r}; expected [min, max]")
        low = _number(pair[0], f"{where}: {key}[0]")
        high = _number(pair[1], f"{where}: {key}[1]")
        if not low < high:
            raise MotorModelDataError(f"{where}: {key} = [{low}, {high}]; expected min < max")
        bounds[low_name] = low
        bounds[high_name] = high
    reply = entry.get("reply", {"layout": "basic"})
    if not isinstance(reply, Mapping):
        raise MotorModelDataError(f"{where}: reply = {reply!r}; expected a mapping")
    layout = reply.get("layout")
    if layout not in _LAYOUTS:
        raise MotorModelDataError(
            f"{where}: reply.layout = {layout!r}; expected one of {', '.join(_LAYOUTS)}"
        )
    extra = sorted(set(reply) - {"layout", "temperature_offset_c"})
    if extra:
        raise MotorModelDataError(f"{where}: reply has unknown key(s) {', '.join(extra)}")
    if layout == "basic" and "temperature_offset_c" in reply:
        raise MotorModelDataError(
            f"{where}: reply.temperature_offset_c given but layout 'basic' has no temperature"
        )
    offset = _number(reply.get("temperature_offset_c", 0.0), f"{where}: reply.temperature_offset_c")
    description = entry.get("description", "")
    if not isinstance(description, str):
        raise MotorModelDataError(f"{where}: description = {description!r}; expected text")
    return MotorModel(
        name=name,
        ranges=MotorRanges(**bounds),
        reply=ReplyLayout(
            has_temperature_and_error=layout == "extended", temperature_offset_c=offset
        ),
        description=description.strip(),
    )


def parse_motor_models(data: Any, source: str = "<memory>") -> MotorModelCatalog:
    """Build a catalogue from already-parsed YAML (``{"schema_version": 1, "models": {...}}``)."""
    if not isinstance(data, Mapping):
        raise MotorModelDataError(f"{source}: expected a mapping at the top level")
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise MotorModelDataError(
            f"{source}: schema_version = {version!r}; expected {SCHEMA_VERSION}"
        )
    models = data.get("models")
    if not isinstance(models, Mapping) or not models:
        raise MotorModelDataError(f"{source}: 'models' must be a non-empty mapping")
    parsed: dict[str, MotorModel] = {}
    for name, entry in models.items():
        if not isinstance(name, str) or not name:
            raise MotorModelDataError(f"{source}: model name {name!r} is not a non-empty string")
        parsed[name] = _parse_model(name, entry, source)
    return MotorModelCatalog(parsed, source)


def load_motor_models(path: Path | str) -> MotorModelCatalog:
    """Load a motor-model YAML file (same schema as the bundled ``motor_models.yaml``)."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise MotorModelDataError(f"{path}: not valid YAML: {exc}") from exc
    return parse_motor_models(data, str(path))


@cache
def bundled_motor_models() -> MotorModelCatalog:
    """The catalogue shipped with jointbus (``motor_models.yaml``); read once, immutable."""
    text = (
        resources.files("jointbus.drivers.can")
        .joinpath("motor_models.yaml")
        .read_text(encoding="utf-8")
    )
    return parse_motor_models(yaml.safe_load(text), "jointbus/drivers/can/motor_models.yaml")
