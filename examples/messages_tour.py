"""A tour of the message layer: build, validate, encode to ROS 2 CDR, decode, and see an error.

Run: ``python examples/messages_tour.py``. Every message here is immutable, checked when built, and
its bytes are exactly what a ROS 2 node would put on the wire.
"""

from jointbus.math import Transform2D, Twist2D
from jointbus.messages.errors import ValidationError
from jointbus.messages.joint_state import JointState
from jointbus.robots.hb50.messages import JointCommand, Status

names = ["fr_j0", "fr_j1", "fr_j2"]

# A Honey Badger impedance command: hold a pose with kp = 80 N·m/rad, kd = 3 N·m·s/rad.
cmd = JointCommand.hold(names, [0.05, 0.7, -1.4], kp=80.0, kd=3.0, source_node="tour")
data = cmd.to_cdr()
print(f"{cmd.TYPE_NAME}: {len(data)} CDR bytes, header {data[:4].hex()}")
back = JointCommand.from_cdr(data)
print("decoded equals original:", back == cmd)
print("fr_j1 target:", back.for_joint("fr_j1"))

# A rover's joint state: the planar base and the mast in one message (Beam Bots' JointState).
rover = JointState(
    names=("base", "mast"),
    positions=(Transform2D(12.4, -3.1, 1.57), 0.5),
    velocities=(Twist2D(0.2, 0.0, 0.1), 0.0),
)
print(f"{rover.TYPE_NAME}: round trip equal:", JointState.from_cdr(rover.to_cdr()) == rover)

# Bad input is refused whole, and the error names the joint, its index, the field and the value.
try:
    JointCommand.hold(names, [0.05, 0.7, -1.4], kp=[80.0, -3.0, 80.0], kd=3.0)
except ValidationError as err:
    print("refused:", err)

print(Status.ok("tour", "messages work").status)
print()
print("--- msgdef (as MCAP's ros2msg schema stores it) ---")
print(Status.msgdef())
