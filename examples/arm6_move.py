"""Open the simulated arm, power it, move the elbow and read its state.

Run: ``python examples/arm6_move.py`` (``sim://arm6`` runs in real time on its own thread; pass
another URL as the first argument to try a different array).
"""

import sys

from jointbus import drivers

url = sys.argv[1] if len(sys.argv) > 1 else "sim://arm6"

with drivers.open(url) as arm:
    arm.power(True)
    arm.position("elbow", 0.5)  # rad; a profiled move at the configured speed
    elbow = arm.index("elbow")
    arm.wait_until_still("elbow", timeout=10.0)  # s; MOVING from the call on, until it stops
    state = arm.read().actuators[elbow]
    print(f"elbow: position {state.position:.3f} rad, speed {state.speed:.3f} rad/s, "
          f"current {state.current:.3f} A, {state.temperature:.1f} °C, state {state.state.name}")
