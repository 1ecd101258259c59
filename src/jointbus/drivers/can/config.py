"""Configuration of the ``can://`` driver: which motors, on which bus, with which timing.

Where it sits: :mod:`jointbus.drivers.can`, between :mod:`.motor_models` (wire ranges per model)
and :mod:`.driver` (the :class:`~jointbus.drivers.actuator_array.ActuatorArray` on a
:class:`~.motor_link.MotorLink`). A :class:`CanArrayConfig` is a frozen, validated value; it is
built from a URL, a YAML file or code, always through one parser, so the three cannot drift.

URL form::

    can://<interface>/<channel>?robot=hb50&model=md80&ids=1,2,...&timeout=0.001
    can://socketcan/can0?config=/etc/jointbus/hb50_can.yaml

``<interface>`` and ``<channel>`` are python-can's (``virtual``, ``socketcan``, ``pcan``, …).
Options (the same keys in a ``config=`` YAML file, where lists may be YAML lists; a file's
relative ``robot`` / ``models`` paths are relative to the file):

==============  =============================================================================
``robot``       bundled robot name or robot-file path (joint names, order, limits); required
``model``       motor model name (``motor_models.yaml``), one for all or one per joint
                (comma-separated, actuator order); required — wrong wire ranges would scale
                every torque wrongly, so there is no default
``ids``         CAN ids, one per joint in actuator order (default ``1..N``)
``models``      path of a motor-model catalogue to use instead of the bundled one
``timeout``     s, how long a cycle waits for replies after its last send (default: see
                "Reply timeout" below)
``period``      s, the nominal control period (0.002): the limit guard's cycle, the bound on
                ``set_accel``, ``wait_until_still``'s poll; profiled moves and the motor
                twin's physics run on the clock, not on it (the driver's and the twin's "Time")
``lost_after``  consecutive missed replies after which a motor is flagged lost and the drive
                goes safe (default 5: 10 ms at 500 Hz, half the MD drives' 250 ms watchdog
                would be far too late for a leg)
``safe_kd``     N·m·s/rad, damping of the safe command (default 1.0)
``host_id``     arbitration id the motors answer on (default 0)
``bitrate``     bit/s, passed to python-can when opening the bus (default: the interface's)
``policy``      ``reject`` or ``saturate`` (hard-limit policy, default ``reject``)
==============  =============================================================================

**Reply timeout** (:func:`default_reply_timeout`). A timeout only costs time when a motor does
not answer, and a too-short one turns a slow answer into a missing one (NaN, a refused
``power(True)``, and after ``lost_after`` in a row a safe stop), so the default is the longest
a healthy answer can take, not the shortest:

- ``virtual`` (the motor twin, a Python thread in the same process, answering when the OS and
  the GIL let it run): :data:`VIRTUAL_REPLY_TIMEOUT_S` = 0.25 s. Whole-exchange latency measured
  on the project's 2-CPU host (12 motors, exchanges at 500 Hz): at load ≈ 4.5, 2 × 5000
  exchanges, p50 0.9–1.6 ms, p99 9–10 ms, p99.9 14–18 ms, max 30–51 ms; at load ≈ 7.5, 20 000
  exchanges, p50 0.75 ms, p99 13.6 ms, p99.9 27.7 ms, max 109 ms. 1 ms missed a third to a half
  of the exchanges, 10 ms 1–2 %; 0.25 s is over twice the worst seen, and costs time only
  when a motor really is silent (then each exchange waits it out).
- a real bus (``socketcan``, ``pcan``, …): the bus time of the exchange plus the firmware's
  answer time — ``2 · N · 135 bit / bitrate`` (N command and N reply frames, 8-byte standard
  frames with worst-case bit stuffing; bitrate 1 Mbit/s when not given) +
  :data:`FIRMWARE_REPLY_MARGIN_S` (1 ms). That is 1.8 ms for 3 motors and 4.2 ms for 12 at
  1 Mbit/s: 12 motors on one 1 Mbit/s bus do not fit a 2 ms cycle, whatever the timeout.

Unknown options, a file *and* inline options, and every inconsistent value are a
:class:`~jointbus.drivers.errors.DriverURLError` (URL / file) or
:class:`~jointbus.drivers.actuator_array.ActuatorArrayConfigError` (code), naming the option.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import yaml

from jointbus.drivers.actuator_array import ActuatorArrayConfig, ActuatorArrayConfigError
from jointbus.drivers.can.motor_models import (
    MotorModel,
    MotorModelCatalog,
    MotorModelError,
    bundled_motor_models,
    load_motor_models,
)
from jointbus.drivers.errors import DriverURLError
from jointbus.drivers.limits import LimitPolicy
from jointbus.drivers.registry import DriverURL
from jointbus.model.errors import ModelError
from jointbus.model.robot import RobotModel
from jointbus.model.yaml_loader import load_robot

__all__ = [
    "DEFAULT_BITRATE",
    "FIRMWARE_REPLY_MARGIN_S",
    "MAX_FRAME_BITS",
    "OPTIONS",
    "VIRTUAL_REPLY_TIMEOUT_S",
    "CanArrayConfig",
    "CanMotor",
    "default_reply_timeout",
]

OPTIONS: Final[frozenset[str]] = frozenset(
    {
        "robot",
        "model",
        "ids",
        "models",
        "timeout",
        "period",
        "lost_after",
        "safe_kd",
        "host_id",
        "bitrate",
        "policy",
    }
)
"""Options a ``can://`` URL (or a ``config=`` file) accepts, besides ``config`` itself."""

