"""hb50 RobotState and LegState: seed field layout, rosbags-identical bytes, enums and rules."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.codec import DecodeError, schema_of
from jointbus.codec.msgdef import definition_text
from jointbus.messages.errors import (
    LengthMismatchError,
    LimitError,
    ShapeMismatchError,
    UnknownJointError,
    ValidationError,
)
from jointbus.messages.geometry_msgs import Point, Pose, Quaternion, Twist, Vector3
from jointbus.messages.stamp import Time
from jointbus.messages.std_msgs import Header
from jointbus.robots.hb50.messages import LegState, MotionGait, MotionMode, MotionType, RobotState
from support.accel import assert_runs_without_accel
from support.rosbags_oracle import register, rosbags_cdr, rosbags_decode, typestore

TN = "hb50_commons/msg/RobotState"
TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"))
F64 = st.floats(allow_nan=False)
VECTORS = st.builds(Vector3, F64, F64, F64)
TWISTS = st.builds(Twist, VECTORS, VECTORS)
HEADERS = st.builds(
    Header, st.builds(Time, st.integers(-(2**31), 2**31 - 1), st.integers(0, 2**32 - 1)), TEXT
)


@st.composite
def robot_states(draw: st.DrawFn) -> RobotState:
    names = draw(st.lists(TEXT.filter(bool), unique=True, max_size=4))
    legs = tuple(
        LegState(name, draw(st.booleans()), draw(VECTORS), draw(VECTORS), draw(VECTORS))
        for name in names
    )
    return RobotState(
        draw(HEADERS),
        legs,
        Pose(
            draw(st.builds(Point, F64, F64, F64)), draw(st.builds(Quaternion, F64, F64, F64, F64))
        ),
        draw(TWISTS),
        draw(TWISTS),
        draw(st.sampled_from(MotionMode)),
        draw(st.sampled_from(MotionType)),
        draw(st.sampled_from(MotionGait)),
    )


def test_field_names_order_and_wire_types_are_the_seeds() -> None:
    assert definition_text(schema_of(RobotState)) == (
        "std_msgs/Header header\n"
        "hb50_commons/LegState[] leg\n"
        "geometry_msgs/Pose pose\n"
        "geometry_msgs/Twist body_vel\n"
        "geometry_msgs/Twist world_vel\n"
        "byte motion_mode\n"
        "byte motion_type\n"
        "byte motion_gait\n"
    )
    assert definition_text(schema_of(LegState)) == (
        "string leg_name\n"
        "bool contact\n"
        "geometry_msgs/Vector3 foot_pos_body\n"
        "geometry_msgs/Vector3 foot_vel\n"
        "geometry_msgs/Vector3 foot_force_est\n"
    )


@given(robot_states())
def test_bytes_match_rosbags_and_round_trip(msg: RobotState) -> None:
    data = msg.to_cdr()
    assert data == rosbags_cdr(msg)
    assert RobotState.from_cdr(data) == msg
    assert rosbags_decode(RobotState, data) == msg


@given(st.builds(LegState, TEXT.filter(bool), st.booleans(), VECTORS, VECTORS, VECTORS))
def test_leg_state_bytes_match_rosbags(msg: LegState) -> None:
    data = msg.to_cdr()
    assert data == rosbags_cdr(msg)
    assert LegState.from_cdr(data) == msg


def test_decoded_enum_fields_are_enum_members() -> None:
    msg = RobotState(motion_mode=2, motion_type=1, motion_gait=3)
    back = RobotState.from_cdr(msg.to_cdr())
    assert back.motion_mode is MotionMode.STAND
    assert back.motion_type is MotionType.POSTURE
    assert back.motion_gait is MotionGait.TROT


def test_enum_values_are_stable() -> None:
    # Values are published on the wire: renumbering breaks every recorded bag.
    assert [(m.name, m.value) for m in MotionMode] == [
        ("IDLE", 0),
        ("STAND_UP", 1),
        ("STAND", 2),
        ("SIT_DOWN", 3),
        ("LOCOMOTION", 4),
        ("DAMPING", 5),
        ("FALLEN", 6),  # added later: a new number, the old ones unchanged
    ]
    assert [(m.name, m.value) for m in MotionType] == [
        ("NONE", 0),
        ("POSTURE", 1),
        ("GAIT", 2),
        ("EXTERNAL", 3),
    ]
    assert [(m.name, m.value) for m in MotionGait] == [
        ("IDLE", 0),
        ("STAND", 1),
        ("WALK", 2),
        ("TROT", 3),
        ("RUN", 4),
    ]


@pytest.mark.parametrize(
    ("kwargs", "field", "error"),
    [
        ({"motion_mode": 99}, "motion_mode", LimitError),
        ({"motion_type": 200}, "motion_type", LimitError),
        ({"motion_gait": -1}, "motion_gait", LimitError),
        ({"motion_gait": True}, "motion_gait", ValidationError),
        ({"motion_mode": 1.0}, "motion_mode", ValidationError),
        ({"pose": Twist()}, "pose", ValidationError),
        ({"body_vel": Pose()}, "body_vel", ValidationError),
        ({"world_vel": None}, "world_vel", ValidationError),
        ({"header": Time()}, "header", ValidationError),
        ({"leg": (Vector3(),)}, "leg", ValidationError),
    ],
)
def test_bad_fields_are_rejected_by_name(
    kwargs: dict[str, Any], field: str, error: type[ValidationError]
) -> None:
    with pytest.raises(error) as info:
        RobotState(**kwargs)
    assert info.value.field == field


def test_unknown_enum_value_lists_the_valid_ones() -> None:
    with pytest.raises(LimitError) as info:
        RobotState(motion_mode=42)
    assert "STAND=2" in str(info.value)


def test_duplicate_leg_names_name_the_index() -> None:
    with pytest.raises(ValidationError) as info:
        RobotState(leg=(LegState("fr"), LegState("fl"), LegState("fr")))
    assert (info.value.field, info.value.joint, info.value.index) == ("leg", "fr", 2)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"leg_name": ""}, "leg_name"),
        ({"leg_name": 3}, "leg_name"),
        ({"leg_name": "fr", "contact": 1}, "contact"),
        ({"leg_name": "fr", "foot_vel": (0.0, 0.0, 0.0)}, "foot_vel"),
        ({"leg_name": "fr", "foot_force_est": None}, "foot_force_est"),
    ],
)
def test_leg_state_rules(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as info:
        LegState(**kwargs)
    assert info.value.field == field


def test_leg_by_name() -> None:
    msg = RobotState(leg=[LegState("fr", True), LegState("rl")])
    assert msg.leg_by_name("fr").contact
    assert not msg.leg_by_name("rl").contact
    assert type(msg.leg) is tuple
    with pytest.raises(UnknownJointError):
        msg.leg_by_name("xx")


def test_decoding_an_unknown_mode_is_a_decode_error() -> None:
    register(RobotState)
    store = typestore()
    good = RobotState(motion_mode=MotionMode.STAND)
    obj = store.deserialize_cdr(good.to_cdr(), TN)
    obj.motion_mode = 77
    data = bytes(store.serialize_cdr(obj, TN))
    with pytest.raises(DecodeError, match="motion_mode"):
        RobotState.from_cdr(data)


# ---- RobotState.from_estimate_arrays: one pass, the constructors' message ---------------------
ANY_F64 = st.floats(allow_nan=True, allow_infinity=True)


def _arrays(draw: st.DrawFn, shape: tuple[int, ...]) -> np.ndarray:
    size = int(np.prod(shape))
    return np.array(draw(st.lists(ANY_F64, min_size=size, max_size=size))).reshape(shape)


def _constructed(header: Header, names: tuple[str, ...], a: dict[str, Any]) -> RobotState:
    """The reference: the message built field by field by the constructors."""
    contact = a["contact"].tolist()
    return RobotState(
        header,
        tuple(
            LegState(
                name,
                contact[i],
                Vector3(*a["foot_position"][i].tolist()),
                Vector3(*a["foot_velocity"][i].tolist()),
                Vector3(*a["foot_force"][i].tolist()),
            )
            for i, name in enumerate(names)
        ),
        Pose(Point(*a["position"].tolist()), a["orientation"]),
        Twist(
            Vector3(*a["body_linear_velocity"].tolist()),
            Vector3(*a["body_angular_velocity"].tolist()),
        ),
        Twist(
            Vector3(*a["world_linear_velocity"].tolist()),
            Vector3(*a["world_angular_velocity"].tolist()),
        ),
        a["motion_mode"],
        a["motion_type"],
        a["motion_gait"],
    )


@st.composite
def estimates(draw: st.DrawFn) -> tuple[Header, tuple[str, ...], dict[str, Any]]:
    names = tuple(draw(st.lists(TEXT.filter(bool), unique=True, max_size=4)))
    n = len(names)
    arrays: dict[str, Any] = {
        "contact": np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool),
        "foot_position": _arrays(draw, (n, 3)),
        "foot_velocity": _arrays(draw, (n, 3)),
        "foot_force": _arrays(draw, (n, 3)),
        "position": _arrays(draw, (3,)),
        "orientation": Quaternion(*(draw(ANY_F64) for _ in range(4))),
        "body_linear_velocity": _arrays(draw, (3,)),
        "body_angular_velocity": _arrays(draw, (3,)),
        "world_linear_velocity": _arrays(draw, (3,)),
        "world_angular_velocity": _arrays(draw, (3,)),
        "motion_mode": draw(st.sampled_from(MotionMode)),
        "motion_type": draw(st.sampled_from(MotionType)),
        "motion_gait": draw(st.sampled_from(MotionGait)),
    }
    return draw(HEADERS), names, arrays


BUILDERS = [RobotState.from_estimate_arrays, RobotState.from_estimate_arrays_python]


@pytest.mark.parametrize("build", BUILDERS, ids=["dispatch", "python"])
@given(case=estimates())
def test_from_estimate_arrays_is_the_message_the_constructors_build(
    build: Any, case: tuple[Header, tuple[str, ...], dict[str, Any]]
) -> None:
    """The compiled core (when built) and the Python one pass give the constructors' message."""
    header, names, arrays = case
    fast = build(header, names, **arrays)
    reference = _constructed(header, names, arrays)
    assert fast.to_cdr() == reference.to_cdr()  # NaN-proof: the same bytes on the wire
    assert [type(leg.contact) for leg in fast.leg] == [bool] * len(names)
    assert RobotState.from_cdr(fast.to_cdr()).to_cdr() == fast.to_cdr()


