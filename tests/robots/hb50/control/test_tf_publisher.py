"""/tf and /tf_static of the hb50: frames named after links, chains that compose to the FK."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus import math as jm
from jointbus.messages.stamp import Time
from jointbus.messages.std_msgs import Header
from jointbus.messages.tf2_msgs import TFMessage
from jointbus.model.errors import DefinitionError
from jointbus.model.kinematics import Kinematics
from jointbus.model.yaml_loader import load_robot
from jointbus.robots.hb50.control.tf_publisher import TfFrames
from support.hb50_sim import hb50

MODEL = hb50()
FRAMES = TfFrames(MODEL)
KIN = Kinematics(MODEL)


def by_child(msg: TFMessage) -> dict[str, tuple[str, jm.Transform]]:
    return {t.child_frame_id: (t.header.frame_id, t.transform.to_math()) for t in msg.transforms}


def test_static_frames_are_the_fixed_joints_and_the_imu() -> None:
    msg = FRAMES.static(Header(Time.from_ns(5), "ignored"))
    frames = by_child(msg)
    assert set(frames) == {"fr_foot", "fl_foot", "rl_foot", "rr_foot", "imu"}
    parent, imu = frames["imu"]
    assert parent == "body"
    assert imu.translation == jm.Vec3(0.0693, 0.0, 0.0)
    assert frames["fr_foot"][0] == "fr_shank"
    assert all(t.header.stamp == Time.from_ns(5) for t in msg.transforms)
    assert TFMessage.from_cdr(msg.to_cdr()) == msg


@given(st.lists(st.floats(-1.0, 1.0), min_size=12, max_size=12))
def test_dynamic_frames_compose_to_the_forward_kinematics(q: list[float]) -> None:
    """Walking the /tf + /tf_static tree from odom to a foot gives pose · FK(foot)."""
    pose = jm.Transform(jm.Vec3(0.5, -0.2, 0.3), jm.Quaternion.from_rpy(0.1, -0.05, 1.0))
    tree = by_child(FRAMES.dynamic(q, pose)) | by_child(FRAMES.static())
    assert tree["body"][0] == "odom"
    for leg in ("fr", "fl", "rl", "rr"):
        child = f"{leg}_foot"
        chain = jm.Transform.identity()
        while child != "odom":
            parent, t = tree[child]
            chain = t @ chain
            child = parent
        expected = pose @ KIN.fk(np.array(q), f"{leg}_foot")
        assert chain.isclose(expected, 1e-9)


def test_every_movable_link_is_published_and_unknown_joints_are_left_out() -> None:
    q = [0.1] * 12
    q[3] = math.nan  # fl_j0 not reported
    msg = FRAMES.dynamic(q, None)
    children = [t.child_frame_id for t in msg.transforms]
    assert "body" not in children  # no pose, no odom → body
    assert "fl_hip" not in children
    assert set(children) == set(FRAMES.moving_frames) - {"fl_hip"}
    assert len(FRAMES.moving_frames) == 12


def test_a_planar_joint_is_refused() -> None:
    with pytest.raises(DefinitionError, match="single-DoF"):
        TfFrames(load_robot("rover"))