VIRTUAL_REPLY_TIMEOUT_S: Final[float] = 0.25
"""s: default reply timeout on python-can's ``virtual`` interface (the motor twin; see above)."""
FIRMWARE_REPLY_MARGIN_S: Final[float] = 0.001
"""s: added to the bus time for a real motor's answer time and the kernel's queues."""
MAX_FRAME_BITS: Final[int] = 135
"""Bits of an 8-byte standard CAN frame on the wire, worst-case stuffing included."""
DEFAULT_BITRATE: Final[int] = 1_000_000
"""bit/s assumed for the timeout when the URL gives no ``bitrate`` (MIT-mode motors' usual)."""


def default_reply_timeout(interface: str, motors: int, bitrate: int | None = None) -> float:
    """The default reply timeout (s) for ``motors`` motors on ``interface`` (module docstring)."""
    if interface == "virtual":
        return VIRTUAL_REPLY_TIMEOUT_S
    bus_time = 2 * motors * MAX_FRAME_BITS / (bitrate or DEFAULT_BITRATE)
    return bus_time + FIRMWARE_REPLY_MARGIN_S

_DEFAULT_KP: Final[float] = 60.0  # N·m/rad, profile gains when the robot declares none
_DEFAULT_KD: Final[float] = 2.0  # N·m·s/rad


@dataclass(frozen=True, slots=True)
class CanMotor:
    """One motor: the joint it drives, its CAN id and its model (wire ranges, reply layout)."""

    joint: str
    can_id: int
    model: MotorModel