def _finite_case(n: int = 4) -> dict[str, Any]:
    rng = np.random.default_rng(7)
    return {
        "contact": rng.random(n) < 0.5,
        "foot_position": rng.normal(size=(n, 3)),
        "foot_velocity": rng.normal(size=(n, 3)),
        "foot_force": rng.normal(size=(n, 3)),
        "position": rng.normal(size=3),
        "orientation": Quaternion(0.1, 0.2, 0.3, 0.9),
        "body_linear_velocity": rng.normal(size=3),
        "body_angular_velocity": rng.normal(size=3),
        "world_linear_velocity": rng.normal(size=3),
        "world_angular_velocity": rng.normal(size=3),
        "motion_mode": MotionMode.LOCOMOTION,
        "motion_type": MotionType.GAIT,
        "motion_gait": MotionGait.TROT,
    }


def test_the_one_pass_builds_ordinary_immutable_records() -> None:
    names = ("fr", "fl", "rl", "rr")
    arrays = _finite_case()
    header = Header(Time(5, 6), "odom")
    fast = RobotState.from_estimate_arrays(header, names, **arrays)
    assert fast == _constructed(header, names, arrays)  # field by field (all finite)
    assert hash(fast.leg[2]) == hash(_constructed(header, names, arrays).leg[2])
    assert type(fast.leg[1].foot_vel) is Vector3 and type(fast.pose.position) is Point
    assert fast.pose.orientation is arrays["orientation"] and fast.header is header
    with pytest.raises(AttributeError):
        fast.leg[0].foot_pos_body.x = 1.0  # type: ignore[misc]


