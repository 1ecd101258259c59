"""The ``bus://`` driver: an actuator array served by an array node, reached over the bus.

Where it sits: :mod:`jointbus.drivers` (above :mod:`jointbus.bus`); :mod:`.array_names` and
:mod:`.errors_on_wire` are shared with the array node (:mod:`jointbus.nodes.array`), the server
side, so both agree on names and on how an error crosses the wire.
"""

from jointbus.drivers.bus.array_names import ArrayNames

__all__ = ["ArrayNames"]
