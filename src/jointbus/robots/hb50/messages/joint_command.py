"""``hb50_commons/msg/JointCommand``: impedance targets for every actuator, in actuator order.

Where it sits: :mod:`jointbus.robots.hb50.messages`. The control node and user controllers publish
it on
``/hb50/joint_command`` (up to 500 Hz); the bridge arbitrates between publishers and applies the
winner. Field names, order and wire types are exactly Honey Badger 5.0's (seed 001).

Each actuator follows the impedance law ``τ = t_trq + kp·(t_pos − p) + kd·(t_vel − v)``, so the
units are: ``kp`` N·m/rad, ``kd`` N·m·s/rad, ``t_pos`` rad, ``t_vel`` rad/s, ``t_trq`` N·m;
``brake`` engages a joint's brake. ``ki`` is reserved by the robot (not used by the drives) but
still travels on the wire, so it follows the same rules.

Rules, checked on construction *and* on decode, so a bad command never reaches a driver:

- ``name`` entries are non-empty and unique;
- every array (``kp, ki, kd, t_pos, t_vel, t_trq, brake``) has exactly one entry per name;
- every number is finite and within float32 range (|x| ≤ 3.4e38): a NaN target has no safe meaning;
- ``kp ≥ 0`` and ``kd ≥ 0``: a negative gain pushes the joint *away* from its target.

Errors name the joint and its index, the field, the value and the rule, e.g.
``hb50_commons/msg/JointCommand: joint 'fr_j1' (index 1): field 'kp' = -3.0; expected ≥ 0``.
Whether the names match the robot's configured actuator order is the bridge's check (it knows the
robot); this module only knows the message. Floats are rounded to float32 on construction.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, NamedTuple, Self

import numpy as np
import numpy.typing as npt

from jointbus.codec.rules import WireRule
from jointbus.codec.wire import BoolSeq, Float32Seq, String, StringSeq
from jointbus.messages.base import Message
from jointbus.messages.errors import LimitError, UnknownJointError, ValidationError
from jointbus.messages.std_msgs import Header
from jointbus.robots.hb50.messages._arrays import (
    NamesMemo,
    bool_tuple,
    float32_tuple,
    names_tuple,
)
from jointbus.robots.hb50.messages.command_fields import CommandFields, command_fields

_GAIN_FIELDS = ("kp", "kd")
_FLOAT_FIELDS = ("kp", "ki", "kd", "t_pos", "t_vel", "t_trq")


class JointTarget(NamedTuple):
    """One actuator's command taken from a :class:`JointCommand` (SI units)."""

    name: str
    joint_index: int
    kp: float  # N·m/rad
    ki: float  # reserved
    kd: float  # N·m·s/rad
    t_pos: float  # rad
    t_vel: float  # rad/s
    t_trq: float  # N·m
    brake: bool


def _per_joint(field_name: str, value: float | Sequence[float], n: int) -> Sequence[float]:
    """Broadcast a scalar gain to every joint; sequences are left for the constructor to check."""
    if isinstance(value, bool):
        raise ValidationError(JointCommand.TYPE_NAME, field_name, value, "a real number")
    if isinstance(value, int | float):
        return (float(value),) * n
    return value


