"""ROS 2 interface packages of jointbus's own types, written for a ROS 2 machine to build.

Where it sits: :mod:`jointbus.cli`, used by ``jointbus ros2 export-msgs`` (:mod:`jointbus.cli.ros2`)
when it runs. The packages (``package.xml``, ``CMakeLists.txt``, ``msg/*.msg`` and the composed
``srv/*.srv`` of jointbus's services) come from the same ``.msg`` text whose RIHS01 hashes jointbus
puts in its keys, so ``colcon build`` gives the same hashes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from jointbus.bus.service_types import (
    SERVICE_PACKAGE,
    service_type_hash,
    service_type_name,
    srv_text,
)
from jointbus.cli.errors import CliError
from jointbus.codec.type_hash import rihs01_of
from jointbus.messages.registry import TypeRegistry
from jointbus.tools.known_types import known_registry

#: Packages whose types only jointbus defines (ROS 2 ships the others).
JOINTBUS_PACKAGES: tuple[str, ...] = ("hb50_commons", "jointbus_msgs")
#: The standard ROS 2 interface packages whose types the robot sends (and jointbus's own types
#: contain): what ``export-msgs --with-deps`` writes as well, for a client with no ROS 2
#: installation (zenoh-ros2-sdk offline, rosbags); a ROS 2 machine has them already.
STANDARD_PACKAGES: tuple[str, ...] = (
    "builtin_interfaces",
    "std_msgs",
    "geometry_msgs",
    "sensor_msgs",
    "nav_msgs",
    "tf2_msgs",
)

#: The request/response pairs jointbus serves (the array node's Player commands and requests, its
#: e-stop and geometry services), exported as the composed ``jointbus_msgs/srv/*.srv`` types
#: (:mod:`jointbus.bus.service_types`). ``tests/cli/test_cli_ros2.py`` checks that a served array
#: offers no pair outside this list.
SERVICE_PAIRS: tuple[tuple[str, str], ...] = (
    *(
        (f"jointbus_msgs/msg/Actuator{name}", "jointbus_msgs/msg/ActuatorReply")
        for name in (
            "AccelConfigRequest",
            "BrakesRequest",
            "CurrentCommand",
            "HomeCommand",
            "JointPowerRequest",
            "MultiCurrentCommand",
            "MultiPositionCommand",
            "MultiSpeedCommand",
            "PositionCommand",
            "PowerRequest",
            "SpeedCommand",
            "SpeedConfigRequest",
        )
    ),
    ("jointbus_msgs/msg/Joints", "jointbus_msgs/msg/ActuatorReply"),
    ("std_msgs/msg/String", "jointbus_msgs/msg/ActuatorReply"),
    ("jointbus_msgs/msg/ActuatorGeometryRequest", "jointbus_msgs/msg/ArrayGeometry"),
    ("jointbus_msgs/msg/ActuatorGeometryRequest", "jointbus_msgs/msg/ActuatorArrayDescription"),
)

_SEPARATOR = re.compile(r"^={10,}\s*$", re.MULTILINE)
_DESCRIPTIONS = {
    "hb50_commons": "Honey Badger 5.0 messages (bridge data and state, joint commands, status)",
    "jointbus_msgs": "jointbus messages (joint states and samples, actuator arrays, limits)",
}


def own_definition(bundle: str) -> str:
    """The main type's ``.msg`` text of a bundle (its dependencies are other files)."""
    return _SEPARATOR.split(bundle, maxsplit=1)[0].rstrip("\n") + "\n"


def _dependencies(definitions: Iterable[str], package: str) -> list[str]:
    """Other packages the ``.msg`` texts refer to (``pkg/Name`` field types)."""
    found: set[str] = set()
    for text in definitions:
        for line in text.splitlines():
            kind = line.split("#", 1)[0].strip().split(" ", 1)[0]
            if "/" in kind:
                found.add(kind.split("/", 1)[0])
    found.discard(package)
    return sorted(found)


def package_xml(package: str, dependencies: list[str]) -> str:
    """A format-3 ``package.xml`` of an interface package."""
    depends = "".join(f"  <depend>{d}</depend>\n" for d in dependencies)
    return (
        '<?xml version="1.0"?>\n'
        '<?xml-model href="http://download.ros.org/schema/package_format3.xsd" '
        'schematypens="http://www.w3.org/2001/XMLSchema"?>\n'
        '<package format="3">\n'
        f"  <name>{package}</name>\n"
        "  <version>0.1.0</version>\n"
        f"  <description>{_DESCRIPTIONS.get(package, package)}; exported by jointbus "
        "(jointbus ros2 export-msgs).</description>\n"
        '  <maintainer email="jointbus@example.invalid">jointbus</maintainer>\n'
        "  <license>Apache-2.0</license>\n"
        "  <buildtool_depend>ament_cmake</buildtool_depend>\n"
        "  <buildtool_depend>rosidl_default_generators</buildtool_depend>\n"
        f"{depends}"
        "  <exec_depend>rosidl_default_runtime</exec_depend>\n"
        "  <member_of_group>rosidl_interface_packages</member_of_group>\n"
        "  <export>\n    <build_type>ament_cmake</build_type>\n  </export>\n"
        "</package>\n"
    )


