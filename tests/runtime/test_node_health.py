"""The latched node-health table: bytes identical to rosbags', checks naming the field."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.messages.errors import ValidationError
from jointbus.messages.stamp import Time
from jointbus.messages.status import Level
from jointbus.messages.std_msgs import Header
from jointbus.runtime import NodeHealthEntry, NodeHealthTable
from support.rosbags_oracle import rosbags_cdr, rosbags_decode

TEXT = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"))
ENTRIES = st.builds(
    NodeHealthEntry,
    TEXT,
    st.sampled_from([int(level) for level in Level]),
    TEXT,
    st.floats(allow_nan=False),
    TEXT,
)
TABLES = st.builds(
    NodeHealthTable,
    st.builds(Header, st.builds(Time, st.integers(0, 2**31 - 1), st.integers(0, 10**9 - 1)), TEXT),
    TEXT,
    st.lists(ENTRIES, max_size=4).map(tuple),
)


@given(TABLES)
def test_bytes_match_rosbags_and_round_trip(table: NodeHealthTable) -> None:
    data = table.to_cdr()
    assert data == rosbags_cdr(table)
    assert NodeHealthTable.from_cdr(data) == table
    assert rosbags_decode(NodeHealthTable, data) == table


def test_an_entry_without_a_heartbeat_says_nan_and_bad_fields_are_named() -> None:
    entry = NodeHealthEntry("x", int(Level.STALE), "", math.nan, "token left")
    back = NodeHealthTable.from_cdr(NodeHealthTable(nodes=(entry,)).to_cdr()).entry("x")
    assert back is not None and back.stale and math.isnan(back.silent_s)
    with pytest.raises(ValidationError, match="'level'"):
        NodeHealthEntry("x", 9)
    with pytest.raises(ValidationError, match=r"nodes\[0\]"):
        NodeHealthTable(nodes=("x",))  # type: ignore[arg-type]


def test_the_silence_now_adds_the_tables_age_to_the_silence_at_its_stamp() -> None:
    """``silent_s`` is frozen at the verdict; a latched table is read later (the new user's
    monitors read 2.6 s from 7.7 to 30.8 s after the kill). The silence *now* grows with the
    table's age; a stamp ahead of the reader's clock counts as a fresh table."""
    stamp_ns = 1_700_000_000_000_000_000
    stale = NodeHealthEntry("control_node", int(Level.STALE), "active", 2.6, "token left")
    never = NodeHealthEntry("x", int(Level.STALE), "", math.nan, "token left")
    table = NodeHealthTable(Header.at_ns(stamp_ns), "bridge_node", (stale, never))
    assert table.silent_s_at(stale, stamp_ns) == pytest.approx(2.6)
    assert table.silent_s_at(stale, stamp_ns + 28_200_000_000) == pytest.approx(30.8)
    assert table.silent_s_at(stale, stamp_ns - 5_000_000_000) == pytest.approx(2.6)
    assert math.isnan(table.silent_s_at(never, stamp_ns + 10_000_000_000))