def test_arrays_that_are_not_contiguous_float64_take_the_python_pass() -> None:
    names = ("fr", "fl", "rl", "rr")
    arrays = _finite_case()
    header = Header()
    strided = {
        **arrays,
        "foot_force": np.asfortranarray(arrays["foot_force"]),  # not C-contiguous
        "position": np.concatenate((arrays["position"], arrays["position"]))[::2],
        "foot_velocity": arrays["foot_velocity"].astype(np.float32).astype(np.float64),
    }
    reference = _constructed(header, names, strided)
    assert RobotState.from_estimate_arrays(header, names, **strided) == reference
    as_float32 = {**arrays, "foot_position": arrays["foot_position"].astype(np.float32)}
    assert RobotState.from_estimate_arrays(header, names, **as_float32) == _constructed(
        header, names, as_float32
    )


def test_an_array_of_the_right_size_but_the_wrong_shape_is_refused_not_reread() -> None:
    names = ("fr", "fl", "rl", "rr")
    arrays = {**_finite_case(), "foot_position": np.ones((3, 4))}  # 12 values, 3 rows
    with pytest.raises(LengthMismatchError, match=r"leg\.foot_pos_body.*one per leg \(4\)"):
        RobotState.from_estimate_arrays(Header(), names, **arrays)


