"""CAN driver frames per second on python-can's virtual bus, against raw python-can.

What is measured: :meth:`MotorLink.command_all` for 12 motors (validate, encode, send 12 command
frames, collect and decode 12 replies) with the simulated firmware (:class:`FirmwareTwin`:
decode, physics, encode) answering on its own thread. Frames per second counts commands and
replies.

Anchor, in the same run: the same traffic with nothing of ours in it — 12 pre-built command frames
sent and 12 pre-built replies echoed back by a thread on the other endpoint and received. The
ratio (ours / anchor) is the share of python-can's own throughput that survives our protocol,
validation and physics; the virtual bus itself (a deepcopy and a queue per frame, thread wake-ups
between the two endpoints) bounds both.

Driver level: the ``can://`` :class:`CanActuatorArray` doing a bridge cycle — ``read_joints()``
(the last replies) then ``impedance(ImpedanceCommand)`` (validate, limit, calibrate, one exchange
of 12 commands and 12 replies) — against the same twin; its anchor is :meth:`MotorLink.command_all`
alone in the same run, so the ratio is the share of the link's rate the ActuatorArray layer keeps.

Cycle rates (12 commands + 12 replies per cycle) must reach the bridge's 500 Hz (the goal); their
anchor is the raw python-can exchange above counted in cycles, so the ratio says how much of the
bare link's cycle rate is left.

Run: ``python -m bench.bench_can`` (``--quick`` for a short run).
"""

from __future__ import annotations

import sys
import threading
import time
import uuid
from typing import Any

import can
import numpy as np

from jointbus.drivers.can.config import CanArrayConfig
from jointbus.drivers.can.driver import CanActuatorArray
from jointbus.drivers.can.firmware_twin import FirmwareTwin
from jointbus.drivers.can.mit_protocol import MitCommand, MitReply, encode_command, encode_reply
from jointbus.drivers.can.motor_link import MotorLink, MotorSpec
from jointbus.drivers.can.motor_models import bundled_motor_models
from jointbus.drivers.impedance import ImpedanceCommand
from jointbus.model.yaml_loader import load_robot

N_MOTORS = 12
# Share of raw python-can's frame rate to keep. Our side adds validation, encoding and decoding,
# and the twin adds decoding, a 2 ms physics step per cycle and reply encoding — all on the same
# two vCPUs and under the same GIL as python-can's own per-frame deepcopy and queue hand-off.
# Measured here: 0.33-0.45 as best of 3 rounds (single rounds 0.16-0.35: thread wake-ups on
# this VM are noisy, so each side keeps its best round).
GOAL_RATIO = 0.2
BRIDGE_RATE_HZ = 500.0  # the hardware bridge's cycle rate: the goal of the cycles/s rows
RATE_GOAL = f">= {BRIDGE_RATE_HZ:g} cycles/s (the bridge's rate)"
RAW_CYCLES = "raw python-can exchange of 12 + 12 pre-built frames, same run"
# Share of the bare link's frame rate the driver keeps for a bridge cycle. Per cycle it adds the
# ImpedanceCommand checks (limits), calibration and the reading's arrays: ~0.1-0.2 ms of CPU
# on an exchange of ~0.5 ms. Measured on a busy 2-vCPU VM: 0.39-1.1 (best of rounds; the two
# sides' thread wake-ups dominate the noise), so the goal leaves room.
DRIVER_GOAL_RATIO = 0.5


def _pair() -> tuple[can.BusABC, can.BusABC]:
    channel = f"bench-can-{uuid.uuid4().hex}"
    return (
        can.Bus(interface="virtual", channel=channel, receive_own_messages=False),
        can.Bus(interface="virtual", channel=channel, receive_own_messages=False),
    )


def _motors() -> list[MotorSpec]:
    md80 = bundled_motor_models()["md80"]
    return [MotorSpec(f"j{i}", i + 1, md80) for i in range(N_MOTORS)]


