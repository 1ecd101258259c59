"""JointCommand's float fields from a controller's arrays in one pass (command_fields, its core).

The compiled core and the Python reference must give the same fields, bit for bit, for every
input — the same float32 rounding, the same refusals (``None``: NaN, ±inf, beyond float32, a
negative gain) — and ``JOINTBUS_NO_ACCEL=1`` runs the reference. That ``from_joint_arrays``
equals the constructor is ``test_joint_command.py``'s.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from jointbus.robots.hb50.messages import command_fields as cf
from support.accel import assert_runs_without_accel

needs_core = pytest.mark.skipif(not cf.ACCELERATED, reason="_command_accel not built or disabled")

#: Every float64 a controller's arithmetic can produce: ordinary, NaN, ±inf, beyond float32, at
#: float32's overflow threshold, subnormal, negative zero.
values = st.one_of(
    st.floats(-1e3, 1e3),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([
        3.4028234663852886e38, 3.40282350e38, 3.4028235677973366e38, -3.4028235677973362e38,
        1e-45, 5e-324, -0.0, -1e-46, float("nan"),
    ]),
)


def five_arrays(n: int) -> st.SearchStrategy[tuple[np.ndarray, ...]]:
    one = st.lists(values, min_size=n, max_size=n).map(lambda v: np.array(v, dtype=np.float64))
    return st.tuples(one, one, one, one, one)


def bits(fields: cf.CommandFields | None) -> object:
    """The fields as their IEEE bits (``==`` would take -0.0 for 0.0)."""
    if fields is None:
        return None
    return tuple(tuple(struct.pack("<d", v) for v in field) for field in fields)


@needs_core
@given(st.integers(0, 16).flatmap(five_arrays))
@example((np.array([-0.0]), np.array([0.0]), np.array([1.0]), np.array([2.0]), np.array([3.0])))
@example((np.array([-1e-46]), np.zeros(1), np.zeros(1), np.zeros(1), np.zeros(1)))
def test_the_core_equals_the_reference_bit_for_bit(arrays: tuple[np.ndarray, ...]) -> None:
    assert bits(cf._CORE.command_fields(*arrays)) == bits(cf.command_fields_python(*arrays))


@needs_core
def test_refusals_are_none_and_good_values_are_rounded_to_float32() -> None:
    good = [np.full(3, 0.1) for _ in range(5)]
    fields = cf.command_fields(*good)
    assert fields is not None
    assert fields[0] == (0.10000000149011612,) * 3  # float32's nearest to 0.1
    assert all(type(v) is float for field in fields for v in field)
    for k, bad in [(0, -1.0), (1, -0.5), (2, float("nan")), (3, float("inf")), (4, 3.5e38)]:
        arrays = [a.copy() for a in good]
        arrays[k][1] = bad
        assert cf.command_fields(*arrays) is None, (k, bad)
    # a negative target is a target, not a gain
    arrays = [a.copy() for a in good]
    arrays[2][0] = arrays[3][0] = arrays[4][0] = -2.0
    assert cf.command_fields(*arrays) is not None


def test_other_layouts_go_through_the_reference_and_other_lengths_are_refused() -> None:
    base = [np.linspace(0.0, 1.0, 6) for _ in range(5)]
    strided = np.linspace(0.0, 1.0, 12)[::2]  # not C-contiguous
    single = base[0].astype(np.float32)  # not float64
    assert cf.command_fields(strided, *base[1:]) == cf.command_fields_python(strided, *base[1:])
    assert cf.command_fields(single, *base[1:]) == cf.command_fields_python(single, *base[1:])
    with pytest.raises(ValueError, match="expected 6 each"):
        cf.command_fields(*base[:4], np.zeros(5))


def test_disabling_the_core_builds_the_same_commands_in_python() -> None:
    script = (
        "import numpy as np\n"
        "from jointbus.robots.hb50.messages import command_fields, JointCommand\n"
        "from jointbus.messages.std_msgs import Header\n"
        "assert not command_fields.ACCELERATED\n"
        "a = np.array([0.1, 2.0])\n"
        "m = JointCommand.from_joint_arrays(Header(), 'c', ('a', 'b'), kp=a, kd=a, t_pos=a,\n"
        "    t_vel=a, t_trq=a)\n"
        "assert m.kp == (0.10000000149011612, 2.0), m.kp\n"
    )
    assert_runs_without_accel(script)
