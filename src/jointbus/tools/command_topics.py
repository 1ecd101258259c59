"""Which topics move a robot: the rule ``jointbus play`` uses to leave command topics out.

Where it sits: :mod:`jointbus.tools`, used by :mod:`jointbus.tools.player`; standard library only,
so that ``jointbus play --help`` can quote :data:`COMMAND_RULE` without loading the player (and
with it the bus).
"""

from __future__ import annotations

import re

# The command topics of an actuator array (jointbus.drivers.bus.array_names), under /actarray/.
_ARRAY_COMMANDS = frozenset(
    {"position", "multi_position", "speed", "multi_speed", "home", "current", "multi_current"}
)
# Last name segment of a command topic: ``joint_command``, ``control_command``,
# ``hardware_command``, ``velocity_command``, ``joints_command``, ``*_commands``, ``cmd_vel``,
# ``*_cmd``.
_COMMAND_SEGMENT = re.compile(r"(?:.*commands?|cmd_.*|.*_cmd|cmd)")
# Short type names of commands and requests: ``JointCommand``, ``ActuatorPositionCommand``,
# ``ActuatorPowerRequest``...
_COMMAND_TYPE = re.compile(r".*(?:Command|Request)")

COMMAND_RULE = (
    "a command topic is one whose last name segment ends in 'command' or 'commands', is 'cmd', "
    "starts with 'cmd_' or ends in '_cmd' (/hb50/joint_command, /hb50/control_command, "
    "/hb50/velocity_command, /arm6/joints_command, /cmd_vel), an actuator array's "
    "/actarray/{position,multi_position,speed,multi_speed,home,current,multi_current}, or one "
    "whose message type name ends in 'Command' or 'Request'"
)


def is_command_topic(topic: str, type_name: str = "") -> bool:
    """Whether a node acts on messages of ``topic`` (see :data:`COMMAND_RULE`): replaying it
    onto a live robot would move the robot."""
    segments = [s for s in topic.split("/") if s]
    if not segments:
        return False
    last = segments[-1]
    if _COMMAND_SEGMENT.fullmatch(last):
        return True
    if len(segments) >= 2 and segments[-2] == "actarray" and last in _ARRAY_COMMANDS:
        return True
    short_type = type_name.rsplit("/", 1)[-1]
    return bool(_COMMAND_TYPE.fullmatch(short_type))


__all__ = ["COMMAND_RULE", "is_command_topic"]
