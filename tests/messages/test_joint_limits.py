"""JointLimitRange / JointLimits: validate (naming joint, index, field, value, bounds), is_valid,
saturate, NaN = unbounded, wire."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.messages.errors import (
    LengthMismatchError,
    LimitError,
    UnknownJointError,
    ValidationError,
)
from jointbus.messages.joint_limits import JointLimitRange, JointLimits
from jointbus.messages.joint_sample import FIELDS, JointSample
from jointbus.messages.joints import Joints
from jointbus.messages.std_msgs import Header
from support.rosbags_oracle import rosbags_cdr, rosbags_decode

NAN = math.nan
VALUE = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
MAYBE = st.one_of(st.just(NAN), VALUE)
SAMPLES = st.builds(JointSample, MAYBE, MAYBE, MAYBE, MAYBE, MAYBE)


@st.composite
def ranges(draw: st.DrawFn) -> JointLimitRange:
    lows, highs = {}, {}
    for name in FIELDS:
        a, b = draw(MAYBE), draw(MAYBE)
        if not math.isnan(a) and not math.isnan(b) and a > b:
            a, b = b, a
        lows[name], highs[name] = a, b
    return JointLimitRange(JointSample(**lows), JointSample(**highs))


KNEE = JointLimitRange(
    JointSample(position=-1.0, speed=-2.0, effort=NAN),
    JointSample(position=1.5, speed=2.0, effort=30.0),
)
LIMITS = JointLimits(("hip", "knee"), (JointLimitRange.position(-0.5, 0.5), KNEE))


def joints(**samples: JointSample) -> Joints:
    return Joints(Header(), tuple(samples), tuple(samples.values()))


def test_validate_names_joint_index_field_value_and_bounds() -> None:
    j = joints(knee=JointSample(position=0.0, speed=3.0), hip=JointSample(position=0.1))
    with pytest.raises(LimitError) as info:
        LIMITS.validate(j)
    error = info.value
    assert (error.joint, error.index, error.field, error.value) == ("knee", 0, "speed", 3.0)
    assert str(error) == (
        "JointLimits: joint 'knee' (index 0): field 'speed' = 3.0; expected within [-2.0, 2.0]"
    )
    assert not LIMITS.is_valid(j)


def test_nan_bound_means_unbounded_on_that_side() -> None:
    assert KNEE.is_valid(JointSample(effort=-1e300))  # no lower effort bound
    with pytest.raises(LimitError, match=r"field 'effort' = 31.0; expected within \[-inf, 30.0\]"):
        KNEE.validate(JointSample(effort=31.0), joint="knee", index=3)
    open_range = JointLimitRange()
    assert open_range.is_valid(JointSample(position=1e300, speed=-1e300))


def test_unset_fields_are_not_checked() -> None:
    assert KNEE.is_valid(JointSample())
    assert KNEE.is_valid(JointSample(effort=10.0))


def test_in_range_passes_and_bounds_are_inclusive() -> None:
    j = joints(hip=JointSample(position=0.5), knee=JointSample(position=-1.0, speed=2.0))
    LIMITS.validate(j)
    assert LIMITS.is_valid(j)
    assert LIMITS.saturate(j) == (False, j)
    assert LIMITS.saturate(j)[1] is j


def test_saturate_clamps_only_the_offending_fields() -> None:
    j = joints(hip=JointSample(position=0.7), knee=JointSample(position=-3.0, speed=1.0))
    changed, new = LIMITS.saturate(j)
    assert changed
    assert new.sample("hip") == JointSample(position=0.5)
    assert new.sample("knee") == JointSample(position=-1.0, speed=1.0)
    assert new.header == j.header and new.names == j.names
    assert j.sample("hip") == JointSample(position=0.7)  # input unchanged


def test_unknown_joint_raises_with_its_name() -> None:
    j = joints(ankle=JointSample(position=0.0))
    for call in (
        lambda: LIMITS.validate(j),
        lambda: LIMITS.saturate(j),
        lambda: LIMITS.is_valid(j),
    ):
        with pytest.raises(UnknownJointError) as info:
            call()
        assert info.value.name == "ankle"


def test_empty_range_is_rejected() -> None:
    with pytest.raises(ValidationError, match=r"field 'min.speed' = 2.0; expected at most max"):
        JointLimitRange(JointSample(speed=2.0), JointSample(speed=1.0))


def test_limits_need_one_range_per_name() -> None:
    with pytest.raises(LengthMismatchError, match="one range per name"):
        JointLimits(("a", "b"), (KNEE,))
    with pytest.raises(ValidationError, match=r"joint 'b' \(index 1\)"):
        JointLimits(("a", "b"), (KNEE, JointSample()))  # type: ignore[arg-type]
    with pytest.raises(UnknownJointError):
        LIMITS.range("nope")
    assert JointLimits.from_pairs([("hip", KNEE)]).range("hip") == KNEE


@given(ranges(), SAMPLES)
def test_saturate_yields_a_valid_sample_and_is_idempotent(
    r: JointLimitRange, s: JointSample
) -> None:
    changed, new = r.saturate(s)
    assert r.is_valid(new)
    assert changed == (not r.is_valid(s))
    assert changed == (new != s)
    assert new.set_fields() == s.set_fields()  # saturation never sets or unsets a field
    assert r.saturate(new) == (False, new)


@given(ranges(), SAMPLES)
def test_validate_agrees_with_is_valid(r: JointLimitRange, s: JointSample) -> None:
    if r.is_valid(s):
        r.validate(s)
    else:
        with pytest.raises(LimitError) as info:
            r.validate(s, joint="j", index=0)
        lo, hi = r.bounds(info.value.field)
        value = info.value.value
        assert value < lo or value > hi


@given(st.lists(ranges(), max_size=5))
def test_bytes_match_rosbags_and_round_trip(items: list[JointLimitRange]) -> None:
    limits = JointLimits(tuple(f"j{i}" for i in range(len(items))), tuple(items))
    encoded = limits.to_cdr()
    assert encoded == rosbags_cdr(limits)
    assert JointLimits.from_cdr(encoded) == limits
    assert rosbags_decode(JointLimits, encoded) == limits
