"""``jointbus node list``'s plain table (:func:`jointbus.cli.node_watch.row_text`)."""

from __future__ import annotations

from jointbus.cli.node_watch import NodeRow, row_text


def test_a_stale_nodes_lifecycle_is_its_last_reported_one_and_the_columns_stay_aligned() -> None:
    """A new user's trial (2026-12-06): ``node list`` kept printing ``LIFECYCLE active`` for a
    SIGKILLed control node, as if it were a live state. A STALE node's lifecycle is the last one
    it reported, and says so; an OK node's is shown as it is; the columns stay aligned."""
    rows = [
        NodeRow("bridge_node", "hb50", "OK", 0.25, "active", 12, 5, ""),
        NodeRow("control_node", "hb50", "STALE", 0.87, "active", 4, 3, "left the Zenoh network"),
        NodeRow("ground_truth", "hb50", "-", None, "", 1, 0, "publishes no heartbeat"),
    ]
    lines = row_text(rows).splitlines()
    head, ok, stale, none = lines
    column = head.index("LIFECYCLE")
    assert ok[column:].startswith("active ")
    assert ok[column:].split("  ")[0] == "active"
    assert stale[column:].startswith("active (last reported)  ")
    assert none[column:].startswith("- ")
    pubs = head.index("PUBS")
    assert [line[pubs:].split()[0] for line in (ok, stale, none)] == ["12", "4", "1"]
