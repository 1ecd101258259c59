"""``jointbus demo --robot arm6|rover``: a simulated robot served by the array node, moving.

Where it sits: :mod:`jointbus.cli`, called by :func:`jointbus.cli.demo.demo` for every robot that
has no bridge and control node of its own (all but ``hb50``). Why the array node: it is what
``jointbus serve sim://ROBOT`` runs, so the demo shows exactly what another process sees —
``/<robot>/joint_state`` (Beam Bots), ``/<robot>/actarray/data`` and ``geometry`` (Player),
``/<robot>/joints`` (Rock) — and ``drivers.open("bus://<robot>")`` in a second terminal reaches the
same array while the demo runs.

The demo is the array's first client, on the same bus and through the node's own services (so every
command is checked, ACKed or NACKed as a remote one would be): it switches motor power on, then
moves the robot until the end —

- an array with a planar joint (the rover's base) drives with Player multi-speed commands, every
  :data:`SPEED_PERIOD_S`: the base forward at :data:`BASE_SPEED` m/s while turning at
  :data:`BASE_TURN` rad/s (a circle of 0.6 m radius), every other joint swinging with a peak
  speed of :data:`SWING_SPEED` (rad/s or m/s, period 4 s);
- any other array (the arm) alternates, every :data:`POSE_PERIOD_S`, between its home pose (the
  geometry's ``home`` of each joint, where ``home()`` sends it; arm6: 0, -0.5, 1.5, 0, 0.6, 0) and a
  pose :data:`POSE_FRACTION` of the way to each joint's upper position limit (at most
  :data:`POSE_MAX` rad), with Player multi-position commands (jerk-limited moves).

A refused command is printed as one line on stderr (the NACK's text) and the demo goes on. One
plain summary line a second, ``--record`` and ``--duration`` as for hb50; at the end motor power
is switched off and one final line gives the commands accepted and refused, the node's loop rate,
lateness p99 and the process's CPU share.
"""

from __future__ import annotations

import contextlib
import math
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import typer

from jointbus.bus import MAB_RT, Bus, ZenohConfig
from jointbus.cli.errors import CliError, note
from jointbus.cli.options import joined_line
from jointbus.cli.report_times import next_report_at
from jointbus.runtime import LoopRun

if TYPE_CHECKING:
    from jointbus.drivers import ActuatorArray
    from jointbus.messages import jointbus_msgs
    from jointbus.nodes.array import ArrayNode

__all__ = [
    "BASE_SPEED",
    "BASE_TURN",
    "POSE_FRACTION",
    "POSE_MAX",
    "POSE_PERIOD_S",
    "SERVED_RATE_HZ",
    "SPEED_PERIOD_S",
    "SWING_SPEED",
    "ServedSummary",
    "run_served_demo",
]

#: Publishing rate of the served array (Hz): ``jointbus serve``'s default.
SERVED_RATE_HZ: Final = 100.0
#: How often a multi-speed command is sent (s).
SPEED_PERIOD_S: Final = 0.2
#: The rover base's speed along its circle (m/s) and its turn rate (rad/s).
BASE_SPEED: Final = 0.3
BASE_TURN: Final = 0.5
#: Peak speed of the other joints' swing (rad/s or m/s), a sine with period 4 s.
SWING_SPEED: Final = 0.3
#: How often the arm switches pose (s), and how far toward the upper limit the second pose is.
POSE_PERIOD_S: Final = 2.5
POSE_FRACTION: Final = 0.3
POSE_MAX: Final = 0.8  # rad (or m)
#: Period of the summary lines (s).
SUMMARY_PERIOD_S: Final = 1.0


def _fmt(value: float, scale: float = 1.0, digits: int = 0) -> str:
    """``value × scale`` with ``digits`` decimals; ``?`` while not measured yet (NaN)."""
    return "?" if math.isnan(value) else f"{value * scale:.{digits}f}"


