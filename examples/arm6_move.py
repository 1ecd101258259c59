"""Open the simulated arm, power it, move the elbow and read its state.

Run: ``python examples/arm6_move.py`` (``sim://arm6`` runs in real time on its own thread; pass
another URL as the first argument to try a different array).
"""

import sys
import time

from jointbus import drivers
from jointbus.messages.actarray import ActuatorState

url = sys.argv[1] if len(sys.argv) > 1 else "sim://arm6"

with drivers.open(url) as arm:
    arm.power(True)
    arm.position("elbow", 0.5)  # rad; a profiled move at the configured speed
    elbow = arm.index("elbow")
    time.sleep(0.2)
    while arm.read().actuators[elbow].state & ActuatorState.MOVING:
        time.sleep(0.05)
    state = arm.read().actuators[elbow]
    print(f"elbow: position {state.position:.3f} rad, speed {state.speed:.3f} rad/s, "
          f"current {state.current:.3f} A, {state.temperature:.1f} °C, state {state.state.name}")
