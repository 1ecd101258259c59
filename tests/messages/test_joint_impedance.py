"""jointbus_msgs/msg/JointImpedance: rules on construction and decode, exact CDR round trip, bytes
equal to rosbags'."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.codec import DecodeError
from jointbus.messages.errors import (
    LengthMismatchError,
    LimitError,
    NonFiniteError,
    ValidationError,
)
from jointbus.messages.joint_impedance import JointImpedance
from jointbus.messages.registry import default_registry
from jointbus.messages.std_msgs import Header
from support.rosbags_oracle import rosbags_cdr

text = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12
)
finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
gains = st.floats(min_value=0.0, allow_nan=False, allow_infinity=False, width=64)


@st.composite
def impedances(draw: st.DrawFn) -> JointImpedance:
    names = tuple(draw(st.lists(text.filter(bool), min_size=0, max_size=6, unique=True)))
    n = len(names)
    return JointImpedance(
        header=Header(frame_id=draw(text)),
        source_node=draw(text),
        name=names,
        position=tuple(draw(finite) for _ in range(n)),
        velocity=tuple(draw(finite) for _ in range(n)),
        effort=tuple(draw(finite) for _ in range(n)),
        kp=tuple(draw(gains) for _ in range(n)),
        kd=tuple(draw(gains) for _ in range(n)),
        brake=tuple(draw(st.booleans()) for _ in range(n)),
    )


def _arm(**changes: object) -> JointImpedance:
    values: dict[str, object] = {
        "source_node": "control_node",
        "name": ("shoulder", "elbow", "wrist"),
        "position": (0.1, 0.2, 0.3),
        "velocity": (0.0, 0.0, 0.0),
        "effort": (0.0, 0.5, 0.0),
        "kp": (40.0, 40.0, 10.0),
        "kd": (2.0, 2.0, 1.0),
        "brake": (False, False, False),
    }
    values.update(changes)
    return JointImpedance(**values)  # type: ignore[arg-type]


@given(impedances())
def test_round_trips_exactly_and_matches_rosbags(msg: JointImpedance) -> None:
    data = msg.to_cdr()
    assert JointImpedance.from_cdr(data) == msg
    assert data == rosbags_cdr(msg)


def test_is_a_registered_jointbus_msgs_type_with_its_msg_definition() -> None:
    assert default_registry().by_type_name("jointbus_msgs/msg/JointImpedance") is JointImpedance
    lines = JointImpedance.msgdef().split("=" * 80)[0].split("\n")
    assert "float64[] position" in lines and "bool[] brake" in lines
    assert "string source_node" in lines


def test_float64_keeps_a_value_at_a_limit_exactly() -> None:
    msg = JointImpedance.from_cdr(_arm(position=(1.571, 0.2, 0.3)).to_cdr())
    assert msg.position[0] == 1.571


def test_numpy_arrays_become_tuples_of_floats() -> None:
    msg = _arm(position=np.array([0.1, 0.2, 0.3]), brake=(False, True, False))
    assert msg.position == (0.1, 0.2, 0.3)
    assert all(type(v) is float for v in msg.position)


@pytest.mark.parametrize(
    ("changes", "error", "field", "joint", "index"),
    [
        ({"position": (0.1, math.nan, 0.3)}, NonFiniteError, "position", "elbow", 1),
        ({"effort": (0.0, 0.0, math.inf)}, NonFiniteError, "effort", "wrist", 2),
        ({"kp": (40.0, -1.0, 10.0)}, LimitError, "kp", "elbow", 1),
        ({"kd": (-0.5, 2.0, 1.0)}, LimitError, "kd", "shoulder", 0),
        ({"velocity": (0.0, "fast", 0.0)}, ValidationError, "velocity", "elbow", 1),
        ({"brake": (False, 1, False)}, ValidationError, "brake", "elbow", 1),
    ],
)
def test_a_bad_value_names_joint_index_field_and_expectation(
    changes: dict[str, object], error: type[Exception], field: str, joint: str, index: int
) -> None:
    with pytest.raises(error) as info:
        _arm(**changes)
    assert isinstance(info.value, ValidationError)
    assert (info.value.field, info.value.joint, info.value.index) == (field, joint, index)
    assert f"'{joint}' (index {index})" in str(info.value)


@pytest.mark.parametrize("field", ["position", "velocity", "effort", "kp", "kd", "brake"])
def test_every_array_needs_one_entry_per_name(field: str) -> None:
    with pytest.raises(LengthMismatchError, match=field):
        _arm(**{field: (0.0, 0.0) if field != "brake" else (False, False)})


def test_duplicate_names_are_refused() -> None:
    with pytest.raises(ValidationError, match="unique"):
        _arm(name=("shoulder", "elbow", "shoulder"))


def test_bytes_with_a_nan_are_refused_at_decode() -> None:
    data = _arm(kp=(40.0, 41.0, 10.0)).to_cdr()
    marker = struct.pack("<d", 41.0)
    assert data.count(marker) == 1
    bad = data.replace(marker, struct.pack("<d", math.nan))
    with pytest.raises((DecodeError, NonFiniteError)) as info:
        JointImpedance.from_cdr(bad)
    assert "kp" in str(info.value) and "elbow" in str(info.value)
