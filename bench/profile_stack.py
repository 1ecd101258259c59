"""Profile: where each microsecond of a stack cycle goes (bridge, control node, recorder).

Not a bench module (it has no ``run``): a measuring tool for docs/PERFORMANCE.md's "Where a
500 Hz cycle goes". It runs what ``bench_stack`` runs — :class:`jointbus.stack.Stack` with its
defaults (simulated hb50 stepped by the bridge loop, bridge + control node, topics offered on
Zenoh on a free loopback port with nobody subscribed) plus a
:class:`~jointbus.tools.recorder.Recorder` — waits for the robot to stand, and then measures a
standing window and (``--walk``) a walking window (0.5 m/s, a Twist at 20 Hz as a joystick sends
it).

How: the stack's own objects are wrapped *for this run only* (instance attributes, the bridge
module's ``BridgeData`` / ``BridgeState`` names) by timers that add up the calling thread's CPU
time (``time.thread_time_ns``, Linux thread clock) per section; the bridge sections are divided by
the bridge cycles of the window, the control node's by its steps. A timer pair costs ≈ 0.3 µs,
so a section's figure includes about that much. Per-thread CPU comes from the Linux thread clocks
of the process's Python threads; "other" is the process total minus them (Zenoh's runtime).

    .venv/bin/python -m bench.profile_stack [--window 5] [--walk] [--rate 500]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.bench_stack import CONTROL_THREAD, WALK_SPEED, _free_port, thread_cpu_s
from jointbus.bus import MAB_RT, ZenohConfig
from jointbus.messages.geometry_msgs import Twist, Vector3
from jointbus.nodes.ground_truth import GroundTruthPublisher
from jointbus.robots.hb50.bridge import node as bridge_module
from jointbus.robots.hb50.control import node as control_module
from jointbus.stack import Stack
from jointbus.tools.recorder import Recorder


class Sections:
    """CPU time (ns, the calling thread's) and calls per named section."""

    def __init__(self) -> None:
        self.ns: dict[str, int] = defaultdict(int)
        self.calls: dict[str, int] = defaultdict(int)

    def wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        clock = time.thread_time_ns
        ns, calls = self.ns, self.calls

        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = clock()
            try:
                return fn(*args, **kwargs)
            finally:
                ns[name] += clock() - t0
                calls[name] += 1

        return timed

    def snapshot(self) -> tuple[dict[str, int], dict[str, int]]:
        return dict(self.ns), dict(self.calls)


class _TimedPublisher:
    """A publisher whose ``publish`` is timed; everything else is the publisher's."""

    def __init__(self, inner: Any, publish: Callable[..., Any]) -> None:
        self._inner = inner
        self.publish = publish

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def instrument(stack: Stack, sections: Sections) -> Callable[[], None]:
    """Wrap the stack's sections in timers; returns what puts the module-level names back."""
    restore: list[tuple[object, str, object]] = []
    bridge, control, array = stack.bridge, stack.control, stack.array
    assert bridge is not None and control is not None and array is not None
    w = sections.wrap
    sim = stack._stepped
    if sim is not None:
        sim.step = w("bridge: simulator step (physics, stand-in for hardware)", sim.step)
        if hasattr(sim, "imu"):
            sim.imu = w("bridge:   the simulator's imu()", sim.imu)
    # The ground truth the stack publishes after each simulator step (a local of the stack's
    # loop body, so its class is wrapped for the run), and the bridge loop's wait for its next
    # deadline (CPU: the spin before the deadline, the statistics, a young-generation gc).
    restore.append((GroundTruthPublisher, "publish", GroundTruthPublisher.publish))
    GroundTruthPublisher.publish = w(  # type: ignore[method-assign]
        "bridge: ground truth (base pose, Odometry, publish)", GroundTruthPublisher.publish
    )
    loop = bridge.rate_loops["bridge"].loop
    loop.wait_next = w(  # type: ignore[method-assign]
        "bridge: rate loop wait (sleep; CPU = spin, statistics, gc)", loop.wait_next
    )
    array.read_joints = w("bridge: read_joints", array.read_joints)  # type: ignore[method-assign]
    array.impedance = w("bridge: write the command (impedance)", array.impedance)  # type: ignore[method-assign]
    bridge.cycle = w("bridge: cycle (all of it)", bridge.cycle)  # type: ignore[method-assign]
    bridge._take_joint_commands = w(  # type: ignore[method-assign]
        "bridge: take + check + arbitrate commands", bridge._take_joint_commands
    )
    bridge._publish = w("bridge: publish (all of it)", bridge._publish)  # type: ignore[method-assign]
    bridge._imu_fields = w("bridge:   IMU fields", bridge._imu_fields)  # type: ignore[method-assign]
    bridge._status_strings = w(  # type: ignore[method-assign]
        "bridge:   status strings", bridge._status_strings
    )
    data_cls = bridge_module.BridgeData
    if "from_joint_arrays" in vars(data_cls):  # the one-pass frame
        restore.append((data_cls, "from_joint_arrays", vars(data_cls)["from_joint_arrays"]))
        data_cls.from_joint_arrays = staticmethod(  # type: ignore[method-assign,assignment]
            w("bridge:   BridgeData built", data_cls.from_joint_arrays)
        )
    else:  # built by the constructor (before issue 15's work)
        restore.append((bridge_module, "BridgeData", data_cls))
        bridge_module.BridgeData = w("bridge:   BridgeData built", data_cls)  # type: ignore[misc]
    restore.append((bridge_module, "BridgeState", bridge_module.BridgeState))
    bridge_module.BridgeState = w(  # type: ignore[misc]
        "bridge:   BridgeState built", bridge_module.BridgeState
    )
    for attr, label in (
        ("data_publisher", "bridge_data published"),
        ("state_publisher", "bridge_state published"),
    ):
        pub = getattr(bridge, attr)
        setattr(bridge, attr, _TimedPublisher(pub, w(f"bridge:   {label}", pub.publish)))
    estimator = control.estimator
    estimator.update = w("control: estimator", estimator.update)  # type: ignore[method-assign]
    motion = control.motion
    motion.step = w("control: motion step (stand / walk)", motion.step)  # type: ignore[method-assign]
    for attr, label in (
        ("joint_command_pub", "JointCommand published"),
        ("robot_state_pub", "RobotState published"),
    ):
        pub = getattr(control, attr)
        setattr(control, attr, _TimedPublisher(pub, w(f"control:   {label}", pub.publish)))
    restore.append((control_module, "robot_state_message", control_module.robot_state_message))
    control_module.robot_state_message = w(  # type: ignore[assignment]
        "control:   RobotState built", control_module.robot_state_message
    )

    def undo() -> None:
        for owner, name, value in reversed(restore):
            setattr(owner, name, value)

    return undo


def window(stack: Stack, sections: Sections, seconds: float) -> dict[str, Any]:
    bridge, control = stack.bridge, stack.control
    assert bridge is not None and control is not None
    loop = bridge.rate_loops["bridge"].loop
    loop.stats.reset()
    ns0, calls0 = sections.snapshot()
    cycles0, frames0 = bridge.cycles, control.frames_used
    threads0 = thread_cpu_s()
    cpu0, t0 = time.process_time(), time.monotonic()
    time.sleep(seconds)
    cpu1, t1 = time.process_time(), time.monotonic()
    threads1 = thread_cpu_s()
    cycles1, frames1 = bridge.cycles, control.frames_used
    ns1, calls1 = sections.snapshot()
    stats = bridge.loop_stats()["bridge"]
    wall = t1 - t0
    cycles, frames = cycles1 - cycles0, frames1 - frames0
    per: dict[str, float] = {}
    for name, total in ns1.items():
        spent = total - ns0.get(name, 0)
        per[name] = spent / 1e3 / max(frames if name.startswith("control") else cycles, 1)
    thread_pct = {
        name: (threads1[name] - threads0.get(name, 0.0)) / wall * 100.0 for name in threads1
    }
    return {
        "wall": wall,
        "cpu_pct": (cpu1 - cpu0) / wall * 100.0,
        "cycles_hz": cycles / wall,
        "frames_hz": frames / wall,
        "per": per,
        "calls": {k: calls1[k] - calls0.get(k, 0) for k in calls1},
        "threads": thread_pct,
        "lateness_p99_us": stats.lateness_p99_s * 1e6,
        "overruns": stats.overruns,
        "bridge_thread_us": thread_pct.get("loop-bridge", 0.0) / 100.0 * wall
        / max(cycles, 1) * 1e6,
        "control_thread_us": (threads1.get(CONTROL_THREAD, 0.0) - threads0.get(CONTROL_THREAD, 0.0))
        / max(frames, 1)
        * 1e6,
    }


def show(title: str, result: dict[str, Any]) -> None:
    print(f"\n== {title}: {result['wall']:.1f} s, process CPU {result['cpu_pct']:.1f} % core, "
          f"bridge {result['cycles_hz']:.1f} cycles/s, control {result['frames_hz']:.1f} steps/s, "
          f"lateness p99 {result['lateness_p99_us']:.0f} µs, overruns {result['overruns']}")
    print(f"   bridge thread {result['bridge_thread_us']:.1f} µs CPU per cycle; "
          f"control thread {result['control_thread_us']:.1f} µs CPU per step")
    for name in sorted(result["per"]):
        print(f"   {name:58s} {result['per'][name]:8.1f} µs")
    parts = sorted(result["threads"].items(), key=lambda item: -item[1])
    other = result["cpu_pct"] - sum(p for _, p in parts)
    print("   CPU by thread (% core): " + ", ".join(f"{n} {p:.1f}" for n, p in parts if p >= 0.05)
          + f", other (Zenoh runtime) {other:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--window", type=float, default=5.0, help="seconds per window")
    parser.add_argument("--walk", action="store_true", help="also a walking window")
    parser.add_argument("--rate", type=float, default=500.0, help="bridge rate (Hz)")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="jb-profile-stack-"))
    kwargs: dict[str, Any] = {}
    if args.rate != 500.0:
        kwargs["rate_hz"] = args.rate
    stack = Stack(zenoh=ZenohConfig(hub_port=_free_port()), layout="inproc", **kwargs).start()
    recorder = Recorder(stack.bus, tmp / "stack.mcap").start()
    undo: Callable[[], None] = lambda: None  # noqa: E731
    try:
        standing = stack.wait_for(lambda s: s.standing, 30.0)
        if not standing.standing:
            raise SystemExit(f"the robot did not stand up: {standing.line()}")
        time.sleep(1.0)
        sections = Sections()
        undo = instrument(stack, sections)
        show("standing", window(stack, sections, args.window))
        if args.walk:
            pub = stack.bus.publisher("/hb50/velocity_command", Twist, MAB_RT)
            stop = threading.Event()

            def joystick() -> None:
                while not stop.wait(0.05):
                    pub.publish(Twist(Vector3(WALK_SPEED, 0.0, 1.0), Vector3()))

            sender = threading.Thread(target=joystick, name="profile-joystick", daemon=True)
            sender.start()
            try:
                time.sleep(2.0)
                show("walking", window(stack, sections, args.window))
            finally:
                stop.set()
                sender.join()
                pub.close()
    finally:
        undo()
        try:
            recorder.stop()
        finally:
            stack.stop()
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
