"""The simulator's ground truth on the bus: ``/<ns>/sim/ground_truth`` (``nav_msgs/msg/Odometry``).

Where it sits: :mod:`jointbus.nodes`, above :mod:`jointbus.drivers.sim` (it reads a
:class:`~jointbus.drivers.sim.mujoco_world.MujocoWorld`) and :mod:`jointbus.bus`. The stack calls
:meth:`GroundTruthPublisher.publish` right after it steps a MuJoCo simulator, on the bridge's
thread, so every 500 Hz physics step is followed by exactly one message describing its result.

Why it exists: a state estimator (and a walking controller) can only be measured honestly against
what really happened. A robot has no such topic; a simulated one does, and tests, benchmarks and
users (Foxglove, ``jointbus topic echo``) compare the estimate with it.

What the message holds (ROS's Odometry conventions, SI units): ``header.frame_id`` = ``"world"``
(MuJoCo's world frame, z up, origin where the robot was reset), stamped with the simulated time;
``child_frame_id`` = the robot's root link; ``pose`` = the root link's position (m) and
orientation in the world; ``twist`` = its linear (m/s) and angular (rad/s) velocity expressed in
the root link's frame (as ROS puts an Odometry's twist in the child frame). Covariances are zero:
the values are exact. QoS ``MAB_RT`` (depth 1, best effort), like the other 500 Hz topics.

``/<ns>/sim/ground_truth_10hz`` is its 10 Hz copy, RELIABLE, paced by the wall clock as the
bridge's ``*_10hz`` mirrors are (they are node timers): the first step after each 0.1 s of the
monotonic clock is sent, so a slow simulator (real-time factor 0.84) still gives 10 messages a
second, each the world as that step left it. A display or a launcher that shows the true height
once a second reads it, and the simulator's process never encodes 500 Hz for them. A message is
built only while one of the two topics has a subscriber (here or over Zenoh).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final

from jointbus.bus import MAB_RT, RELIABLE, Bus
from jointbus.drivers.sim.mujoco_world import BasePose, MujocoWorld
from jointbus.messages.geometry_msgs import Point, Pose, Quaternion, Twist, Vector3
from jointbus.messages.nav_msgs import Odometry, PoseWithCovariance, TwistWithCovariance
from jointbus.messages.stamp import Time
from jointbus.messages.std_msgs import Header

__all__ = [
    "GROUND_TRUTH_10HZ_TOPIC",
    "GROUND_TRUTH_NODE",
    "GROUND_TRUTH_TOPIC",
    "WORLD_FRAME",
    "GroundTruthPublisher",
    "odometry_of",
]

#: Topic (under the namespace) of the simulator's ground truth.
GROUND_TRUTH_TOPIC: Final = "sim/ground_truth"
#: Topic of its 10 Hz reliable copy.
GROUND_TRUTH_10HZ_TOPIC: Final = "sim/ground_truth_10hz"
#: Frame id of the pose: MuJoCo's world frame.
WORLD_FRAME: Final = "world"
#: Node name of the publisher.
GROUND_TRUTH_NODE: Final = "sim_ground_truth"


def odometry_of(pose: BasePose, child_frame_id: str, *, epoch_ns: int = 0) -> Odometry:
    """``pose`` as an Odometry (see the module docstring), stamped ``epoch_ns`` + simulated time.

    :class:`BasePose` gives the linear velocity in the world frame; it is turned into the base
    frame here (``Rᵀ·v``, ``R`` the orientation's rotation matrix), as the message's twist is in
    ``child_frame_id``. In plain floats: for three components, a numpy matrix costs more to
    build than the arithmetic (this runs once per physics step, on the bridge's thread).
    """
    w, x, y, z = pose.orientation.tolist()
    ux, uy, uz = pose.linear_velocity.tolist()
    # Rᵀ·u, with R's columns written out (R = the usual unit-quaternion rotation matrix).
    vx = (1.0 - 2.0 * (y * y + z * z)) * ux + 2.0 * (x * y + w * z) * uy + 2.0 * (
        x * z - w * y
    ) * uz
    vy = 2.0 * (x * y - w * z) * ux + (1.0 - 2.0 * (x * x + z * z)) * uy + 2.0 * (
        y * z + w * x
    ) * uz
    vz = 2.0 * (x * z + w * y) * ux + 2.0 * (y * z - w * x) * uy + (
        1.0 - 2.0 * (x * x + y * y)
    ) * uz
    px, py, pz = pose.position.tolist()
    ax, ay, az = pose.angular_velocity.tolist()
    stamp = Time.from_ns(epoch_ns + round(pose.time * 1e9))
    return Odometry(
        Header(stamp, WORLD_FRAME),
        child_frame_id,
        PoseWithCovariance(Pose(Point(px, py, pz), Quaternion(x, y, z, w))),
        TwistWithCovariance(Twist(Vector3(vx, vy, vz), Vector3(ax, ay, az))),
    )


class GroundTruthPublisher:
    """Publishes a :class:`MujocoWorld`'s base pose and twist on ``/<namespace>/sim/ground_truth``.

    ``epoch_ns``: wall-clock time (ns since the Unix epoch) of simulated time 0, so stamps line up
    with the other topics' wall-clock headers; the caller must hold the world still (stepping
    thread, or the array's lock) while :meth:`publish` reads it.

    The reliable copy goes at the first call after each ``copy_period_s`` (0.1 s: 10 Hz) of
    ``clock`` (monotonic, ns; the wall clock's pace, as the bridge's mirrors): boundaries at
    ``first call + k·period``, so it does not drift, and a late call sends once, then waits for
    the next boundary. It went once per 0.1 s of simulated time, and a run at real-time factor
    0.84 recorded it at 8.40 Hz beside the 10.0 Hz of the other mirrors (a new user's trial,
    2026-12-05); before that, every 50th call, and a loop dropping a third of its cycles sent it
    at 6.45 Hz.
    """

    def __init__(
        self,
        bus: Bus,
        world: MujocoWorld,
        *,
        namespace: str = "hb50",
        epoch_ns: int = 0,
        copy_period_s: float = 0.1,
        clock: Callable[[], int] = time.monotonic_ns,
    ) -> None:
        self.world = world
        self.child_frame_id = world.robot.root
        self.epoch_ns = epoch_ns
        prefix = f"/{namespace}/" if namespace else "/"
        self.topic = f"{prefix}{GROUND_TRUTH_TOPIC}"
        # in the robot's namespace, so ROS 2 lists /<namespace>/sim_ground_truth beside its nodes
        self._pub = bus.publisher(
            self.topic, Odometry, MAB_RT, node=GROUND_TRUTH_NODE, namespace=namespace
        )
        self._pub_10hz = bus.publisher(
            f"{prefix}{GROUND_TRUTH_10HZ_TOPIC}",
            Odometry,
            RELIABLE,
            node=GROUND_TRUTH_NODE,
            namespace=namespace,
        )
        if not copy_period_s > 0:
            raise ValueError(f"copy_period_s = {copy_period_s!r}: expected seconds > 0")
        self._clock = clock
        self._copy_period_ns = round(copy_period_s * 1e9)
        self._next_copy_ns: int | None = None  # clock time of the next copy: the first call's

    def publish(self) -> Odometry | None:
        """Read the world now and publish it where it is listened to; returns the message sent
        (``None`` when nobody listens to either topic: nothing was built)."""
        now_ns = self._clock()
        due = self._next_copy_ns
        slow = False
        if due is None or now_ns >= due:  # due, or the first call
            period = self._copy_period_ns
            # the next boundary after now (a late call skips the boundaries it missed)
            self._next_copy_ns = (
                now_ns + period if due is None else due + ((now_ns - due) // period + 1) * period
            )
            slow = self._pub_10hz.observed
        if not (slow or self._pub.observed):
            return None
        msg = odometry_of(self.world.base_pose(), self.child_frame_id, epoch_ns=self.epoch_ns)
        self._pub.publish(msg)
        if slow:
            self._pub_10hz.publish(msg)
        return msg
