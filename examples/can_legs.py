"""Fold the hb50's legs into their standing pose on CAN motors: the same code drives the motor
twin or real motors (lift the robot off the ground first).

Run against simulated motors (python-can's virtual bus, in one process)::

    jointbus can-twin "can://virtual/demo?robot=hb50&model=md80" examples/can_legs.py

or against real ones, e.g. ``python examples/can_legs.py "can://socketcan/can0?robot=hb50&model=md80"``
(see docs/CAN.md: interface, bitrate, motor ids, wire ranges).
"""

import sys

from jointbus import drivers
from jointbus.model.yaml_loader import load_robot

url = sys.argv[1] if len(sys.argv) > 1 else "can://virtual/demo?robot=hb50&model=md80"

with drivers.open(url) as legs:
    legs.power(True)                                      # every motor answers, or refused
    stand = load_robot("hb50").pose("home")               # rad, by joint name
    target = [stand[name] for name in legs.names]
    legs.set_speed(None, 2.0)                             # rad/s, every joint
    legs.positions(target)                                # profiled moves, checked against limits
    reading = legs.wait_until_still(timeout=30.0)         # s
    worst = max(abs(p - q) for p, q in zip(reading.position, target, strict=True))
    print(f"{legs.count} joints in the standing pose within {worst:.3f} rad; motor power "
          f"{legs.read().motor_power}; reply timeout {legs.can_config.reply_timeout_s * 1e3:g} ms")
