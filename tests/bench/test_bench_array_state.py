"""The array-state benchmark's anchor publishes what the node publishes, for any reading.

``bench/bench_array_state.py`` judges the node's ``_publish_state`` (one-pass builders) as a ratio
to the former per-element construction; the ratio means something only if both publish the same
messages, byte for byte, for every reading a driver can hand out — not just the one it times —
and refuse the same readings with the same errors.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jointbus.drivers.actuator_array import JointReading
from jointbus.messages.errors import ValidationError

_SPEC = importlib.util.spec_from_file_location(
    "bench_array_state", Path(__file__).resolve().parents[2] / "bench" / "bench_array_state.py"
)
assert _SPEC is not None and _SPEC.loader is not None
bench_array_state = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(bench_array_state)

N = 12
FINITE = st.floats(-1e3, 1e3, allow_nan=False)
MAYBE = st.one_of(st.just(math.nan), st.floats(allow_nan=False, allow_infinity=False))
# The state flags a driver can hand out together (sampled from the list, not filtered: a filter
# rejecting 12 draws per reading failed hypothesis's health check on a loaded host).
STATES = st.sampled_from([s for s in range(32) if s & 6 != 6 and s & 3 != 3 and s & 17 != 17])


def column(values: st.SearchStrategy[float]) -> st.SearchStrategy[Any]:
    return st.lists(values, min_size=N, max_size=N).map(lambda v: np.array(v, np.float64))


@st.composite
def readings(draw: st.DrawFn, base: JointReading) -> JointReading:
    """A reading of hb50's 12 joints: measured positions and velocities, the rest maybe not."""
    return dataclasses.replace(
        base,
        position=draw(column(FINITE)),
        velocity=draw(column(FINITE)),
        acceleration=draw(column(MAYBE)),
        current=draw(column(MAYBE)),
        effort=draw(st.one_of(column(FINITE), column(MAYBE))),
        temperature=draw(column(MAYBE)),
        status=np.array(draw(st.lists(st.integers(0, 2**32 - 1), min_size=N, max_size=N)),
                        np.uint32),
        state=np.array(draw(st.lists(STATES, min_size=N, max_size=N)), np.uint8),
        motor_power=draw(st.booleans()),
    )


@pytest.fixture(scope="module")
def bridge() -> Iterator[Any]:
    b = bench_array_state._Hb50Bridge()
    yield b
    b.close()


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=60)
@given(data=st.data())
def test_the_node_publishes_what_the_anchor_builds(bridge: Any, data: st.DataObject) -> None:
    r = data.draw(readings(bridge.reading))
    node, h = bridge.node, bridge.header
    fast = bridge.published(lambda: node._publish_state(r, h))
    slow = bridge.published(lambda: bench_array_state.reference_publish_state(node, r, h))
    assert len(fast) == 3
    assert fast == slow
    assert [m.to_cdr() for m in fast] == [m.to_cdr() for m in slow]
    efforts_measured = bool(np.isfinite(r.effort).all())
    assert bool(fast[0].effort) is efforts_measured  # joint_state reports all efforts or none


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=30)
@given(data=st.data())
def test_the_node_refuses_what_the_anchor_refuses(bridge: Any, data: st.DataObject) -> None:
    r = data.draw(readings(bridge.reading))
    field = data.draw(st.sampled_from(("position", "velocity", "acceleration", "effort")))
    index = data.draw(st.integers(0, N - 1))
    bad = data.draw(st.sampled_from((math.inf, -math.inf)))
    values = getattr(r, field).copy()
    values[index] = bad
    r = dataclasses.replace(r, **{field: values})
    node, h = bridge.node, bridge.header
    with pytest.raises(ValidationError) as anchor:
        bench_array_state.reference_publish_state(node, r, h)
    with pytest.raises(ValidationError) as fast:
        node._publish_state(r, h)
    assert type(fast.value) is type(anchor.value)
    assert fast.value.value == bad
    assert fast.value.index == index and fast.value.joint == r.names[index]


def test_the_benchmark_row_is_judged_against_its_goal() -> None:
    rows = bench_array_state.run(quick=True)
    assert [row["metric"] for row in rows] == [bench_array_state.METRIC]
    row = rows[0]
    assert 0 < row["value"] and 0 < row["anchor_value"] and 0 < row["ratio"]
    assert row["pass"] is (row["ratio"] <= bench_array_state.GOAL_RATIO)
