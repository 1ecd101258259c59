"""The drive's limit guard: in every mode, each joint stays in its position range and speed limit.

Where it sits: :mod:`jointbus.drivers`, beside :mod:`.profiled_moves` and :mod:`.command_expiry`;
pure numpy, no I/O, no clock. The drivers that send their drives one command per control cycle —
``sim://`` (:mod:`.sim.driver`) and ``can://`` (:mod:`.can.driver`) — pass that command through
:meth:`LimitGuard.apply` right before it goes out, with the joints' measured state. ``bus://``
clients and the array node (``jointbus serve``, hb50's bridge) get it from the driver they serve.

**Why.** A command is checked when it arrives (:mod:`.limits`), but a speed, a current or an
impedance command with a target velocity says how to move, not where to stop: renewed, a
``speed("elbow", 1.15)`` took arm6's elbow to 4.83 rad (limit ±2.6 rad) and a ``current`` inside
the current limit spun its wrist at 4.44 rad/s (limit 3.0 rad/s), with nothing refused or
reported. A servo drive supervises its limits in every mode: approaching the end of its range it
decelerates so as to stop there, within the joint's acceleration, holds it there, and never lets
the joint turn faster than its speed limit. This module is that supervisor.

**The envelope.** Each joint has a range [``lower``, ``upper``] (its soft limits where the robot
file states them, else its position limits; rad or m), a speed limit ``v_max`` (rad/s or m/s) and a
deceleration ``a`` (its configured acceleration, rad/s² or m/s²). From where the joint will be at
the end of this cycle, ``p' = p + v·T``, the speed it may have towards each end is the speed from
which it can still stop there::

    v_up   =  min(v_max, sqrt(2·a·(upper − p')))     (0 at or beyond the end)
    v_down = −min(v_max, sqrt(2·a·(p' − lower)))

**The law.** The drive computes ``τ = τ_ff + kp·(p_ref − p) + kd·(v_ref − v)`` (the impedance law of
the MIT-mode and MD drives, and of the simulator's). The guard evaluates the command's law at the
measured state and lets it through as long as the torque it asks towards an end stays under the
envelope law ``τ_up = K·(v_up − v) + τ_load`` (and, away from it, above ``τ_down = K·(v_down − v)
+ τ_load``): the torque that brings the joint to the envelope speed within one cycle. ``K``
(N·m·s/rad, the guard's *gain*) is the joint's known inertia over one cycle, ``J / T``; ``τ_load``
(N·m) is what the last cycle's torque did *not* turn into acceleration of that inertia —
``τ_applied − J·a_measured``: friction, gravity, the links and the ground, a block — which a
driver that knows both passes in (a disturbance observer). Where the driver knows neither, ``K``
is the effort limit over a tenth of the speed limit and ``τ_load`` is 0. So a command far from the
envelope is applied as it was given (a blocked joint gets its full current within a few cycles,
as the observer learns the block), and only a joint about to outrun its envelope is touched. Such
a joint gets, for this cycle, the envelope law itself — ``kp = 0``, ``kd = K``, ``v_ref = v_up``
(or ``v_down``; inside the range never faster towards the end than the command's own speed, see
**Noise**), ``τ_ff = τ_load`` — which the drive computes in its own loop (time constant
``J / K = T``), so the braking follows the joint's speed between two host cycles; at the switch
the two laws ask the same torque (where the command's own speed is the lower, the law brakes
harder). A joint found beyond an end (pushed there by an external force) also gets a spring back
to that end, ``kp = K / (4·T)``, ``p_ref = the end`` (critically damped with ``kd = K``), so that
it returns rather than rests beyond it.

**Noise.** The guard decides from the *measured* state; the drive applies the law to the *true*
one. The envelope law is a speed target: to a joint truly slower than ``v_up`` it applies torque
towards the end. So a takeover triggered by sensor noise alone — a joint at rest read as moving
towards its end — pushed a joint that its command only damped. On the CAN twin with hb50's noise
(1σ 0.38 rad/s and 0.64 mrad; ``K`` = 12 N·m·s/rad, ``a`` = 80 rad/s²), knees resting 5 mrad
inside their end under ``kd = 1`` were past it after 28–146 cycles and 0.7–1.3 mrad past it
within 3 s (seeds 0–2; taken over in 55–57 % of the cycles), and reading the positions and
holding them — docs/CAN.md's first step — was refused (until 2026-12-06). A supervisor should
only take away. So, inside the range, the law's speed is never towards the end faster than the
command's *own* speed, nor away from the end: ``v_ref = min(v_up, max(v_own, 0))`` (towards the
lower end ``max(v_down, min(v_own, 0))``), with ``v_own = v_ref + (τ_ff + kp·(p_ref − p) −
τ_load) / kd`` the speed at which the command's law asks just the load torque (a command without
damping asks the same torque at every speed: ``v_own`` is unbounded the way it pushes, 0 if it
pushes neither way). That speed lies within [``v_down``, ``v_up``], so what goes out stays within
the envelope; a joint at rest now gets torque beyond the load towards an end only where its
command asks it, and a noise-triggered takeover of a damping command only damps (``K·(0 − v)``):
the same knees moved 0 mrad in 3 s (1.7–2.0 % of the cycles taken over). Beyond an end the bound
is not applied: there the envelope closes to a single torque, the return, which acts in full
whatever the command's own speed — bounding it too (a8d6fc4, reverted) gave a joint 0.125 rad
past its end 13.3 N·m back where the envelope asks 15. A noise band on the measured speed was not
chosen: it needs each sensor's noise figure, which the guard does not know for a real motor; one
wide enough for hb50 (3σ = 1.1 rad/s) is the whole envelope speed within 7.6 mrad of an end (at
80 rad/s²), so real motion there would go unguarded; and a reading beyond the band still pushes —
it makes the false takeover rarer, not harmless.

A joint whose *command* asks to go past an end — its law, at rest at that end, would push on: a
current, a velocity target, a position target beyond it — or faster than the speed limit is
*limited* in that cycle, held back: the drivers flag it
:attr:`~jointbus.messages.actarray.state.ActuatorState.LIMITED`, and the array node reports each
limit event on its status topic. Which limit held it is the envelope's bound that acted, kept in
:attr:`LimitGuard.speed_limited`: its *speed limit* where the joint could still stop at the end
from ``v_max`` (``√(2·a·room) ≥ v_max``), else the *end of its range* (braking for it, at rest
at it, pulled back from beyond it). The speed the joint measures cannot tell the two apart: the
guard cuts a command in the cycle *before* it would take the joint past ``v_max`` — 3.5 A on
arm6's wrist (limit 3 rad/s) is cut after its first 2 ms cycle, at 1.95 rad/s and 3 mrad from
where it started. Where a load alone would carry the joint into its end (the body's
weight on a folded knee when the drives come on), the envelope law takes over just the same, but
no command was cut short and nothing is flagged: the drive assists, and a joint that still ends up
past its limit is reported by what it measures (:mod:`jointbus.nodes.safety.limit_watch`).
Profiled speed moves never need the law: the profile generator ends a speed move towards an end
with a stop at it
(:meth:`~jointbus.drivers.sim.profile.ProfileGenerator.set_position_bounds`).

Cost: the law runs joint by joint in a small compiled core (``_limit_accel.c``, built by
``setup.py`` when a C compiler is present; ``JOINTBUS_NO_ACCEL=1`` skips it) in about a
microsecond for 12 joints; without it, in numpy — the reference the tests hold the core to —
about 25 calls on N-element arrays, 25–90 µs per cycle on our 2-vCPU VM depending on its load,
a tenth of the bridge's cycle budget (about 20 more in a cycle where it takes a joint over).
Either way it runs only while some joint is driven by a current or impedance command.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from jointbus import compiled_core

__all__ = ["LimitGuard"]


#: ``_limit_accel`` when it was built and not switched off (``JOINTBUS_NO_ACCEL``).
_CORE = compiled_core.load("jointbus.drivers._limit_accel")

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


class LimitGuard:
    """The limit supervisor of an N-joint array (see the module docstring).

    Arrays of length N, actuator space: ``lower`` / ``upper`` (rad or m; ±inf: unbounded),
    ``velocity_max`` (> 0; inf: unbounded), ``deceleration`` (> 0), ``gain`` (> 0: ``K``,
    N·m·s/rad or N·s/m); ``period`` is the control cycle, s. ``deceleration`` may change at run time
    (:meth:`set_deceleration`: a ``set_accel`` request changes the joint's acceleration).
    """

    __slots__ = (
        "_decel2",
        "_gain",
        "_lower",
        "_period",
        "_return_kp",
        "_upper",
        "_vmax",
        "limited",
        "speed_limited",
    )

    def __init__(
        self,
        lower: npt.ArrayLike,
        upper: npt.ArrayLike,
        *,
        velocity_max: npt.ArrayLike,
        deceleration: npt.ArrayLike,
        gain: npt.ArrayLike,
        period: float,
    ) -> None:
        self._lower = np.array(lower, dtype=np.float64)
        self._upper = np.array(upper, dtype=np.float64)
        n = self._lower.shape[0]
        self._vmax = _positive("velocity_max", velocity_max, n, allow_inf=True)
        self._decel2 = 2.0 * _positive("deceleration", deceleration, n, allow_inf=False)
        self._gain = _positive("gain", gain, n, allow_inf=False)
        if self._upper.shape != (n,) or bool((self._lower > self._upper).any()):
            raise ValueError(f"lower {self._lower}, upper {self._upper}: expected lower ≤ upper")
        if not (math.isfinite(period) and period > 0.0):
            raise ValueError(f"period = {period!r} s; expected a duration > 0")
        self._period = float(period)
        self._return_kp = self._gain / (4.0 * self._period)
        self.limited: BoolArray = np.zeros(n, dtype=np.bool_)
        """The joints the last :meth:`apply` held back (rewritten by each call: read, not kept)."""
        self.speed_limited: BoolArray = np.zeros(n, dtype=np.bool_)
        """Of :attr:`limited`, the joints held at their speed limit (the envelope's speed was
        ``v_max`` itself); the others are held at an end of their range. Rewritten with
        :attr:`limited` by each call."""

    def set_deceleration(self, indices: npt.NDArray[np.intp], values: FloatArray) -> None:
        """The deceleration (rad/s² or m/s², > 0) of ``indices`` from now on."""
        self._decel2[indices] = 2.0 * values

    def apply(
        self,
        guarded: BoolArray,
        *,
        position: FloatArray,
        velocity: FloatArray,
        p_ref: FloatArray,
        v_ref: FloatArray,
        torque: FloatArray,
        kp: FloatArray,
        kd: FloatArray,
        load: FloatArray | None = None,
    ) -> BoolArray:
        """Bound the command (``p_ref``, ``v_ref``, ``torque``, ``kp``, ``kd``, changed in place) of
        the ``guarded`` joints at the measured ``position`` / ``velocity`` and the estimated
        ``load`` torque (N·m; ``None``: 0); returns (and keeps in :attr:`limited`) the joints
        whose command it held back, and keeps in :attr:`speed_limited` those of them held at
        their speed limit. A joint whose measurement is NaN (a lost motor) is left alone: the
        guard cannot know where it is."""
        if _CORE is not None:
            _CORE.apply(
                guarded, position, velocity, p_ref, v_ref, torque, kp, kd, load,
                self._lower, self._upper, self._vmax, self._decel2, self._gain,
                self._return_kp, self._period, self.limited, self.speed_limited,
            )
            return self.limited
        return self.apply_reference(
            guarded, position=position, velocity=velocity, p_ref=p_ref, v_ref=v_ref,
            torque=torque, kp=kp, kd=kd, load=load,
        )

    def apply_reference(
        self,
        guarded: BoolArray,
        *,
        position: FloatArray,
        velocity: FloatArray,
        p_ref: FloatArray,
        v_ref: FloatArray,
        torque: FloatArray,
        kp: FloatArray,
        kd: FloatArray,
        load: FloatArray | None = None,
    ) -> BoolArray:
        """:meth:`apply` in numpy: the reference the compiled core is held to (and what runs
        without it)."""
        limited = self.limited
        limited[:] = False
        self.speed_limited[:] = False
        if not guarded.any():
            return limited
        p = position
        v = velocity
        with np.errstate(invalid="ignore"):
            ahead = p + v * self._period
            room_up = np.maximum(self._upper - ahead, 0.0)
            room_down = np.maximum(ahead - self._lower, 0.0)
            v_up = np.minimum(np.sqrt(self._decel2 * room_up), self._vmax)
            v_down = -np.minimum(np.sqrt(self._decel2 * room_down), self._vmax)
            # The envelope law towards each end, and the spring back from beyond it (its pull
            # capped so that it never asks the joint back faster than its speed limit).
            reach = self._vmax * (4.0 * self._period)
            over_up = np.clip(self._upper - p, -reach, 0.0)
            over_down = np.clip(self._lower - p, 0.0, reach)
            tau_up = self._gain * (v_up - v) + self._return_kp * over_up
            tau_down = self._gain * (v_down - v) + self._return_kp * over_down
            if load is not None:
                tau_up += load
                tau_down += load
            tau = torque + kp * (p_ref - p) + kd * (v_ref - v)
            up = guarded & (tau > tau_up)
            down = guarded & (tau < tau_down)
        if not (up.any() or down.any()):
            return limited
        # Held back: the command itself asks to go past the end — its law, at rest at the end,
        # pushes on. Where a load alone would have carried the joint there, the envelope law takes
        # over as well, but no command was cut short.
        end_up = np.where(np.isfinite(self._upper), self._upper, p)
        end_down = np.where(np.isfinite(self._lower), self._lower, p)
        # Summed in the compiled core's order: near 0 another order rounds to another sign.
        limited |= up & (torque + kp * (p_ref - end_up) + kd * v_ref > 0.0)
        limited |= down & (torque + kp * (p_ref - end_down) + kd * v_ref < 0.0)
        # Which bound held it: the speed limit where the envelope's speed was v_max itself (down
        # wins where both sides hold, as for v_ref below); else the end of the range.
        np.logical_and(
            limited, np.where(down, -v_down, v_up) >= self._vmax, out=self.speed_limited
        )
        # Inside the range, the law's target speed is never towards the end faster than the
        # command's own speed (module docstring, "Noise"): where the command's law, at the
        # measured position, asks just the load torque; without damping it asks the same torque
        # at every speed — an unbounded speed the way it pushes, none if it pushes neither way.
        # Beyond an end the envelope law acts in full: its return is not the command's to bound.
        rest = torque + kp * (p_ref - p)
        if load is not None:
            rest = rest - load
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            own = np.where(
                kd > 0.0,
                v_ref + rest / kd,
                np.where(rest > 0.0, math.inf, np.where(rest < 0.0, -math.inf, 0.0)),
            )
        inside = ~((over_up < 0.0) | (over_down > 0.0))
        # fmin / fmax: the C core's, which ignore a NaN operand
        to_up = np.where(inside, np.fmin(v_up, np.fmax(own, 0.0)), v_up)
        to_down = np.where(inside, np.fmax(v_down, np.fmin(own, 0.0)), v_down)
        taken = up | down
        beyond_up = up & (over_up < 0.0)
        beyond_down = down & (over_down > 0.0)
        beyond = beyond_up | beyond_down
        kp[taken] = 0.0
        kd[taken] = self._gain[taken]
        torque[taken] = 0.0 if load is None else load[taken]
        v_ref[up] = to_up[up]
        v_ref[down] = to_down[down]
        kp[beyond] = self._return_kp[beyond]
        p_ref[beyond_up] = (p + over_up)[beyond_up]
        p_ref[beyond_down] = (p + over_down)[beyond_down]
        return limited


def _positive(field: str, values: npt.ArrayLike, n: int, *, allow_inf: bool) -> FloatArray:
    array = np.array(values, dtype=np.float64)
    if array.ndim == 0:
        array = np.full(n, float(array))
    finite_ok = np.isfinite(array) | (allow_inf & np.isposinf(array))
    if array.shape != (n,) or not bool((finite_ok & (array > 0.0)).all()):
        raise ValueError(f"{field} = {array}; expected {n} values > 0")
    return array
