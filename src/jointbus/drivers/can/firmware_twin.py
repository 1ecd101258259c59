"""A simulated MIT-mode motor firmware: the far end of a (virtual) CAN bus, answering like motors.

Where it sits: :mod:`jointbus.drivers.can`, beside :mod:`.motor_link` (the host side). Tests and
benchmarks open two endpoints on one python-can ``virtual`` channel, give one to a
:class:`~.motor_link.MotorLink` and one to a :class:`FirmwareTwin`; the twin decodes every frame
with the same :mod:`.mit_protocol` the host uses and answers with reply frames, so the host is
exercised byte for byte exactly as on a real bus. The motors' physics is the simulator's
(:class:`jointbus.drivers.sim.actuator_model.ActuatorArrayModel` in standalone mode: impedance
law, torque and speed limits, friction, thermal protection, sensor noise), not a second model.

Firmware behaviour copied from the reference Cheetah/MIT controller:

* A motor starts in rest mode: it answers every frame but produces no torque and ignores
  commands (their control period still passes) until it receives *enter motor mode*. On
  entering, its command is reset (kp = kd = feed-forward = 0), so it does not jump to a stale
  target. *Exit motor mode* switches the drive stage off.
* *Zero position* makes the present position the motor's zero; positions in commands and replies
  are measured from it from then on.
* Every frame addressed to a motor gets one reply, sent on the host id with the motor's id in
  byte 0 — the layout (6 bytes, or 8 with temperature and error) is the motor model's.
* Replies saturate at the model's wire ranges (a real firmware cannot send more), explicitly.

Time. Two time bases, chosen by ``clock``:

* *Per command cycle* (no ``clock``, the default; for protocol tests and benchmarks): simulated time
  advances by ``control_period_s`` per *command cycle*, not by any clock: when a motor receives
  its second command since the last step, the whole array first steps one period under the
  commands it holds, and only then applies the new one. Twelve motors commanded once each per
  cycle therefore see one step per cycle, one motor commanded alone sees one step per command,
  and a test on a slow machine sees exactly the same physics as on a fast one. But the physics
  keeps pace with the wall clock only if the host exchanges exactly once per ``control_period_s``:
  a twin on the default 2 ms driven at 100 Hz moved 5× slow by the wall clock, and the
  velocities it replied were 5× the positions' change per wall-clock second.
* *Clocked* (``clock``: monotonic seconds, e.g. :func:`time.monotonic`; what
  :class:`~.twin_server.TwinServer` and ``jointbus can-twin`` use, where the twin stands in for
  real motors): every frame first advances the physics by the clock's time since the last step,
  under the commands the motors held during it, so positions and velocities agree with the clock
  at any exchange rate. The step is clamped to ``max_step_s`` (default
  :data:`PHYSICS_STEP_MAX_S`, 50 ms, as the ``can://`` driver clamps its profile step): after a
  stall of the host or of the twin's thread the motors go on from where they were instead of
  jumping ahead by the stall, and a host exchanging less often than that sees the physics slowed
  down, never sped up. Frames within :data:`_STEP_MIN_S` (1 ms) of the last step do not step
  again, so the frames of one exchange see one state (and one reply encoding). The model cuts
  each step into mechanical substeps of at most its ``max_substep`` (0.5 ms), so a long step
  integrates as stably as many short ones.

Each reply reports the state at the moment the frame was handled (the newest command acts from
the next step).

Fault injection: :meth:`FirmwareTwin.drop_replies` (the motor acts on commands but its replies are
lost, like a broken transmit line), :meth:`FirmwareTwin.set_silent` (every motor stops reacting
and answering, like a powered-off bus segment) and :meth:`FirmwareTwin.set_error_code` (the error
byte models with an extended reply send).

Run it stepped (:meth:`FirmwareTwin.process_pending`, deterministic, for protocol tests) or on its
own thread (:meth:`FirmwareTwin.start` / :meth:`FirmwareTwin.stop`, needed when a
:class:`~.motor_link.MotorLink` in the same thread blocks waiting for replies).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Final

import can
import numpy as np
import numpy.typing as npt

from jointbus.drivers.can.mit_protocol import (
    FrameError,
    MitCommand,
    ReplyTable,
    SpecialFrame,
    decode_command,
    encode_replies,
)
from jointbus.drivers.can.motor_link import MotorSpec, MotorSpecError
from jointbus.drivers.sim.actuator_model import ActuatorArrayModel, ActuatorParams

__all__ = ["PHYSICS_STEP_MAX_S", "FirmwareTwin"]

_POLL_S: Final[float] = 0.05  # how often the thread checks for stop while the bus is idle

PHYSICS_STEP_MAX_S: Final[float] = 0.05
"""The most time, s, a clocked twin's physics advances in one step (module docstring, "Time"):
the ``can://`` driver's clamp on its profile step (``PROFILE_STEP_MAX_S``), so a stall moves the
motors no further than it moves the setpoints."""

_STEP_MIN_S: Final[float] = 0.001
"""s: a clocked twin does not step again for a frame this soon after its last step. The frames of
one exchange arrive within a fraction of a millisecond, so they see one state (one physics call
and one reply encoding per exchange, not one per frame), and a host exchanging flat out costs at
most 1000 steps per second: a step costs 0.17-0.23 ms of CPU whatever its length (12 hb50
motors with their replies encoded, on this project's loaded 2-CPU host, 2026-12-06), so 0.6 ms
steps took 0.29 s of CPU per second, 1 ms steps 0.18 s, 10 ms steps 0.06 s. The time is not lost
(the next step covers it): a reply lags the clock by less than 1 ms."""


class FirmwareTwin:
    """N simulated MIT-mode motors answering on ``bus`` (see the module docstring).

    Args:
        bus: the twin's own endpoint (e.g. a second ``virtual`` bus on the host's channel); the
            caller closes it.
        motors: the motors to simulate (same :class:`~.motor_link.MotorSpec` as the host's).
        params: physics of every motor, or one per motor (default: the HB50 MD-series actuator).
        control_period_s: simulated time per command cycle, s (default 2 ms, 500 Hz); clocked:
            only the unit of :attr:`cycles`.
        host_id: arbitration id the replies are sent on.
        seed: sensor-noise seed (same seed, same frames → same replies).
        initial_positions: true starting positions, rad (default zeros).
        clock: monotonic seconds to run the physics by (clocked), or ``None`` to step it one
            ``control_period_s`` per command cycle (module docstring, "Time").
        max_step_s: clocked: the most a step advances the physics, s (default
            :data:`PHYSICS_STEP_MAX_S`, 50 ms).
    """

    def __init__(
        self,
        bus: can.BusABC,
        motors: Sequence[MotorSpec],
        params: ActuatorParams | Sequence[ActuatorParams] | None = None,
        *,
        control_period_s: float = 0.002,
        host_id: int = 0,
        seed: int | None = 0,
        initial_positions: npt.ArrayLike | None = None,
        clock: Callable[[], float] | None = None,
        max_step_s: float = PHYSICS_STEP_MAX_S,
    ) -> None:
        motors = tuple(motors)
        if not motors:
            raise MotorSpecError("FirmwareTwin needs at least one motor")
        if not control_period_s > 0.0:
            raise MotorSpecError(f"control_period_s = {control_period_s!r}; expected > 0 s")
        if not (math.isfinite(max_step_s) and max_step_s > 0.0):
            raise MotorSpecError(f"max_step_s = {max_step_s!r}; expected a finite time > 0 s")
        index_by_id: dict[int, int] = {}
        for index, spec in enumerate(motors):
            if spec.can_id in index_by_id or not 1 <= spec.can_id <= 0xFF:
                raise MotorSpecError(
                    f"motor {spec.name!r} (index {index}): can_id {spec.can_id!r} is duplicated "
                    "or outside 1…255"
                )
            index_by_id[spec.can_id] = index
        n = len(motors)
        self._bus = bus
        self._motors = motors
        self._index_by_id = index_by_id
        self._host_id = host_id
        self._period = float(control_period_s)
        self._clock = clock
        self._max_step = float(max_step_s)
        self._stepped_to = 0.0 if clock is None else clock()  # the clock's time of the last step
        self._model = ActuatorArrayModel(
            [spec.name for spec in motors],
            ActuatorParams.hb50() if params is None else params,
            seed=seed,
            initial_positions=initial_positions,
        )
        self._reply_table = ReplyTable(
            [spec.model.ranges for spec in motors], [spec.model.reply for spec in motors]
        )
        self._can_ids = np.array([spec.can_id for spec in motors], dtype=np.int64)
        # command held per motor, in physical (un-zeroed) coordinates
        self._p_target = np.zeros(n)
        self._v_target = np.zeros(n)
        self._kp = np.zeros(n)
        self._kd = np.zeros(n)
        self._tau_ff = np.zeros(n)
        self._powered = np.zeros(n, dtype=np.bool_)
        self._zero_offset = np.zeros(n)  # true position of each motor's zero, rad
        self._seen_this_cycle = np.zeros(n, dtype=np.bool_)
        self._reply_cache: list[bytes] | None = None
        self._dropping = np.zeros(n, dtype=np.bool_)
        self._error_code = np.zeros(n, dtype=np.int64)
        self._silent = False
        self._lock = threading.RLock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._thread_error: BaseException | None = None
        # counters
        self.frames_received = 0
        self.replies_sent = 0
        self.malformed_frames = 0
        self.commands_received = np.zeros(n, dtype=np.int64)
        self.ignored_commands = np.zeros(n, dtype=np.int64)
        self.special_frames_received: dict[SpecialFrame, int] = dict.fromkeys(SpecialFrame, 0)

    # ---------------------------------------------------------------- inspection

    @property
    def model(self) -> ActuatorArrayModel:
        """The physics (true state; read it, do not drive it while the thread runs)."""
        return self._model

    @property
    def positions(self) -> npt.NDArray[np.float64]:
        """True positions relative to each motor's zero, rad (a copy)."""
        with self._lock:
            return np.asarray(self._model.positions - self._zero_offset, dtype=np.float64)

    @property
    def powered(self) -> npt.NDArray[np.bool_]:
        """Motors in motor mode (a copy)."""
        with self._lock:
            return self._powered.copy()

    @property
    def clocked(self) -> bool:
        """Whether the physics runs on a clock (else one period per command cycle)."""
        return self._clock is not None

    @property
    def cycles(self) -> int:
        """Simulated time so far in control periods (without a clock: the command cycles)."""
        with self._lock:
            return round(self._model.time / self._period)

    # ---------------------------------------------------------------- fault injection

    def _index(self, can_id: int) -> int:
        try:
            return self._index_by_id[can_id]
        except KeyError:
            raise MotorSpecError(
                f"no motor with can_id {can_id}; twin motors: "
                + ", ".join(f"{m.name}={m.can_id}" for m in self._motors)
            ) from None

    def drop_replies(self, can_id: int, drop: bool) -> None:
        """Lose (``True``) or restore the replies of one motor; it still acts on commands."""
        with self._lock:
            self._dropping[self._index(can_id)] = drop

    def set_silent(self, silent: bool) -> None:
        """Make every motor ignore all frames and send nothing (``True``), or come back."""
        with self._lock:
            self._silent = silent

    def set_error_code(self, can_id: int, code: int) -> None:
        """Error byte a motor reports from now on (extended reply layouts only; 0 = no error)."""
        if not 0 <= code <= 0xFF:
            raise ValueError(f"error code {code!r}; expected 0…255")
        with self._lock:
            self._error_code[self._index(can_id)] = code
            self._reply_cache = None

    # ---------------------------------------------------------------- running

    def process_pending(self) -> int:
        """Handle every frame already queued on the bus (stepped mode); returns how many."""
        handled = 0
        while (msg := self._bus.recv(0.0)) is not None:
            self.handle(msg)
            handled += 1
        return handled

    def start(self) -> None:
        """Answer frames on a daemon thread until :meth:`stop`."""
        if self._thread is not None:
            raise RuntimeError("FirmwareTwin thread already running")
        self._stop.clear()
        self._thread_error = None
        if self._clock is not None:
            with self._lock:  # the time before the thread answers is no time the motors ran
                self._stepped_to = self._clock()
        self._thread = threading.Thread(target=self._run, name="firmware-twin", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread (waits for it); re-raises an error the thread died of."""
        thread = self._thread
        if thread is None:
            return
        self._stop.set()
        thread.join()
        self._thread = None
        if self._thread_error is not None:
            raise RuntimeError("FirmwareTwin thread failed") from self._thread_error

    def __enter__(self) -> FirmwareTwin:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _run(self) -> None:
        bus, stop = self._bus, self._stop
        try:
            while not stop.is_set():
                msg = bus.recv(_POLL_S)
                if msg is not None:
                    self.handle(msg)
        except BaseException as exc:  # reported by stop(); a thread cannot raise to its owner
            if not (isinstance(exc, can.CanOperationError) and stop.is_set()):
                self._thread_error = exc

    # ---------------------------------------------------------------- the firmware

    def handle(self, msg: can.Message) -> None:
        """Handle one received frame: decode, act, reply (unless dropped or silent)."""
        with self._lock:
            clock = self._clock
            if clock is not None:
                self._step_to_clock(clock())
            if self._silent or msg.is_error_frame or msg.is_extended_id or msg.is_remote_frame:
                return
            index = self._index_by_id.get(msg.arbitration_id)
            if index is None:
                return  # not addressed to one of our motors (e.g. another motor's reply)
            self.frames_received += 1
            spec = self._motors[index]
            try:
                frame = decode_command(msg.data, spec.model.ranges)
            except FrameError:
                self.malformed_frames += 1
                return  # the reference firmware ignores frames it cannot parse
            if isinstance(frame, SpecialFrame):
                self._special(index, frame)
            else:
                self._command(index, frame)
            if not self._dropping[index]:
                self._reply(index)

    def _special(self, index: int, frame: SpecialFrame) -> None:
        self.special_frames_received[frame] += 1
        if frame is SpecialFrame.ENTER_MOTOR_MODE:
            self._powered[index] = True
            self._p_target[index] = self._model.positions[index]
            self._v_target[index] = 0.0
            self._kp[index] = self._kd[index] = self._tau_ff[index] = 0.0
        elif frame is SpecialFrame.EXIT_MOTOR_MODE:
            self._powered[index] = False
        else:
            self._zero_offset[index] = self._model.positions[index]
        self._model.set_power(self._powered)
        self._reply_cache = None

    def _command(self, index: int, command: MitCommand) -> None:
        # The host's control period passes whether or not the motor accepts the command: a
        # motor in rest mode coasts in time like any other. (Clocked: handle() has stepped.)
        if self._clock is None:
            if self._seen_this_cycle[index]:
                self._step()
            self._seen_this_cycle[index] = True
        if not self._powered[index]:
            self.ignored_commands[index] += 1
            return
        self.commands_received[index] += 1
        self._p_target[index] = command.position + self._zero_offset[index]
        self._v_target[index] = command.velocity
        self._kp[index] = command.kp
        self._kd[index] = command.kd
        self._tau_ff[index] = command.torque

    def _step(self) -> None:
        """One control period under the held commands; a new command cycle begins."""
        self._advance(self._period)
        self._seen_this_cycle[:] = False

    def _step_to_clock(self, now: float) -> None:
        """Clocked: advance the physics to the clock's ``now`` (s): by the time since the last
        step, at most ``max_step_s`` (a stall does not jump the motors ahead); not within
        :data:`_STEP_MIN_S` of the last step, whose time the next step then covers."""
        elapsed = now - self._stepped_to
        if elapsed < _STEP_MIN_S:
            return
        self._stepped_to = now
        self._advance(min(elapsed, self._max_step))

    def _advance(self, dt: float) -> None:
        """``dt`` s of physics under the held commands (the model cuts it into substeps)."""
        model = self._model
        model.set_command(
            position=self._p_target,
            velocity=self._v_target,
            torque=self._tau_ff,
            kp=self._kp,
            kd=self._kd,
        )
        model.advance(dt)
        self._reply_cache = None

    def _replies(self) -> list[bytes]:
        """Every motor's reply for the present state, encoded at once and kept until it changes.

        All replies within one cycle report the same measurement, so encoding them together costs
        one numpy pass instead of twelve Python ones — the twin must not be what limits the
        benchmark's frames per second.
        """
        table = self._reply_table
        m = self._model.measure()
        pvt = np.stack((m.position - self._zero_offset, m.velocity, m.torque))
        # Saturate at the wire ranges as firmware does: the frame cannot carry more.
        np.clip(pvt, table.low, table.high, out=pvt)
        offset = table.temperature_offset_c
        temperature = np.clip(m.motor_temperature, offset, offset + 255.0)
        frames = encode_replies(self._can_ids, pvt, temperature, self._error_code, table)
        raw = frames.tobytes()
        return [raw[8 * i : 8 * i + length] for i, length in enumerate(table.length)]

    def _reply(self, index: int) -> None:
        cached = self._reply_cache
        if cached is None:
            cached = self._reply_cache = self._replies()
        self._bus.send(
            can.Message(
                arbitration_id=self._host_id, data=cached[index], is_extended_id=False, check=False
            )
        )
        self.replies_sent += 1
