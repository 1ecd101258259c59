"""hb50's fallback when its controller stalls or dies: a trot to a stop if it walked, feet down,
a held stance, then a slow sit.

Where it sits: :mod:`jointbus.robots.hb50.bridge`, the robot's
:class:`~jointbus.nodes.safety.fallback.FallbackPolicy` that the array node under hb50's bridge
runs when the watchdog takes the stream away from a running owner (the control node stopped,
killed, starved). Only the bridge is sure to be alive then; the generic default — damping only —
collapsed a standing or trotting hb50 within 0.5 s (a 0.5 s SIGSTOP of the control node mid-trot
left it at 0.06 m, tilted 2.6–3.1 rad). Pure logic from the robot model: the leg IK of
:mod:`jointbus.model.leg_ik`, the ``home`` pose's footprint, the stand gains, and the walking
controller for the trot to a stop; no clock of its own (the readings' driver time,
:class:`~jointbus.nodes.safety.fallback.FallbackClock`), no bus.

**What it does** (times in the robot's seconds — the driver's clock, so a bridge that skips
cycles on a busy host does not stretch them — the defaults of :class:`StanceFallbackSettings`):

0. *When.* Mid-stride (a foot of the last command at least ``swing_lift`` = 0.02 m above the
   deepest, or a feed-forward torque above ``early_effort`` = 0.5 N·m on a joint: the trot's
   stance legs carry the body by ``Jᵀ·f``, also in its double support, when all four feet are
   down) it takes over after ``early_s`` = 0.1 s of silence, not the watchdog's 0.25 s: the
   bridge keeps applying the last command meanwhile, and a trotting hb50 frozen with a diagonal
   pair in the air falls over the other pair (measured: tilt 0.12 rad at 0.25 s, 0.28 rad at
   0.5 s, past recovery; on its back 1.5 s later). Frozen in double support it tipped too: a
   controller killed there was caught at the watchdog's 0.25 s, tilted 0.18 rad, and went over
   onto its back (1 run in 5 with a CPU hog beside it) before the torque criterion. Standing
   (a posture, no feed-forward), at the watchdog's time.

1. *Already down?* From the measured joints the leg IK gives each foot's depth below the body
   origin. If the deepest foot is less than ``down_depth`` (0.14 m: the sit's feet are 0.119 m
   deep) below the body, or the IMU tilt (when the bridge has one) exceeds ``down_tilt``
   (0.5 rad), the robot is lying or fallen: stiffness would only push legs against the floor, so
   the fallback is damping only (``kp = 0``), as the array node's default.
2. *Walking?* A last command that walked — a leg without feed-forward torque while others push
   (a swing), or stance feet moving back at more than ``step_speed`` (0.05 m/s) — is not stopped
   by planting the feet: the body carries on over them (at 1 m/s, a 0.28 s SIGSTOP of the control
   node tipped hb50 over its front feet 3 times in 3 before this step existed). The
   fallback then *trots to a stop* (:mod:`.stopping_trot`, phase ``step``): the walking
   controller, run by the bridge from the owner's last velocity down to zero, until the clock
   stops with four feet down, a pair left far from its footholds has stepped once more in place
   (a controller's stand-up from a skewed stance rolled the robot over) and the body is still;
   it then *stands on the trot's stance forces*
   for the hold (step 4), and the sit (step 5) blends from them. Needs the bridge's frames and
   IMU; without them, step 3.
3. *Stance* (``stance_s`` = 0.15 s): every foot goes straight down where it is (its measured x,
   y, kept within ``footprint_slack`` = 0.08 m of the ``home`` pose's), the body level above
   them (a tilted body is pushed level: holding its tilt, a robot caught at 0.2 rad tipped on
   over its stiff legs), at the depth — measured along the vertical the IMU gives — of the
   deepest measured foot (clamped between the sit's and ``home``'s depth, so a robot standing
   low is not pushed up, a swing foot comes down to the ground and a loaded foot is not moved),
   along a minimum-jerk profile starting from the command written last (the owner's, which the
   bridge kept applying during the watchdog time), so nothing jumps; stiffness and damping go
   from that command's to the stand gains (``kp`` 80 N·m/rad, ``kd`` 3 N·m·s/rad from the robot
   file) and its feed-forward torque fades to zero on the same profile.
4. *Hold* (``hold_s`` = 5.0 s) of that stance: time for a supervisor to restart a killed
   controller while the robot still stands. The stance is *quiet* once the stance move is
   done, ``settle_s`` (0.3 s) has passed and every joint is slower than ``quiet_speed``
   (0.5 rad/s) with the body tilted less than ``quiet_tilt`` (0.2 rad, by the IMU where there is
   one); from then on a controller may come back (below).
5. *Sit* (``sit_s`` = 3.0 s): the body is lowered to ``sit_height`` (0.14 m, the control node's
   sit) over the stance's footprint, minimum jerk, stand gains; then the sit is held (``sat``) with
   the drives on until a controller comes back or someone sends an e-stop.
6. *Tipped over meanwhile*: in any phase, an IMU tilt beyond ``down_tilt`` (0.5 rad) ends the
   stance for damping only (``down``, reported), as in step 1. Held stiff, a robot that had gone
   over onto its back kept its legs kicking in the air (never quiet, so no controller could
   ever take over) for as long as the bridge ran.

**Coming back.** A command of a source that wants the actuators (the control node continued
after a SIGSTOP, restarted after a SIGKILL, a user's controller) is refused until the stance is
quiet — its targets were computed for a robot in mid-stride — and, once quiet, unless it
starts from where the robot is: every stiff joint's target within ``reentry_tolerance``
(0.15 rad) of its measured position (a stand-up from the measured pose), and not damping only
(``kp = 0`` everywhere would drop the robot the fallback holds). Each refusal says why on
``/hb50/status``. The array node shows ``mode: safe`` during the stance and ``mode: hold`` once
it is quiet (the bridge holds a pose a controller may start from), so the control node stands up
from the measured pose when it sees the drives available again; while a source keeps sending
stiff commands that are refused (a controller that did not notice the stall), ``mode: safe``
again, so that it notices, goes to damping and then stands up from where the robot is.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from jointbus.drivers.actuator_array import JointReading
from jointbus.drivers.impedance import ImpedanceCommand
from jointbus.model.errors import UnreachableError
from jointbus.model.leg_ik import LegIK
from jointbus.model.link import Sphere
from jointbus.model.robot import RobotModel
from jointbus.nodes.safety.fallback import FallbackClock, FallbackReport
from jointbus.robots.hb50.bridge.stopping_trot import StoppingTrot
from jointbus.robots.hb50.messages import BridgeData

__all__ = ["StanceFallback", "StanceFallbackSettings"]

FloatArray = npt.NDArray[np.float64]

#: Phases, in order (``step`` only for a robot that walked; ``down`` instead of all the others
#: for a robot already down).
PHASES: Final = ("step", "stance", "hold", "sit", "sat", "down")


@dataclass(frozen=True, slots=True)
class StanceFallbackSettings:
    """Timings (s), speeds (rad/s), heights and depths (m), gains of :class:`StanceFallback`
    (see the module docstring)."""

    stance_s: float = 0.15
    early_s: float = 0.1
    step_speed: float = 0.05
    swing_lift: float = 0.02
    early_effort: float = 0.5
    settle_s: float = 0.3
    hold_s: float = 5.0
    sit_s: float = 3.0
    quiet_speed: float = 0.5
    quiet_tilt: float = 0.2
    sit_height: float = 0.14
    down_depth: float = 0.14
    down_tilt: float = 0.5
    reentry_tolerance: float = 0.15
    footprint_slack: float = 0.08
    kp: float = 80.0
    kd: float = 3.0
    down_kd: float = 4.5

    def __post_init__(self) -> None:
        for name in (
            "stance_s", "early_s", "step_speed", "swing_lift", "early_effort", "settle_s",
            "hold_s", "sit_s", "quiet_speed", "quiet_tilt", "sit_height",
            "down_depth", "down_tilt", "reentry_tolerance", "footprint_slack", "kp", "kd",
            "down_kd",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"StanceFallbackSettings.{name} = {value!r}; expected a number")
            if not (math.isfinite(value) and value >= 0.0):
                raise ValueError(
                    f"StanceFallbackSettings.{name} = {value!r}; expected a finite value ≥ 0"
                )
        if self.stance_s <= 0.0 or self.sit_s <= 0.0:
            raise ValueError("StanceFallbackSettings: stance_s and sit_s must be > 0 s")


def _min_jerk(tau: float) -> tuple[float, float]:
    """Fraction and its derivative (per unit of tau) of the minimum-jerk profile on [0, 1]."""
    t = min(max(tau, 0.0), 1.0)
    s = t * t * t * (10.0 - 15.0 * t + 6.0 * t * t)
    ds = 30.0 * t * t * (1.0 - t) * (1.0 - t)
    return s, ds


def _foot_radius(model: RobotModel, leg: str) -> float:
    for collision in model.link(f"{leg}_foot").collisions:
        if isinstance(collision.shape, Sphere):
            return float(collision.shape.radius)
    return 0.0


class StanceFallback:
    """hb50's fallback policy (see the module docstring): build with :meth:`from_model`.

    ``legs``: each leg's IK; ``home``: the standing pose (rad, actuator order); ``lower`` /
    ``upper``: position limits every target is clamped into; ``period``: the bridge cycle (s);
    ``up``: the world's vertical in the body frame (a unit vector, from the IMU's orientation)
    now, ``None`` without one: feet are then placed level with the body.
    """

    def __init__(
        self,
        legs: Sequence[LegIK],
        home: Sequence[float],
        lower: Sequence[float],
        upper: Sequence[float],
        foot_radius: float,
        *,
        period: float,
        settings: StanceFallbackSettings | None = None,
        up: Callable[[], tuple[float, float, float] | None] | None = None,
        trot: StoppingTrot | None = None,
        frame: Callable[[], BridgeData | None] | None = None,
    ) -> None:
        if not (math.isfinite(period) and period > 0.0):
            raise ValueError(f"period = {period!r}; expected a finite cycle time > 0 s")
        self.settings = settings or StanceFallbackSettings()
        self.legs = tuple(legs)
        self.period = float(period)
        self._home: FloatArray = np.array(home, dtype=np.float64)
        self._lower: FloatArray = np.array(lower, dtype=np.float64)
        self._upper: FloatArray = np.array(upper, dtype=np.float64)
        n = self._home.shape[0]
        if self._lower.shape != (n,) or self._upper.shape != (n,):
            raise ValueError(f"limits for {self._lower.size} joints; the home pose has {n}")
        self._up = up
        self._trot = trot if frame is not None else None
        self._trotting = False
        self._frame = frame
        feet = [leg.forward(*self._home[list(leg.joint_indices)].tolist()) for leg in self.legs]
        self.footprint: FloatArray = np.array(feet, dtype=np.float64)
        """(legs, 3) m: the ``home`` pose's foot centres in the body frame."""
        self.home_depth = float(-self.footprint[:, 2].mean())
        """Depth (m) of the ``home`` feet below the body origin."""
        self.sit_depth = self.settings.sit_height - foot_radius
        """Depth (m) of the sit's feet below the body origin (body at ``sit_height``)."""
        self.q_sit = self.pose_at(self.sit_depth)
        """The sitting joint pose over the ``home`` footprint (rad, actuator order)."""
        self._q_sit = self.q_sit
        self._n = n
        self._phase = "stance"
        self._clock = FallbackClock(self.period)
        self._quiet = False
        self._refused_stiff = False
        self._reports: list[FallbackReport] = []
        self._q0: FloatArray = self._home.copy()
        self._q_stance: FloatArray = self._home.copy()
        self._kp0: FloatArray = np.zeros(n)
        self._kd0: FloatArray = np.zeros(n)
        self._effort0: FloatArray = np.zeros(n)
        self._down = ImpedanceCommand.damping(n, self.settings.down_kd)
        self._issued: ImpedanceCommand | None = None  # the last command this fallback gave
        self._max_speed = math.inf
        self.depth = math.nan
        """Deepest measured foot (m below the body origin) when the fallback began."""

    @classmethod
    def from_model(
        cls,
        model: RobotModel,
        *,
        period: float,
        settings: StanceFallbackSettings | None = None,
        up: Callable[[], tuple[float, float, float] | None] | None = None,
        frame: Callable[[], BridgeData | None] | None = None,
    ) -> StanceFallback:
        """hb50's fallback from its robot file: the legs (``<leg>_j0`` … in actuator order), the
        ``home`` pose, the position limits and the foot radius."""
        order = model.actuator_order
        legs = tuple(
            LegIK.from_model(model, name.removesuffix("_j0"))
            for name in order
            if name.endswith("_j0")
        )
        home = model.pose("home")
        joints = {j.name: j for j in model.joints}
        return cls(
            legs,
            [home.get(name, 0.0) for name in order],
            [joints[name].limits.position_min for name in order],
            [joints[name].limits.position_max for name in order],
            _foot_radius(model, legs[0].leg),
            period=period,
            settings=settings,
            up=up,
            trot=StoppingTrot(model, period=period) if frame is not None else None,
            frame=frame,
        )

    # ---- geometry ------------------------------------------------------------------------------
    def pose_at(
        self,
        depth: float,
        footprint: FloatArray | None = None,
        up: tuple[float, float, float] | None = None,
    ) -> FloatArray:
        """Joint targets (rad, actuator order, inside the limits) for every foot ``depth`` m
        below the body origin along the vertical ``up`` (body frame; ``None``: the body's z, a
        level body), at ``footprint`` (legs, 2: x, y in the body frame, m; default the ``home``
        pose's): on level ground under a tilted body, every foot touches it. A foot the leg
        cannot reach there goes to its ``home`` x, y."""
        xy = self.footprint[:, :2] if footprint is None else footprint
        ux, uy, uz = up if up is not None and up[2] > 0.5 else (0.0, 0.0, 1.0)
        q = self._home.copy()
        for k, leg in enumerate(self.legs):
            idx = list(leg.joint_indices)
            for x, y in (xy[k].tolist(), self.footprint[k, :2].tolist()):
                try:
                    q[idx] = leg.solve((x, y, (-depth - ux * x - uy * y) / uz))
                    break
                except UnreachableError:
                    continue
        clipped: FloatArray = np.clip(q, self._lower, self._upper)
        return clipped

    def feet(self, position: FloatArray) -> FloatArray:
        """Each foot's position (legs, 3; m, body frame) at joint ``position`` (rad); NaN where
        a joint of the leg is not measured."""
        out = np.full((len(self.legs), 3), math.nan)
        for k, leg in enumerate(self.legs):
            q = position[list(leg.joint_indices)]
            if np.isfinite(q).all():
                out[k] = leg.forward(*q.tolist())
        return out

    def foot_depths(self, position: FloatArray) -> FloatArray:
        """Each foot's depth (m) below the body origin at joint ``position`` (rad); NaN where a
        joint of the leg is not measured."""
        depths: FloatArray = -self.feet(position)[:, 2]
        return depths

    # ---- FallbackPolicy ------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return "stance, then sit"

    @property
    def phase(self) -> str:
        return self._phase

    @property
    def quiet(self) -> bool:
        """Quiet, and the last command refused (if any) was not one a controller sends while it
        believes it still drives the robot: such a controller must see the drives unavailable
        (``mode: safe``) to start again from the measured pose; one that sends damping knows."""
        return self._quiet and not self._refused_stiff

    @property
    def rides_through_refusals(self) -> bool:
        """True: a write the driver refuses mid-stride is a missed command, not one cycle of
        damping and a re-entry ramp on the legs that carry the body; a driver that keeps
        refusing hands the robot to this fallback by the ``early_s`` (0.1 s, mid-stride) or the
        watchdog's rule, as a stalled controller does."""
        return True

    @property
    def early_after_s(self) -> float:
        return self.settings.early_s

    def early(self, reading: JointReading, last: ImpedanceCommand | None, silence_s: float) -> bool:
        """Mid-stride — a foot of the last command ``swing_lift`` (0.02 m) or more above the
        deepest, or a feed-forward torque over ``early_effort`` (0.5 N·m) on a joint — take over
        after ``early_s`` (0.1 s) of silence: the frozen command would hold a foot in the air or
        keep pushing with the stance legs' torques. Standing, the last command is a posture (no
        feed-forward): the watchdog's time applies.

        Not when the last command is this fallback's own (the stance it held, on the trot's
        stance forces): that is no stride of the owner. A controller resumed after a 3 s stall
        had a command answering a frame 0.19 s old admitted in the hold; in that cycle the last
        command written was still the fallback's, and this rule began a second fallback at
        once ("no command for 186 ms while the robot stood", a new stance, its commands refused
        for 0.4 s until that stance was quiet again)."""
        if last is None or self._own(last):
            return False
        effort = np.abs(last.effort[np.isfinite(last.effort)])
        if effort.size and float(effort.max()) > self.settings.early_effort:
            return True
        depths = self.foot_depths(last.position)
        if not np.isfinite(depths).any():
            return False
        return float(np.nanmax(depths) - np.nanmin(depths)) >= self.settings.swing_lift

    def _own(self, command: ImpedanceCommand) -> bool:
        """Whether ``command`` is the last one this fallback issued (as written: the node may
        have derated its gains and torques for temperature, never its targets)."""
        issued = self._issued
        if issued is None:
            return False
        if command is issued:
            return True
        return bool(
            np.array_equal(command.position, issued.position, equal_nan=True)
            and np.array_equal(command.velocity, issued.velocity, equal_nan=True)
        )

    def _deepest(self, reading: JointReading, up: tuple[float, float, float] | None) -> float:
        """The deepest measured foot (m below the body origin along the vertical ``up``; the
        body's z without one); NaN when no leg is measured."""
        u = np.array(up if up is not None else (0.0, 0.0, 1.0))
        depths = -(self.feet(reading.position) @ u)
        return float(np.nanmax(depths)) if np.isfinite(depths).any() else math.nan

    def _stance_from(
        self, reading: JointReading, last: ImpedanceCommand | None, deepest: float
    ) -> float:
        """Set up the stance phase from the measured pose (see the module docstring, step 3),
        blending from ``last``; the stance's foot depth (m)."""
        s = self.settings
        feet = self.feet(reading.position)
        self._phase = "stance"
        depth = min(max(deepest, self.sit_depth), self.home_depth)
        # Every foot straight down where it is (a swing foot lands under itself, a stance foot
        # stays put: moving a loaded foot shoves the body), kept within the slack of home's.
        home_xy = self.footprint[:, :2]
        xy = feet[:, :2]
        xy = np.where(np.isfinite(xy), xy, home_xy)
        slack = s.footprint_slack
        xy = np.clip(xy, home_xy - slack, home_xy + slack)
        self._q_stance = self.pose_at(depth, xy)  # a level body: a tilted one is pushed level
        self._q_sit = self.pose_at(self.sit_depth, xy)
        measured = np.where(np.isfinite(reading.position), reading.position, self._q_stance)
        if last is not None:
            stiff = last.kp > 0.0
            self._q0 = np.clip(np.where(stiff, last.position, measured), self._lower, self._upper)
            self._kp0 = last.kp.copy()
            self._kd0 = last.kd.copy()
            self._effort0 = last.effort.copy()
        else:
            self._q0 = np.clip(measured, self._lower, self._upper)
            self._kp0 = np.zeros(self._n)
            self._kd0 = np.full(self._n, s.kd)
            self._effort0 = np.zeros(self._n)
        return depth

    def begin(
        self, reading: JointReading, last: ImpedanceCommand | None, silence_s: float
    ) -> FallbackReport | None:
        s = self.settings
        self._clock.start(reading.time)
        self._quiet = False
        self._refused_stiff = False
        self._trotting = False
        self._reports = []
        up = self._up() if self._up is not None else None
        deepest = self._deepest(reading, up)
        self.depth = deepest
        tilt = None if up is None else math.acos(max(-1.0, min(1.0, up[2])))
        facts: dict[str, object] = {
            "silence_s": round(silence_s, 3),
            "foot_depth_m": None if math.isnan(deepest) else round(deepest, 3),
            "tilt_rad": None if tilt is None or math.isnan(tilt) else round(tilt, 3),
        }
        tilted = tilt is not None and math.isfinite(tilt) and tilt > s.down_tilt
        if math.isnan(deepest) or deepest < s.down_depth or tilted:
            self._phase = "down"
            why = (
                f"tilted {tilt:.2f} rad (> {s.down_tilt:g})"
                if tilted and tilt is not None
                else "joints not measured"
                if math.isnan(deepest)
                else f"deepest foot {deepest:.3f} m below the body (< {s.down_depth:g} m)"
            )
            return FallbackReport(
                "WARN",
                f"fallback: no command for {silence_s * 1e3:.0f} ms and the robot is down "
                f"({why}): damping only ({s.down_kd:g} N·m·s/rad)",
                {"phase": "down", **facts},
            )
        frame = self._frame() if self._frame is not None else None
        if self._trot is not None and frame is not None and last is not None:
            (vx, vy), swinging = self._trot.walking_velocity(last)
            if any(swinging) or math.hypot(vx, vy) > s.step_speed:
                self._phase = "step"
                self._trot.start(frame, last)
                vx, vy, wz = self._trot.start_velocity
                facts.update(
                    phase="step", vx=round(vx, 3), vy=round(vy, 3), yaw_rate=round(wz, 3),
                    swinging=[leg.leg for leg, up in zip(self.legs, swinging, strict=True) if up],
                )
                return FallbackReport(
                    "WARN",
                    f"fallback: no command for {silence_s * 1e3:.0f} ms while the robot walked "
                    f"(vx {vx:+.2f} m/s, vy {vy:+.2f} m/s, yaw {wz:+.2f} rad/s): trotting to a "
                    f"stop, then standing {s.hold_s:g} s, then sitting down to "
                    f"{s.sit_height:g} m over {s.sit_s:g} s",
                    facts,
                )
        depth = self._stance_from(reading, last, deepest)
        facts.update(
            phase="stance",
            stance_depth_m=round(depth, 3),
            kp_from=round(float(self._kp0.mean()), 2),
            kp_to=s.kp,
            stance_s=s.stance_s,
            hold_s=s.hold_s,
            sit_s=s.sit_s,
            sit_height_m=s.sit_height,
        )
        return FallbackReport(
            "WARN",
            f"fallback: no command for {silence_s * 1e3:.0f} ms while the robot stood (deepest "
            f"foot {deepest:.3f} m below the body): all feet down to a stance at {depth:.3f} m "
            f"over {s.stance_s:g} s, stiffness {float(self._kp0.mean()):.1f} → {s.kp:g} N·m/rad; "
            f"held {s.hold_s:g} s, then sitting down to {s.sit_height:g} m over {s.sit_s:g} s",
            facts,
        )

    def command(self, reading: JointReading) -> ImpedanceCommand:
        issued = self._issued = self._command(reading)
        return issued

    def _command(self, reading: JointReading) -> ImpedanceCommand:
        s = self.settings
        t = self._clock.tick(reading.time)
        if self._phase == "down":
            return self._down
        tilt = self._tilt()
        if tilt is not None and tilt > s.down_tilt:
            self._phase = "down"
            self._quiet = False
            self._reports.append(
                FallbackReport(
                    "ERROR",
                    f"fallback: the robot tipped over {t:.2f} s into the stance (tilted "
                    f"{tilt:.2f} rad > {s.down_tilt:g}): damping only ({s.down_kd:g} N·m·s/rad); "
                    "a controller may take over",
                    {"phase": "down", "t_s": round(t, 3), "tilt_rad": round(tilt, 3)},
                )
            )
            return self._down
        speed = np.abs(reading.velocity[np.isfinite(reading.velocity)])
        self._max_speed = float(speed.max()) if speed.size else 0.0
        trot = self._trot
        if self._phase == "step" and trot is not None:
            if not trot.done:
                return self._trot_command(trot)
            # Stopped and still: the standing trot holds the robot from here (a posture
            # without its stance forces took the braked body over stiff legs: 0.2–0.35 m/s
            # backwards in 0.15 s, measured); the clock jumps to the hold.
            self._trotting = True
            t = (round(s.stance_s / self.period) + 1) * self.period
            self._clock.set(t, reading.time)
            self._reports.append(
                FallbackReport(
                    "WARN" if trot.timed_out else "OK",
                    f"fallback: trotted to a stop in {trot.elapsed_s:.2f} s"
                    + (
                        f", {trot.squaring_steps} step(s) in place to square the feet"
                        if trot.squaring_steps
                        else ""
                    )
                    + (" (out of time before the body was still)" if trot.timed_out else "")
                    + f"; standing on the trot's stance forces {s.hold_s:g} s",
                    {"phase": "hold", "stepped_s": round(trot.elapsed_s, 3),
                     "timed_out": trot.timed_out, "squaring_steps": trot.squaring_steps},
                )
            )
        if (
            not self._quiet
            and t >= s.stance_s + s.settle_s
            and self._max_speed < s.quiet_speed
            and self._level()
        ):
            self._quiet = True
            self._reports.append(
                FallbackReport(
                    "OK",
                    f"fallback: stance quiet after {t:.2f} s (fastest joint "
                    f"{self._max_speed:.2f} rad/s < {s.quiet_speed:g}); a controller may "
                    "take over with a command that starts from the measured pose",
                    {"phase": self._phase, "quiet_after_s": round(t, 3),
                     "max_joint_speed": round(self._max_speed, 3)},
                )
            )
        if t < s.stance_s:
            frac, dfrac = _min_jerk(t / s.stance_s)
            position = self._q0 + frac * (self._q_stance - self._q0)
            velocity = (dfrac / s.stance_s) * (self._q_stance - self._q0)
            return ImpedanceCommand(
                position,
                velocity,
                (1.0 - frac) * self._effort0,
                self._kp0 + frac * (s.kp - self._kp0),
                self._kd0 + frac * (s.kd - self._kd0),
                np.zeros(self._n, dtype=np.bool_),
            )
        sit_start = s.stance_s + s.hold_s
        if t < sit_start:
            self._enter("hold", t)
            if self._trotting and trot is not None:
                return self._trot_command(trot)
            return ImpedanceCommand.hold(self._q_stance, s.kp, s.kd)
        if t < sit_start + s.sit_s:
            if self._phase != "sit":
                self._sit_from(reading, trot.last if self._trotting and trot else None)
            self._enter("sit", t)
            frac, dfrac = _min_jerk((t - sit_start) / s.sit_s)
            gap = self._q_sit - self._q_stance
            return ImpedanceCommand(
                self._q_stance + frac * gap,
                (dfrac / s.sit_s) * gap,
                (1.0 - frac) * self._effort0,
                self._kp0 + frac * (s.kp - self._kp0),
                self._kd0 + frac * (s.kd - self._kd0),
                np.zeros(self._n, dtype=np.bool_),
            )
        self._enter("sat", t, reading)
        return ImpedanceCommand.hold(self._q_sit, s.kp, s.kd)

    def _trot_command(self, trot: StoppingTrot) -> ImpedanceCommand:
        """The stopping trot's command from the bridge's latest frame (the stance pose's hold
        if the frame is gone)."""
        frame = self._frame() if self._frame is not None else None
        if frame is None:
            s = self.settings
            return ImpedanceCommand.hold(
                trot.last.position if trot.last is not None else self._q_stance, s.kp, s.kd
            )
        return trot.command(frame)

    def _sit_from(self, reading: JointReading, last: ImpedanceCommand | None) -> None:
        """The sit starts from ``last`` (the standing trot's command: its positions, gains and
        stance torques blend into the sit's posture at the stand gains), else from the held
        stance (already at the stand gains, no torque)."""
        s = self.settings
        if last is None:
            self._kp0 = np.full(self._n, s.kp)
            self._kd0 = np.full(self._n, s.kd)
            self._effort0 = np.zeros(self._n)
            return
        feet = self.feet(reading.position)
        home_xy = self.footprint[:, :2]
        xy = np.where(np.isfinite(feet[:, :2]), feet[:, :2], home_xy)
        xy = np.clip(xy, home_xy - s.footprint_slack, home_xy + s.footprint_slack)
        self._q_stance = np.clip(last.position, self._lower, self._upper)
        self._q_sit = self.pose_at(self.sit_depth, xy)
        self._kp0 = last.kp.copy()
        self._kd0 = last.kd.copy()
        self._effort0 = np.where(np.isfinite(last.effort), last.effort, 0.0)

    def _level(self) -> bool:
        """The body tilts less than ``quiet_tilt`` (or no IMU says otherwise): joints can be
        still while the whole robot tips over its feet."""
        tilt = self._tilt()
        return tilt is None or tilt < self.settings.quiet_tilt

    def _tilt(self) -> float | None:
        """The body's tilt from upright (rad) by the IMU; ``None`` without one."""
        up = self._up() if self._up is not None else None
        if up is None or not math.isfinite(up[2]):
            return None
        return math.acos(max(-1.0, min(1.0, up[2])))

    def _enter(self, phase: str, t: float, reading: JointReading | None = None) -> None:
        if self._phase == phase:
            return
        self._phase = phase
        if phase == "hold" and self._trotting:
            return  # reported with the trot's end
        s = self.settings
        text = {
            "hold": f"fallback: stance reached after {t:.2f} s; holding it {s.hold_s:g} s",
            "sit": (
                f"fallback: no controller after {t:.2f} s; sitting down to {s.sit_height:g} m "
                f"over {s.sit_s:g} s"
            ),
            "sat": (
                f"fallback: sat down after {t:.2f} s{self._sat_height(reading)}, drives on "
                "holding the sit until a controller takes over"
            ),
        }[phase]
        self._reports.append(
            FallbackReport("WARN" if phase == "sit" else "OK", text, {"phase": phase,
                                                                       "t_s": round(t, 3)})
        )

    def _sat_height(self, reading: JointReading | None) -> str:
        """The body's height by the measured legs (the deepest foot's depth plus the foot radius,
        for a level body), beside the sit's set-point: the stand gains let the loaded legs
        give ≈ 2 cm (0.121 m measured for the 0.14 m set-point)."""
        depths = self.foot_depths(reading.position) if reading is not None else None
        if depths is None or not np.isfinite(depths).any():
            return f" (set-point {self.settings.sit_height:g} m)"
        height = float(np.nanmax(depths)) + self.settings.sit_height - self.sit_depth
        return f": body at {height:.3f} m by the legs (set-point {self.settings.sit_height:g} m)"

    def admits(self, command: ImpedanceCommand, reading: JointReading) -> str | None:
        if self._phase == "down":
            return None  # damping only: any controller may take the robot from the floor
        reason = self.refusal(command, reading)
        # the owner's stiff command refused: ``quiet`` is false (``safe``) until one is admitted
        self._refused_stiff = reason is not None and bool((command.kp > 0.0).any())
        return reason

    def refusal(self, command: ImpedanceCommand, reading: JointReading) -> str | None:
        s = self.settings
        if self._phase == "down":
            return None
        stiff = command.kp > 0.0
        if not self._quiet:
            return (
                f"the fallback stance is not yet quiet ({self._clock.elapsed:.2f} s in, "
                f"fastest joint {self._max_speed:.2f} rad/s; quiet after ≥ "
                f"{s.stance_s + s.settle_s:g} s below {s.quiet_speed:g} rad/s): a command "
                "computed before or during the stall would be applied to a robot still "
                "catching itself"
            )
        if not stiff.any():
            return (
                "damping only (kp = 0 on every joint) would drop the robot the fallback holds; "
                "send a posture that starts from the measured pose (a stand-up)"
            )
        gap = np.where(stiff, np.abs(command.position - reading.position), 0.0)
        gap = np.where(np.isfinite(gap), gap, 0.0)
        worst = int(np.argmax(gap))
        if gap[worst] > s.reentry_tolerance:
            leg = next((leg for leg in self.legs if worst in leg.joint_indices), None)
            joint = leg.joint_names[leg.joint_indices.index(worst)] if leg else str(worst)
            return (
                f"its target for {joint!r} (index {worst}) is {float(command.position[worst]):.3f}"
                f" rad, {float(gap[worst]):.2f} rad from the measured "
                f"{float(reading.position[worst]):.3f} rad (> {s.reentry_tolerance:g}): a "
                "controller takes over from where the robot is (a stand-up from the measured "
                "pose)"
            )
        return None

    def take_reports(self) -> list[FallbackReport]:
        reports, self._reports = self._reports, []
        return reports

    def cancel(self) -> None:
        self._reports = []
