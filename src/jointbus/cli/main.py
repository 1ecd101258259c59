"""The ``jointbus`` command. Where it sits: the top layer; it may import every other layer."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script."""
    args = sys.argv[1:] if argv is None else argv
    print(f"jointbus: no command yet ({args})")
    return 0
