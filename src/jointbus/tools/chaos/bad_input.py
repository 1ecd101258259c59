"""Bursts of bad input for the chaos campaign, each from a process of its own.

Where it sits: :mod:`jointbus.tools.chaos`; :mod:`jointbus.chaos_campaign` runs
``python -m jointbus.tools.chaos.bad_input KIND --seconds S --hub-port P`` beside the robot:

- ``joint-commands``: ``/<ns>/joint_command`` at 1 kHz from the source ``chaos_bad_input``,
  alternating *malformed* commands (the robot's joints in the wrong order, one joint missing,
  an unknown joint) and *out-of-limit* ones (every target 0.5 rad past its joint's position
  limit, or at twice its speed limit) — the bridge must reject each whole, apply none and report
  the rejections on ``/<ns>/status``;
- ``velocity-flip``: ``/<ns>/velocity_command`` flipping between full forward and full backward
  at 200 Hz (a broken joystick, two planners fighting) — the walking controller's ramps must keep
  the body upright;
- ``duplicate-node``: a node named like the running control node (``control_node``) on the same
  bus — it must be refused (:class:`~jointbus.runtime.DuplicateNodeError`), and the running robot
  untouched. Exit code :data:`REFUSED` when it was refused, 0 when it (wrongly) started.

Prints ``ready`` when it begins, ``first <wall-clock ns>`` once the first message of a burst is
out (the campaign's report bound counts from there), and ``sent <wall-clock ns of the first>
<count>`` at the end of a burst (``--seconds`` × the rate, sent late rather than skipped when
the host starves it); stops early on SIGTERM.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any, Final

from jointbus.bus import MAB_RT, Bus, ZenohConfig
from jointbus.messages.geometry_msgs import Twist, Vector3
from jointbus.model.yaml_loader import load_robot
from jointbus.robots.hb50.messages import JointCommand

__all__ = ["KINDS", "REFUSED", "SOURCE", "bad_joint_commands", "main"]

#: Exit code of ``duplicate-node`` when the namesake was refused, as it must be.
REFUSED: Final = 3
#: The source node of the bad joint commands.
SOURCE: Final = "chaos_bad_input"
KINDS: Final = ("joint-commands", "velocity-flip", "duplicate-node")


def bad_joint_commands(robot: str = "hb50") -> list[JointCommand]:
    """The bad commands a burst cycles through (module docstring), for ``robot``'s joints."""
    model = load_robot(robot)
    joints = model.actuated_joints()
    names = tuple(j.name for j in joints)
    limits = model.limits_for(names)
    n = len(names)

    def command(
        names_: Sequence[str], t_pos: Sequence[float], t_vel: Sequence[float]
    ) -> JointCommand:
        m = len(names_)
        return JointCommand(
            source_node=SOURCE,
            name=tuple(names_),
            kp=(20.0,) * m,
            ki=(0.0,) * m,
            kd=(0.5,) * m,
            t_pos=tuple(t_pos),
            t_vel=tuple(t_vel),
            t_trq=(0.0,) * m,
            brake=(False,) * m,
        )

    middle = [
        0.0 if not (abs(lim.position_min) < 1e9 and abs(lim.position_max) < 1e9)
        else 0.5 * (lim.position_min + lim.position_max)
        for lim in limits
    ]
    past = [
        lim.position_max + 0.5 if abs(lim.position_max) < 1e9 else 1e6 for lim in limits
    ]
    too_fast = [2.0 * lim.velocity_max if abs(lim.velocity_max) < 1e9 else 1e6 for lim in limits]
    return [
        command(names[::-1], middle[::-1], [0.0] * n),  # wrong order
        command(names[:-1], middle[:-1], [0.0] * (n - 1)),  # one joint missing
        command((*names[:-1], "no_such_joint"), middle, [0.0] * n),  # an unknown joint
        command(names, past, [0.0] * n),  # every target past its position limit
        command(names, middle, too_fast),  # every target at twice its speed limit
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jointbus.tools.chaos.bad_input")
    parser.add_argument("kind", choices=KINDS)
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--hub-port", type=int, required=True)
    parser.add_argument("--namespace", default="hb50")
    args = parser.parse_args(argv)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    bus = Bus(name="chaos-bad-input", zenoh=ZenohConfig(hub_port=args.hub_port))
    try:
        if args.kind == "duplicate-node":
            return _duplicate(bus, args.namespace)
        pub: Any
        if args.kind == "joint-commands":
            commands: list[Any] = list(bad_joint_commands())
            pub = bus.publisher(
                f"/{args.namespace}/joint_command", JointCommand, MAB_RT, node=SOURCE
            )
            rate = 1000.0
        else:
            commands = [Twist(Vector3(1.0, 0.0, 0.0)), Twist(Vector3(-1.0, 0.0, 0.0))]
            pub = bus.publisher(
                f"/{args.namespace}/velocity_command", Twist, MAB_RT, node="chaos_flip"
            )
            rate = 200.0
        # a publisher sends only once a subscriber matched (DESIGN §4): wait for the robot's
        # (up to 20 s: on a host the campaign loads, discovery took more than 5 s, and a burst
        # sent before the match reached nobody while its report bound ran)
        deadline = time.monotonic() + 20.0
        while not pub.remote_matched and time.monotonic() < deadline and not stop.is_set():
            time.sleep(0.01)
        print("ready", flush=True)
        # a count, not a time: a burst the host starved is sent late, never skipped
        count = max(1, round(args.seconds * rate))
        tick = time.monotonic()
        first_ns = time.time_ns()
        for i in range(count):
            if stop.is_set():
                break
            pub.publish(commands[i % len(commands)])
            if i == 0:
                first_ns = time.time_ns()
                print(f"first {first_ns}", flush=True)  # the campaign's bound counts from here
            tick += 1.0 / rate
            delay = tick - time.monotonic()
            if delay > 0:
                time.sleep(delay)
        if args.kind == "velocity-flip":
            pub.publish(Twist())
        print(f"sent {first_ns} {i + 1}", flush=True)
        return 0
    finally:
        bus.close()


def _duplicate(bus: Bus, namespace: str) -> int:
    from jointbus.runtime import Node
    from jointbus.runtime.node import DuplicateNodeError

    print("ready", flush=True)
    try:
        node = Node("control_node", bus, namespace=namespace)
    except DuplicateNodeError as exc:
        print(f"refused: {exc}", file=sys.stderr, flush=True)
        return REFUSED
    node.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
