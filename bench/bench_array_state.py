"""Bench: the array node's per-cycle state messages for hb50's 12 joints.

Where it sits: ``bench/``, run alone (``python -m bench.bench_array_state [--quick]``) or by the
bench runner through :func:`run`.

Each state cycle the array node (:meth:`jointbus.nodes.array.ArrayNode._publish_state`) builds
three messages from one ``JointReading`` and publishes them: Player ``ActuatorArrayData``, Beam
Bots ``JointState`` (its ``jointbus_msgs`` wire record) and Rock ``Joints``. hb50's bridge does so
at 100 Hz while they are observed, ``jointbus serve`` every cycle. The row times one
``_publish_state`` of hb50's bridge (the array node plus hb50's adapter, on the simulator, a
subscriber on each of the three topics, in process) and compares it with the anchor measured in
the same run: :func:`reference_publish_state`, the node's former per-element construction (every
``ActuatorData`` / ``JointSample`` through its constructor, the typed ``JointState`` then its
``to_wire``), publishing through the same publishers. Before timing, the two are checked to
publish equal messages with equal CDR bytes, so the anchor does the same work.

The two are timed in alternating blocks, so that drift in the machine's load hits both alike:
value and anchor are the medians of the blocks' mean times, µs; ``ratio`` is the median of the
ratios of adjacent blocks (below 1: cheaper), which a neighbour's burst moves least. Goal: ≤ 0.35×
the anchor.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from collections.abc import Callable
from typing import Any

from jointbus.bus import MAB_RT, Bus
from jointbus.drivers.actuator_array import JointReading
from jointbus.drivers.bus.array_names import ArrayNames
from jointbus.drivers.sim.driver import SimActuatorArray, SimArrayConfig
from jointbus.messages import jointbus_msgs
from jointbus.messages.actarray.data import ActuatorArrayData, ActuatorData
from jointbus.messages.actarray.state import ActuatorState
from jointbus.messages.joint_sample import JointSample
from jointbus.messages.joint_state import JointState
from jointbus.messages.joints import Joints
from jointbus.messages.std_msgs import Header
from jointbus.model.yaml_loader import load_robot
from jointbus.nodes.array import ArrayNode
from jointbus.robots.hb50.bridge.node import BridgeNode
from jointbus.runtime.timer import TimerThread

__all__ = ["GOAL_RATIO", "reference_messages", "reference_publish_state", "run"]

GOAL_RATIO = 0.35
METRIC = "array node state messages, 12 joints"


def reference_messages(
    r: JointReading, header: Header
) -> tuple[ActuatorArrayData, jointbus_msgs.JointState, Joints]:
    """The three messages as the node built them before the one-pass builders (the anchor):
    element by element through the constructors, for scalar joints."""
    data = ActuatorArrayData(
        header,
        tuple(
            ActuatorData(p, v, a, c, ActuatorState(s), e, t, st)
            for p, v, a, c, s, e, t, st in zip(
                r.position.tolist(),
                r.velocity.tolist(),
                r.acceleration.tolist(),
                r.current.tolist(),
                r.state.tolist(),
                r.effort.tolist(),
                r.temperature.tolist(),
                r.status.tolist(),
                strict=True,
            )
        ),
        r.motor_power,
    )
    positions = r.position.tolist()
    velocities = r.velocity.tolist()
    efforts = r.effort.tolist()
    state = JointState(
        names=r.names,
        positions=tuple(positions),
        velocities=tuple(velocities),
        efforts=tuple(efforts) if all(math.isfinite(e) for e in efforts) else (),
        header=header,
    ).to_wire()
    samples = tuple(
        JointSample(p, v, e, c, a)
        for p, v, e, c, a in zip(
            positions,
            velocities,
            efforts,
            r.current.tolist(),
            r.acceleration.tolist(),
            strict=True,
        )
    )
    return data, state, Joints(header, r.names, samples)


def reference_publish_state(node: ArrayNode, r: JointReading, header: Header) -> None:
    """The anchor: :func:`reference_messages`, published through the node's own publishers."""
    data, state, joints = reference_messages(r, header)
    node._pub_data.publish(data)
    node._pub_state.publish(state)
    node._pub_joints.publish(joints)


class _Hb50Bridge:
    """hb50's bridge on the simulator, stepped by hand, with a subscriber on each state topic."""

    def __init__(self) -> None:
        robot = load_robot("hb50")
        now = [10**12]
        self.sim = SimActuatorArray(SimArrayConfig.from_model(robot, realtime=False, noise=True))
        self.bus = Bus()
        timers = TimerThread("bench", clock=lambda: now[0], threaded=False)
        self.node = BridgeNode(self.sim, self.bus, timers=timers, run_loop=False)
        self.node.start()
        names = ArrayNames("hb50")
        self.seen: dict[str, list[Any]] = {}
        for topic, wire in (
            (names.joint_state, jointbus_msgs.JointState),
            (names.data, ActuatorArrayData),
            (names.joints, Joints),
        ):
            self.seen[topic] = []
            self.bus.subscribe(topic, wire, self.seen[topic].append, MAB_RT, realtime=True)
        self.reading = self.sim.read_joints()
        self.header = self.node.header()

    def published(self, publish: Callable[[], None]) -> list[Any]:
        """What one call of ``publish`` delivered to the three subscribers."""
        for messages in self.seen.values():
            messages.clear()
        publish()
        return [m for messages in self.seen.values() for m in messages]

    def close(self) -> None:
        self.node.shutdown()
        self.bus.close()
        self.sim.close()


def check_same_messages(bridge: _Hb50Bridge) -> None:
    """The node and the anchor publish equal messages with equal bytes (else the ratio lies)."""
    r, h, node = bridge.reading, bridge.header, bridge.node
    fast = bridge.published(lambda: node._publish_state(r, h))
    slow = bridge.published(lambda: reference_publish_state(node, r, h))
    if len(fast) != 3 or fast != slow or [m.to_cdr() for m in fast] != [m.to_cdr() for m in slow]:
        raise AssertionError("the node's state messages differ from the anchor's")


def _block_us(fn: Callable[[], None], calls: int) -> float:
    start = time.perf_counter_ns()
    for _ in range(calls):
        fn()
    return (time.perf_counter_ns() - start) / calls / 1000.0


def run(quick: bool) -> list[dict[str, Any]]:
    """Measure and return the row (see the module docstring)."""
    calls, blocks = (200, 15) if quick else (200, 101)
    bridge = _Hb50Bridge()
    try:
        check_same_messages(bridge)
        r, h, node = bridge.reading, bridge.header, bridge.node
        fast: list[float] = []
        slow: list[float] = []
        for _ in range(blocks):
            fast.append(_block_us(lambda: node._publish_state(r, h), calls))
            slow.append(_block_us(lambda: reference_publish_state(node, r, h), calls))
            for messages in bridge.seen.values():
                messages.clear()
    finally:
        bridge.close()
    value, anchor = statistics.median(fast), statistics.median(slow)
    ratio = statistics.median(f / s for f, s in zip(fast, slow, strict=True))
    return [
        {
            "metric": METRIC,
            "value": round(value, 2),
            "unit": "µs",
            "anchor": "per-element construction through the constructors (the node before)",
            "anchor_value": round(anchor, 2),
            "ratio": round(ratio, 3),
            "goal": f"<= {GOAL_RATIO:g}x anchor",
            "pass": ratio <= GOAL_RATIO,
        }
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer iterations")
    args = parser.parse_args()
    from bench.run import format_table  # here: tests load this module from its file

    print(format_table(run(quick=args.quick)))


if __name__ == "__main__":
    main()
