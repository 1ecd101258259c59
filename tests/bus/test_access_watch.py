"""One denial, one report: which process of a robot reports a peer the access rules deny.

What a user relies on: a watch-only certificate that tries to command the robot is named once on
the robot's console. Each process of a robot holds the rules and checks the same announcement; the
demo's console printed the denial three times (the bridge's status report, the control process's
logged warning and the launcher's). Now the process that subscribes the topic reports it, a
process that does not leaves it to that one, and only when no session subscribes it does a process
log it. Real TLS sessions on loopback, with the example rules (``examples/zenoh_acl.json5``).
"""

from __future__ import annotations

import logging
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_zenoh_tls import Pki, free_port, make_pki, wait_until

from jointbus.bus import MAB_RT, AccessDeniedEvent, Bus, QosEvent, ZenohConfig
from jointbus.bus.zenoh_security import ZenohAccessControl, secure
from jointbus.messages.std_msgs import String
from jointbus.robots.hb50.messages import JointCommand

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl CLI")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "zenoh_acl.json5"
ORDER = ("a_j0", "a_j1")


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"), ("robot", "monitor"))


class Robot:
    """Two processes of one robot, both with the rules: ``owner`` subscribes the joint commands
    (the bridge's), ``other`` does not (the control process, the launcher); a monitor linked to
    both."""

    def __init__(self, pki: Pki) -> None:
        rules = ZenohAccessControl.from_file(EXAMPLE)
        a, b = free_port(), free_port()
        self.owner = Bus(
            name="owner",
            zenoh=secure(ZenohConfig(listen=(f"tls/127.0.0.1:{a}",)), pki.tls["robot"], rules),
        )
        self.other = Bus(
            name="other",
            zenoh=secure(
                ZenohConfig(listen=(f"tls/127.0.0.1:{b}",), connect=(f"tls/127.0.0.1:{a}",)),
                pki.tls["robot"],
                rules,
            ),
        )
        self.owner_events: list[QosEvent] = []  # its subscribers' (a node reports these)
        self.other_events: list[QosEvent] = []  # its bus's: what it would log
        self.other.on_qos_event(self.other_events.append)
        self.monitor = Bus(
            name="monitor",
            zenoh=secure(
                ZenohConfig(listen=(), connect=(f"tls/127.0.0.1:{a}", f"tls/127.0.0.1:{b}")),
                pki.tls["monitor"],
            ),
        )

    def close(self) -> None:
        self.monitor.close()
        self.other.close()
        self.owner.close()


@pytest.fixture
def robot(pki: Pki) -> Iterator[Robot]:
    r = Robot(pki)
    yield r
    r.close()


def _denied(events: list[QosEvent]) -> list[tuple[str, str]]:
    return [(e.topic, e.endpoint) for e in events if isinstance(e, AccessDeniedEvent)]


def test_a_denied_publisher_is_reported_once_by_the_process_that_subscribes(
    robot: Robot, caplog: pytest.LogCaptureFixture
) -> None:
    """Two subscribers that report their events in the owner's process, one process without a
    subscriber: one report, from the first subscriber; nothing logged."""
    for label in ("first", "second"):
        robot.owner.subscribe(
            "/hb50/joint_command", JointCommand, None, MAB_RT,
            on_event=robot.owner_events.append, node=label,
        )  # fmt: skip
    assert robot.other.zenoh is not None
    transport = robot.other.zenoh

    def other_sees_the_subscriber() -> bool:
        return any(
            e.kind == "MS" and e.topic == "/hb50/joint_command" for e in transport.graph_entities()
        )

    assert wait_until(other_sees_the_subscriber, timeout=10.0)
    with caplog.at_level(logging.WARNING, logger="jointbus.bus"):
        robot.monitor.publisher("/hb50/joint_command", JointCommand, MAB_RT)
        assert wait_until(lambda: bool(_denied(robot.owner_events)), timeout=10.0)
        time.sleep(1.0)  # the other process has seen the announcement by now
    assert _denied(robot.other_events) == []  # it logged it, as the launcher did
    assert not [r for r in caplog.records if "access denied" in r.getMessage()]
    assert [topic for topic, _ in _denied(robot.owner_events)] == ["/hb50/joint_command"]
    assert _denied(robot.owner_events)[0][1].startswith("first")


def test_a_denied_publisher_nobody_subscribes_is_logged(
    robot: Robot, caplog: pytest.LogCaptureFixture
) -> None:
    """No session subscribes the topic: the processes that see the announcement log it (here
    both robot processes), as before."""
    with caplog.at_level(logging.WARNING, logger="jointbus.bus"):
        robot.monitor.publisher("/hb50/velocity_command", String, MAB_RT)
        assert wait_until(lambda: bool(_denied(robot.other_events)), timeout=10.0)
    assert _denied(robot.other_events) == [("/hb50/velocity_command", "")]
    assert any("access denied" in r.getMessage() for r in caplog.records)
