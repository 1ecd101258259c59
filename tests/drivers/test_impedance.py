"""ImpedanceCommand: the device API's joint-space impedance value; CheckedImpedance: made only by
a command check."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.drivers.impedance import CheckedImpedance, ImpedanceCommand, _certify
from jointbus.messages.errors import ValidationError
from support.profiled import python_calls


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


def test_a_check_certifies_its_arrays_without_python_calls_and_others_as_the_constructor() -> None:
    """The command check hands over read-only float64 rows and a read-only bool brake array,
    every command of the 500 Hz path: certified as they are, without the constructor's eight
    Python calls (≈ 2 µs, several times that on the bridge's cold loop thread). Arrays of any
    other kind go through the constructor, which copies them read-only, as before."""
    block = np.arange(15.0).reshape(5, 3)
    block.flags.writeable = False
    rows = list(block)  # read-only row views, as the check's
    brake = np.array([False, True, False])
    brake.flags.writeable = False
    limits, has_brake = (), (False, True, False)
    kept, calls = python_calls(_certify, *rows, brake, limits, has_brake, None)
    assert [c for c in calls if c.startswith(("impedance.py:", "<string>:"))] == []
    assert type(kept) is CheckedImpedance
    fields = ImpedanceCommand.FIELDS
    assert all(getattr(kept, f) is row for f, row in zip(fields, rows, strict=True))
    assert kept.brake is brake and kept.limits is limits and kept.has_brake is has_brake
    writable = np.arange(15.0).reshape(5, 3)
    for given_rows, given_brake in (
        (list(writable), brake),  # writable float64
        ([r.astype(np.float32) for r in rows], brake),  # not float64
        (list(rows), np.array([False, True, False])),  # a writable brake array
        ([r.tolist() for r in rows], [False, True, False]),  # not arrays
    ):
        copied = _certify(*given_rows, given_brake, limits, has_brake, None)  # type: ignore[arg-type]
        assert type(copied) is CheckedImpedance and copied == kept
        assert all(not getattr(copied, f).flags.writeable for f in (*fields, "brake"))
        assert all(getattr(copied, f).dtype == np.float64 for f in fields)