def _ours(cycles: int) -> float:
    """Frames/s of command_all + replies with the twin on its own thread."""
    host, motor_bus = _pair()
    motors = _motors()
    try:
        with FirmwareTwin(motor_bus, motors):
            link = MotorLink(host, motors, reply_timeout_s=0.5)
            link.enable()
            target = np.linspace(-0.5, 0.5, N_MOTORS)
            zeros = np.zeros(N_MOTORS)
            kp, kd = np.full(N_MOTORS, 40.0), np.full(N_MOTORS, 1.0)
            for _ in range(max(20, cycles // 10)):  # warm up
                link.command_all(position=target, velocity=zeros, kp=kp, kd=kd, torque=zeros)
            missed = int(link.timeout_counts.sum())
            start = time.perf_counter()
            for _ in range(cycles):
                link.command_all(position=target, velocity=zeros, kp=kp, kd=kd, torque=zeros)
            elapsed = time.perf_counter() - start
            if int(link.timeout_counts.sum()) != missed:
                raise RuntimeError("replies timed out during the benchmark; numbers invalid")
    finally:
        host.shutdown()
        motor_bus.shutdown()
    return 2 * N_MOTORS * cycles / elapsed


def _driver(cycles: int) -> float:
    """Frames/s of the can:// driver's bridge cycle (read_joints + impedance), twin answering."""
    host, motor_bus = _pair()
    robot = load_robot("hb50")
    names = robot.actuator_order
    md80 = bundled_motor_models()["md80"]
    motors = [MotorSpec(name, i + 1, md80) for i, name in enumerate(names)]
    home = [robot.pose("home")[name] for name in names]
    try:
        with FirmwareTwin(motor_bus, motors, initial_positions=home):
            config = CanArrayConfig.from_model(robot, "md80", reply_timeout_s=0.5)
            with CanActuatorArray(config, host) as array:
                array.power(True)
                command = ImpedanceCommand.hold(home, 80.0, 3.0)

                def cycle() -> None:
                    array.read_joints()
                    array.impedance(command)

                for _ in range(max(20, cycles // 10)):  # warm up
                    cycle()
                missed = int(array.link.timeout_counts.sum())
                sent = array.link.frames_sent
                start = time.perf_counter()
                for _ in range(cycles):
                    cycle()
                elapsed = time.perf_counter() - start
                if int(array.link.timeout_counts.sum()) != missed:
                    raise RuntimeError("replies timed out during the benchmark; numbers invalid")
                if array.link.frames_sent - sent != N_MOTORS * cycles:
                    raise RuntimeError("the driver did not make one exchange per cycle")
    finally:
        host.shutdown()
        motor_bus.shutdown()
    return 2 * N_MOTORS * cycles / elapsed


def _anchor(cycles: int) -> float:
    """Frames/s of raw python-can: pre-built commands out, pre-built replies echoed back."""
    host, motor_bus = _pair()
    md80 = bundled_motor_models()["md80"]
    commands = [
        can.Message(
            arbitration_id=i + 1,
            data=encode_command(MitCommand(0.1, 0.0, 40.0, 1.0, 0.0), md80.ranges),
            is_extended_id=False,
        )
        for i in range(N_MOTORS)
    ]
    replies = {
        i + 1: can.Message(
            arbitration_id=0,
            data=encode_reply(MitReply(i + 1, 0.1, 0.0, 0.0, 25.0, 0), md80.ranges, md80.reply),
            is_extended_id=False,
        )
        for i in range(N_MOTORS)
    }
    stop = threading.Event()

    def echo() -> None:
        while not stop.is_set():
            msg = motor_bus.recv(0.05)
            if msg is not None:
                motor_bus.send(replies[msg.arbitration_id])

    thread = threading.Thread(target=echo, daemon=True)
    thread.start()
    try:

        def cycle() -> None:
            for msg in commands:
                host.send(msg)
            for _ in range(N_MOTORS):
                if host.recv(0.5) is None:
                    raise RuntimeError("echo thread did not answer")

        for _ in range(max(20, cycles // 10)):
            cycle()
        start = time.perf_counter()
        for _ in range(cycles):
            cycle()
        elapsed = time.perf_counter() - start
    finally:
        stop.set()
        thread.join()
        host.shutdown()
        motor_bus.shutdown()
    return 2 * N_MOTORS * cycles / elapsed


def run(quick: bool) -> list[dict[str, Any]]:
    """Our frames/s vs raw python-can's, and cycle rates (goal: the bridge's 500 Hz)."""
    cycles = 400 if quick else 2000
    # interleave and keep the best of a few rounds: the 2-vCPU VM is noisy
    ours, anchor, driver = 0.0, 0.0, 0.0
    for _ in range(3 if quick else 5):
        anchor = max(anchor, _anchor(cycles))
        ours = max(ours, _ours(cycles))
        driver = max(driver, _driver(cycles))
    ratio = ours / anchor
    driver_ratio = driver / ours
    driver_cycles = driver / (2 * N_MOTORS)
    ours_cycles = ours / (2 * N_MOTORS)
    raw_cycles = anchor / (2 * N_MOTORS)  # the bare link's exchange rate, same run
    return [
        {
            "metric": f"CAN driver frames/s (command_all + replies, {N_MOTORS} motors, twin)",
            "value": round(ours),
            "unit": "frames/s",
            "anchor": "raw python-can send/recv of pre-built frames, echo thread",
            "anchor_value": round(anchor),
            "ratio": round(ratio, 3),
            "goal": f">= {GOAL_RATIO}",
            "pass": ratio >= GOAL_RATIO,
        },
        {
            "metric": f"CAN driver cycles/s ({N_MOTORS} motors, command_all + replies, twin)",
            "value": round(ours_cycles),
            "unit": "cycles/s",
            "anchor": RAW_CYCLES,
            "anchor_value": round(raw_cycles),
            "ratio": round(ours_cycles / raw_cycles, 3),
            "goal": RATE_GOAL,
            "pass": ours_cycles >= BRIDGE_RATE_HZ,
        },
        {
            "metric": f"can:// driver frames/s (read_joints + impedance, {N_MOTORS} motors, twin)",
            "value": round(driver),
            "unit": "frames/s",
            "anchor": "MotorLink.command_all + replies, same run",
            "anchor_value": round(ours),
            "ratio": round(driver_ratio, 3),
            "goal": f">= {DRIVER_GOAL_RATIO}",
            "pass": driver_ratio >= DRIVER_GOAL_RATIO,
        },
        {
            "metric": f"can:// driver bridge cycles/s ({N_MOTORS} motors, twin)",
            "value": round(driver_cycles),
            "unit": "cycles/s",
            "anchor": RAW_CYCLES,
            "anchor_value": round(raw_cycles),
            "ratio": round(driver_cycles / raw_cycles, 3),
            "goal": RATE_GOAL,
            "pass": driver_cycles >= BRIDGE_RATE_HZ,
        },
    ]


if __name__ == "__main__":
    rows = run(quick="--quick" in sys.argv[1:])
    keys = ("metric", "value", "unit", "anchor", "anchor_value", "ratio", "goal", "pass")
    for row in rows:
        for key in keys:
            print(f"{key:>13}: {row[key]}")
        print()
