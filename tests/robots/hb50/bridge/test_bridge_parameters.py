"""The bridge's live parameters: tuned over ``/hb50/config_update``, in force from the next cycle.

The bridge runs in lock-step with the simulated HB50 on an injected clock, as in
``test_bridge_node.py``; updates arrive on the bus (handled on the node's callback thread), so the
test waits until the node has answered before it runs the next cycles. Each behaviour checked is
one the robot's operator relies on: a shorter watchdog time makes the safe mode come sooner, lower
thermal thresholds warn and derate at once, a higher arbitration threshold keeps a slow custom
source from taking control — and a refused value changes none of it.
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from collections.abc import Callable, Iterator

import numpy as np
import pytest

from jointbus.bus import LATCHED, MAB_RT, RELIABLE, Bus
from jointbus.drivers.sim.driver import SimActuatorArray, SimArrayConfig
from jointbus.model.yaml_loader import load_robot
from jointbus.robots.hb50.bridge.node import BRIDGE_PARAMETERS, BridgeConfig, BridgeMode, BridgeNode
from jointbus.robots.hb50.messages import BridgeState, JointCommand, Level, Status
from jointbus.runtime.parameter_messages import ParameterList, ParameterUpdate
from jointbus.runtime.parameters import select_specs
from jointbus.runtime.timer import TimerThread

STEP_NS = 2_000_000  # 500 Hz
ROBOT = load_robot("hb50")
ORDER = ROBOT.actuator_order
HOME = np.array([ROBOT.pose("home")[n] for n in ORDER])
MOVED = HOME + 0.25 * np.sign(HOME)


def wait_until(predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.002)
    return predicate()


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_000 * 1_000_000_000

    def __call__(self) -> int:
        return self.now


class Rig:
    """A bridge built from the hb50 robot file on a stepped simulator, and a tuning client."""

    def __init__(self, config: BridgeConfig | None = None) -> None:
        self.clock = FakeClock()
        # Start at the pose the tests command (a far first command would be ramped to).
        config_sim = SimArrayConfig.from_model(ROBOT, realtime=False, noise=False)
        self.sim = SimActuatorArray(dataclasses.replace(config_sim, initial_positions=tuple(HOME)))
        self.bus = Bus(name="bridge-params")
        self.statuses: list[Status] = []
        self.states: list[BridgeState] = []
        self.lists: list[ParameterList] = []
        sub = self.bus.subscribe
        sub("/hb50/status", Status, self.statuses.append, RELIABLE, realtime=True)
        sub("/hb50/bridge_state", BridgeState, self.states.append, MAB_RT, realtime=True)
        sub("/hb50/parameters", ParameterList, self.lists.append, LATCHED, realtime=True)
        self.commands = self.bus.publisher("/hb50/joint_command", JointCommand, MAB_RT)
        self.updates = self.bus.publisher("/hb50/config_update", ParameterUpdate, RELIABLE)
        timers = TimerThread("bridge-param-timers", clock=self.clock, threaded=False)
        cfg = config if config is not None else BridgeConfig.from_model(ROBOT)
        self.node = BridgeNode(self.sim, self.bus, cfg, timers=timers, run_loop=False)
        self.node.start()
        self._requests = 0

    def close(self) -> None:
        self.node.shutdown()
        self.bus.close()

    def step(self, *commands: JointCommand) -> None:
        self.clock.now += STEP_NS
        for cmd in commands:
            self.commands.publish(cmd)
        self.node.cycle(self.clock.now)
        self.sim.step(0.002)
        self.node.timers.run_due(self.clock.now)

    def run(self, seconds: float, *sources: Callable[[int], JointCommand | None]) -> None:
        for k in range(round(seconds * 500)):
            self.step(*[m for m in (source(k) for source in sources) if m is not None])

    def set(self, name: str, value: str) -> Status:
        """Send ``name = value`` to the bridge on the bus; the node's answer on the status topic."""
        self._requests += 1
        request = f"req-{self._requests}"
        self.updates.publish(
            ParameterUpdate(node="bridge_node", name=name, value=value, request_id=request)
        )

        def answered() -> bool:
            self.node.reporter.flush()
            return any(s.data == request.encode() for s in self.statuses)

        assert wait_until(answered), f"no answer to {name} = {value}"
        return next(s for s in self.statuses if s.data == request.encode())

    def published(self, name: str) -> float:
        """The value of ``name`` in the bridge's latest parameter list."""
        latest = [m for m in self.lists if m.node == "bridge_node"][-1]
        parameter = latest.get(name)
        assert parameter is not None
        return float(parameter.value)


@pytest.fixture
def rig() -> Iterator[Rig]:
    r = Rig()
    yield r
    r.close()


def hold(target: np.ndarray, source: str = "control_node") -> JointCommand:
    return JointCommand.hold(ORDER, target.tolist(), 80.0, 3.0, source_node=source)


def every_cycle(cmd: JointCommand) -> Callable[[int], JointCommand]:
    return lambda _k: cmd


