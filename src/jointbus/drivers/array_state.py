"""Per-actuator state flags from what a driver measures, and their reduction to one array state.

Where it sits: :mod:`jointbus.drivers`, above :mod:`jointbus.messages.actarray.state`. Every driver
reports three facts per actuator — moving, braked, stalled — and :func:`actuator_states` turns
them into Player's :class:`~jointbus.messages.actarray.state.ActuatorState` bit field with one rule
for every backend, so the flags mean the same thing from the simulator and from CAN motors.

**Per actuator** (:func:`actuator_states`):

- ``MOVING`` if it moves (or a commanded move is under way, see the drivers); otherwise
  ``BRAKED`` if its brake is engaged; otherwise ``IDLE`` — unless its drive stage is off.
  At most one of the three is set, so ``MOVING`` and ``BRAKED`` never appear together, nor
  ``IDLE`` and ``MOVING``.
- ``UNPOWERED`` when its drive stage is off: it then never says ``IDLE`` (a limp joint is not
  idling, ready to move) — ``UNPOWERED`` alone when still, ``UNPOWERED | MOVING`` when it falls,
  ``UNPOWERED | BRAKED`` when its brake holds it.
- A braked actuator that moves anyway (a slipping brake, an external force above the holding
  torque) reports ``MOVING``: that it moves is the fact that matters to whoever stands next to
  it.
- ``STALLED`` is added on top when the drive reports a stall (pushing without moving), so
  ``IDLE | STALLED`` (a blocked joint) and ``BRAKED | STALLED`` (a drive fighting its brake) occur.
- ``LIMITED`` is added on top when the drive's limit guard holds the joint back at its position
  range or speed limit (:mod:`jointbus.drivers.limit_guard`): ``MOVING | LIMITED`` while it
  brakes, ``IDLE | LIMITED`` once it is held at the limit, for as long as its command asks for
  more (a joint the command watchdog stopped there rests ``IDLE``).

**Array-wide** (:func:`array_state`), for a status line or an "is the arm still?" check:

1. ``MOVING`` if any actuator is ``MOVING`` — the array is in motion;
2. otherwise ``BRAKED`` if every actuator that *has* a brake is ``BRAKED`` (all actuators when the
   caller does not say which have brakes) and at least one does;
3. otherwise ``IDLE`` — all still, not (all) braked — unless an actuator is ``UNPOWERED``;
4. ``STALLED`` is added if any actuator is ``STALLED``, ``UNPOWERED`` if any is ``UNPOWERED``,
   ``LIMITED`` if any is ``LIMITED``, ``STALE`` if any reading is ``STALE`` (the array's state
   is then an old one too).

An actuator whose state is unknown (``0``) makes the array's motion unknown too: unless another
actuator is ``MOVING`` (which is known), the result has neither ``IDLE`` nor ``BRAKED`` — only
``STALLED`` if some actuator stalls, else ``0``. An empty array has state ``0``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from jointbus.messages.actarray.state import ActuatorState

__all__ = ["actuator_states", "array_state"]

_IDLE = int(ActuatorState.IDLE)
_MOVING = int(ActuatorState.MOVING)
_BRAKED = int(ActuatorState.BRAKED)
_STALLED = int(ActuatorState.STALLED)
_UNPOWERED = int(ActuatorState.UNPOWERED)
_LIMITED = int(ActuatorState.LIMITED)
_STALE = int(ActuatorState.STALE)


def _state(moving: bool, braked: bool, stalled: bool, powered: bool) -> int:
    """The rule of the module docstring for one actuator."""
    state = _MOVING if moving else _BRAKED if braked else _IDLE if powered else 0
    if not powered:
        state |= _UNPOWERED
    if stalled:
        state |= _STALLED
    return state


#: The rule for every combination of the four facts, indexed by
#: ``moving + 2·braked + 4·stalled + 8·powered``: a bridge reads the states of every actuator at
#: 500 Hz–1 kHz, and one table look-up per array costs a third of evaluating the rule with
#: numpy's ``where`` for each outcome.
_STATES = np.array(
    [_state(bool(i & 1), bool(i & 2), bool(i & 4), bool(i & 8)) for i in range(16)],
    dtype=np.uint8,
)


def actuator_states(
    moving: npt.ArrayLike,
    braked: npt.ArrayLike,
    stalled: npt.ArrayLike,
    powered: npt.ArrayLike = True,
    limited: npt.ArrayLike | None = None,
) -> npt.NDArray[np.uint8]:
    """The :class:`ActuatorState` bits of N actuators (uint8 array) from boolean arrays.

    ``powered`` (one per actuator, or one for all) says whose drive stage is on; ``limited``
    (one per actuator, or ``None``: none) whom the drive holds back at a limit. See the module
    docstring for the rule. Raises ``ValueError`` if the arrays differ in shape.
    """
    m = np.asarray(moving, dtype=np.bool_)
    b = np.asarray(braked, dtype=np.bool_)
    s = np.asarray(stalled, dtype=np.bool_)
    p = np.asarray(powered, dtype=np.bool_)
    if not (m.shape == b.shape == s.shape) or m.ndim != 1 or p.shape not in ((), m.shape):
        raise ValueError(
            f"moving, braked, stalled and powered must be 1-D arrays of one shape; got {m.shape}, "
            f"{b.shape}, {s.shape}, {p.shape}"
        )
    index = np.multiply(s, 4, dtype=np.uint8)
    index += np.multiply(b, 2, dtype=np.uint8)
    index += m
    index += np.multiply(p, 8, dtype=np.uint8)
    states: npt.NDArray[np.uint8] = _STATES[index]
    if limited is not None:
        lim = np.asarray(limited, dtype=np.bool_)
        if lim.shape != m.shape:
            raise ValueError(f"limited must have the shape of moving {m.shape}; got {lim.shape}")
        states |= np.where(lim, _LIMITED, 0).astype(np.uint8)
    return states


def array_state(
    states: Sequence[int] | npt.NDArray[np.integer],
    has_brakes: Sequence[bool] | npt.NDArray[np.bool_] | None = None,
) -> ActuatorState:
    """One state for the whole array (see the module docstring for the rule).

    ``states`` are per-actuator :class:`ActuatorState` values (or their ints); ``has_brakes``
    marks the actuators fitted with a brake (e.g. from the array geometry), so that an arm whose
    wrist has no brake still counts as braked when every brake is on.
    """
    s = np.asarray(states, dtype=np.int64).reshape(-1)
    if s.size == 0:
        return ActuatorState(0)
    if has_brakes is None:
        fitted = np.ones(s.shape, dtype=np.bool_)
    else:
        fitted = np.asarray(has_brakes, dtype=np.bool_).reshape(-1)
        if fitted.shape != s.shape:
            raise ValueError(
                f"has_brakes has {fitted.size} entries for {s.size} actuators; expected one each"
            )
    result = _STALLED if (s & _STALLED).any() else 0
    if (s & _LIMITED).any():
        result |= _LIMITED
    if (s & _STALE).any():
        result |= _STALE
    unpowered = bool((s & _UNPOWERED).any())
    if unpowered:
        result |= _UNPOWERED
    if (s & _MOVING).any():
        return ActuatorState(result | _MOVING)
    if ((s & (_IDLE | _BRAKED | _UNPOWERED)) == 0).any():  # some actuator does not know its state
        return ActuatorState(result)
    if fitted.any() and ((s[fitted] & _BRAKED) != 0).all():
        return ActuatorState(result | _BRAKED)
    return ActuatorState(result if unpowered else result | _IDLE)