@dataclass(frozen=True, slots=True)
class ServedSummary:
    """One look at the served robot: ``elapsed_s`` since start (s), joint positions (rad or m),
    rates (Hz), the node's loop lateness p99 (s), the process's CPU share of one core (0..1)."""

    robot: str
    elapsed_s: float
    motor_power: bool
    positions: tuple[tuple[str, float], ...]
    joint_state_hz: float
    loop_rate_hz: float
    skipped_fraction: float
    lateness_p99_s: float
    accepted: int
    refused: int
    cpu_fraction: float
    loop_run: LoopRun | None = None

    def line(self) -> str:
        """The plain summary line printed every second: the run so far (commands, CPU since
        start), then the array loop's figures over the window they cover, then the joints."""
        joints = " ".join(f"{name}={value:+.3f}" for name, value in self.positions)
        power = "on" if self.motor_power else "off"
        window = _fmt(self.loop_run.window_s) if self.loop_run is not None else "?"
        return (
            f"t={self.elapsed_s:.1f}s robot={self.robot} power={power}"
            f" joint_state={_fmt(self.joint_state_hz)}Hz commands={self.accepted}"
            f" refused={self.refused} cpu_mean={_fmt(self.cpu_fraction, 100)}%"
            f" | loop, last {window}s: loop={_fmt(self.loop_rate_hz)}Hz"
            f" skipped={_fmt(self.skipped_fraction, 100, 1)}%"
            f" lateness_p99={_fmt(self.lateness_p99_s, 1e6)}us | {joints}"
        )

    def final_line(self) -> str:
        """The last line of a run."""
        return (
            f"{self.robot} (array node) stopped after {self.elapsed_s:.1f} s: "
            f"{self.accepted} commands accepted, {self.refused} refused, loop "
            f"{'no figures' if self.loop_run is None else self.loop_run.describe()}, CPU "
            f"{_fmt(self.cpu_fraction, 100)} % of one core (mean since start)"
        )


class _Served:
    """The array, its node, the demo's clients and counters."""

    def __init__(self, robot: str, array: ActuatorArray, bus: Bus, node: ArrayNode) -> None:
        from jointbus.messages import jointbus_msgs
        from jointbus.messages.actarray.commands import MultiPositionCommand, MultiSpeedCommand
        from jointbus.messages.actarray.reply import ActuatorReply
        from jointbus.messages.actarray.requests import PowerRequest

        self.robot, self.array, self.bus, self.node = robot, array, bus, node
        names = node.names
        self.power = bus.client(names.request("power"), PowerRequest, ActuatorReply)
        self.positions = bus.client(
            names.command("multi_position"), MultiPositionCommand, ActuatorReply
        )
        self.speeds = bus.client(names.command("multi_speed"), MultiSpeedCommand, ActuatorReply)
        self.accepted = self.refused = 0
        self._states = 0
        self._rate: tuple[int, float] | None = None
        self._hz = math.nan
        self._latest: jointbus_msgs.JointState | None = None
        bus.subscribe(names.joint_state, jointbus_msgs.JointState, self._on_state, MAB_RT,
                      realtime=True)
        self.started = time.monotonic()
        self._cpu_at_start = time.process_time()

    def _on_state(self, msg: jointbus_msgs.JointState) -> None:
        self._states += 1
        self._latest = msg

    def send(self, client: Any, request: Any) -> None:
        """One command through the node's service; a NACK is one line on stderr."""
        reply = client.call(request)
        if reply.accepted:
            self.accepted += 1
        else:
            self.refused += 1
            note(f"{self.robot}: refused: {reply.text or reply.reason}")

    def summary(self) -> ServedSummary:
        now = time.monotonic()
        last = self._rate
        if last is not None and now - last[1] >= 0.2:
            self._hz = (self._states - last[0]) / (now - last[1])
        if last is None or now - last[1] >= 0.2:
            self._rate = (self._states, now)
        stats = self.node.loop_stats().get("array")
        reading = self.array.read()
        elapsed = max(now - self.started, 1e-9)
        return ServedSummary(
            robot=self.robot,
            elapsed_s=now - self.started,
            motor_power=reading.motor_power,
            positions=tuple(
                (name, a.position) for name, a in zip(self.array.names, reading.actuators,
                                                       strict=True)
            ),
            joint_state_hz=self._hz,
            loop_rate_hz=stats.achieved_rate_hz if stats is not None else math.nan,
            skipped_fraction=stats.skipped_fraction if stats is not None else math.nan,
            lateness_p99_s=stats.lateness_p99_s if stats is not None else math.nan,
            accepted=self.accepted,
            refused=self.refused,
            cpu_fraction=(time.process_time() - self._cpu_at_start) / elapsed,
            loop_run=LoopRun.of(stats) if stats is not None else None,
        )


