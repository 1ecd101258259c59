"""The watchdog's report says what the array node writes when the stream stops: a robot's own
fallback and its phase, or the damping-only safe command (a new user's fault tests: hb50's
bridge said "watchdog: no valid command for 251 ms; safe mode (damping)" on every stall and
kill, 11 times, while its fallback trotted the robot to a stop and held a stance)."""

from __future__ import annotations

import math

import numpy as np

from jointbus import drivers
from jointbus.bus import MAB_RT, RELIABLE, Bus
from jointbus.drivers.actuator_array import JointReading
from jointbus.drivers.bus.array_names import ArrayNames
from jointbus.drivers.impedance import ImpedanceCommand
from jointbus.drivers.sim.driver import SimActuatorArray
from jointbus.messages.actarray import ActuatorReply, PowerRequest
from jointbus.messages.joint_impedance import JointImpedance
from jointbus.nodes.array import ArrayNode
from jointbus.nodes.safety.fallback import FallbackPolicy, FallbackReport
from jointbus.robots.hb50.messages import Status
from jointbus.runtime.timer import TimerThread
from support.runtime import FakeClock

N = ArrayNames("arm6")


class StanceLike:
    """A robot's own fallback (as hb50's): holds the measured pose, phase ``stance``; with
    ``early``, it takes over after 0.1 s of silence, before the watchdog (a robot mid-stride)."""

    def __init__(self, *, early: bool) -> None:
        self._early = early
        self._hold: ImpedanceCommand | None = None

    @property
    def name(self) -> str:
        return "stance, then sit"

    @property
    def phase(self) -> str:
        return "step" if self._early else "stance"

    @property
    def early_after_s(self) -> float:
        return 0.1 if self._early else math.inf

    def early(self, reading: JointReading, last: ImpedanceCommand | None, silence_s: float) -> bool:
        return self._early

    @property
    def quiet(self) -> bool:
        return False

    @property
    def rides_through_refusals(self) -> bool:
        return True

    def begin(
        self, reading: JointReading, last: ImpedanceCommand | None, silence_s: float
    ) -> FallbackReport | None:
        self._hold = ImpedanceCommand.hold(np.array(reading.position), 40.0, 2.0)
        return FallbackReport("WARN", f"fallback: no command for {silence_s * 1e3:.0f} ms")

    def command(self, reading: JointReading) -> ImpedanceCommand:
        assert self._hold is not None
        return self._hold

    def admits(self, command: ImpedanceCommand, reading: JointReading) -> str | None:
        return None

    def refusal(self, command: ImpedanceCommand, reading: JointReading) -> str | None:
        return None

    def take_reports(self) -> list[FallbackReport]:
        return []

    def cancel(self) -> None:
        self._hold = None


def watchdog_reports(fallback: FallbackPolicy | None) -> list[str]:
    """arm6's array node with ``fallback`` on a fake clock: a hold stream for 0.5 s, then
    silence for 0.5 s; the status reports, in order."""
    clock = FakeClock()
    timers = TimerThread("arm6-timers", clock=clock, threaded=False)
    array = drivers.open("sim://arm6?realtime=false&noise=false")
    assert isinstance(array, SimActuatorArray)
    bus = Bus(name="rig")
    node = ArrayNode(
        array, bus, namespace="arm6", timers=timers, run_loop=False, fallback=fallback
    )
    status: list[Status] = []
    bus.subscribe(N.status, Status, status.append, RELIABLE, realtime=True)
    period_s = 1.0 / node.settings.rate_hz
    stream = bus.publisher(N.impedance_command, JointImpedance, MAB_RT)

    def cycle(command: JointImpedance | None = None) -> None:
        clock.now += round(period_s * 1e9)
        if command is not None:
            stream.publish(command)
        node.cycle(clock.now)
        timers.run_due()
        array.step(period_s)

    try:
        node.start()
        assert bus.client(N.request("power"), PowerRequest, ActuatorReply).call(
            PowerRequest(True)
        ).accepted
        cycle()
        n = len(array.names)
        here = tuple(float(p) for p in array.read_joints().position)
        hold = JointImpedance(
            source_node=node.settings.default_source,
            name=array.names,
            position=here,
            velocity=(0.0,) * n,
            effort=(0.0,) * n,
            kp=(40.0,) * n,
            kd=(2.0,) * n,
            brake=(False,) * n,
        )
        for _ in range(round(0.5 / period_s)):
            cycle(hold)
        for _ in range(round(0.5 / period_s)):
            cycle()
        return [m.status for m in status if m.status.startswith(("watchdog:", "fallback:"))]
    finally:
        node.shutdown()
        bus.close()
        array.close()


def test_the_watchdog_names_the_fallback_that_takes_over_and_its_phase() -> None:
    reports = watchdog_reports(StanceLike(early=False))
    watchdog = [r for r in reports if r.startswith("watchdog: no valid command")]
    assert len(watchdog) == 1, reports
    assert "safe mode (damping)" not in watchdog[0], reports
    assert watchdog[0].endswith("; fallback (stance, then sit) in phase stance"), reports
    # a node whose fallback is damping (jointbus serve's default) still says so
    damping = [r for r in watchdog_reports(None) if r.startswith("watchdog: no valid command")]
    assert len(damping) == 1 and "; safe mode (damping), brakes on " in damping[0], damping


def test_the_watchdog_names_a_fallback_that_took_over_early_and_its_phase() -> None:
    """Mid-stride the fallback takes over at 0.1 s; the watchdog's time comes later and its
    report must not say damping while the fallback steps."""
    reports = watchdog_reports(StanceLike(early=True))
    assert reports[0].startswith("fallback: no command for 1"), reports
    watchdog = [r for r in reports if r.startswith("watchdog: no valid command")]
    assert len(watchdog) == 1, reports
    assert watchdog[0].endswith("; fallback (stance, then sit) in phase step"), reports
