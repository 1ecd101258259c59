"""The bridge's status strings: one writer, one reader, held to each other and to the wire text."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from jointbus.robots.hb50.messages import BridgeMode, BridgeState, BridgeStatus, ThermalNote
from jointbus.robots.hb50.messages.bridge_status import REENTRY_RAMPING

#: Node names, e-stop reasons and free hardware messages: printable, one line.
WORD = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=12)
TEXT = st.lists(WORD, min_size=1, max_size=4).map(" ".join)
NOTES = st.builds(
    ThermalNote, st.sampled_from(["WARN", "ERROR"]), WORD, st.integers(0, 63)
)
# A free string never looks like one of the keys (it would be read as that key).
OTHER = TEXT.filter(lambda t: ": " not in t and not t.startswith("thermal "))


def test_the_pace_reads_back_and_is_on_the_wire_as_documented() -> None:
    facts = BridgeStatus(
        owner="c",
        real_time_factor=0.998,
        frame_rate_hz=499.8,
        command_rate_hz=499.5,
        command_age_p99_cycles=1,
    )
    assert facts.to_strings() == (
        "owner: c",
        "pace: real-time factor 0.998, frames 499.8 Hz, commands 499.5 Hz, "
        "command age p99 1 cycles",
    )
    back = BridgeStatus.parse(facts.to_strings())
    assert (back.real_time_factor, back.frame_rate_hz, back.command_rate_hz) == (
        0.998, 499.8, 499.5,
    )
    assert back.command_age_p99_cycles == 1
    unknown = BridgeStatus.parse(
        ("pace: real-time factor 1.000, frames 0.0 Hz, commands 0.0 Hz, command age p99 - cycles",)
    )
    assert unknown.real_time_factor == 1.0 and unknown.command_age_p99_cycles is None
FACTS = st.builds(
    BridgeStatus,
    owner=WORD.filter(lambda t: ": " not in t),
    mode=st.none() | st.sampled_from(BridgeMode),
    estop_reason=st.none() | TEXT,
    publish=st.just("") | TEXT,
    reentry_ramping=st.booleans(),
    thermal=st.lists(NOTES, max_size=3).map(tuple),
    other=st.lists(OTHER, max_size=3).map(tuple),
    real_time_factor=st.none() | st.integers(0, 5000).map(lambda i: i / 1000),
    frame_rate_hz=st.none() | st.integers(0, 20000).map(lambda i: i / 10),
    command_rate_hz=st.none() | st.integers(0, 20000).map(lambda i: i / 10),
    command_age_p99_cycles=st.none() | st.integers(0, 1000),
).filter(
    lambda f: len({f.real_time_factor is None, f.frame_rate_hz is None, f.command_rate_hz is None})
    == 1
    and (f.real_time_factor is not None or f.command_age_p99_cycles is None)
)


@given(FACTS)
def test_what_the_bridge_writes_reads_back_the_same(facts: BridgeStatus) -> None:
    strings = facts.to_strings()
    assert BridgeStatus.parse(strings) == facts
    assert BridgeStatus.of(BridgeState(status=strings)) == facts


def test_the_strings_on_the_wire_are_the_documented_ones() -> None:
    facts = BridgeStatus(
        owner="control_node",
        mode=BridgeMode.ESTOP,
        estop_reason="hardware_command estop jointbus_cli",
        publish="500 Hz, 0 of 500 cycles skipped in the last 1.0 s",
        reentry_ramping=True,
        thermal=(ThermalNote("WARN", "fl_knee", 2),),
    )
    assert facts.to_strings() == (
        "owner: control_node",
        "mode: estop",
        "publish: 500 Hz, 0 of 500 cycles skipped in the last 1.0 s",
        "estop: hardware_command estop jointbus_cli",
        "reentry: ramping from the measured pose",
        "thermal WARN: fl_knee (index 2)",
    )
    assert facts.estop_latched
    assert facts.detail_strings() == (
        "publish: 500 Hz, 0 of 500 cycles skipped in the last 1.0 s",
        "reentry: ramping from the measured pose",
    )


def test_a_latched_mode_without_a_reason_is_still_latched() -> None:
    facts = BridgeStatus.parse(("owner: x", "mode: estop"))
    assert facts.estop_latched and facts.estop_reason is None
    assert not BridgeStatus.parse(("owner: x", "mode: run")).estop_latched


def test_unknown_strings_are_kept_verbatim_and_never_mistaken_for_a_fact() -> None:
    strings = ("owner: a", "mode: warp", "CAN bus-off on can0", "reentry: elsewhere", "thermal")
    facts = BridgeStatus.parse(strings)
    assert facts.owner == "a" and facts.mode is None and not facts.reentry_ramping
    assert facts.other == ("mode: warp", "CAN bus-off on can0", "reentry: elsewhere", "thermal")
    assert facts.estop_reason is None and not facts.estop_latched


def test_nothing_stated_is_the_empty_status() -> None:
    assert BridgeStatus.parse(()) == BridgeStatus()
    assert BridgeStatus().to_strings() == ("owner: ",)


def test_of_answers_each_state_with_its_own_facts_also_when_the_last_one_is_kept() -> None:
    """``of`` keeps its last answer (the control node asks several times per step): a state
    whose status changed gets its own facts, one that did not gets the same ones."""
    run = BridgeState(status=("owner: control_node", "mode: run"))
    ramp = f"reentry: {REENTRY_RAMPING}"
    safe = BridgeState(status=("owner: squat_controller", "mode: safe", ramp))
    first = BridgeStatus.of(run)
    assert BridgeStatus.of(BridgeState(status=("owner: control_node", "mode: run"))) is first
    facts = BridgeStatus.of(safe)
    assert facts.owner == "squat_controller" and facts.mode is BridgeMode.SAFE
    assert facts.reentry_ramping
    again = BridgeStatus.of(run)
    assert again.owner == "control_node" and again.mode is BridgeMode.RUN
    assert not again.reentry_ramping
