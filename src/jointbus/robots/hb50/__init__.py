"""Honey Badger 5.0: its messages, its bridge and its control node, on top of the generic core.

Where it sits: :mod:`jointbus.robots` (DESIGN.md §4b). Three subpackages, lowest first:

- :mod:`.messages` — the ``hb50_commons`` message set, byte-compatible with the robot's ROS 2
  (only the generic messages and the codec below it; tools such as the monitor use it);
- :mod:`.bridge` — the 500 Hz bridge node: the actuator array served with the generic safety
  components of :mod:`jointbus.nodes.safety`, hb50's messages at its edge;
- :mod:`.control` — the control node: state estimation, standing, walking, ``/tf``.

This module imports nothing, so importing :mod:`.messages` never pulls in the nodes.
"""
