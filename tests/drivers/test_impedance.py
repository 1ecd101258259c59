"""ImpedanceCommand: the device API's joint-space impedance value; CheckedImpedance: made only by
a command check."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.drivers.impedance import CheckedImpedance, ImpedanceCommand
from jointbus.messages.errors import ValidationError


def test_fields_become_read_only_float64_arrays_and_a_callers_array_is_copied() -> None:
    mine = np.array([0.1, 0.2])
    cmd = ImpedanceCommand(mine, [0, 0], (0.0, 0.0), [1, 2], [0.5, 0.5], [False, True])
    assert cmd.position.dtype == np.float64 and cmd.kp.dtype == np.float64
    assert cmd.brake.dtype == np.bool_ and cmd.brake.tolist() == [False, True]
    mine[0] = 9.0  # the caller's array changes: the command does not
    assert cmd.position[0] == 0.1
    with pytest.raises(ValueError, match="read-only"):
        cmd.position[0] = 1.0


def test_hold_and_damping_broadcast_gains_and_leave_the_rest_zero() -> None:
    hold = ImpedanceCommand.hold([0.1, 0.2, 0.3], kp=40.0, kd=[1.0, 2.0, 3.0])
    assert hold.kp.tolist() == [40.0] * 3 and hold.kd.tolist() == [1.0, 2.0, 3.0]
    assert hold.velocity.tolist() == [0.0] * 3 and hold.effort.tolist() == [0.0] * 3
    assert hold.count == 3 and not hold.brake.any()
    damping = ImpedanceCommand.damping(2, 4.5)
    assert damping.kp.tolist() == [0.0, 0.0] and damping.kd.tolist() == [4.5, 4.5]


@pytest.mark.parametrize(
    ("field", "value"),
    [("position", "abc"), ("velocity", [[0.0, 1.0]]), ("kp", [object()]), ("brake", [1, 0])],
)
def test_a_value_that_is_not_numbers_per_joint_is_refused_naming_the_field(
    field: str, value: object
) -> None:
    with pytest.raises(ValidationError) as info:
        ImpedanceCommand.hold([0.0, 0.0], 1.0, 1.0).replace(**{field: value})
    assert info.value.field == field


@given(st.lists(st.floats(-10, 10), min_size=1, max_size=6))
def test_equality_compares_the_arrays(positions: list[float]) -> None:
    a = ImpedanceCommand.hold(positions, 10.0, 1.0)
    assert a == ImpedanceCommand.hold(list(positions), 10.0, 1.0)
    assert a != a.replace(kd=[2.0] * len(positions))


def test_a_checked_command_is_made_only_by_a_check_and_a_change_makes_it_plain() -> None:
    plain = ImpedanceCommand.hold([0.0], 1.0, 0.1)
    with pytest.raises(TypeError, match="command check"):
        CheckedImpedance(  # type: ignore[call-arg]
            plain.position, plain.velocity, plain.effort, plain.kp, plain.kd, plain.brake,
            (), (False,), None, None,
        )