def _motion(served: _Served, stop: threading.Event) -> None:
    """Power on, then move until ``stop`` (see the module docstring)."""
    from jointbus.drivers.planar_joint import planar_joints_of
    from jointbus.messages.actarray.commands import MultiPositionCommand, MultiSpeedCommand
    from jointbus.messages.actarray.requests import PowerRequest

    array = served.array
    served.send(served.power, PowerRequest(True))
    planar = planar_joints_of(array)
    limits = array.config.limits
    if planar:
        # A planar joint's speeds are its own planar velocity (vx, vy m/s in its frame; omega
        # rad/s): a constant forward speed while turning drives a circle of radius
        # BASE_SPEED / BASE_TURN.
        forward = {joint.x for joint in planar}
        sideways = {joint.y for joint in planar}
        turning = {joint.theta for joint in planar}
        start = time.monotonic()
        while not stop.wait(SPEED_PERIOD_S):
            swing = SWING_SPEED * math.sin(2 * math.pi * (time.monotonic() - start) / 4.0)
            speeds = tuple(
                BASE_SPEED if i in forward
                else 0.0 if i in sideways
                else BASE_TURN if i in turning
                else swing
                for i in range(len(array.names))
            )
            served.send(served.speeds, MultiSpeedCommand(speeds))
        return
    # The arm's own home pose (its geometry's, where ``home()`` sends it), not zeros.
    home = tuple(float(a.home) for a in array.config.geometry.actuators)
    reach = tuple(
        h + min(POSE_FRACTION * (lim.position_max - h), POSE_MAX)
        for h, lim in zip(home, limits, strict=True)
    )
    poses = (reach, home)
    turn = 0
    while True:
        served.send(served.positions, MultiPositionCommand(poses[turn % 2]))
        turn += 1
        if stop.wait(POSE_PERIOD_S):
            return


def run_served_demo(
    robot: str,
    *,
    zenoh: ZenohConfig | None,
    duration: float | None,
    record: Path | None,
) -> ServedSummary:
    """Serve ``sim://<robot>`` with the array node and move it until ``duration`` (s) or Ctrl-C /
    SIGTERM (the caller turns SIGTERM into KeyboardInterrupt); return the final summary."""
    from jointbus import drivers
    from jointbus.drivers.errors import DriverError
    from jointbus.nodes.array import ArrayNode, ArrayNodeConfig

    if duration is not None and not (math.isfinite(duration) and duration > 0):
        raise CliError(f"--duration {duration!r}: expected a number of seconds > 0")
    try:
        array = drivers.open(f"sim://{robot}")
    except (DriverError, LookupError, ValueError) as exc:
        raise CliError(str(exc)) from None
    stop = threading.Event()
    recorder: Any = None
    summary: ServedSummary | None = None
    try:
        with Bus(name=f"demo-{robot}", zenoh=zenoh) as bus:
            if record is not None:
                from jointbus.tools.recorder import Recorder

                recorder = Recorder(bus, record, remote=False)
                recorder.start()
            node = ArrayNode(array, bus, namespace=robot,
                             config=ArrayNodeConfig(rate_hz=SERVED_RATE_HZ))
            node.start()
            served = _Served(robot, array, bus, node)
            how = "in-process only" if zenoh is None else "topics offered on Zenoh"
            note(f"jointbus: sim://{robot} served by the array node as /{robot}, {how}; "
                 "Ctrl-C stops")
            joined = joined_line(bus)
            if joined is not None:
                note(joined)
            mover = threading.Thread(target=_motion, args=(served, stop), name="demo-motion",
                                     daemon=True)
            mover.start()
            end = None if duration is None else time.monotonic() + duration
            with contextlib.suppress(KeyboardInterrupt):
                tick = time.monotonic()
                while end is None or time.monotonic() < end:
                    tick = next_report_at(tick, time.monotonic(), SUMMARY_PERIOD_S)
                    wake = tick if end is None else min(tick, end)
                    time.sleep(max(0.0, wake - time.monotonic()))
                    typer.echo(served.summary().line())
                    sys.stdout.flush()
            stop.set()
            with contextlib.suppress(KeyboardInterrupt):
                mover.join(timeout=5.0)
                summary = served.summary()
                if recorder is not None:
                    stats = recorder.stop()
                    recorder = None
                    note(f"recorded {stats.messages} messages on {stats.topics} topics to {record}")
                node.shutdown()
    finally:
        stop.set()
        if recorder is not None:
            with contextlib.suppress(Exception):
                recorder.stop()
        with contextlib.suppress(DriverError):
            array.power(False)
        array.close()
    if summary is None:  # pragma: no cover - interrupted twice
        raise CliError("the demo was interrupted before its summary")
    typer.echo(summary.final_line())
    return summary
