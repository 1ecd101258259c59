"""Live parameters: the store's typing, bounds and errors, change callbacks, and a node's parameters
on the bus (latched list, updates on /hb50/config_update, answers on the status topic)."""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.bus import LATCHED, RELIABLE, Bus, Publisher
from jointbus.model import load_robot
from jointbus.model.parameters import ParameterSpec, ParameterType, parameter_defaults
from jointbus.robots.hb50.messages import Level, Status
from jointbus.runtime import LifecycleState, Node
from jointbus.runtime.parameter_messages import ParameterList, ParameterUpdate
from jointbus.runtime.parameters import (
    NodeParameters,
    ParameterChange,
    ParameterError,
    ParameterRefusedError,
    ParameterStore,
    UnknownParameterError,
    parse_value,
    select_specs,
)
from support.runtime import wait_until

HB50 = load_robot("hb50")
#: The issue's tunables of both nodes, as the hb50 robot file names them.
TUNABLES = (
    "cmd_vel_lin",
    "cmd_vel_ang",
    "watchdog_time",
    "thermal_warn",
    "thermal_derate",
    "thermal_shutdown",
    "stand_height",
    "kp",
    "kd",
    "arbitration_threshold",
)
WATCHDOG = ParameterSpec("watchdog_time", ParameterType.FLOAT, 0.25, 0.01, 5.0, "s")
STEPS = ParameterSpec("steps", ParameterType.INT, 3, 1, 10)
ENABLED = ParameterSpec("enabled", ParameterType.BOOL, True)


def store() -> ParameterStore:
    return ParameterStore([WATCHDOG, STEPS, ENABLED], owner="node 'bridge_node'")


# ---- the store ---------------------------------------------------------------------------------
def test_the_store_starts_at_the_robot_files_values_for_every_tunable() -> None:
    values = ParameterStore(HB50.parameters).values()
    assert values == parameter_defaults(HB50.parameters)
    assert set(TUNABLES) <= set(values)
    assert values["watchdog_time"] == 0.25 and values["stand_height"] == 0.34


def test_a_value_within_bounds_is_applied_and_described() -> None:
    params = store()
    change = params.set("watchdog_time", 0.5)
    assert params.get("watchdog_time") == 0.5
    assert (change.old, change.new, change.changed) == (0.25, 0.5, True)
    assert change.describe() == "param watchdog_time changed 0.25 → 0.5 s"
    assert params.set("steps", 10).new == 10
    assert params.set("enabled", False).describe() == "param enabled changed true → false"


@given(
    lo=st.floats(-1e6, 1e6),
    span=st.floats(0.0, 1e6),
    value=st.floats(allow_nan=True, allow_infinity=True),
)
def test_a_float_is_accepted_exactly_when_it_is_finite_and_within_its_bounds(
    lo: float, span: float, value: float
) -> None:
    hi = lo + span
    spec = ParameterSpec("x", ParameterType.FLOAT, lo, lo, hi, "m")
    params = ParameterStore([spec])
    inside = math.isfinite(value) and lo <= value <= hi
    if inside:
        assert params.set("x", value).new == value
        assert params.get("x") == value
    else:
        with pytest.raises(ParameterError) as info:
            params.set("x", value)
        text = str(info.value)
        assert "'x'" in text and repr(value) in text
        assert f"[{lo!r}, {hi!r}] m" in text
        assert params.get("x") == lo  # nothing changed


@given(lo=st.integers(-1000, 1000), span=st.integers(0, 1000), value=st.integers(-3000, 3000))
def test_an_int_is_accepted_exactly_within_its_bounds(lo: int, span: int, value: int) -> None:
    spec = ParameterSpec("n", ParameterType.INT, lo, lo, lo + span)
    params = ParameterStore([spec])
    if lo <= value <= lo + span:
        assert params.set("n", value).new == value
    else:
        with pytest.raises(ParameterError, match=str(value)):
            params.set("n", value)
        assert params.get("n") == lo


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("watchdog_time", "0.5", "a number"),
        ("watchdog_time", True, "a number"),
        ("steps", 2.5, "an integer"),
        ("steps", "3", "a number"),
        ("enabled", 1, "true or false"),
    ],
)
def test_a_value_of_the_wrong_type_is_refused_and_changes_nothing(
    name: str, value: object, expected: str
) -> None:
    params = store()
    before = params.values()
    with pytest.raises(ParameterError, match=expected) as info:
        params.set(name, value)
    assert info.value.name == name and info.value.value == value
    assert params.values() == before


