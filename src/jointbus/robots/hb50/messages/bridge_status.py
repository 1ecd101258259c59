"""The bridge's owner, mode, e-stop and the other facts it states in ``BridgeState.status``.

Where it sits: :mod:`jointbus.robots.hb50.messages`, beside
:class:`~jointbus.robots.hb50.messages.BridgeState`,
below the bridge node that writes these facts and the control node, monitor, stack summary and CLI
that read them. Why one module: the wire message stays Honey Badger's (``status`` is a list of free
strings, seed 001), so the facts travel as ``key: value`` text; written in one place and parsed in
several, the text drifts (a reader that looks for ``"estop: "`` silently stops seeing the e-stop if
the writer changes a space). Here :meth:`BridgeStatus.to_strings` is the only writer and
:meth:`BridgeStatus.parse` the only reader, and a property test holds them to each other.

The strings, in the order the bridge publishes them::

    owner: <source node>                      the command source that owns the robot
    mode: <estop|off|idle|hold|safe|run>      what the bridge writes this cycle
    publish: <text>                           the bridge's publish-rate report (optional)
    pace: real-time factor <f>, frames <hz> Hz, commands <hz> Hz, command age p99 <n> cycles
                                              simulated (or hardware) time per wall-clock second,
                                              frames published and commands received per second,
                                              and how many cycles old (by their stamps) the
                                              owner's commands were when applied ('-': none)
    estop: <reason>                           only while the e-stop is latched
    estop stop: <category and what it does>   only while latched: ``category 0 (STO): ...``
                                              or ``category 1: damping ... then drives off``
    fallback: <phase>                         only while the bridge's fallback drives the
                                              robot (its owner stalled or died): ``stance``,
                                              ``hold``, ``sit``, ``sat`` or ``down`` (hb50's),
                                              ``damping`` (the generic one)
    reentry: ramping from the measured pose   only while re-entering run from safe/hold
    thermal <WARN|ERROR>: <joint> (index <i>) one per joint that is not thermally OK

Any other string (a future key, a hardware message) is kept verbatim in :attr:`BridgeStatus.other`.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from jointbus.robots.hb50.messages.bridge_state import BridgeState


class BridgeMode(enum.Enum):
    """What the bridge writes this cycle (highest priority first): the value of ``mode:``.

    ``estop``: the latched e-stop (damping, drives off); ``off``: drives off; ``idle``: no
    impedance stream (a one-shot Player or Rock command told the array what to do last);
    ``hold``: holding the measured pose before the first command; ``safe``: the watchdog's
    damping; ``run``: the owner's commands. The values are the array node's
    :class:`~jointbus.nodes.array.StreamMode` (the bridge is an array node).
    """

    ESTOP = "estop"
    OFF = "off"
    IDLE = "idle"
    HOLD = "hold"
    SAFE = "safe"
    RUN = "run"


#: The text of the re-entry ramp's string (after ``reentry: ``).
REENTRY_RAMPING: Final = "ramping from the measured pose"

_PACE = re.compile(
    r"real-time factor (?P<rtf>\d+\.\d{3}), frames (?P<frames>\d+\.\d) Hz, "
    r"commands (?P<commands>\d+\.\d) Hz, command age p99 (?P<age>\d+|-) cycles"
)
_THERMAL = re.compile(r"thermal (?P<level>[A-Z]+): (?P<joint>.*) \(index (?P<index>\d+)\)")


@dataclass(frozen=True, slots=True)
class ThermalNote:
    """One joint that is not thermally OK: ``level`` (``WARN`` / ``ERROR``), its name and index."""

    level: str
    joint: str
    index: int

    def to_string(self) -> str:
        """``thermal WARN: knee_fl (index 2)``."""
        return f"thermal {self.level}: {self.joint} (index {self.index})"


@dataclass(frozen=True, slots=True)
class BridgeStatus:
    """The facts of one ``BridgeState.status``, typed.

    ``owner``: the owning command source ('' when not stated); ``mode``: ``None`` when not stated
    or not a known mode; ``estop_reason``: ``None`` unless the e-stop is latched; ``publish``: the
    publish-rate report's text ('' when absent); ``reentry_ramping``: re-entering run from
    safe/hold; ``thermal``: the joints not thermally OK; ``other``: every other string, verbatim.
    """

    owner: str = ""
    mode: BridgeMode | None = None
    estop_reason: str | None = None
    publish: str = ""
    reentry_ramping: bool = False
    thermal: tuple[ThermalNote, ...] = ()
    other: tuple[str, ...] = ()
    real_time_factor: float | None = None
    """Seconds of the robot's time (a stepped simulator's; 1 for hardware) per wall-clock second
    over the last publish window, to 3 decimals; ``None``: not stated."""
    frame_rate_hz: float | None = None
    """``BridgeData`` frames published per second of the wall clock over that window (Hz, 1
    decimal)."""
    command_rate_hz: float | None = None
    """``JointCommand`` samples received per second over that window (Hz, 1 decimal)."""
    command_age_p99_cycles: int | None = None
    """99th percentile, over that window, of the age of each applied command in cycles: the
    cycle's stamp minus the stamp of the frame the command answers (``None``: none applied)."""
    fallback: str | None = None
    """The fallback's phase while it drives the robot (``None``: no fallback runs)."""
    estop_stop: str | None = None
    """What the latched e-stop does to the drives: its stop category (``None``: not stated)."""

    @property
    def estop_latched(self) -> bool:
        """The e-stop is latched: its reason is stated, or the mode is ``estop``."""
        return self.estop_reason is not None or self.mode is BridgeMode.ESTOP

    def to_strings(self) -> tuple[str, ...]:
        """The status strings the bridge publishes (the module docstring's order)."""
        strings = [f"owner: {self.owner}"]
        if self.mode is not None:
            strings.append(f"mode: {self.mode.value}")
        if self.publish:
            strings.append(f"publish: {self.publish}")
        pace = self.pace_string()
        if pace:
            strings.append(pace)
        if self.estop_reason is not None:
            strings.append(f"estop: {self.estop_reason}")
        if self.estop_stop is not None:
            strings.append(f"estop stop: {self.estop_stop}")
        if self.fallback is not None:
            strings.append(f"fallback: {self.fallback}")
        if self.reentry_ramping:
            strings.append(f"reentry: {REENTRY_RAMPING}")
        strings.extend(self.thermal_strings())
        strings.extend(self.other)
        return tuple(strings)

    def pace_string(self) -> str:
        """``pace: real-time factor 0.998, frames 499.8 Hz, commands 499.5 Hz`` ('' unless all
        three are stated)."""
        if None in (self.real_time_factor, self.frame_rate_hz, self.command_rate_hz):
            return ""
        age = "-" if self.command_age_p99_cycles is None else str(self.command_age_p99_cycles)
        return (
            f"pace: real-time factor {self.real_time_factor:.3f}, "
            f"frames {self.frame_rate_hz:.1f} Hz, commands {self.command_rate_hz:.1f} Hz, "
            f"command age p99 {age} cycles"
        )

    def thermal_strings(self) -> tuple[str, ...]:
        """One ``thermal <LEVEL>: <joint> (index <i>)`` line per joint not thermally OK."""
        return tuple(note.to_string() for note in self.thermal)

    def detail_strings(self) -> tuple[str, ...]:
        """What a display lists besides owner, mode, e-stop and thermal: the publish-rate
        report, the re-entry ramp and every other string, as published."""
        strings = [f"publish: {self.publish}"] if self.publish else []
        pace = self.pace_string()
        if pace:
            strings.append(pace)
        if self.estop_stop is not None:
            strings.append(f"estop stop: {self.estop_stop}")
        if self.fallback is not None:
            strings.append(f"fallback: {self.fallback}")
        if self.reentry_ramping:
            strings.append(f"reentry: {REENTRY_RAMPING}")
        return (*strings, *self.other)

    @classmethod
    def parse(cls, strings: Iterable[str]) -> BridgeStatus:
        """The facts in ``strings`` (a ``BridgeState.status``); unknown strings go to ``other``."""
        owner = publish = ""
        mode: BridgeMode | None = None
        estop_reason: str | None = None
        ramping = False
        rtf: float | None = None
        frames: float | None = None
        commands: float | None = None
        age: int | None = None
        fallback: str | None = None
        estop_stop: str | None = None
        thermal: list[ThermalNote] = []
        other: list[str] = []
        for text in strings:
            key, sep, value = text.partition(": ")
            if not sep:
                other.append(text)
            elif key == "owner":
                owner = value
            elif key == "mode" and value in _MODES:
                mode = _MODES[value]
            elif key == "publish":
                publish = value
            elif key == "estop":
                estop_reason = value
            elif key == "estop stop":
                estop_stop = value
            elif key == "fallback":
                fallback = value
            elif key == "reentry" and value == REENTRY_RAMPING:
                ramping = True
            elif key == "pace" and (pace := _PACE.fullmatch(value)) is not None:
                rtf, frames = float(pace["rtf"]), float(pace["frames"])
                commands = float(pace["commands"])
                age = None if pace["age"] == "-" else int(pace["age"])
            elif (match := _THERMAL.fullmatch(text)) is not None:
                thermal.append(ThermalNote(match["level"], match["joint"], int(match["index"])))
            else:
                other.append(text)
        return cls(
            owner, mode, estop_reason, publish, ramping, tuple(thermal), tuple(other),
            rtf, frames, commands, age, fallback, estop_stop,
        )

    @classmethod
    def of(cls, state: BridgeState) -> BridgeStatus:
        """The facts of ``state.status``.

        The control node asks this three or four times per 500 Hz step (owner, drives, re-entry,
        hand-back) of a status that changes about once a second; a parse costs ≈ 5 µs, the
        comparison with the last one ≈ 0.07 µs. So the last answer is kept (one entry, replaced
        whole: safe across threads; the facts are immutable)."""
        global _LAST_OF
        strings = tuple(state.status)
        last = _LAST_OF
        if last is not None and last[0] == strings:
            return last[1]
        facts = cls.parse(strings)
        _LAST_OF = (strings, facts)
        return facts


#: The last ``BridgeStatus.of``: (status strings, their facts).
_LAST_OF: tuple[tuple[str, ...], BridgeStatus] | None = None


_MODES: Final = {mode.value: mode for mode in BridgeMode}

__all__ = ["REENTRY_RAMPING", "BridgeMode", "BridgeStatus", "ThermalNote"]
