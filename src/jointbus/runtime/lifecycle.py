"""The lifecycle of a node: configure, activate, deactivate, shut down — and start again.

Where it sits: :mod:`jointbus.runtime`, used by :class:`jointbus.runtime.node.Node`. Plain state
machine: it knows nothing of the bus, only which transition is allowed from which state and how to
run one so that a failure leaves the state as it was.

The states and transitions are ROS 2's managed-node ones (without ``cleanup``), so a ROS user can
read them without a manual::

    UNCONFIGURED --configure--> INACTIVE --activate--> ACTIVE
                                INACTIVE <--deactivate-- ACTIVE
    any state but FINALIZED --shutdown--> FINALIZED

Why a lifecycle at all: a robot program must be able to stop sending commands (deactivate) and
start again (activate) without tearing down the process, its bus, its Zenoh session and its
subscriptions — e.g. when the operator disarms and re-arms, or when a supervisor restarts a
controller after a fault. Deactivate → activate may be repeated any number of times in one process.

Failure rules:

- an invalid transition (``activate`` an unconfigured node, anything after shutdown) raises
  :class:`LifecycleError` and changes nothing;
- a transition requested while another one runs (e.g. from inside a hook) raises
  :class:`LifecycleError` too;
- when the work of ``configure`` or ``activate`` raises, the state stays what it was and the error
  is re-raised as :class:`LifecycleHookError` (the work is expected to undo what it started);
- ``deactivate`` and ``shutdown`` always complete — stopping must never be refused, because a
  faulty hook must not keep a robot moving — and a hook error is re-raised afterwards as
  :class:`LifecycleHookError` with ``completed=True``.
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Callable
from typing import Final


class LifecycleState(enum.Enum):
    """Where a node is in its lifecycle (ROS 2's primary states)."""

    UNCONFIGURED = "unconfigured"
    INACTIVE = "inactive"
    ACTIVE = "active"
    FINALIZED = "finalized"


class Transition(enum.Enum):
    """A requested change of :class:`LifecycleState`."""

    CONFIGURE = "configure"
    ACTIVATE = "activate"
    DEACTIVATE = "deactivate"
    SHUTDOWN = "shutdown"


_S = LifecycleState
#: transition -> (states it may start from, state it ends in).
TRANSITIONS: Final[dict[Transition, tuple[frozenset[LifecycleState], LifecycleState]]] = {
    Transition.CONFIGURE: (frozenset({_S.UNCONFIGURED}), _S.INACTIVE),
    Transition.ACTIVATE: (frozenset({_S.INACTIVE}), _S.ACTIVE),
    Transition.DEACTIVATE: (frozenset({_S.ACTIVE}), _S.INACTIVE),
    Transition.SHUTDOWN: (frozenset({_S.UNCONFIGURED, _S.INACTIVE, _S.ACTIVE}), _S.FINALIZED),
}
#: Transitions that always complete, even when their hook raises.
ALWAYS_COMPLETE: Final = frozenset({Transition.DEACTIVATE, Transition.SHUTDOWN})


class LifecycleError(RuntimeError):
    """A transition that is not allowed from the node's current state; nothing changed.

    Attributes: ``node``, ``transition``, ``state`` (the current state) and ``allowed`` (states the
    transition may start from).
    """

    def __init__(
        self,
        node: str,
        transition: Transition,
        state: LifecycleState,
        reason: str = "",
    ) -> None:
        self.node = node
        self.transition = transition
        self.state = state
        self.allowed = TRANSITIONS[transition][0]
        allowed = " or ".join(sorted(s.value for s in self.allowed))
        why = reason or f"expected the node to be {allowed}"
        super().__init__(f"node {node!r}: cannot {transition.value} while {state.value}: {why}")


class LifecycleHookError(RuntimeError):
    """The work of a transition (a user hook) raised; the original error is ``__cause__``.

    ``completed`` tells whether the transition still happened (always for deactivate and
    shutdown, never for configure and activate); ``state`` is the state the node is in now.
    """

    def __init__(
        self,
        node: str,
        transition: Transition,
        state: LifecycleState,
        completed: bool,
        error: BaseException,
    ) -> None:
        self.node = node
        self.transition = transition
        self.state = state
        self.completed = completed
        self.error = error
        outcome = "completed anyway" if completed else "was not made"
        super().__init__(
            f"node {node!r}: {transition.value} failed ({type(error).__name__}: {error}); "
            f"the transition {outcome}, the node is {state.value}"
        )


class Lifecycle:
    """The state of one node and the rule for changing it; thread-safe, one transition at a time."""

    def __init__(self, node: str) -> None:
        self.node = node
        self._state = LifecycleState.UNCONFIGURED
        self._lock = threading.Lock()
        self._busy: Transition | None = None

    @property
    def state(self) -> LifecycleState:
        """The current state."""
        return self._state

    def check(self, transition: Transition) -> None:
        """Raise :class:`LifecycleError` if ``transition`` is not allowed right now."""
        with self._lock:
            self._check(transition)

    def _check(self, transition: Transition) -> None:
        if self._busy is not None:
            raise LifecycleError(
                self.node,
                transition,
                self._state,
                f"the {self._busy.value} transition is still running",
            )
        if self._state not in TRANSITIONS[transition][0]:
            raise LifecycleError(self.node, transition, self._state)

    def run(self, transition: Transition, work: Callable[[], None]) -> LifecycleState:
        """Check ``transition``, run ``work()`` and move to the target state; returns it.

        If ``work`` raises: for configure / activate the state is unchanged; for deactivate /
        shutdown the state changes anyway. Either way a :class:`LifecycleHookError` is raised.
        """
        with self._lock:
            self._check(transition)
            self._busy = transition
        target = TRANSITIONS[transition][1]
        error: Exception | None = None
        try:
            work()
        except Exception as exc:
            error = exc
        with self._lock:
            self._busy = None
            completed = error is None or transition in ALWAYS_COMPLETE
            if completed:
                self._state = target
            state = self._state
        if error is not None:
            raise LifecycleHookError(self.node, transition, state, completed, error) from error
        return state


__all__ = [
    "ALWAYS_COMPLETE",
    "TRANSITIONS",
    "Lifecycle",
    "LifecycleError",
    "LifecycleHookError",
    "LifecycleState",
    "Transition",
]