@dataclass(frozen=True, slots=True)
class CanArrayConfig:
    """Everything the ``can://`` driver needs; validated whole on construction.

    ``motors`` are in the array's actuator order. Times in s: ``reply_timeout_s`` per exchange
    (NaN, the default: :func:`default_reply_timeout` for the interface, resolved here),
    ``period_s`` the nominal control period (moves run on the driver's clock). ``lost_after``
    consecutive missed replies flag a motor lost and put the whole array on the safe command
    (``kp = 0``, ``kd = safe_kd`` N·m·s/rad, no torque).
    ``kp`` / ``kd`` (one per joint) are the position-loop gains of profiled moves (position,
    speed, home); ``jerk_time`` s sets the profiles' jerk limit (acceleration / jerk_time);
    ``moving_velocity`` rad/s (m/s) is the speed above which a joint reports MOVING, judged on
    its displacement over the last ``still_window_s`` s (velocity replies are too noisy: hb50's
    MD80 drives report velocity with σ ≈ 0.38 rad/s).
    ``torque_constants`` N·m/A per joint (NaN: unknown; current commands need all of them).
    """

    array: ActuatorArrayConfig
    motors: tuple[CanMotor, ...]
    interface: str = "virtual"
    channel: str = "can0"
    reply_timeout_s: float = math.nan
    period_s: float = 0.002
    lost_after: int = 5
    safe_kd: float = 1.0
    host_id: int = 0
    bitrate: int | None = None
    kp: tuple[float, ...] = ()
    kd: tuple[float, ...] = ()
    jerk_time: float = 0.05
    moving_velocity: float = 0.05
    still_window_s: float = 0.1
    torque_constants: tuple[float, ...] = field(default=())
    robot: RobotModel | None = field(default=None, compare=False, repr=False)
    """The robot description this config was built from (``None`` when built by hand): what the
    motor twin (:mod:`.twin_server`) derives the simulated motors' physics from."""

    def __post_init__(self) -> None:
        for name in ("motors", "kp", "kd", "torque_constants"):
            value = getattr(self, name)
            if not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(value))
        array = self.array
        n = array.count
        if not isinstance(array, ActuatorArrayConfig):
            raise ActuatorArrayConfigError(f"array = {array!r}; expected an ActuatorArrayConfig")
        if len(self.motors) != n:
            raise ActuatorArrayConfigError(
                f"motors has {len(self.motors)} entries for {n} joints; expected one motor per "
                f"joint in actuator order ({', '.join(array.names)})"
            )
        if not self.kp:
            object.__setattr__(self, "kp", (_DEFAULT_KP,) * n)
        if not self.kd:
            object.__setattr__(self, "kd", (_DEFAULT_KD,) * n)
        if not self.torque_constants:
            object.__setattr__(self, "torque_constants", (math.nan,) * n)
        for name in ("kp", "kd", "torque_constants"):
            if len(getattr(self, name)) != n:
                raise ActuatorArrayConfigError(
                    f"{name} has {len(getattr(self, name))} entries for {n} joints"
                )
        _positive("period_s", self.period_s, upper=1.0)
        _positive("jerk_time", self.jerk_time, upper=1.0)
        _positive("moving_velocity", self.moving_velocity)
        _positive("still_window_s", self.still_window_s, upper=10.0)
        if isinstance(self.lost_after, bool) or not isinstance(self.lost_after, int) or not (
            1 <= self.lost_after <= 10_000
        ):
            raise ActuatorArrayConfigError(
                f"lost_after = {self.lost_after!r}; expected a whole number of exchanges 1…10000"
            )
        if not (isinstance(self.host_id, int) and 0 <= self.host_id <= 0x7FF):
            raise ActuatorArrayConfigError(
                f"host_id = {self.host_id!r}; expected a standard CAN id 0…0x7FF"
            )
        if self.bitrate is not None and not (
            isinstance(self.bitrate, int) and 10_000 <= self.bitrate <= 8_000_000
        ):
            raise ActuatorArrayConfigError(
                f"bitrate = {self.bitrate!r} bit/s; expected 10000…8000000 or None"
            )
        if not self.interface or not isinstance(self.interface, str):
            raise ActuatorArrayConfigError(f"interface = {self.interface!r}; expected a name")
        if isinstance(self.reply_timeout_s, float) and math.isnan(self.reply_timeout_s):
            object.__setattr__(
                self,
                "reply_timeout_s",
                default_reply_timeout(self.interface, n, self.bitrate),
            )
        _positive("reply_timeout_s", self.reply_timeout_s, upper=1.0)
        self._check_motors()

    def _check_motors(self) -> None:
        array = self.array
        seen: dict[int, int] = {}
        for i, (motor, joint) in enumerate(zip(self.motors, array.names, strict=True)):
            where = f"joint {joint!r} (index {i})"
            if not isinstance(motor, CanMotor) or motor.joint != joint:
                raise ActuatorArrayConfigError(
                    f"{where}: motors[{i}] = {motor!r}; expected the CanMotor of {joint!r} "
                    "(motors follow the actuator order)"
                )
            if isinstance(motor.can_id, bool) or not isinstance(motor.can_id, int) or not (
                1 <= motor.can_id <= 0xFF
            ) or motor.can_id == self.host_id:
                raise ActuatorArrayConfigError(
                    f"{where}: can id {motor.can_id!r}; expected 1…255 (a reply names its motor "
                    f"in one byte) other than the host id {self.host_id}"
                )
            if motor.can_id in seen:
                j = seen[motor.can_id]
                raise ActuatorArrayConfigError(
                    f"{where}: can id {motor.can_id} is already used by joint "
                    f"{array.names[j]!r} (index {j})"
                )
            seen[motor.can_id] = i
            ranges = motor.model.ranges
            limits = array.limits[i]
            cal = array.calibrations[i]
            # The joint's range in actuator space must fit the wire, or a valid command
            # could not be sent.
            ends = sorted(
                cal.direction * p + cal.offset for p in (limits.position_min, limits.position_max)
            )
            model = motor.model.name
            _within(where, "position range (actuator space)", values=ends,
                    bounds=(ranges.p_min, ranges.p_max), model=model, unit="rad")
            if math.isfinite(limits.velocity_max):
                v = limits.velocity_max
                _within(where, "velocity limit", values=[-v, v],
                        bounds=(ranges.v_min, ranges.v_max), model=model, unit="rad/s")
            else:
                # No velocity limit: the wire range bounds the joint's speed (the base class's
                # _carried_bound), so the moves at the configured speed must fit it too.
                v = array.config_speeds[i]
                _within(where, "configured speed", values=[-v, v],
                        bounds=(ranges.v_min, ranges.v_max), model=model, unit="rad/s")
            if math.isfinite(limits.effort_max):
                e = limits.effort_max
                _within(where, "effort limit", values=[-e, e],
                        bounds=(ranges.t_min, ranges.t_max), model=model, unit="N·m")
            for name, gain, (low, high) in (
                ("kp", self.kp[i], (ranges.kp_min, ranges.kp_max)),
                ("kd", self.kd[i], (ranges.kd_min, ranges.kd_max)),
                ("safe_kd", self.safe_kd, (ranges.kd_min, ranges.kd_max)),
            ):
                if not (math.isfinite(gain) and low <= gain <= high):
                    raise ActuatorArrayConfigError(
                        f"{where}: {name} = {gain!r}; expected within the {motor.model.name!r} "
                        f"wire range [{low:g}, {high:g}]"
                    )
            kt = self.torque_constants[i]
            if not (math.isnan(kt) or (math.isfinite(kt) and kt > 0.0)):
                raise ActuatorArrayConfigError(
                    f"{where}: torque_constants = {kt!r}; expected > 0 N·m/A or NaN (unknown)"
                )

    # ------------------------------------------------------------------ derived

    @property
    def names(self) -> tuple[str, ...]:
        """Joint names in actuator order."""
        return self.array.names

    @property
    def can_ids(self) -> tuple[int, ...]:
        """CAN ids in actuator order."""
        return tuple(m.can_id for m in self.motors)

    # ------------------------------------------------------------------ builders

    @classmethod
    def from_model(
        cls,
        model: RobotModel,
        motor_models: str | Sequence[str],
        *,
        ids: Sequence[int] | None = None,
        catalog: MotorModelCatalog | None = None,
        policy: LimitPolicy = LimitPolicy.REJECT,
        **settings: Any,
    ) -> CanArrayConfig:
        """The config of ``model``'s actuated joints on motors of ``motor_models`` (one name for
        all or one per joint), CAN ids ``ids`` (default 1..N); ``settings`` are the other fields.

        Profile gains come from the robot's ``kp`` / ``kd`` parameters if it declares them
        (60 N·m/rad and 2 N·m·s/rad otherwise); torque constants from ``effort / current``
        limits where both are finite.
        """
        array = ActuatorArrayConfig.from_model(model, policy=policy)
        n = array.count
        catalog = bundled_motor_models() if catalog is None else catalog
        names = [motor_models] * n if isinstance(motor_models, str) else list(motor_models)
        if len(names) != n:
            raise ActuatorArrayConfigError(
                f"{len(names)} motor models for {n} joints; expected one for all or one per joint"
            )
        id_list = list(range(1, n + 1)) if ids is None else list(ids)
        if len(id_list) != n:
            raise ActuatorArrayConfigError(
                f"{len(id_list)} CAN ids for {n} joints ({', '.join(array.names)}); expected "
                "one per joint in actuator order"
            )
        try:
            motors = tuple(
                CanMotor(joint, can_id, catalog[name])
                for joint, can_id, name in zip(array.names, id_list, names, strict=True)
            )
        except MotorModelError as exc:
            raise ActuatorArrayConfigError(str(exc)) from None
        declared = {p.name for p in model.parameters}
        kp = float(model.parameter("kp").default) if "kp" in declared else _DEFAULT_KP
        kd = float(model.parameter("kd").default) if "kd" in declared else _DEFAULT_KD
        kt = tuple(
            lim.effort_max / lim.current_max
            if math.isfinite(lim.effort_max) and math.isfinite(lim.current_max)
            else math.nan
            for lim in array.limits
        )
        return cls(
            array=array,
            motors=motors,
            kp=(kp,) * n,
            kd=(kd,) * n,
            torque_constants=kt,
            robot=model,
            **settings,
        )

    @classmethod
    def from_url(cls, url: DriverURL) -> CanArrayConfig:
        """The config a ``can://<interface>/<channel>?...`` URL describes (module docstring)."""
        if not url.host:
            raise DriverURLError(
                f"driver URL {url.text!r}: no interface; expected can://<interface>/<channel>, "
                "e.g. can://socketcan/can0 or can://virtual/test"
            )
        if not url.path or "/" in url.path:
            raise DriverURLError(
                f"driver URL {url.text!r}: channel {url.path!r}; expected one channel name, "
                "e.g. can://socketcan/can0"
            )
        config_path = url.option("config")
        if config_path is not None:
            others = sorted(set(url.options) - {"config"})
            if others:
                raise DriverURLError(
                    f"driver URL {url.text!r}: options {', '.join(others)} given with config=; "
                    "put them in the file instead"
                )
            options, base = _read_file(url.text, Path(config_path))
        else:
            url.unknown_options(set(OPTIONS))
            options, base = dict(url.options), None
        return _from_options(url.text, url.host, url.path, options, base)


