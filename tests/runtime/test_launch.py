"""Launch descriptions: the layout a user reads and changes, and errors naming what is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.runtime.launch import LaunchDescription, LaunchDescriptionError, ProcessSpec

NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)


@st.composite
def descriptions(draw: st.DrawFn) -> LaunchDescription:
    names = draw(st.lists(NAMES, min_size=1, max_size=4, unique=True))
    nodes = draw(st.lists(NAMES, min_size=len(names), max_size=len(names) * 2, unique=True))
    specs = []
    for i, name in enumerate(names):
        own = nodes[i :: len(names)]
        specs.append(
            ProcessSpec(
                name,
                tuple(own),
                draw(st.none() | st.integers(0, 63)),
                draw(st.none() | st.integers(1, 99)),
                draw(st.booleans()),
            )
        )
    return LaunchDescription(tuple(specs), same_host_link=draw(st.booleans()))


@given(descriptions())
def test_a_description_reads_back_from_its_yaml(description: LaunchDescription) -> None:
    back = LaunchDescription.loads(description.dumps())
    assert back.processes == description.processes
    assert back.same_host_link is description.same_host_link


def test_the_bundled_hb50_layout_splits_bridge_and_control_over_two_cores() -> None:
    from jointbus.stack import bundled_layout

    layout = LaunchDescription.load(bundled_layout("hb50"))
    assert [(p.name, p.nodes, p.cpu, p.priority) for p in layout.processes] == [
        ("bridge", ("bridge",), 0, 50),
        ("control", ("control",), 1, 49),
    ]
    assert layout.nodes == ("bridge", "control")
    assert layout.source.endswith("robots/hb50/launch.yaml")
    assert layout.same_host_link is True


def test_same_host_links_are_on_unless_a_description_turns_them_off() -> None:
    text = "processes: [{name: a, nodes: [x]}, {name: b, nodes: [y]}]"
    assert LaunchDescription.loads(text).same_host_link is True
    off = LaunchDescription.loads("same_host_link: false\n" + text)
    assert off.same_host_link is False


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[1, 2]", "expected a mapping with 'processes'"),
        ("processes: []", "'processes' is empty"),
        ("processes: {}", "'processes' = {}; expected a list"),
        ("nodes: [x]", "unknown key(s) nodes"),
        (
            "same_host_link: yes please\nprocesses: [{name: b, nodes: [x]}]",
            "'same_host_link' = 'yes please'; expected true or false",
        ),
        ("processes: [{name: Bridge, nodes: [b]}]", "process 'Bridge' (index 0): 'name' ="),
        ("processes: [{name: b, nodes: []}]", "process 'b' (index 0): 'nodes' = []"),
        # a key left out is said missing, not "= None" (a new user's trial, 2026-12-07)
        ("processes: [{name: b}]", "process 'b' (index 0): 'nodes' missing; expected a list"),
        ("processes: [{nodes: [b]}]", "process index 0: 'name' missing; expected a name"),
        ("processes: [{name: b, nodes: null}]", "process 'b' (index 0): 'nodes' = None;"),
        ("processes: [{name: b, nodes: [x], cpu: -1}]", "'cpu' = -1; expected a CPU index"),
        ("processes: [{name: b, nodes: [x], cpu: true}]", "'cpu' = True"),
        ("processes: [{name: b, nodes: [x], priority: 100}]", "'priority' = 100; expected"),
        ("processes: [{name: b, nodes: [x], respawn: 1}]", "'respawn' = 1; expected true or false"),
        ("processes: [{name: b, nodes: [x], core: 1}]", "(index 0): unknown key(s) core"),
        (
            "processes: [{name: b, nodes: [x]}, {name: b, nodes: [y]}]",
            "process 'b' (index 1): name already used by index 0",
        ),
        (
            "processes: [{name: a, nodes: [x]}, {name: b, nodes: [x]}]",
            "process 'b' (index 1): node 'x' already runs in process 'a'",
        ),
        ("processes: [", "not YAML"),
    ],
)
def test_a_bad_description_is_refused_naming_the_place(text: str, message: str) -> None:
    with pytest.raises(LaunchDescriptionError) as info:
        LaunchDescription.loads(text, source="mine.yaml")
    assert str(info.value).startswith("mine.yaml: ")
    assert message in str(info.value)


def test_unknown_nodes_and_missing_files_are_named(tmp_path: Path) -> None:
    layout = LaunchDescription.loads("processes: [{name: a, nodes: [bridge, planner]}]")
    with pytest.raises(LaunchDescriptionError, match="node 'planner' is unknown; expected one of"):
        layout.check_nodes(("bridge", "control"))
    with pytest.raises(LaunchDescriptionError, match="cannot read the launch description"):
        LaunchDescription.load(tmp_path / "none.yaml")
    with pytest.raises(KeyError, match="no process 'x'; processes: a"):
        layout.process("x")


def test_a_yaml_syntax_error_names_the_file_and_line_on_one_line(tmp_path: Path) -> None:
    """A new user's broken file read ``in "<unicode string>", line 3``, over several lines: the
    error names the file itself, the line and column, and fits the CLI's one ``error:`` line."""
    path = tmp_path / "broken.yaml"
    path.write_text("processes:\n  - name: bridge\n   nodes: [bridge\n", encoding="utf-8")
    with pytest.raises(LaunchDescriptionError) as info:
        LaunchDescription.load(path)
    text = str(info.value)
    assert text.startswith(f"{path}: line 3, column 4: not YAML: expected <block end>"), text
    assert "<unicode string>" not in text and "\n" not in text
