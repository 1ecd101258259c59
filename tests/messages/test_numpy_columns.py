"""numpy_columns: the column checks behind the one-pass builders decide exactly as numpy does."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from jointbus.messages.numpy_columns import float64_lists, has_infinity, int_list, names_ok

VALUES = st.one_of(
    st.floats(),  # NaN and infinities included
    st.sampled_from((math.inf, -math.inf, math.nan, 1e308, -1e308)),  # sums that overflow
)


@given(st.lists(st.lists(VALUES, max_size=12), max_size=6))
def test_has_infinity_is_numpys_isinf_any(columns: list[list[float]]) -> None:
    expected = any(bool(np.isinf(np.array(c, dtype=np.float64)).any()) for c in columns)
    assert has_infinity(columns) is expected


def test_float64_lists_takes_only_1d_float64_arrays_of_the_count() -> None:
    a = np.array([0.5, math.nan, -2.0])
    lists = float64_lists(3, a)
    assert lists is not None and lists[0][0] == 0.5 and type(lists[0][0]) is float
    assert float64_lists(2, a) is None  # another count
    assert float64_lists(3, a.astype(np.float32)) is None  # float32 would round
    assert float64_lists(3, a.astype(">f8")) is None  # byte-swapped: not the native dtype
    assert float64_lists(1, a.reshape(1, 3)) is None  # 2-D
    assert float64_lists(3, [0.5, 1.0, 2.0]) is None  # not numpy
    assert int_list(2, np.array([1, 2], np.uint8), np.uint8) == [1, 2]
    assert int_list(2, np.array([1, 2], np.int64), np.uint8) is None


def test_names_ok_is_check_names_rule_remembered_per_tuple() -> None:
    names = ("hip", "knee")
    assert names_ok(names) and names_ok(names)
    assert not names_ok(("hip", "hip"))
    assert not names_ok(("hip", ""))
    assert not names_ok(["hip", "knee"])  # a list could change after the check
    assert not names_ok(("hip", 3))