def heat(rig: Rig, index: int, celsius: float) -> None:
    with rig.sim.locked() as physics:
        temps = physics.actuators.motor_temperatures.copy()
        temps[index] = celsius
        physics.actuators.set_temperatures(motor=temps)


def thresholds(node: BridgeNode) -> tuple[float, float, float, float]:
    g = node.thermal
    return (g.warn_c, g.derate_start_c, g.shutdown_c, g.hysteresis_c)


# -- what the bridge declares ----------------------------------------------------------------


def test_the_bridge_publishes_its_share_of_the_robot_files_parameters(rig: Rig) -> None:
    latest = [m for m in rig.lists if m.node == "bridge_node"][-1]
    assert latest.names == BRIDGE_PARAMETERS
    declared = {s.name: s for s in ROBOT.parameters}
    for parameter in latest.parameters:
        spec = declared[parameter.name]
        assert (parameter.value, parameter.min, parameter.max, parameter.unit) == (
            spec.default,
            spec.min,
            spec.max,
            spec.unit,
        )
    assert "kp" not in latest.names and "stand_height" not in latest.names  # the control node's


def test_the_parameters_start_at_the_configurations_values() -> None:
    rig = Rig(BridgeConfig.from_model(ROBOT, watchdog_s=0.5, thermal_warn_c=70.0))
    try:
        assert rig.node.parameters.get("watchdog_time") == 0.5
        assert rig.published("thermal_warn") == 70.0
    finally:
        rig.close()


def test_a_configuration_naming_a_parameter_the_bridge_does_not_own_is_refused() -> None:
    with pytest.raises(ValueError, match=r"'kp'.*watchdog_time"):
        BridgeConfig(parameters=select_specs(ROBOT.parameters, ["kp"]))


# -- changes that take effect ---------------------------------------------------------------


def test_a_shorter_watchdog_time_makes_safe_mode_come_sooner(rig: Rig) -> None:
    cmd = hold(HOME)
    rig.run(0.1, every_cycle(cmd))
    rig.run(0.06)  # 60 ms of silence: nothing at the robot file's 250 ms
    assert rig.node.mode is BridgeMode.RUN
    rig.run(0.02, every_cycle(cmd))
    answer = rig.set("watchdog_time", "0.05")
    assert answer.level == Level.OK and answer.reporting_node == "bridge_node"
    assert answer.status == "param watchdog_time changed 0.25 → 0.05 s"
    assert rig.published("watchdog_time") == 0.05
    rig.run(0.06)  # the same 60 ms of silence now exceeds the watchdog time
    assert rig.node.mode is BridgeMode.SAFE
    assert rig.node.watchdog.timeout_s == 0.05 and rig.node.config.watchdog_s == 0.05
    # the robot stood: hb50's fallback holds a stance (stiffness kept), written by the bridge
    assert rig.node.fallback_phase == "stance"
    assert rig.node.last_applied_source == "bridge_node"
    fallback = rig.node.last_applied
    assert fallback is not None and min(fallback.kp.tolist()) >= 80.0 * 0.99


def test_a_change_is_put_in_force_at_the_start_of_the_next_cycle(rig: Rig) -> None:
    rig.run(0.02, every_cycle(hold(HOME)))
    rig.node.parameters.set("watchdog_time", 1.0)  # local code, another thread than the loop's
    assert rig.node.parameters.get("watchdog_time") == 1.0
    assert rig.node.watchdog.timeout_s == 0.25  # the loop has not run since
    rig.step()
    assert rig.node.watchdog.timeout_s == 1.0
    rig.run(0.5)  # twice the robot file's watchdog time, within the new one
    assert rig.node.mode is BridgeMode.RUN


def test_lower_thermal_thresholds_warn_and_derate_at_once(rig: Rig) -> None:
    cmd = hold(HOME)
    rig.run(0.05, every_cycle(cmd))
    heat(rig, 1, 85.0)
    heat(rig, 4, 70.0)
    rig.run(0.05, every_cycle(cmd))
    applied = rig.node.last_applied
    assert applied is not None and applied.kp[1] == 80.0  # WARN at 80 °C, derating above 90 °C
    assert f"thermal WARN: {ORDER[4]} (index 4)" not in rig.states[-1].status

    assert rig.set("thermal_warn", "60").level == Level.OK
    assert rig.set("thermal_derate", "80").level == Level.OK
    rig.run(0.02, every_cycle(cmd))
    assert f"thermal WARN: {ORDER[4]} (index 4)" in rig.states[-1].status
    applied = rig.node.last_applied
    assert applied is not None
    factor = rig.node.thermal.factors[1]
    assert 0.7 < factor < 0.8  # ~85 °C on the new 80 → 100 °C ramp (was 1 below 90 °C)
    assert applied.kp[1] == pytest.approx(80.0 * factor, rel=1e-3)
    assert applied.kp[4] == 80.0  # 70 °C: warned, below the derating start
    assert thresholds(rig.node) == (60.0, 80.0, 100.0, 20.0)
    # Each change was republished, in order.
    warn_values = [m.get("thermal_warn") for m in rig.lists if m.node == "bridge_node"]
    assert [p.value for p in warn_values if p is not None][-3:] == [80.0, 60.0, 60.0]
    assert rig.published("thermal_derate") == 80.0