def test_an_unknown_name_is_refused_listing_the_known_ones() -> None:
    params = store()
    with pytest.raises(UnknownParameterError) as info:
        params.set("watchdog", 0.5)
    assert info.value.known == ("watchdog_time", "steps", "enabled")
    assert str(info.value) == (
        "unknown parameter 'watchdog' of node 'bridge_node'; "
        "known parameters: ['watchdog_time', 'steps', 'enabled']"
    )
    with pytest.raises(UnknownParameterError):
        params.get("watchdog")


def test_starting_values_are_checked_like_changes() -> None:
    assert ParameterStore([WATCHDOG], {"watchdog_time": 1.0}).get("watchdog_time") == 1.0
    with pytest.raises(ParameterError, match=r"\[0.01, 5.0\] s"):
        ParameterStore([WATCHDOG], {"watchdog_time": 6.0})
    with pytest.raises(UnknownParameterError):
        ParameterStore([WATCHDOG], {"nope": 1.0})
    with pytest.raises(ParameterError, match="declared once"):
        ParameterStore([WATCHDOG, WATCHDOG])


@pytest.mark.parametrize(
    ("spec", "text", "value"),
    [
        (WATCHDOG, " 0.5 ", 0.5),
        (WATCHDOG, "5e-2", 0.05),
        (WATCHDOG, "1", 1.0),
        (STEPS, "7", 7),
        (ENABLED, "TRUE", True),
        (ENABLED, "off", False),
        (ENABLED, "0", False),
    ],
)
def test_text_is_parsed_per_the_parameters_type(
    spec: ParameterSpec, text: str, value: object
) -> None:
    parsed = parse_value(spec, text)
    assert parsed == value and type(parsed) is type(value)


@pytest.mark.parametrize(
    ("spec", "text", "expected"),
    [
        (WATCHDOG, "fast", r"a number in \[0.01, 5.0\] s"),
        (WATCHDOG, "nan", "a finite number"),
        (WATCHDOG, "9", r"a value in \[0.01, 5.0\] s"),
        (STEPS, "3.0", "an integer"),
        (ENABLED, "maybe", "true or false"),
    ],
)
def test_bad_text_is_refused_naming_the_parameter_and_what_was_expected(
    spec: ParameterSpec, text: str, expected: str
) -> None:
    with pytest.raises(ParameterError, match=expected) as info:
        parse_value(spec, text)
    assert info.value.name == spec.name


@given(st.floats(0.01, 5.0))
def test_set_text_of_a_printed_value_gives_the_same_value(value: float) -> None:
    params = store()
    params.set_text("watchdog_time", repr(value))
    assert params.get("watchdog_time") == value


def test_change_callbacks_apply_new_values_and_no_op_sets_notify_no_one() -> None:
    params = store()
    applied: list[ParameterChange] = []
    watched: list[ParameterChange] = []
    params.on_change(applied.append)
    params.watch(watched.append)
    params.set("watchdog_time", 0.5, origin="req-1")
    params.set("watchdog_time", 0.5)
    assert [(c.name, c.old, c.new, c.origin) for c in applied] == [
        ("watchdog_time", 0.25, 0.5, "req-1")
    ]
    assert watched == applied


