"""State flags: a real bit field with one rule per actuator, and the documented array reduction."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.drivers.array_state import actuator_states, array_state
from jointbus.messages.actarray import ActuatorData, ActuatorState

IDLE, MOVING, BRAKED, STALLED, STALE = (
    ActuatorState.IDLE,
    ActuatorState.MOVING,
    ActuatorState.BRAKED,
    ActuatorState.STALLED,
    ActuatorState.STALE,
)


def test_per_actuator_rule() -> None:
    states = actuator_states(
        moving=[False, True, False, True, False],
        braked=[False, False, True, True, True],
        stalled=[False, False, False, False, True],
    )
    assert [ActuatorState(s) for s in states] == [IDLE, MOVING, BRAKED, MOVING, BRAKED | STALLED]


@given(st.lists(st.tuples(st.booleans(), st.booleans(), st.booleans()), min_size=1, max_size=16))
def test_flags_are_always_a_valid_bit_field(facts: list[tuple[bool, bool, bool]]) -> None:
    moving, braked, stalled = (np.array(column) for column in zip(*facts, strict=True))
    for state, m, b, s in zip(actuator_states(moving, braked, stalled), moving, braked, stalled,
                              strict=True):
        flags = ActuatorState(int(state))
        ActuatorData(0.0, 0.0, 0.0, 0.0, flags)  # the message accepts it (no MOVING|BRAKED)
        assert bin(int(flags & (IDLE | MOVING | BRAKED))).count("1") == 1
        assert bool(flags & MOVING) == m
        assert bool(flags & STALLED) == s
        assert bool(flags & BRAKED) == (b and not m)


def test_shape_mismatch_is_an_error() -> None:
    with pytest.raises(ValueError, match="one shape"):
        actuator_states([True], [True, False], [False])


@pytest.mark.parametrize(
    ("states", "has_brakes", "expected"),
    [
        ([IDLE, MOVING, BRAKED], None, MOVING),
        ([IDLE, IDLE], None, IDLE),
        ([BRAKED, BRAKED], None, BRAKED),
        ([BRAKED, IDLE], None, IDLE),  # not every actuator braked
        ([BRAKED, IDLE], [True, False], BRAKED),  # ...but every one that has a brake is
        ([IDLE, IDLE], [False, False], IDLE),  # no brakes at all: never BRAKED
        ([IDLE, IDLE | STALLED], None, IDLE | STALLED),
        ([MOVING, BRAKED | STALLED], None, MOVING | STALLED),
        ([IDLE, 0], None, ActuatorState(0)),  # one unknown → motion unknown
        ([MOVING, 0], None, MOVING),  # ...unless something is known to move
        ([0, IDLE | STALLED], None, STALLED),
        ([], None, ActuatorState(0)),
        # a stale reading makes the array's state stale: it is an old one too
        ([IDLE | STALE, IDLE | STALE], None, IDLE | STALE),
        ([MOVING | STALE, BRAKED | STALE], None, MOVING | STALE),
    ],
)
def test_array_reduction(
    states: list[int], has_brakes: list[bool] | None, expected: ActuatorState
) -> None:
    assert array_state(states, has_brakes) == expected


@given(st.lists(st.sampled_from([1, 2, 4, 9, 12, 10]), min_size=1, max_size=12))
def test_reduction_is_itself_a_valid_state(states: list[int]) -> None:
    result = array_state(states)
    ActuatorData(0.0, 0.0, 0.0, 0.0, result)
    assert bool(result & MOVING) == any(s & MOVING for s in states)
    assert bool(result & STALLED) == any(s & STALLED for s in states)


def test_has_brakes_length_is_checked() -> None:
    with pytest.raises(ValueError, match="has_brakes"):
        array_state([IDLE, IDLE], [True])


UNPOWERED = ActuatorState.UNPOWERED


def test_unpowered_actuators_never_say_idle() -> None:
    """Item 20 of issue 11: with the drive stage off the flags said IDLE; now they say so."""
    states = actuator_states(
        moving=[False, True, False, False],
        braked=[False, False, True, False],
        stalled=[False, False, False, False],
        powered=[False, False, False, True],
    )
    assert [ActuatorState(s) for s in states] == [
        UNPOWERED,
        UNPOWERED | MOVING,
        UNPOWERED | BRAKED,
        IDLE,
    ]


@given(
    st.lists(
        st.tuples(st.booleans(), st.booleans(), st.booleans(), st.booleans()),
        min_size=1,
        max_size=16,
    )
)
def test_power_state_is_always_a_valid_bit_field(
    facts: list[tuple[bool, bool, bool, bool]],
) -> None:
    moving, braked, stalled, powered = (np.array(column) for column in zip(*facts, strict=True))
    for state, p in zip(actuator_states(moving, braked, stalled, powered), powered, strict=True):
        flags = ActuatorState(int(state))
        ActuatorData(0.0, 0.0, 0.0, 0.0, flags)  # the message accepts it
        assert bool(flags & UNPOWERED) == (not p)
        assert not (flags & IDLE and flags & UNPOWERED)


@pytest.mark.parametrize(
    ("states", "expected"),
    [
        ([UNPOWERED, UNPOWERED], UNPOWERED),
        ([UNPOWERED, IDLE], UNPOWERED),
        ([UNPOWERED | MOVING, UNPOWERED], UNPOWERED | MOVING),
        ([UNPOWERED | BRAKED, UNPOWERED | BRAKED], UNPOWERED | BRAKED),
    ],
)
def test_array_with_an_unpowered_actuator_is_not_idle(
    states: list[ActuatorState], expected: ActuatorState
) -> None:
    assert array_state(states) == expected
