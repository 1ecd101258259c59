"""jointbus.nodes: the long-running nodes of a robot stack (bridge, control, ...).

Where it sits: the layer above :mod:`jointbus.drivers`, :mod:`jointbus.runtime` and
:mod:`jointbus.bus`, below :mod:`jointbus.cli`. Each node is a subpackage whose decision logic is
split into pure, clock-injected components (tested on their own) and a thin ``node`` module that
wires them to the bus, the rate loop and the drivers.

- :mod:`jointbus.nodes.bridge` — owns the actuator array; checks, arbitrates and applies joint
  commands at 500 Hz; watchdog, e-stop and thermal protection.
- :mod:`jointbus.nodes.control` — the control node: state estimate, motion modes (idle, stand up,
  stand, sit down; no walking gaits), RobotState, joint states and /tf.

Import the subpackages directly (``from jointbus.nodes.bridge import BridgeNode``): importing one
node never pulls in another's dependencies.
"""
