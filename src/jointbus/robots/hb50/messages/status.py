"""``hb50_commons/msg/Status`` as Honey Badger code imports it: the generic status, re-exported.

Where it sits: :mod:`jointbus.robots.hb50.messages`. The type itself lives in the generic
:mod:`jointbus.messages.status` (runtime builds every node's heartbeat on it and must not import a
robot's package); this name is kept so that existing ``jointbus.robots.hb50.messages.status``
imports work.
"""

from jointbus.messages.status import Level, Status

__all__ = ["Level", "Status"]
