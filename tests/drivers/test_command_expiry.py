"""CommandExpiry: which joints' speed or current command ran out, each once (no sleeping)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.drivers.command_expiry import DEFAULT_COMMAND_TIMEOUT_S, CommandExpiry


def idx(*indices: int) -> np.ndarray:
    return np.array(indices, dtype=np.intp)


def test_a_command_expires_once_after_the_timeout_and_a_renewal_postpones_it() -> None:
    expiry = CommandExpiry(4)
    assert expiry.timeout_s == DEFAULT_COMMAND_TIMEOUT_S == 0.25
    expiry.arm(idx(1, 2), now_s=10.0)
    assert expiry.expired(10.25).tolist() == []  # at the timeout: not yet
    expiry.arm(idx(2), now_s=10.2)  # renewed
    assert expiry.expired(10.26).tolist() == [1]
    assert expiry.expired(10.3).tolist() == []  # returned once
    assert expiry.armed.tolist() == [2]
    assert expiry.expired(10.46).tolist() == [2]
    assert expiry.armed.tolist() == []


def test_disarmed_joints_never_expire() -> None:
    expiry = CommandExpiry(3, timeout_s=0.1)
    expiry.arm(idx(0, 1, 2), now_s=0.0)
    expiry.disarm(idx(1))  # a position move: ends by itself
    assert expiry.expired(1.0).tolist() == [0, 2]
    expiry.arm(idx(0, 1, 2), now_s=2.0)
    expiry.disarm()  # power off
    assert expiry.expired(9.0).tolist() == []


@given(
    renewals=st.lists(
        st.tuples(st.integers(0, 5), st.floats(0.0, 10.0, allow_nan=False)), max_size=30
    ),
    timeout=st.floats(0.001, 5.0),
    now=st.floats(0.0, 20.0),
)
def test_expired_is_exactly_the_joints_last_renewed_more_than_the_timeout_ago(
    renewals: list[tuple[int, float]], timeout: float, now: float
) -> None:
    expiry = CommandExpiry(6, timeout_s=timeout)
    last: dict[int, float] = {}
    for joint, at in renewals:
        expiry.arm(idx(joint), at)
        last[joint] = at
    expected = sorted(j for j, at in last.items() if now - at > timeout)
    assert expiry.expired(now).tolist() == expected
    assert expiry.expired(now).tolist() == []


@pytest.mark.parametrize("bad", [0.0, -0.1, math.nan, math.inf, True, "0.25"])
def test_a_timeout_that_cannot_work_is_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="command_timeout"):
        CommandExpiry(2, timeout_s=bad)  # type: ignore[arg-type]


@given(
    steps=st.lists(
        st.one_of(
            st.tuples(st.just("arm"), st.lists(st.integers(0, 4), max_size=3), st.floats(0, 10)),
            st.tuples(st.just("disarm"), st.lists(st.integers(0, 4), max_size=3), st.none()),
            st.tuples(st.just("disarm_all"), st.none(), st.none()),
            st.tuples(st.just("expire"), st.none(), st.floats(0, 20)),
        ),
        max_size=40,
    )
)
def test_any_armed_always_says_whether_some_joint_is_armed(
    steps: list[tuple[str, list[int] | None, float | None]],
) -> None:
    """``any_armed`` (read every cycle) agrees with ``armed`` after any sequence of calls."""
    expiry = CommandExpiry(5, timeout_s=1.0)
    for op, joints, at in steps:
        if op == "arm":
            expiry.arm(idx(*(joints or [])), float(at or 0.0))
        elif op == "disarm":
            expiry.disarm(idx(*(joints or [])))
        elif op == "disarm_all":
            expiry.disarm()
        else:
            expiry.expired(float(at or 0.0))
        assert expiry.any_armed == bool(expiry.armed.size)