def test_a_callback_that_refuses_rolls_the_change_back_everywhere() -> None:
    params = store()
    seen: list[tuple[float, float]] = []
    watched: list[ParameterChange] = []
    params.on_change(lambda c: seen.append((float(c.old), float(c.new))))

    def refuse(change: ParameterChange) -> None:
        if change.new == 4.0:
            raise ValueError("longer than the drive's own timeout (3 s)")

    params.on_change(refuse)
    params.watch(watched.append)
    with pytest.raises(ParameterRefusedError, match="drive's own timeout") as info:
        params.set("watchdog_time", 4.0)
    assert info.value.name == "watchdog_time" and info.value.value == 4.0
    assert params.get("watchdog_time") == 0.25
    assert seen == [(0.25, 4.0), (4.0, 0.25)]  # applied, then undone
    assert watched == []


def test_a_removed_callback_is_no_longer_called() -> None:
    params = store()
    applied: list[ParameterChange] = []
    remove = params.on_change(applied.append)
    remove()
    params.set("steps", 4)
    assert applied == []


def test_select_specs_picks_one_nodes_share_in_order() -> None:
    chosen = select_specs(HB50.parameters, ["watchdog_time", "kp"])
    assert [s.name for s in chosen] == ["watchdog_time", "kp"]
    with pytest.raises(UnknownParameterError, match="robot file"):
        select_specs(HB50.parameters, ["watchdog_time", "warp_speed"])
    assert [s.name for s in select_specs(HB50.parameters, ["nope", "kd"], missing_ok=True)] == [
        "kd"
    ]


# ---- a node's parameters on the bus ------------------------------------------------------------
BRIDGE_PARAMS = select_specs(HB50.parameters, ["watchdog_time", "thermal_warn", "kd"])
CONTROL_PARAMS = select_specs(HB50.parameters, ["stand_height", "cmd_vel_lin", "kd"])


class Rig:
    """Two nodes with parameters on one in-process bus, and a client's view of the topics."""

    def __init__(self, bus: Bus) -> None:
        self.bus = bus
        self.bridge = Node("bridge_node", bus)
        self.control = Node("control_node", bus)
        self.bridge_params = NodeParameters(self.bridge, BRIDGE_PARAMS)
        self.control_params = NodeParameters(self.control, CONTROL_PARAMS)
        self.lists: list[ParameterList] = []
        self.statuses: list[Status] = []
        bus.subscribe("/hb50/parameters", ParameterList, self.lists.append, LATCHED, realtime=True)
        bus.subscribe("/hb50/status", Status, self.statuses.append, RELIABLE, realtime=True)
        self.updates: Publisher[ParameterUpdate] = bus.publisher(
            "/hb50/config_update", ParameterUpdate
        )

    def send(self, node: str, name: str, value: str, request_id: str) -> None:
        self.updates.publish(
            ParameterUpdate(node=node, name=name, value=value, request_id=request_id)
        )

    def answer(self, request_id: str) -> Status:
        assert wait_until(lambda: any(s.data == request_id.encode() for s in self.statuses))
        return next(s for s in self.statuses if s.data == request_id.encode())

    def latest(self, node: str) -> ParameterList:
        return [m for m in self.lists if m.node == node][-1]

    def close(self) -> None:
        self.bridge.shutdown()
        self.control.shutdown()


@pytest.fixture
def rig() -> Iterator[Rig]:
    with Bus(name="params") as bus:
        rig = Rig(bus)
        rig.bridge.start()
        rig.control.start()
        yield rig
        rig.close()


def test_each_node_publishes_its_parameters_latched_for_late_joiners(rig: Rig) -> None:
    assert {m.node for m in rig.lists} == {"bridge_node", "control_node"}
    bridge = rig.latest("bridge_node")
    assert bridge.names == ("watchdog_time", "thermal_warn", "kd")
    watchdog = bridge.get("watchdog_time")
    assert watchdog is not None
    assert (watchdog.value, watchdog.min, watchdog.max, watchdog.unit) == (0.25, 0.01, 5.0, "s")
    assert rig.bridge_params.topic == "/hb50/parameters"
    assert rig.bridge_params.update_topic == "/hb50/config_update"


