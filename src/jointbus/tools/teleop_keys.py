"""Keyboard teleoperation: ``teleop_twist_keyboard``'s key map and the held-key → Twist stream.

Where it sits: :mod:`jointbus.tools`, above :mod:`jointbus.bus` and :mod:`jointbus.messages`;
``jointbus teleop`` (:mod:`jointbus.cli.teleop`) and the terminal monitor
(:mod:`jointbus.tools.monitor.app`) both drive the robot through it, so the keys and the
behaviour are the same in both. It publishes the *normalised* ``geometry_msgs/msg/Twist`` that
``/<ns>/velocity_command`` carries (:mod:`jointbus.robots.hb50.messages.velocity_command`:
components in [-1, 1], ``linear.z`` the walking height as a fraction of the reference height).

Keys (``teleop_twist_keyboard``'s layout; capitals strafe instead of turning)::

    u  i  o        U  I  O        i / ,   forward / back
    j  k  l        J  K  L        j / l   turn left / right (J / L: sideways)
    m  ,  .        M  <  >        u o m . forward or back while turning (or strafing)
                                  k       stop
    q / z  all speeds ×1.1 / ×0.9     w / x  linear only     e / c  turning only
    t / b  walking height up / down (fraction of the reference height, 0.05 to 1)

The height is *not commanded* until ``t`` or ``b`` is pressed: ``linear.z`` is 0, which on
``/<ns>/velocity_command`` means "keep the current height" (what every plain ROS Twist and
``teleop_twist_keyboard`` sends), so driving never moves the body to the reference height the
user did not ask for. The first ``t`` / ``b`` steps from the reference height (1.0 → 1.0 / 0.95).

Why a *release* timeout: a terminal reports key presses, never releases. A held key repeats
(typically after 0.25–0.5 s, then ≈ 30 times a second), so when no key came for ``release``
seconds (default 0.6 s) the key counts as released and the command drops to zero — the robot stops
when you let go, as ``teleop_twist_keyboard`` does with its ``key_timeout``.

:class:`TwistStream` republishes the command at ``rate_hz`` (default 20, at least 10) on its own
thread whether or not a key arrived, so the control node's command timeout never mistakes a held
key for a dead joystick, and a busy UI thread cannot starve it. Two idle behaviours:

- ``publish_idle=True`` (``jointbus teleop``, a program whose only job is teleoperation): zero
  commands keep flowing while no key is held, as ``teleop_twist_keyboard`` does;
- ``publish_idle=False`` (the monitor, a *viewer* that also drives): it publishes only while a
  motion key is held, then :data:`ZERO_REPEATS` zero commands (best-effort QoS: more than one) and
  falls silent, so an open monitor never fights another source of velocity commands
  (``jointbus teleop`` or ``topic pub`` in another terminal) with zeros.

Either way :meth:`TwistStream.release` (focus lost) and :meth:`TwistStream.close` (exit) send the
zero command at once.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from jointbus.bus import Publisher
from jointbus.messages.geometry_msgs import Twist, Vector3

__all__ = [
    "DEFAULT_RATE_HZ",
    "DEFAULT_RELEASE_S",
    "HEIGHT_KEYS",
    "HEIGHT_STEP",
    "KEY_HELP",
    "MIN_RATE_HZ",
    "MOVE_KEYS",
    "SPEED_KEYS",
    "TELEOP_KEYS",
    "ZERO_REPEATS",
    "TeleopKeys",
    "TwistStream",
]

#: key → (forward, sideways, turn), each −1, 0 or 1 (teleop_twist_keyboard's table).
MOVE_KEYS: Final[dict[str, tuple[int, int, int]]] = {
    "i": (1, 0, 0),
    "o": (1, 0, -1),
    "j": (0, 0, 1),
    "l": (0, 0, -1),
    "u": (1, 0, 1),
    ",": (-1, 0, 0),
    ".": (-1, 0, 1),
    "m": (-1, 0, -1),
    "O": (1, -1, 0),
    "I": (1, 0, 0),
    "J": (0, 1, 0),
    "L": (0, -1, 0),
    "U": (1, 1, 0),
    "<": (-1, 0, 0),
    ">": (-1, -1, 0),
    "M": (-1, 1, 0),
}
#: key → (factor on the linear scale, factor on the turning scale).
SPEED_KEYS: Final[dict[str, tuple[float, float]]] = {
    "q": (1.1, 1.1),
    "z": (0.9, 0.9),
    "w": (1.1, 1.0),
    "x": (0.9, 1.0),
    "e": (1.0, 1.1),
    "c": (1.0, 0.9),
}
#: key → step of the height fraction.
HEIGHT_STEP: Final = 0.05
HEIGHT_KEYS: Final[dict[str, float]] = {"t": HEIGHT_STEP, "b": -HEIGHT_STEP}
#: Every key teleoperation takes (``k`` and space stop).
TELEOP_KEYS: Final = frozenset({*MOVE_KEYS, *SPEED_KEYS, *HEIGHT_KEYS, "k", " "})
#: One line for the user.
KEY_HELP: Final = (
    "u i o / j k l / m , . move (capitals strafe), k stop, "
    "q/z speed, w/x linear, e/c turn, t/b height"
)
#: Publishing rate (Hz) by default, and the least one allowed (the control node's arbitration
#: and command timeout expect ≥ 10 Hz).
DEFAULT_RATE_HZ: Final = 20.0
MIN_RATE_HZ: Final = 10.0
#: Seconds without a key after which a held key counts as released.
DEFAULT_RELEASE_S: Final = 0.6
#: Zero commands sent on release / exit (one per period; best effort QoS may drop one).
ZERO_REPEATS: Final = 3


@dataclass
class TeleopKeys:
    """The keyboard state: scales (normalised, 0 … 1), the held motion and the height fraction.

    :meth:`press` takes one key at time ``now`` (s, monotonic), :meth:`twist` is the command at
    time ``now`` (zero motion once ``release`` s passed without a key). ``height`` is the walking
    height as a fraction of the reference height, or ``None`` (the default) while no height key
    was pressed: the commands then carry ``linear.z = 0``, "height not commanded".
    """

    linear_scale: float = 0.5
    angular_scale: float = 0.5
    height: float | None = None
    release: float = DEFAULT_RELEASE_S
    _motion: tuple[int, int, int] = (0, 0, 0)
    _last_key: float = -math.inf

    def press(self, key: str, now: float) -> str | None:
        """Apply ``key``; returns a line for the user when a scale or the height changed."""
        if key in MOVE_KEYS:
            self._motion = MOVE_KEYS[key]
            self._last_key = now
            return None
        if key in SPEED_KEYS:
            lin, ang = SPEED_KEYS[key]
            self.linear_scale = min(1.0, self.linear_scale * lin)
            self.angular_scale = min(1.0, self.angular_scale * ang)
            return f"speed {self.linear_scale:.2f}  turn {self.angular_scale:.2f}"
        if key in HEIGHT_KEYS:
            # never 0: on /velocity_command z = 0 means "height not commanded" (the robot keeps
            # its height), so the lowest step is HEIGHT_STEP (the robot clamps it to its range)
            # the first height key steps from the reference height (1.0)
            start = 1.0 if self.height is None else self.height
            self.height = min(1.0, max(HEIGHT_STEP, round(start + HEIGHT_KEYS[key], 6)))
            return f"height {self.height:.2f} of the reference"
        self._motion = (0, 0, 0)  # k, space, anything else: stop
        return None

    def moving(self, now: float) -> bool:
        """True while a motion key is held (pressed within ``release`` s)."""
        return self._motion != (0, 0, 0) and now - self._last_key <= self.release

    def twist(self, now: float) -> Twist:
        """The normalised velocity command now."""
        fwd, side, turn = self._motion if self.moving(now) else (0, 0, 0)
        return Twist(
            Vector3(fwd * self.linear_scale, side * self.linear_scale, self._height_z()),
            Vector3(0.0, 0.0, turn * self.angular_scale),
        )

    def stop(self) -> Twist:
        """Drop the held motion; the zero command (at the commanded height, if any)."""
        self._motion = (0, 0, 0)
        return Twist(Vector3(0.0, 0.0, self._height_z()), Vector3())

    def _height_z(self) -> float:
        """``linear.z``: the height fraction, or 0 ("height not commanded") before a height key."""
        return 0.0 if self.height is None else self.height

    def describe(self, now: float) -> str:
        """The command now and the scales, for a status line."""
        tw = self.twist(now)
        return (
            f"fwd {tw.linear.x:+.2f}  side {tw.linear.y:+.2f}  turn {tw.angular.z:+.2f}  "
            f"(speed {self.linear_scale:.2f}, turn {self.angular_scale:.2f}, "
            f"height {'as is' if self.height is None else format(self.height, '.2f')})"
        )


class TwistStream:
    """Publishes :class:`TeleopKeys`' command on ``publisher`` at ``rate_hz`` from its own thread.

    See the module docstring for ``publish_idle``. Thread-safe: :meth:`press` may come from a UI
    thread while the stream publishes. ``clock`` is the monotonic clock in s. Raises
    :class:`ValueError` for a rate below :data:`MIN_RATE_HZ` (or not finite).
    """

    def __init__(
        self,
        publisher: Publisher[Twist],
        keys: TeleopKeys | None = None,
        *,
        rate_hz: float = DEFAULT_RATE_HZ,
        publish_idle: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not (math.isfinite(rate_hz) and rate_hz >= MIN_RATE_HZ):
            raise ValueError(f"teleop rate_hz = {rate_hz!r}; expected ≥ {MIN_RATE_HZ} Hz")
        self.publisher = publisher
        self.keys = keys if keys is not None else TeleopKeys()
        self.period = 1.0 / rate_hz
        self.publish_idle = publish_idle
        self.clock = clock
        self.published = 0
        """Commands published so far."""
        self._lock = threading.Lock()
        self._zeros_left = 0
        self._closed = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="teleop-stream", daemon=True)
        self._thread.start()

    def press(self, key: str) -> str | None:
        """Take one key (see :meth:`TeleopKeys.press`)."""
        with self._lock:
            return self.keys.press(key, self.clock())

    def release(self) -> None:
        """Drop the held key at once (focus lost) and send the zero command."""
        with self._lock:
            if self._closed:
                return
            zero = self.keys.stop()
            self._zeros_left = ZERO_REPEATS - 1
        self._publish(zero)

    def describe(self) -> str:
        """The command now and the scales (see :meth:`TeleopKeys.describe`)."""
        with self._lock:
            return self.keys.describe(self.clock())

    def _publish(self, twist: Twist) -> None:
        self.publisher.publish(twist)
        self.published += 1

    def _next(self) -> Twist | None:
        """What to publish this period (None: nothing)."""
        with self._lock:
            now = self.clock()
            if self.keys.moving(now):
                self._zeros_left = ZERO_REPEATS
                return self.keys.twist(now)
            if self.publish_idle:
                return self.keys.twist(now)
            if self._zeros_left > 0:  # just released: zero, a few times, then silence
                self._zeros_left -= 1
                return self.keys.twist(now)
            return None

    def _run(self) -> None:
        next_send = time.monotonic()
        while not self._stop.is_set():
            twist = self._next()
            if twist is not None:
                self._publish(twist)
            next_send += self.period
            now = time.monotonic()
            if next_send < now:  # fell behind (a stalled process): no burst
                next_send = now + self.period
            self._stop.wait(next_send - now)

    def close(self) -> None:
        """Stop the thread and send the zero command :data:`ZERO_REPEATS` times. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=5.0)
        zero = self.keys.stop()
        for i in range(ZERO_REPEATS):
            if i:
                time.sleep(self.period)
            self._publish(zero)

    def __enter__(self) -> TwistStream:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
