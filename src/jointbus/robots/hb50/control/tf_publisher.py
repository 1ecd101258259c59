"""The robot's frame tree as ``tf2_msgs/TFMessage``: ``/tf`` (moving frames) and ``/tf_static``.

Where it sits: :mod:`jointbus.robots.hb50.control`, a pure component: the control node publishes
:meth:`TfFrames.dynamic` on ``/tf`` at 10 Hz and :meth:`TfFrames.static` once, latched, on
``/tf_static`` — what the seed's UI guide tells RViz / Foxglove users to listen to.

Frames are named after the model's links, as ROS's ``robot_state_publisher`` names them, so a URDF
of the same robot (``RobotModel.to_urdf()``) lines up with them:

- ``/tf``: ``odom → <root>`` (the estimated body pose in the odometry frame: position m,
  orientation), and for every moving single-DoF joint ``<parent link> → <child link>`` = the
  joint's origin followed by its motion (a rotation of ``q`` rad about the axis for revolute /
  continuous joints, a translation of ``q`` m along it for prismatic ones);
- ``/tf_static``: every fixed joint ``<parent link> → <child link>`` (the hb50's feet) and every
  sensor mount ``<link> → <sensor name>`` (the hb50's ``body → imu``).

A joint whose position is NaN (not reported) is left out of that message rather than drawn at a
made-up angle; tf keeps its last transform.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from jointbus import math as jm
from jointbus.messages.geometry_msgs import Transform, TransformStamped
from jointbus.messages.std_msgs import Header
from jointbus.messages.tf2_msgs import TFMessage
from jointbus.model.errors import DefinitionError
from jointbus.model.joint import Joint, JointType
from jointbus.model.robot import RobotModel

__all__ = ["DEFAULT_WORLD_FRAME", "TfFrames"]

#: The odometry frame the body pose is given in.
DEFAULT_WORLD_FRAME = "odom"
_ROTATING = (JointType.REVOLUTE, JointType.CONTINUOUS)


class TfFrames:
    """Builds the robot's TF messages from joint positions and the body pose.

    ``world_frame`` names the odometry frame (default ``"odom"``). Raises
    :class:`~jointbus.model.errors.DefinitionError` for a model with moving joints that are not
    single-DoF (planar, floating), which tf would need a whole pose for.
    """

    def __init__(self, model: RobotModel, *, world_frame: str = DEFAULT_WORLD_FRAME) -> None:
        self.model = model
        self.world_frame = world_frame
        self.root = model.root
        moving: list[tuple[Joint, int]] = []
        for joint in model.tree_order:
            if not joint.is_moving:
                continue
            if joint.type not in (*_ROTATING, JointType.PRISMATIC):
                raise DefinitionError(
                    f"joint {joint.name!r}", "type", joint.type.value, "a single-DoF joint for tf"
                )
            if joint.name not in model.actuator_order:
                raise DefinitionError(
                    f"joint {joint.name!r}",
                    "actuated",
                    False,
                    "an actuated joint (its position comes from the actuator feedback)",
                )
            moving.append((joint, model.actuator_index(joint.name)))
        self._moving = tuple(moving)
        self.moving_frames: tuple[str, ...] = tuple(j.child for j, _ in moving)
        """Child frames of ``/tf`` besides the root, in tree order."""

    def static(self, header: Header | None = None) -> TFMessage:
        """The fixed frames (fixed joints, sensor mounts) for ``/tf_static``."""
        hdr_stamp = (header or Header.now()).stamp
        out: list[TransformStamped] = []
        for joint in self.model.tree_order:
            if joint.type is JointType.FIXED:
                out.append(
                    TransformStamped(
                        Header(hdr_stamp, joint.parent),
                        joint.child,
                        Transform.from_math(joint.origin),
                    )
                )
        for sensor in self.model.sensors:
            out.append(
                TransformStamped(
                    Header(hdr_stamp, sensor.link), sensor.name, Transform.from_math(sensor.origin)
                )
            )
        return TFMessage(tuple(out))

    def joint_transform(self, joint: Joint, position: float) -> jm.Transform:
        """Parent link → child link of ``joint`` at ``position`` (rad or m)."""
        origin = joint.origin
        if joint.type in _ROTATING:
            motion = jm.Transform(jm.Vec3.ZERO, jm.Quaternion.from_axis_angle(joint.axis, position))
        else:
            motion = jm.Transform(joint.axis * position, jm.Quaternion.identity())
        return origin @ motion

    def dynamic(
        self,
        joint_positions: Sequence[float],
        body_pose: jm.Transform | None,
        header: Header | None = None,
    ) -> TFMessage:
        """The moving frames for ``/tf``.

        ``joint_positions``: actuator order (rad or m; NaN = not reported, the joint is left
        out). ``body_pose``: the body in the odometry frame, or ``None`` when it is unknown (the
        ``odom → body`` transform is left out).
        """
        stamp = (header or Header.now()).stamp
        out: list[TransformStamped] = []
        if body_pose is not None:
            out.append(
                TransformStamped(
                    Header(stamp, self.world_frame), self.root, Transform.from_math(body_pose)
                )
            )
        for joint, index in self._moving:
            q = float(joint_positions[index])
            if not math.isfinite(q):
                continue
            out.append(
                TransformStamped(
                    Header(stamp, joint.parent),
                    joint.child,
                    Transform.from_math(self.joint_transform(joint, q)),
                )
            )
        return TFMessage(tuple(out))