# --------------------------------------------------------------------------------------------
# Parsing (one path for URL strings and YAML values)
# --------------------------------------------------------------------------------------------


def _positive(name: str, value: object, *, upper: float = math.inf) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not (
        math.isfinite(value) and 0.0 < value <= upper
    ):
        raise ActuatorArrayConfigError(
            f"{name} = {value!r}; expected a finite number > 0"
            + (f" and <= {upper:g}" if math.isfinite(upper) else "")
        )


def _within(
    where: str,
    what: str,
    *,
    values: Sequence[float],
    bounds: tuple[float, float],
    model: str,
    unit: str,
) -> None:
    low, high = bounds
    if min(values) < low or max(values) > high:
        raise ActuatorArrayConfigError(
            f"{where}: {what} [{min(values):g}, {max(values):g}] {unit} exceeds the motor model "
            f"{model!r} wire range [{low:g}, {high:g}] {unit}"
        )


def _read_file(url_text: str, path: Path) -> tuple[dict[str, object], Path]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DriverURLError(f"driver URL {url_text!r}: cannot read config {path}: {exc}") from None
    except yaml.YAMLError as exc:
        raise DriverURLError(f"driver URL {url_text!r}: config {path} is not YAML: {exc}") from None
    if not isinstance(data, Mapping):
        raise DriverURLError(
            f"driver URL {url_text!r}: config {path} holds {type(data).__name__}; expected a "
            "mapping of options"
        )
    unknown = sorted(str(k) for k in data if k not in OPTIONS)
    if unknown:
        raise DriverURLError(
            f"config {path}: unknown option(s) {', '.join(unknown)}; accepted: "
            + ", ".join(sorted(OPTIONS))
        )
    return {str(k): v for k, v in data.items()}, path.parent


