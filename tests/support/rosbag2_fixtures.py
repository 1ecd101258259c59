"""rosbag2 directories written by another tool (rosbags' own ``rosbag2.Writer``) for the tests.

Part of :mod:`support`. Messages are built and serialised by rosbags itself, so
nothing of jointbus is involved in writing them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

START_NS = 1_700_000_000_000_000_000
#: 20 String messages at 100 Hz and 10 JointState messages at 50 Hz
STRING_PERIOD_NS = 10_000_000
STATE_PERIOD_NS = 20_000_000
JOINT_NAMES = ["hip", "knee"]


def write_rosbag2(path: Path, storage: str) -> Path:
    """Write a rosbag2 directory with ``storage`` ``"sqlite3"`` or ``"mcap"``; returns ``path``."""
    store = get_typestore(Stores.ROS2_HUMBLE)
    string_t = store.types["std_msgs/msg/String"]
    state_t = store.types["sensor_msgs/msg/JointState"]
    header_t = store.types["std_msgs/msg/Header"]
    time_t = store.types["builtin_interfaces/msg/Time"]
    plugin = StoragePlugin.SQLITE3 if storage == "sqlite3" else StoragePlugin.MCAP
    with Writer(path, version=9, storage_plugin=plugin) as writer:
        text = writer.add_connection("/chatter", "std_msgs/msg/String", typestore=store)
        joints = writer.add_connection(
            "/joint_states", "sensor_msgs/msg/JointState", typestore=store
        )
        events = []
        for i in range(20):
            msg = string_t(data=f"hello {i}")
            events.append((START_NS + i * STRING_PERIOD_NS, text,
                           store.serialize_cdr(msg, "std_msgs/msg/String")))
        for i in range(10):
            t = START_NS + i * STATE_PERIOD_NS
            msg = state_t(
                header=header_t(stamp=time_t(sec=t // 10**9, nanosec=t % 10**9), frame_id="base"),
                name=list(JOINT_NAMES),
                position=np.array([0.1 * i, -0.1 * i], dtype=np.float64),
                velocity=np.array([], dtype=np.float64),
                effort=np.array([], dtype=np.float64),
            )
            events.append((t, joints, store.serialize_cdr(msg, "sensor_msgs/msg/JointState")))
        for t, conn, data in sorted(events, key=lambda e: e[0]):
            writer.write(conn, t, data)
    return path
