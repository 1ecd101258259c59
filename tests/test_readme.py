"""The README's examples run as written (a user copies them first)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)


def test_readme_names_the_two_set_up_commands() -> None:
    text = README.read_text(encoding="utf-8")
    assert "make demo" in text
    assert "make test" in text
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_python_block_runs(index: int, tmp_path: Path) -> None:
    script = tmp_path / f"readme_block_{index}.py"
    script.write_text(BLOCKS[index], encoding="utf-8")
    result = subprocess.run(
        [sys.executable, str(script)],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert result.returncode == 0, f"README block {index} failed:\n{BLOCKS[index]}\n{result.stderr}"
    assert result.stdout.strip(), "every README example prints what it shows"


def test_the_docs_hold_no_merge_conflict_markers() -> None:
    """A merge that left both sides in a page would show a user two stories (it happened once)."""
    pages = [README, *sorted((README.parent / "docs").glob("*.md"))]
    for page in pages:
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1):
            assert not line.startswith(("<<<<<<< ", ">>>>>>> ")), f"{page.name}:{number}: {line}"


def test_every_documented_ros2_velocity_stream_outlasts_the_command_timeout() -> None:
    """Issue 20, item 26: docs/ROS2.md's ``ros2 topic pub`` of the velocity command had no
    ``-r``; at ROS 2's default 1 Hz the 0.5 s command timeout makes the robot stutter. Every
    documented ``ros2 topic pub`` / ``jointbus topic pub`` of a velocity command streams at
    ≥ 10 Hz (or sends once on purpose)."""
    docs = [README, *sorted((README.parent / "docs").glob("*.md"))]
    found = 0
    for page in docs:
        text = page.read_text(encoding="utf-8").replace("\\\n", " ")
        for line in text.splitlines():
            if "topic pub" not in line or "velocity_command" not in line:
                continue
            found += 1
            if "--once" in line or "--count" in line:
                continue
            rate = re.search(r"(?:-r|--rate)\s+(\d+(?:\.\d+)?)", line)
            assert rate is not None and float(rate.group(1)) >= 10, f"{page.name}: {line}"
    assert found >= 2


def test_the_readme_shows_a_rate_loop_without_a_node_and_reads_its_statistics() -> None:
    """Issue 20, item 18: RateLoop and its statistics outside a Node were undocumented (a user's
    hand-written 500 Hz loop had p99 lateness 9–181 ms). A README example runs one (it runs in
    ``test_python_block_runs``) and prints the lateness it measured."""
    loops = [b for b in BLOCKS if "RateLoop(" in b and "Node" not in b]
    assert loops, "no README example runs a RateLoop on its own"
    assert any("lateness_p99_s" in b and ".run(" in b for b in loops)


def test_the_rover_demo_is_described_by_its_radius() -> None:
    """Issue 20, item 18: the README said "a 0.6 m circle" for a circle of 0.6 m radius."""
    from jointbus.cli.served_demo import BASE_SPEED, BASE_TURN

    text = " ".join(README.read_text(encoding="utf-8").split())
    radius = BASE_SPEED / BASE_TURN
    assert f"a circle of {radius:g} m radius ({BASE_SPEED:g} m/s at {BASE_TURN:g} rad/s" in text
    assert f"{radius:g} m circle" not in text


def test_the_make_test_figure_says_on_what_host_it_was_measured() -> None:
    """Issue 20, item 18: the README's "3 min 51 s" was read as what any machine takes (a user
    saw 13 min at load 4). The figure says it is a quiet host's, and gives loaded ones."""
    text = " ".join(README.read_text(encoding="utf-8").split())
    sentence = text[text.index("`make test` ran its") :][:600]
    assert "on a quiet host" in sentence
    assert "load average" in sentence


def test_the_reserved_names_paragraph_lists_every_hook_the_error_names() -> None:
    """NodeReservedNameError says "Override the hooks on_configure, …, event_counts"; the
    README's list lacked event_counts. Both come from NODE_HOOKS now."""
    from jointbus.runtime.node import NODE_HOOKS

    text = " ".join(README.read_text(encoding="utf-8").split())
    paragraph = text[text.index("**Reserved names.**") :][:800]
    hooks = paragraph[: paragraph.index("the names `Node` itself uses")]
    for hook in NODE_HOOKS:
        assert f"`{hook}`" in hooks, hook


def test_the_layout_names_every_top_level_package_and_module() -> None:
    """A user found errors.py, stack.py, soak.py, chaos_campaign.py and compiled_core.py missing
    from the Layout tree."""
    text = README.read_text(encoding="utf-8")
    tree = text[text.index("## Layout") :]
    tree = tree[: tree.index("```", tree.index("```") + 3)]
    listed = set(re.findall(r"^  (\S+)", tree, re.MULTILINE))
    package = README.parent / "src" / "jointbus"
    present = {p.name + "/" for p in package.iterdir() if (p / "__init__.py").is_file()}
    present |= {p.name for p in package.glob("*.py") if p.name != "__init__.py"}
    assert present <= listed, sorted(present - listed)
