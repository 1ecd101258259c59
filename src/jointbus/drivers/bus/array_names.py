"""The topic and service names of an actuator array served on the bus, for one namespace.

Where it sits: :mod:`jointbus.drivers.bus`, shared by the array node that serves an array
(:mod:`jointbus.nodes.array`) and the ``bus://`` driver that reaches it, so the two can never
disagree on a name. Every name is built here and nowhere else.

For namespace ``arm6``::

    published at the node's rate           accepted commands (topic; the same name is also a
    /arm6/joint_state     (Beam Bots)       service answering ActuatorReply, for acknowledged use)
    /arm6/actarray/data   (Player)          /arm6/actarray/position, multi_position, speed,
    /arm6/actarray/geometry (latched)       multi_speed, home, current, multi_current
    /arm6/joints          (Rock samples)    /arm6/joints_command    (Rock Joints, one mode/sample)
    /arm6/status, /arm6/heartbeat           /arm6/joint_impedance   (impedance, arbitrated)

    services (request → ActuatorReply unless noted)
    /arm6/actarray/power, brakes, speed_config, accel_config
    /arm6/actarray/get_geometry  → ArrayGeometry     /arm6/actarray/describe → ArrayDescription
    /arm6/estop, /arm6/estop_reset  (std_msgs/String reason)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from jointbus.bus.names import validate_topic_name

__all__ = ["DEFAULT_IMPEDANCE_SOURCE", "ArrayNames"]

#: The impedance source that owns a served array when no custom source qualifies (the array
#: node's arbitration default), and the ``source_node`` a ``bus://`` client sends unless told
#: otherwise — so a single client owns the array at once.
DEFAULT_IMPEDANCE_SOURCE: Final = "control_node"


@dataclass(frozen=True, slots=True)
class ArrayNames:
    """Every topic and service name of the array served under ``namespace`` (no slashes at the
    ends, e.g. ``arm6``)."""

    namespace: str

    def __post_init__(self) -> None:
        validate_topic_name(f"/{self.namespace}")

    def name(self, relative: str) -> str:
        """``/<namespace>/<relative>``."""
        return validate_topic_name(f"/{self.namespace}/{relative}")

    # published
    @property
    def joint_state(self) -> str:
        return self.name("joint_state")

    @property
    def data(self) -> str:
        return self.name("actarray/data")

    @property
    def geometry(self) -> str:
        return self.name("actarray/geometry")

    @property
    def joints(self) -> str:
        return self.name("joints")

    @property
    def status(self) -> str:
        return self.name("status")

    # commands (topics, and services of the same name)
    def command(self, method: str) -> str:
        """A Player command: ``position``, ``multi_position``, ``speed``, ``multi_speed``,
        ``home``, ``current``, ``multi_current``."""
        return self.name(f"actarray/{method}")

    @property
    def joints_command(self) -> str:
        return self.name("joints_command")

    @property
    def impedance_command(self) -> str:
        return self.name("joint_impedance")

    # requests
    def request(self, method: str) -> str:
        """A Player request: ``power``, ``brakes``, ``speed_config``, ``accel_config``,
        ``get_geometry``, ``describe``."""
        return self.name(f"actarray/{method}")

    @property
    def estop(self) -> str:
        return self.name("estop")

    @property
    def estop_reset(self) -> str:
        return self.name("estop_reset")
