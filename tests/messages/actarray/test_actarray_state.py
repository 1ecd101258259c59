"""ActuatorState / ActuatorType: Player's wire values, flag behaviour."""

from __future__ import annotations

import enum

from jointbus.messages.actarray import ActuatorState, ActuatorType


def test_state_flags_have_players_values_and_combine() -> None:
    assert issubclass(ActuatorState, enum.IntFlag)
    assert [(s.name, int(s)) for s in ActuatorState] == [
        ("IDLE", 1),
        ("MOVING", 2),
        ("BRAKED", 4),
        ("STALLED", 8),
        ("UNPOWERED", 16),  # jointbus's addition, on the next free bit: Player's stay as they are
        ("LIMITED", 32),  # the drive holds the joint at a position or speed limit
        ("STALE", 64),  # a reading older than its source's rate promises (bus://, issue 20 item 8)
    ]
    both = ActuatorState.BRAKED | ActuatorState.STALLED
    assert int(both) == 12
    assert ActuatorState.STALLED in both and ActuatorState.MOVING not in both
    assert ActuatorState(12) == both


def test_types_have_players_values() -> None:
    assert [(t.name, int(t)) for t in ActuatorType] == [("LINEAR", 1), ("ROTARY", 2)]
