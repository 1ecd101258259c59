"""Where the CLI asks for an array's joint names (:mod:`jointbus.cli.array_joint_names`); the
lookup itself, against a served array, is in ``tests/cli/test_cli_topic.py``."""

from __future__ import annotations

import pytest

from jointbus.bus import Bus
from jointbus.cli.array_joint_names import describe_service_of, naming_the_joint
from jointbus.messages.errors import NonFiniteError, UnknownJointError


@pytest.mark.parametrize(
    ("topic", "service"),
    [
        ("/arm6/actarray/speed", "/arm6/actarray/describe"),
        ("/lab/arm6/actarray/multi_position", "/lab/arm6/actarray/describe"),
        ("/arm6/joint_impedance", None),
        ("/actarray", None),
        ("/arm6/actarray/", None),
    ],
)
def test_the_describe_service_is_the_actarray_topics_sibling(
    topic: str, service: str | None
) -> None:
    assert describe_service_of(topic) == service


def _no_bus() -> Bus:
    raise AssertionError("no network is joined for an error that needs no names")


def test_an_error_that_names_its_joint_or_has_no_index_is_left_as_it_is() -> None:
    named = NonFiniteError("T", "speed", float("nan"), "a finite number", joint="elbow", index=2)
    assert naming_the_joint(named, "/arm6/actarray/speed", _no_bus) is named
    unindexed = NonFiniteError("T", "speed", float("nan"), "a finite number")
    assert naming_the_joint(unindexed, "/arm6/actarray/speed", _no_bus) is unindexed
    other = UnknownJointError("wrist")
    assert naming_the_joint(other, "/arm6/actarray/speed", _no_bus) is other
    indexed = NonFiniteError("T", "speed", float("nan"), "a finite number", index=2)
    assert naming_the_joint(indexed, "/arm6/status", _no_bus) is indexed  # not an array's topic