def _from_options(
    text: str, interface: str, channel: str, options: Mapping[str, object], base: Path | None
) -> CanArrayConfig:
    def fail(key: str, value: object, expected: str) -> DriverURLError:
        return DriverURLError(f"driver URL {text!r}: {key}={value!r}; expected {expected}")

    def as_list(key: str) -> list[str] | None:
        value = options.get(key)
        if value is None:
            return None
        if isinstance(value, str):
            items = [v.strip() for v in value.split(",")]
        elif isinstance(value, list):
            items = [str(v).strip() for v in value]
        else:
            raise fail(key, value, "a comma-separated list")
        if not items or any(not v for v in items):
            raise fail(key, value, "a comma-separated list without empty entries")
        return items

    def number(key: str, default: float) -> float:
        value = options.get(key)
        if value is None:
            return default
        try:
            if isinstance(value, bool) or not isinstance(value, str | int | float):
                raise ValueError
            result = float(value)
        except ValueError:
            raise fail(key, value, "a number") from None
        if not math.isfinite(result):
            raise fail(key, value, "a finite number")
        return result

    def integer(key: str) -> int | None:
        value = options.get(key)
        if value is None:
            return None
        try:
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError
            return int(str(value), 0) if isinstance(value, str) else int(value)  # type: ignore[call-overload]
        except (TypeError, ValueError):
            raise fail(key, value, "a whole number") from None

    def path_of(value: str) -> Path | str:
        if base is not None and (value.endswith((".yaml", ".yml")) or "/" in value):
            candidate = Path(value)
            return candidate if candidate.is_absolute() else base / candidate
        return value

    robot_name = options.get("robot")
    if robot_name is None:
        raise DriverURLError(
            f"driver URL {text!r}: missing robot=; name a bundled robot (e.g. robot=hb50) or a "
            "robot file for the joint names, order and limits"
        )
    try:
        robot = load_robot(path_of(str(robot_name)))
    except (ModelError, OSError) as exc:
        raise fail("robot", robot_name, f"a bundled robot or a robot file ({exc})") from None
    models = as_list("model")
    if models is None:
        raise DriverURLError(
            f"driver URL {text!r}: missing model=; name the motor model (e.g. model=md80) so the "
            "wire ranges are right"
        )
    catalog: MotorModelCatalog | None = None
    if options.get("models") is not None:
        try:
            catalog = load_motor_models(path_of(str(options["models"])))
        except (MotorModelError, OSError) as exc:
            raise fail("models", options["models"], f"a motor-model file ({exc})") from None
    ids: list[int] | None = None
    id_texts = as_list("ids")
    if id_texts is not None:
        try:
            ids = [int(v, 0) for v in id_texts]
        except ValueError:
            raise fail("ids", options["ids"], "CAN ids as whole numbers, e.g. 1,2,3") from None
    policy_text = str(options.get("policy", "reject")).strip().lower()
    try:
        policy = LimitPolicy[policy_text.upper()]
    except KeyError:
        raise fail("policy", options["policy"], "reject or saturate") from None
    settings: dict[str, Any] = {
        "interface": interface,
        "channel": channel,
        "reply_timeout_s": number("timeout", math.nan),
        "period_s": number("period", 0.002),
        "safe_kd": number("safe_kd", 1.0),
    }
    for key, name in (("lost_after", "lost_after"), ("host_id", "host_id"), ("bitrate", "bitrate")):
        value = integer(key)
        if value is not None:
            settings[name] = value
    try:
        return CanArrayConfig.from_model(
            robot, models if len(models) > 1 else models[0], ids=ids, catalog=catalog,
            policy=policy, **settings,
        )
    except ActuatorArrayConfigError as exc:
        raise DriverURLError(f"driver URL {text!r}: {exc}") from None
