"""The input totals on ``/<ns>/diagnostics`` add up: malformed ⊆ refused ⊆ received.

A new user (2026-12-06) sent 15 ``multi_position`` commands with ``jointbus topic pub`` to a
served 6-joint arm — 7 with a NaN (``--unchecked``), 5 out of limits, 3 valid — and read
``received: 8, malformed: 7, refused: 12`` on ``/myarm/diagnostics``: refused larger than
received. ``received`` is every message that arrived, ``refused`` the malformed ones and those
the node refused, so the same mix reads 15 / 7 / 12, and 15 − 12 = 3 were accepted. The array
node's impedance input (whose malformed samples hb50's bridge handles with the same code,
``refusing_at_decode``) obeys the same rule. Real Zenoh sessions: only network bytes can be
malformed.
"""

from __future__ import annotations

import dataclasses
import math

from jointbus import drivers
from jointbus.bus import RELIABLE, Bus, ZenohConfig
from jointbus.drivers.bus.array_names import ArrayNames
from jointbus.messages.actarray.commands import MultiPositionCommand
from jointbus.messages.joint_impedance import JointImpedance
from jointbus.runtime import InputTotals, LoopDiagnostics
from support.array_server import served
from support.bus import wait_until

N = ArrayNames("arm6")
NAMES = ("shoulder_pan", "shoulder_lift", "elbow", "wrist_roll", "wrist_pitch", "flange_roll")


def _unvalidated(positions: tuple[float, ...]) -> MultiPositionCommand:
    """A MultiPositionCommand its constructor would refuse, as ``topic pub --unchecked`` sends."""
    msg = object.__new__(MultiPositionCommand)
    object.__setattr__(msg, "positions", positions)
    return msg


def _totals(seen: list[LoopDiagnostics], topic: str) -> InputTotals | None:
    for d in reversed(list(seen)):
        for t in d.inputs:
            if t.topic == topic:
                return t
    return None


def _adds_up(t: InputTotals) -> bool:
    return t.malformed <= t.refused <= t.received


def test_the_users_mix_of_multi_position_commands_adds_up() -> None:
    nan = (0.0, 0.0, math.nan, 0.0, 0.0, 0.0)
    beyond = (0.0, 0.0, 9.0, 0.0, 0.0, 0.0)
    valid = (0.0, 0.1, 0.2, 0.0, 0.0, 0.0)
    sent = [nan] * 7 + [beyond] * 5 + [valid] * 3
    topic = N.command("multi_position")
    with served("sim://arm6?noise=false", "arm6") as server:
        seen: list[LoopDiagnostics] = []
        server.bus.subscribe(N.name("diagnostics"), LoopDiagnostics, seen.append, RELIABLE)
        with drivers.open(server.url()) as remote:
            remote.power(True)
        with Bus(name="user", zenoh=ZenohConfig.loopback(None, (server.port,))) as bus:
            pub = bus.publisher(topic, MultiPositionCommand, node="user")
            assert wait_until(lambda: pub.stats().remote_matched, timeout=5.0)
            for positions in sent:
                pub.publish(_unvalidated(positions))

            def counted() -> bool:
                t = _totals(seen, topic)
                return t is not None and t.received == len(sent)

            assert wait_until(counted, timeout=10.0), _totals(seen, topic)
            assert wait_until(  # the refusals of the last ones may come one report later
                lambda: (t := _totals(seen, topic)) is not None and t.refused == 12, timeout=5.0
            ), _totals(seen, topic)
        t = _totals(seen, topic)
        assert t is not None
        assert (t.received, t.malformed, t.refused) == (15, 7, 12)
        assert t.received - t.refused == 3  # the valid ones, accepted
        # every report on the way added up too, not only the last
        assert all(_adds_up(x) for d in seen for x in d.inputs), [d.inputs for d in seen]


def _impedance(**fields: object) -> JointImpedance:
    """arm6's JointImpedance from 'tester' with ``fields``, unchecked (its constructor would
    refuse a NaN or a negative gain), as ``topic pub --unchecked`` sends it."""
    base = JointImpedance(
        source_node="tester",
        name=NAMES,
        position=(0.0,) * 6,
        velocity=(0.0,) * 6,
        effort=(0.0,) * 6,
        kp=(20.0,) * 6,
        kd=(1.0,) * 6,
        brake=(False,) * 6,
    )
    msg = object.__new__(JointImpedance)
    for f in dataclasses.fields(JointImpedance):
        object.__setattr__(msg, f.name, fields.get(f.name, getattr(base, f.name)))
    return msg


def test_a_mix_of_impedance_commands_adds_up_the_same_way() -> None:
    """The impedance input: malformed samples (a NaN, a negative kp) are refused by the command
    check after decode; they are counted once, as malformed and refused."""
    topic = N.impedance_command
    with served("sim://arm6?noise=false", "arm6") as server:
        seen: list[LoopDiagnostics] = []
        server.bus.subscribe(N.name("diagnostics"), LoopDiagnostics, seen.append, RELIABLE)
        with Bus(name="user", zenoh=ZenohConfig.loopback(None, (server.port,))) as bus:
            pub = bus.publisher(topic, JointImpedance, node="tester")
            assert wait_until(lambda: pub.stats().remote_matched, timeout=5.0)
            sent = [_impedance(position=(0.0, 0.0, math.nan, 0.0, 0.0, 0.0))] * 4
            sent += [_impedance(kp=(20.0, -5.0, 20.0, 20.0, 20.0, 20.0))] * 2
            sent += [_impedance(position=(0.0, 0.0, 3.0, 0.0, 0.0, 0.0))] * 3  # beyond limits
            for msg in sent:
                pub.publish(msg)

            def done() -> bool:
                t = _totals(seen, topic)
                return t is not None and t.received == 9 and t.refused == 9

            assert wait_until(done, timeout=10.0), _totals(seen, topic)
        t = _totals(seen, topic)
        assert t is not None and (t.received, t.malformed, t.refused) == (9, 6, 9)
        assert all(_adds_up(x) for d in seen for x in d.inputs), [d.inputs for d in seen]
