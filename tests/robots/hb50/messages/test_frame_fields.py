"""BridgeData built from the driver's arrays in one pass (frame_fields, its compiled core).

``BridgeData.from_joint_arrays`` must give exactly the message the constructor gives for the
bridge's documented mapping (float32 rounding, temperature bytes, status flags) and, for a frame
the constructor refuses, the constructor's own error; the compiled core and the numpy reference
must agree on every input, and ``JOINTBUS_NO_ACCEL=1`` runs the reference.
"""

from __future__ import annotations

from array import array

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from jointbus.messages.actarray.state import ActuatorState
from jointbus.messages.errors import (
    LengthMismatchError,
    MessageError,
    NonFiniteError,
    ValidationError,
)
from jointbus.messages.geometry_msgs import Quaternion, Vector3
from jointbus.messages.std_msgs import Header, Time
from jointbus.robots.hb50.messages import BridgeData, JointStatusFlag
from jointbus.robots.hb50.messages import frame_fields as ff
from support.accel import assert_runs_without_accel

NAMES = tuple(f"j{i}" for i in range(12))
COMM = int(JointStatusFlag.COMMUNICATION_ERROR)
MOTION = int(JointStatusFlag.MOTION_ERROR)
needs_core = pytest.mark.skipif(not ff.ACCELERATED, reason="_frame_accel not built or disabled")

#: Every kind of float64 a driver could hand over: ordinary, NaN, ±inf, beyond float32, near
#: float32's overflow threshold, subnormal.
measured = st.one_of(
    st.floats(-1e3, 1e3),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([
        float("nan"), 3.4028234663852886e38, 3.40282350e38, 3.4028235677973366e38,
        -3.4028235677973362e38, 1e-45, 5e-324, 0.5, -0.0,
    ]),
)
temperatures = st.one_of(
    st.floats(-50.0, 400.0),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.5, 1.5, 254.5, 255.0, 255.5, -0.5, float("nan")]),
)


def arrays(n: int) -> st.SearchStrategy[tuple[np.ndarray, ...]]:
    floats = st.lists(measured, min_size=n, max_size=n).map(np.array)
    return st.tuples(
        floats,
        floats,
        floats,
        st.lists(temperatures, min_size=n, max_size=n).map(np.array),
        st.lists(st.integers(0, 255), min_size=n, max_size=n).map(
            lambda v: np.array(v, dtype=np.uint8)
        ),
    )


def imu() -> tuple[Header, Quaternion, Vector3, Vector3]:
    return Header(Time(12, 345), "base_link"), Quaternion(0.0, 0.0, 0.0, 1.0), Vector3(), Vector3()


def by_constructor(p: np.ndarray, v: np.ndarray, e: np.ndarray, t: np.ndarray,
                   s: np.ndarray) -> BridgeData:
    """The bridge's documented mapping, field by field, through the checked constructor."""
    status = [
        (COMM if np.isnan(p[i]) else 0) | (MOTION if s[i] & ActuatorState.STALLED else 0)
        for i in range(len(p))
    ]
    degrees = bytes(
        0 if np.isnan(x) else int(min(max(np.rint(x), 0), 255)) for x in t.tolist()
    )
    return BridgeData(*imu(), NAMES, p.tolist(), v.tolist(), e.tolist(), degrees, status)


@settings(max_examples=300, deadline=None)
@given(arrays(len(NAMES)))
def test_the_one_pass_frame_is_the_constructors_message_or_its_error(
    fields: tuple[np.ndarray, ...],
) -> None:
    p, v, e, t, s = fields
    try:
        expected = by_constructor(p, v, e, t, s)
    except MessageError as error:
        with pytest.raises(type(error)) as raised:
            BridgeData.from_joint_arrays(
                *imu(), NAMES, position=p, velocity=v, effort=e, temperature=t, state=s
            )
        assert str(raised.value) == str(error)
        return
    got = BridgeData.from_joint_arrays(
        *imu(), NAMES, position=p, velocity=v, effort=e, temperature=t, state=s
    )
    assert type(got) is BridgeData
    assert got.to_cdr() == expected.to_cdr()  # NaN ≠ NaN: compare the wire bytes
    assert got.joint_temperature == expected.joint_temperature
    assert got.joint_status == expected.joint_status
    assert all(type(x) is float for x in got.joint_position + got.joint_velocity)
    assert all(type(x) is int for x in got.joint_status)


#: A NaN with a payload float32 cannot hold (hypothesis found the compiled core kept it).
_PAYLOAD_NAN = float(np.array([0x7FF8000000000001], dtype=np.uint64).view(np.float64)[0])