def test_an_update_is_applied_republished_and_reported(rig: Rig) -> None:
    applied: list[ParameterChange] = []
    rig.bridge_params.on_change(applied.append)
    rig.send("bridge_node", "watchdog_time", "0.5", "req-1")
    status = rig.answer("req-1")
    assert (status.level, status.reporting_node) == (Level.OK, "bridge_node")
    assert status.status == "param watchdog_time changed 0.25 → 0.5 s"
    assert rig.bridge_params.get("watchdog_time") == 0.5
    assert [(c.old, c.new) for c in applied] == [(0.25, 0.5)]
    published = rig.latest("bridge_node").get("watchdog_time")
    assert published is not None and published.value == 0.5


def test_an_out_of_bounds_update_is_refused_with_an_error_naming_value_and_bounds(
    rig: Rig,
) -> None:
    lists_before = len(rig.lists)
    rig.send("bridge_node", "watchdog_time", "9", "req-2")
    status = rig.answer("req-2")
    assert (status.level, status.reporting_node) == (Level.ERROR, "bridge_node")
    assert "watchdog_time" in status.status and "9" in status.status
    assert "[0.01, 5.0] s" in status.status
    assert rig.bridge_params.get("watchdog_time") == 0.25
    assert len(rig.lists) == lists_before  # nothing changed, nothing republished


def test_unknown_names_and_unparsable_values_are_refused_on_the_status_topic(rig: Rig) -> None:
    rig.send("bridge_node", "warp", "1", "req-3")
    rig.send("bridge_node", "kd", "soft", "req-4")
    unknown, garbage = rig.answer("req-3"), rig.answer("req-4")
    assert unknown.level is Level.ERROR and "known parameters" in unknown.status
    assert "watchdog_time" in unknown.status
    assert garbage.level is Level.ERROR and "'soft'" in garbage.status
    assert "[0.0, 50.0] N·m·s/rad" in garbage.status


def test_an_update_for_another_node_is_ignored(rig: Rig) -> None:
    rig.send("control_node", "kd", "5", "req-5")
    status = rig.answer("req-5")
    assert status.reporting_node == "control_node" and status.level is Level.OK
    assert rig.control_params.get("kd") == 5.0
    assert rig.bridge_params.get("kd") == 3.0  # same name, other node: untouched
    assert [s.reporting_node for s in rig.statuses if s.data == b"req-5"] == ["control_node"]


def test_setting_the_current_value_is_answered_without_a_change(rig: Rig) -> None:
    rig.send("bridge_node", "kd", "3.0", "req-6")
    status = rig.answer("req-6")
    assert status.level is Level.OK and status.status == "param kd unchanged (3.0 N·m·s/rad)"


def test_a_refusing_node_callback_becomes_an_error_status(rig: Rig) -> None:
    def order(change: ParameterChange) -> None:
        if change.name == "thermal_warn" and float(change.new) > 100.0:
            raise ValueError("thermal_warn must stay below thermal_shutdown (100.0 °C)")

    rig.bridge_params.on_change(order)
    rig.send("bridge_node", "thermal_warn", "120", "req-7")
    status = rig.answer("req-7")
    assert status.level is Level.ERROR and "below thermal_shutdown" in status.status
    assert rig.bridge_params.get("thermal_warn") == 80.0


def test_local_changes_are_published_too(rig: Rig) -> None:
    rig.control_params.set("stand_height", 0.3)
    assert wait_until(lambda: any("stand_height changed" in s.status for s in rig.statuses))
    published = rig.latest("control_node").get("stand_height")
    assert published is not None and published.value == 0.3


def test_parameters_can_be_tuned_while_the_node_is_inactive(rig: Rig) -> None:
    rig.bridge.deactivate()
    assert rig.bridge.state is LifecycleState.INACTIVE
    rig.send("bridge_node", "watchdog_time", "1.5", "req-8")
    assert rig.answer("req-8").level is Level.OK
    assert rig.bridge_params.get("watchdog_time") == 1.5
