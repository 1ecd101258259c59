"""jointbus.nodes: the generic long-running nodes, for any robot.

Where it sits: the layer above :mod:`jointbus.drivers`, :mod:`jointbus.runtime` and
:mod:`jointbus.bus`, below the robot packages (:mod:`jointbus.robots`) and :mod:`jointbus.cli`.
Each node's decision logic is split into pure, clock-injected components (tested on their own) and
a thin ``node`` module that wires them to the bus, the rate loop and the drivers.

- :mod:`jointbus.nodes.array` — the array node (``jointbus serve``): any ``ActuatorArray`` on the
  bus with Beam Bots, Player and Rock messages, services and safety;
- :mod:`jointbus.nodes.safety` — the safety components it and Honey Badger's bridge share
  (command check, arbitration, watchdog, e-stop latch, re-entry ramp, thermal guard);
- :mod:`jointbus.nodes.ground_truth` — a simulator's ground truth on the bus.

Robot-specific nodes (Honey Badger's bridge and control node) live in :mod:`jointbus.robots`.
Import the subpackages directly: importing one node never pulls in another's dependencies.
"""