def cmakelists(
    package: str, messages: list[str], dependencies: list[str], services: Iterable[str] = ()
) -> str:
    """The ``CMakeLists.txt`` of an interface package."""
    finds = "".join(f"find_package({d} REQUIRED)\n" for d in dependencies)
    files = "".join(f'  "msg/{m}.msg"\n' for m in messages)
    files += "".join(f'  "srv/{m}.srv"\n' for m in services)
    deps = f"  DEPENDENCIES {' '.join(dependencies)}\n" if dependencies else ""
    return (
        "cmake_minimum_required(VERSION 3.8)\n"
        f"project({package})\n\n"
        "find_package(ament_cmake REQUIRED)\n"
        "find_package(rosidl_default_generators REQUIRED)\n"
        f"{finds}\n"
        "rosidl_generate_interfaces(${PROJECT_NAME}\n"
        f"{files}{deps})\n\n"
        "ament_export_dependencies(rosidl_default_runtime)\n"
        "ament_package()\n"
    )


def export_packages(
    directory: Path, packages: Iterable[str], registry: TypeRegistry | None = None
) -> dict[str, list[str]]:
    """Write one interface package per name under ``directory``; returns package → type names.

    The types are every registered one of each package: by default :func:`known_registry`, the
    registry the tools decode the wire with (the core's messages, the runtime's loop diagnostics
    and parameter messages, and every bundled robot's), so a type jointbus can put on the wire is
    exported without a list to keep in step. Raises CliError for a package no registered type
    belongs to (nothing is written then)."""
    registry = registry or known_registry()
    chosen: dict[str, dict[str, str]] = {}
    for package in packages:
        types = {
            name.rsplit("/", 1)[1]: own_definition(registry.by_type_name(name).msgdef())
            for name in registry
            if name.startswith(f"{package}/msg/")
        }
        if not types:
            known = sorted({n.split("/", 1)[0] for n in registry})
            raise CliError(f"no registered type is in package {package!r}; known: {known}")
        chosen[package] = types
    written: dict[str, list[str]] = {}
    for package, types in chosen.items():
        root = directory / package
        (root / "msg").mkdir(parents=True, exist_ok=True)
        names = sorted(types)
        for name in names:
            (root / "msg" / f"{name}.msg").write_text(types[name], encoding="utf-8")
        services = _services(registry) if package == SERVICE_PACKAGE else {}
        if services:
            (root / "srv").mkdir(exist_ok=True)
        for name, text in services.items():
            (root / "srv" / f"{name}.srv").write_text(text, encoding="utf-8")
        dependencies = _dependencies([*types.values(), *services.values()], package)
        if services:  # every .srv's event message refers to service_msgs/ServiceEventInfo
            dependencies = sorted({*dependencies, "service_msgs"})
        (root / "package.xml").write_text(package_xml(package, dependencies), encoding="utf-8")
        (root / "CMakeLists.txt").write_text(
            cmakelists(package, names, dependencies, sorted(services)), encoding="utf-8"
        )
        written[package] = [f"{package}/msg/{n}" for n in names] + [
            f"{package}/srv/{n}" for n in sorted(services)
        ]
    return written


def _services(registry: TypeRegistry) -> dict[str, str]:
    """Short name → ``.srv`` text of every pair in :data:`SERVICE_PAIRS`."""
    found: dict[str, str] = {}
    for request_name, response_name in SERVICE_PAIRS:
        request = registry.by_type_name(request_name)
        response = registry.by_type_name(response_name)
        short = service_type_name(request, response).rsplit("/", 1)[1]
        found[short] = srv_text(request, response)
    return found


def with_dependencies(packages: Iterable[str], registry: TypeRegistry | None = None) -> list[str]:
    """``packages``, then :data:`STANDARD_PACKAGES`, then every other package their types refer
    to (transitively) that ``registry`` holds: what ``export-msgs --with-deps`` writes."""
    registry = registry or known_registry()
    known = {name.split("/", 1)[0] for name in registry}
    chosen = list(dict.fromkeys([*packages, *STANDARD_PACKAGES]))
    index = 0
    while index < len(chosen):
        package = chosen[index]
        texts = [
            own_definition(registry.by_type_name(n).msgdef())
            for n in registry
            if n.startswith(f"{package}/msg/")
        ]
        for dependency in _dependencies(texts, package):
            if dependency in known and dependency not in chosen:
                chosen.append(dependency)
        index += 1
    return chosen


def type_hashes(
    written: dict[str, list[str]], registry: TypeRegistry | None = None
) -> dict[str, str]:
    """The RIHS01 hash of every type :func:`export_packages` wrote (``pkg/msg/Name`` and
    ``pkg/srv/Name``): the hash a ROS 2 build of the files gives and jointbus puts in its keys."""
    registry = registry or known_registry()
    pairs = {
        service_type_name(registry.by_type_name(q), registry.by_type_name(r)): (q, r)
        for q, r in SERVICE_PAIRS
    }
    hashes: dict[str, str] = {}
    for names in written.values():
        for name in names:
            if "/srv/" in name:
                request, response = pairs[name]
                hashes[name] = service_type_hash(
                    registry.by_type_name(request), registry.by_type_name(response)
                )
            else:
                hashes[name] = rihs01_of(registry.by_type_name(name))
    return hashes


__all__ = [
    "JOINTBUS_PACKAGES",
    "SERVICE_PAIRS",
    "STANDARD_PACKAGES",
    "cmakelists",
    "export_packages",
    "own_definition",
    "package_xml",
    "type_hashes",
    "with_dependencies",
]
