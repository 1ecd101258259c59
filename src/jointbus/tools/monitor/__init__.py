"""The terminal monitor: joints, bridge, nodes, topic rates and status events of a running robot.

Where it sits: :mod:`jointbus.tools`, above :mod:`jointbus.bus` and :mod:`jointbus.runtime`.
:mod:`.model` holds what is shown (plain data, no bus, no terminal), :mod:`.feed` fills it from the
bus, :mod:`.app` draws it with textual. ``jointbus monitor`` runs :func:`run_monitor`.

The app is imported lazily (textual takes a moment to import), so the model and the feed can be
used without it.
"""

from jointbus.tools.monitor.feed import MonitorFeed
from jointbus.tools.monitor.model import MonitorModel, MonitorSnapshot, describe_flags

__all__ = ["MonitorFeed", "MonitorModel", "MonitorSnapshot", "describe_flags"]