@needs_core
@settings(max_examples=300, deadline=None)
@given(st.integers(0, 40).flatmap(arrays))
@example(
    (
        np.zeros(2),
        np.zeros(2),
        np.array([0.0, _PAYLOAD_NAN]),
        np.zeros(2),
        np.zeros(2, dtype=np.uint8),
    )
)
def test_the_compiled_core_agrees_with_the_numpy_reference(fields: tuple[np.ndarray, ...]) -> None:
    core = ff.frame_fields(*fields, comm_flag=COMM, motion_flag=MOTION)
    reference = ff.frame_fields_python(*fields, comm_flag=COMM, motion_flag=MOTION)
    if reference is None:
        assert core is None
        return
    assert core is not None
    assert array("d", [x for f in core[:3] for x in f]).tobytes() == array(
        "d", [x for f in reference[:3] for x in f]
    ).tobytes()  # bit for bit, NaN included
    assert core.temperature == reference.temperature
    assert core.status == reference.status


def test_an_infinite_position_is_refused_naming_the_joint_and_index() -> None:
    p = np.zeros(12)
    p[7] = np.inf
    with pytest.raises(NonFiniteError) as raised:
        BridgeData.from_joint_arrays(
            *imu(), NAMES, position=p, velocity=np.zeros(12), effort=np.zeros(12),
            temperature=np.zeros(12), state=np.zeros(12, dtype=np.uint8),
        )
    assert raised.value.joint == "j7" and raised.value.index == 7
    assert raised.value.field == "joint_position"


@pytest.mark.parametrize(
    ("short", "field"),
    [
        ("position", "joint_position"),
        ("velocity", "joint_velocity"),
        ("effort", "joint_effort"),
        ("temperature", "joint_temperature"),
        ("state", "joint_status"),
    ],
)
def test_arrays_of_another_length_are_refused_naming_the_field(short: str, field: str) -> None:
    arrays: dict[str, np.ndarray] = {
        "position": np.zeros(12), "velocity": np.zeros(12), "effort": np.zeros(12),
        "temperature": np.zeros(12), "state": np.zeros(12, dtype=np.uint8),
    }
    arrays[short] = arrays[short][:11]
    with pytest.raises(LengthMismatchError) as raised:
        BridgeData.from_joint_arrays(*imu(), NAMES, **arrays)
    assert raised.value.field == field


def test_arrays_that_are_not_float64_go_through_the_reference() -> None:
    fields = ff.frame_fields(
        np.array([0.1, np.nan], dtype=np.float32), np.zeros(2), [1.0, 2.0], np.array([20.4, 30.6]),
        np.array([int(ActuatorState.STALLED), 0], dtype=np.uint8), comm_flag=COMM,
        motion_flag=MOTION,
    )
    assert fields is not None
    assert fields.temperature == bytes([20, 31])
    assert fields.status == (MOTION, COMM)


def test_disabling_the_core_builds_the_same_frames_in_python() -> None:
    script = (
        "import numpy as np\n"
        "from jointbus.robots.hb50.messages import BridgeData, frame_fields\n"
        "from jointbus.messages.std_msgs import Header\n"
        "from jointbus.messages.geometry_msgs import Quaternion, Vector3\n"
        "assert not frame_fields.ACCELERATED\n"
        "p = np.array([0.1, np.nan]); t = np.array([np.nan, 41.5])\n"
        "s = np.array([0, 8], dtype=np.uint8)  # ActuatorState.STALLED\n"
        "m = BridgeData.from_joint_arrays(Header(), Quaternion(), Vector3(), Vector3(),\n"
        "    ('a', 'b'), position=p, velocity=p, effort=p, temperature=t, state=s)\n"
        "assert m.joint_temperature == bytes([0, 42]), m.joint_temperature\n"
        "assert m.joint_status == (0, 32 | 64), m.joint_status\n"
        "assert m.joint_position[0] == 0.10000000149011612\n"
    )
    assert_runs_without_accel(script)


def test_duplicate_joint_names_are_refused_as_the_constructor_refuses_them() -> None:
    names = ("a", "b", "a")
    with pytest.raises(ValidationError) as raised:
        BridgeData.from_joint_arrays(
            *imu(), names, position=np.zeros(3), velocity=np.zeros(3), effort=np.zeros(3),
            temperature=np.zeros(3), state=np.zeros(3, dtype=np.uint8),
        )
    assert raised.value.field == "joint_name" and raised.value.index == 2
