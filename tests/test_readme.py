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
