"""Tools decode every bundled robot's topics by name, while the core's registries know no robot."""

from __future__ import annotations

from jointbus.messages.registry import default_registry
from jointbus.robots.hb50.messages import HB50_MESSAGE_TYPES, BridgeData, JointCommand, Status
from jointbus.runtime import RUNTIME_MESSAGE_TYPES, runtime_registry
from jointbus.tools.known_types import known_registry
from support.fresh import last_line_in_fresh_interpreter


def test_the_tools_registry_holds_the_core_the_runtime_and_hb50() -> None:
    registry = known_registry()
    for cls in (*HB50_MESSAGE_TYPES, *RUNTIME_MESSAGE_TYPES):
        assert registry.by_type_name(cls.TYPE_NAME) is cls
    for name in default_registry():
        assert registry.by_type_name(name) is default_registry().by_type_name(name)
    assert len(registry) == len(runtime_registry()) + len(HB50_MESSAGE_TYPES)
    data = BridgeData()
    assert registry.by_type_name("hb50_commons/BridgeData").from_cdr(data.to_cdr()) == data


def test_the_core_registries_hold_no_robot_type_but_the_generic_status() -> None:
    hb50 = {cls.TYPE_NAME for cls in HB50_MESSAGE_TYPES}
    assert JointCommand.TYPE_NAME in hb50 and Status.TYPE_NAME not in hb50
    assert not hb50 & set(runtime_registry())
    assert runtime_registry().by_type_name(Status.TYPE_NAME) is Status


def test_importing_the_core_loads_no_robot_package() -> None:
    """Layering, checked by running it: bus, runtime, model and their registries import nothing
    of hb50. (The drivers still type ``impedance`` on hb50's JointCommand: pyproject.toml's
    ignore_imports lists those two imports.)"""
    code = (
        "import sys, jointbus.math, jointbus.codec, jointbus.bus, jointbus.runtime\n"
        "import jointbus.model\n"
        "from jointbus.runtime import runtime_registry\n"
        "runtime_registry()\n"
        "print(sorted(m for m in sys.modules if 'hb50' in m or m.startswith('jointbus.nodes')))\n"
    )
    found = last_line_in_fresh_interpreter(code)
    assert found == "[]", found