def test_disabling_the_core_builds_the_same_message_in_python() -> None:
    script = (
        "import numpy as np\n"
        "from jointbus.robots.hb50.messages import robot_state as rs\n"
        "from jointbus.messages.geometry_msgs import Quaternion\n"
        "from jointbus.messages.std_msgs import Header\n"
        "assert not rs.ACCELERATED\n"
        "z = np.zeros(3)\n"
        "m = rs.RobotState.from_estimate_arrays(Header(), ('fr',), contact=np.ones(1, bool),\n"
        "    foot_position=np.ones((1, 3)), foot_velocity=np.zeros((1, 3)),\n"
        "    foot_force=np.zeros((1, 3)), position=z, orientation=Quaternion(),\n"
        "    body_linear_velocity=z, body_angular_velocity=z, world_linear_velocity=z,\n"
        "    world_angular_velocity=z, motion_mode=rs.MotionMode.STAND,\n"
        "    motion_type=rs.MotionType.POSTURE, motion_gait=rs.MotionGait.STAND)\n"
        "assert m.leg[0].contact is True and m.leg[0].foot_pos_body.z == 1.0\n"
    )
    assert_runs_without_accel(script)


def test_from_estimate_arrays_refuses_what_the_constructors_refuse() -> None:
    n = 2
    arrays: dict[str, Any] = {
        "contact": np.zeros(n, dtype=bool),
        "foot_position": np.zeros((n, 3)),
        "foot_velocity": np.zeros((n, 3)),
        "foot_force": np.zeros((n, 3)),
        "position": np.zeros(3),
        "orientation": Quaternion(),
        "body_linear_velocity": np.zeros(3),
        "body_angular_velocity": np.zeros(3),
        "world_linear_velocity": np.zeros(3),
        "world_angular_velocity": np.zeros(3),
        "motion_mode": MotionMode.STAND,
        "motion_type": MotionType.POSTURE,
        "motion_gait": MotionGait.STAND,
    }
    with pytest.raises(ValidationError, match="unique leg_name"):
        RobotState.from_estimate_arrays(Header(), ("fr", "fr"), **arrays)
    with pytest.raises(ValidationError, match="leg_name"):
        RobotState.from_estimate_arrays(Header(), ("fr", ""), **arrays)
    with pytest.raises(LimitError, match="motion_mode"):
        RobotState.from_estimate_arrays(Header(), ("fr", "fl"), **{**arrays, "motion_mode": 9})
    # a leg count the arrays do not have: an error naming the field, not a truncated message
    with pytest.raises(LengthMismatchError, match=r"leg\.foot_pos_body.*one per leg \(3\)"):
        RobotState.from_estimate_arrays(
            Header(), ("fr", "fl", "rl"), **{**arrays, "contact": np.zeros(3, dtype=bool)}
        )
    with pytest.raises(ShapeMismatchError, match=r"'fr' \(index 0\): field 'leg\.foot_force_est'"):
        RobotState.from_estimate_arrays(
            Header(), ("fr", "fl"), **{**arrays, "foot_force": np.zeros((2, 2))}
        )