@dataclass(frozen=True, slots=True)
class JointCommand(Message):
    """Impedance targets and gains for each named actuator (see the module docstring for rules)."""

    TYPE_NAME: ClassVar[str] = "hb50_commons/msg/JointCommand"
    #: The bridge's command check refuses an empty ``source_node`` (it cannot be ranked).
    RECEIVER_REQUIRES: ClassVar[tuple[tuple[str, str], ...]] = (
        ("source_node", "a non-empty node name (arbitration ranks commands by their source)"),
    )
    #: What a decoded number can break (names and lengths are checked once per cached layout).
    WIRE_RULES: ClassVar[Mapping[str, WireRule]] = {
        "kp": WireRule(finite=True, ge=0.0),
        "ki": WireRule(finite=True),
        "kd": WireRule(finite=True, ge=0.0),
        "t_pos": WireRule(finite=True),
        "t_vel": WireRule(finite=True),
        "t_trq": WireRule(finite=True),
    }
    header: Header = field(default_factory=Header)
    source_node: String = ""  # name of the commanding node
    name: StringSeq = ()
    kp: Float32Seq = ()  # N·m/rad, ≥ 0
    ki: Float32Seq = ()  # reserved
    kd: Float32Seq = ()  # N·m·s/rad, ≥ 0
    t_pos: Float32Seq = ()  # rad
    t_vel: Float32Seq = ()  # rad/s
    t_trq: Float32Seq = ()  # N·m
    brake: BoolSeq = ()

    def __post_init__(self) -> None:
        tn = self.TYPE_NAME
        if type(self.header) is not Header:
            raise ValidationError(tn, "header", self.header, "a std_msgs Header")
        if type(self.source_node) is not str:
            raise ValidationError(tn, "source_node", self.source_node, "a str (node name)")
        names = names_tuple(tn, "name", self.name)
        setattr_ = object.__setattr__
        setattr_(self, "name", names)
        for name in _FLOAT_FIELDS:
            setattr_(
                self, name, float32_tuple(tn, name, getattr(self, name), names, names_field="name")
            )
        for name in _GAIN_FIELDS:
            gains: tuple[float, ...] = getattr(self, name)
            if gains and min(gains) < 0.0:
                index = next(i for i, g in enumerate(gains) if g < 0.0)
                raise LimitError(tn, name, gains[index], "≥ 0", joint=names[index], index=index)
        setattr_(self, "brake", bool_tuple(tn, "brake", self.brake, names, names_field="name"))

    # -- construction ------------------------------------------------------------------------

    @classmethod
    def hold(
        cls,
        names: Iterable[str],
        positions: Iterable[float],
        kp: float | Sequence[float],
        kd: float | Sequence[float],
        *,
        header: Header | None = None,
        source_node: str = "",
    ) -> Self:
        """Hold each joint at ``positions`` (rad) with stiffness ``kp`` and damping ``kd``.

        ``kp`` / ``kd`` are one value for every joint or one per joint; target velocity and
        feed-forward torque are zero and brakes released.
        """
        names_t = tuple(names)
        n = len(names_t)
        zeros = (0.0,) * n
        return cls(
            header if header is not None else Header(),
            source_node,
            names_t,
            _per_joint("kp", kp, n),  # type: ignore[arg-type]
            zeros,
            _per_joint("kd", kd, n),  # type: ignore[arg-type]
            positions,  # type: ignore[arg-type]
            zeros,
            zeros,
            (False,) * n,
        )

    @classmethod
    def damping(
        cls,
        names: Iterable[str],
        kd: float | Sequence[float],
        *,
        header: Header | None = None,
        source_node: str = "",
    ) -> Self:
        """Zero stiffness, damping ``kd`` towards zero velocity: the safe-mode command.

        With ``kp = 0`` and ``t_vel = t_trq = 0`` each actuator only resists motion
        (``τ = −kd·v``), so a robot that lost its controller is damped on its way down instead of
        collapsing freely or fighting a stale target (the hb50 standing in safe mode reaches
        0.10 m after ≈ 1.9 s: docs/SAFETY.md).
        """
        names_t = tuple(names)
        n = len(names_t)
        zeros = (0.0,) * n
        return cls(
            header if header is not None else Header(),
            source_node,
            names_t,
            zeros,
            zeros,
            _per_joint("kd", kd, n),  # type: ignore[arg-type]
            zeros,
            zeros,
            zeros,
            (False,) * n,
        )

    @classmethod
    def from_joint_arrays(
        cls,
        header: Header,
        source_node: str,
        name: tuple[str, ...],
        *,
        kp: npt.NDArray[np.float64],
        kd: npt.NDArray[np.float64],
        t_pos: npt.NDArray[np.float64],
        t_vel: npt.NDArray[np.float64],
        t_trq: npt.NDArray[np.float64],
    ) -> JointCommand:
        """A controller's command from its arrays (N·m/rad, N·m·s/rad, rad, rad/s, N·m; ``ki``
        zero, brakes released): the same message, with the same rules, as the constructor, built
        in one pass — the 500/1000 Hz path of a controller. The constructor checks and rounds
        seven fields one by one (14–28 µs warm for 12 joints on this VM, by the host's minute);
        here the names are checked once per tuple and the five arrays rounded to float32 in one
        pass (:mod:`.command_fields`, compiled when built: 4.4–5.5 µs in all, 8.5–8.7 µs
        without the core).

        Any value the constructor refuses (NaN, ±inf, beyond float32, a negative gain), names it
        refuses, or arrays of another shape: the constructor builds it, and raises its error
        naming the joint, index, field and value.
        """
        n = len(name)
        fields: CommandFields | None = None
        if (
            type(name) is tuple
            and (name is _NAMES.last or _NAMES.check(name))
            and type(header) is Header
            and type(source_node) is str
            and type(kp) is type(kd) is type(t_pos) is type(t_vel) is type(t_trq) is np.ndarray
            and kp.shape == kd.shape == t_pos.shape == t_vel.shape == t_trq.shape == (n,)
        ):
            fields = command_fields(kp, kd, t_pos, t_vel, t_trq)  # None: a refused value
        if fields is None:
            zeros = (0.0,) * n
            return cls(
                header, source_node, name, kp, zeros, kd, t_pos, t_vel, t_trq,  # type: ignore[arg-type]
                (False,) * n,
            )
        msg = _new(cls)
        setattr_ = object.__setattr__
        setattr_(msg, "header", header)
        setattr_(msg, "source_node", source_node)
        setattr_(msg, "name", name)
        setattr_(msg, "kp", fields[0])
        setattr_(msg, "ki", (0.0,) * n)
        setattr_(msg, "kd", fields[1])
        setattr_(msg, "t_pos", fields[2])
        setattr_(msg, "t_vel", fields[3])
        setattr_(msg, "t_trq", fields[4])
        setattr_(msg, "brake", (False,) * n)
        return msg

    # -- access ------------------------------------------------------------------------------

    def index(self, name: str) -> int:
        """Position of actuator ``name`` in the arrays (:class:`UnknownJointError` if absent)."""
        try:
            return self.name.index(name)
        except ValueError:
            raise UnknownJointError(name, self.name) from None

    def for_joint(self, name: str) -> JointTarget:
        """The command of actuator ``name`` (:class:`UnknownJointError` if absent)."""
        i = self.index(name)
        return JointTarget(
            name,
            i,
            self.kp[i],
            self.ki[i],
            self.kd[i],
            self.t_pos[i],
            self.t_vel[i],
            self.t_trq[i],
            self.brake[i],
        )


_new = object.__new__
#: The names check of the fast constructor (a controller sends one tuple: checked once).
_NAMES = NamesMemo(JointCommand.TYPE_NAME, "name")


__all__ = ["JointCommand", "JointTarget"]
