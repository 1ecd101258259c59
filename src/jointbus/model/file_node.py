"""Typed, path-tracking access to decoded robot-file data (the tree PyYAML returns).

Where it sits: :mod:`jointbus.model`, used by :mod:`~jointbus.model.yaml_loader` and
:mod:`~jointbus.model.parameters`. Every value read from a robot file goes through a
:class:`FileNode`, which knows the file it came from and its key path (``joints[3].limits.
position``), so a wrong value is reported as "hb50.yaml: joints[3].limits.position = 'abc';
expected a [min, max] pair of numbers" instead of a ``KeyError`` from deep inside the loader.
Unknown keys are rejected too: a misspelt ``limts:`` silently ignored would leave a joint
unlimited.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from jointbus.math import Quaternion, Transform, Vec3
from jointbus.model.errors import RobotFileError


@dataclass(frozen=True, slots=True)
class FileNode:
    """One value of a robot file, with the file's name (``source``) and the value's ``key`` path.

    Inside a joint's entry, ``joint`` and ``joint_index`` name that joint (name and position in
    ``joints``), so every error about one of its values names the joint, not only the index."""

    value: Any
    source: str
    key: str = ""
    joint: str | None = None
    joint_index: int | None = None

    def fail(self, expected: str) -> RobotFileError:
        """The error for this value not being what was ``expected`` (raise it)."""
        return self.fail_at(self.key, self.value, expected)

    def fail_at(self, key: str, value: Any, expected: str) -> RobotFileError:
        """The error for ``value`` at ``key`` (this node's or a child's), naming its joint."""
        return RobotFileError(
            self.source, key, value, expected, joint=self.joint, index=self.joint_index
        )

    def of_joint(self, name: str | None, index: int) -> FileNode:
        """This node (a joint's entry) and its children, naming joint ``name`` at ``index``."""
        return FileNode(self.value, self.source, self.key, name, index)

    def _child_key(self, name: str | int) -> str:
        if isinstance(name, int):
            return f"{self.key}[{name}]"
        return f"{self.key}.{name}" if self.key else name

    # --- containers -------------------------------------------------------------------------
    def mapping(self, allowed: tuple[str, ...] | None = None) -> Mapping[str, Any]:
        """The value as a mapping with string keys; with ``allowed``, any other key is an error."""
        if not isinstance(self.value, Mapping):
            raise self.fail("a mapping (key: value)")
        for k in self.value:
            if not isinstance(k, str):
                raise self.fail_at(
                    self._child_key(str(k)),
                    k,
                    "a string key (quote names such as on, off, yes, no: YAML reads them as "
                    "booleans)",
                )
            if allowed is not None and k not in allowed:
                raise self.fail_at(self._child_key(k), self.value[k], f"one of the keys {allowed}")
        return self.value

    def has(self, name: str) -> bool:
        """True if this mapping has key ``name`` with a non-null value."""
        return isinstance(self.value, Mapping) and self.value.get(name) is not None

    def at(self, name: str) -> FileNode:
        """The child ``name`` of this mapping (its value is ``None`` when the key is absent)."""
        value = self.value.get(name) if isinstance(self.value, Mapping) else None
        return FileNode(value, self.source, self._child_key(name), self.joint, self.joint_index)

    def require(self, name: str) -> FileNode:
        """The child ``name`` of this mapping, which must be present and not null."""
        self.mapping()
        node = self.at(name)
        if node.value is None:
            raise node.fail("a value (the key is required)")
        return node

    def items(self) -> Iterator[tuple[str, FileNode]]:
        """``(key, child)`` pairs of this mapping, in file order."""
        for k in self.mapping():
            yield k, self.at(k)

    def elements(self) -> list[FileNode]:
        """The children of this list."""
        if not isinstance(self.value, list):
            raise self.fail("a list")
        return [
            FileNode(v, self.source, self._child_key(i), self.joint, self.joint_index)
            for i, v in enumerate(self.value)
        ]

    # --- scalars ----------------------------------------------------------------------------
    def number(self, *, finite: bool = True) -> float:
        """The value as a float (ints accepted; booleans are not numbers here)."""
        v = self.value
        if isinstance(v, bool) or not isinstance(v, int | float):
            if isinstance(v, str) and not finite and v.strip().lower() in ("inf", "+inf", ".inf"):
                return math.inf
            raise self.fail("a number")
        f = float(v)
        if math.isnan(f) or (finite and not math.isfinite(f)):
            raise self.fail("a finite number")
        return f

    def number_or(self, default: float, *, finite: bool = True) -> float:
        """The float value, or ``default`` when absent."""
        return default if self.value is None else self.number(finite=finite)

    def integer(self) -> int:
        """The value as an int (booleans and floats are rejected)."""
        if isinstance(self.value, bool) or not isinstance(self.value, int):
            raise self.fail("an integer")
        return self.value

    def boolean(self) -> bool:
        """The value as a boolean (``true`` / ``false``)."""
        if not isinstance(self.value, bool):
            raise self.fail("true or false")
        return self.value

    def boolean_or(self, default: bool) -> bool:
        """The boolean value, or ``default`` when absent."""
        return default if self.value is None else self.boolean()

    def text(self) -> str:
        """The value as a non-empty string."""
        if not isinstance(self.value, str) or not self.value:
            raise self.fail("a non-empty string")
        return self.value

    def text_or(self, default: str) -> str:
        """The string value, or ``default`` when absent."""
        return default if self.value is None else self.text()

    # --- small vectors ----------------------------------------------------------------------
    def floats(self, n: int, what: str) -> tuple[float, ...]:
        """A list of exactly ``n`` finite numbers, described as ``what`` in errors."""
        v = self.value
        if not isinstance(v, list) or len(v) != n:
            raise self.fail(what)
        out = []
        for i, item in enumerate(v):
            if isinstance(item, bool) or not isinstance(item, int | float):
                raise self.fail_at(self._child_key(i), item, f"a number ({what})")
            f = float(item)
            if not math.isfinite(f):
                raise self.fail_at(self._child_key(i), item, "a finite number")
            out.append(f)
        return tuple(out)

    def vec3(self) -> Vec3:
        """A ``[x, y, z]`` list of finite numbers."""
        x, y, z = self.floats(3, "a list [x, y, z] of three numbers")
        return Vec3(x, y, z)

    def transform(self) -> Transform:
        """An ``{xyz: [x, y, z], rpy: [roll, pitch, yaw]}`` pose (m, rad); both keys optional."""
        if self.value is None:
            return Transform.identity()
        self.mapping(("xyz", "rpy"))
        xyz = self.at("xyz").vec3() if self.has("xyz") else Vec3.ZERO
        if self.has("rpy"):
            roll, pitch, yaw = self.at("rpy").floats(3, "a list [roll, pitch, yaw] of three angles")
            rotation = Quaternion.from_rpy(roll, pitch, yaw)
        else:
            rotation = Quaternion.identity()
        return Transform(xyz, rotation)