def test_a_higher_arbitration_threshold_keeps_a_slower_source_out(rig: Rig) -> None:
    default_cmd, custom_cmd = hold(HOME), hold(MOVED, source="teleop")

    def at_50_hz(k: int) -> JointCommand | None:
        return custom_cmd if k % 10 == 0 else None

    assert rig.set("arbitration_threshold", "100").level == Level.OK
    rig.run(0.6, every_cycle(default_cmd), at_50_hz)
    assert rig.node.arbiter.owner(rig.clock.now) == "control_node"
    assert rig.node.arbiter.takeover_hz == 100.0
    assert rig.node.arbiter.fallback_s == pytest.approx(0.01)  # one period at the threshold
    assert rig.node.arbiter.window_s == pytest.approx(0.05)  # five periods
    # Back at the robot file's 10 Hz, the same 50 Hz source qualifies.
    assert rig.set("arbitration_threshold", "10").level == Level.OK
    rig.run(0.6, every_cycle(default_cmd), at_50_hz)
    assert rig.node.arbiter.owner(rig.clock.now) == "teleop"


def test_at_the_highest_arbitration_threshold_a_500_hz_controller_keeps_control(
    rig: Rig,
) -> None:
    """A 500 Hz controller on a loaded host misses a few cycles now and then; at the highest
    threshold the robot file allows it must still keep the actuators (no owner flapping)."""
    spec = next(p for p in ROBOT.parameters if p.name == "arbitration_threshold")
    assert spec.max is not None and spec.max < 500.0  # below the bridge rate, with margin
    default_cmd, custom_cmd = hold(HOME), hold(MOVED, source="teleop")

    def at_500_hz_stalling(k: int) -> JointCommand | None:
        return None if k % 50 >= 46 else custom_cmd  # an 8 ms stall every 0.1 s

    assert rig.set("arbitration_threshold", repr(spec.max)).level == Level.OK
    owners = []
    for k in range(3 * 500):  # 3 s of bridge cycles
        rig.step(*[c for c in (default_cmd, at_500_hz_stalling(k)) if c is not None])
        owners.append(rig.node.arbiter.owner(rig.clock.now))
    changes = [(a, b) for a, b in itertools.pairwise(owners) if a != b]
    assert changes == [("control_node", "teleop")]


def test_an_arbitration_threshold_at_the_bridge_rate_is_refused(rig: Rig) -> None:
    answer = rig.set("arbitration_threshold", "500")
    assert answer.level == Level.ERROR
    assert "arbitration_threshold" in answer.status and "500" in answer.status
    assert rig.node.arbiter.takeover_hz == 10.0


# -- refusals -------------------------------------------------------------------------------


def test_an_out_of_bounds_watchdog_time_is_refused_and_changes_nothing(rig: Rig) -> None:
    lists_before = len(rig.lists)
    answer = rig.set("watchdog_time", "9")
    assert answer.level == Level.ERROR and answer.reporting_node == "bridge_node"
    assert "watchdog_time" in answer.status and "'9'" in answer.status
    assert "[0.01, 5.0] s" in answer.status
    rig.step()
    assert rig.node.parameters.get("watchdog_time") == 0.25
    assert rig.node.watchdog.timeout_s == 0.25
    assert len(rig.lists) == lists_before  # nothing changed, nothing republished


@pytest.mark.parametrize(
    ("name", "value", "expected_range"),
    [
        ("thermal_warn", "95", "thermal_warn in [0.0, 90.0] °C"),
        ("thermal_derate", "100", "thermal_derate in [80.0, 100.0) °C"),
        ("thermal_derate", "75", "thermal_derate in [80.0, 100.0) °C"),
        ("thermal_shutdown", "85", "thermal_shutdown in (90.0, 140.0] °C"),
    ],
)
def test_thermal_thresholds_out_of_order_are_refused_naming_the_range(
    rig: Rig, name: str, value: str, expected_range: str
) -> None:
    lists_before = len(rig.lists)
    answer = rig.set(name, value)
    assert answer.level == Level.ERROR
    assert f"param {name} refused '{value}'" in answer.status
    assert expected_range in answer.status
    assert "thermal_warn ≤ thermal_derate < thermal_shutdown" in answer.status
    rig.step()
    assert thresholds(rig.node) == (80.0, 90.0, 100.0, 20.0)
    assert [rig.node.parameters.get(n) for n in ("thermal_warn", "thermal_derate")] == [80, 90]
    assert len(rig.lists) == lists_before


def test_a_refused_value_leaves_the_behaviour_as_it_was(rig: Rig) -> None:
    cmd = hold(HOME)
    rig.run(0.1, every_cycle(cmd))
    assert rig.set("watchdog_time", "0.001").level == Level.ERROR  # below 0.01 s
    rig.run(0.2)  # within the 250 ms still in force
    assert rig.node.mode is BridgeMode.RUN
    rig.run(0.06)
    assert rig.node.mode is BridgeMode.SAFE
