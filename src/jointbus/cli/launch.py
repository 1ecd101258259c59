"""``jointbus bridge | control | estop | mode``: run each node in its own process, and command them.

Where it sits: :mod:`jointbus.cli`, registered as commands of :mod:`jointbus.cli.main`. ``bridge``
and ``control`` are one-node :class:`jointbus.stack.Stack` runs shown by the demo's view
(:func:`jointbus.cli.demo.run_stack`); ``estop`` and ``mode`` publish one command and wait for the
robot to confirm it.

**Two terminals, one robot.** ``jointbus bridge`` opens the actuators (``sim://hb50`` by default)
and runs the 500 Hz bridge; ``jointbus control`` runs the control node, which powers nothing until
bridge frames arrive, then sends itself ``stand_up`` (``--start idle`` does not). They meet over
Zenoh with the default scheme (the first jointbus process on the host listens on
``tcp/127.0.0.1:7447``; ``--hub-port`` / ``JOINTBUS_HUB_PORT`` change it), exactly like the demo
but with every message crossing a process boundary. Each prints the other's state truthfully: when
the bridge dies, ``jointbus control`` shows ``bridge=lost`` (measured 110–123 ms after a SIGKILL)
and publishes a STALE about it on ``/hb50/status``; the bridge does the same for a dead control
node, and ``jointbus bridge`` then shows ``mode=UNKNOWN`` (no RobotState for ... s) and no
estimated height, not the dead node's last mode (measured 138 ms after a SIGKILL; see
:mod:`jointbus.stack`). A second ``bridge`` or ``control`` of the same namespace on
the same bus is refused (one ``error:`` line naming the node, namespace, hub port and domain;
exit 1): two bridges or two control nodes must never command one robot
(:mod:`jointbus.runtime.namesakes`). The bridge checks before it opens the actuators.

**E-stop.** ``jointbus estop`` publishes ``estop jointbus_cli`` on ``/hb50/hardware_command`` (a
``std_msgs/String``, so ``ros2 topic pub`` can do the same) and repeats it until the bridge's
``bridge_state_10hz`` reports the latch; only then does it print ``e-stop latched`` and exit 0.
An e-stop that nobody confirmed is an error (exit 1): the user must not believe the robot is
stopped when no bridge heard it. The latch holds until an explicit ``jointbus estop --reset``:
the bridge then switches the drives on holding the measured position until a command *sent after
the reset* arrives, and ramps any far target from the measured pose; the control node, which left
STAND for DAMPING at the e-stop, stands the robot up again from where it lies — send
``jointbus mode idle`` before the reset to keep it down.

Against an array served by ``jointbus serve`` (no bridge: ``--namespace arm6``) the same command
calls the array node's ``/arm6/estop`` service (``--reset``: ``/arm6/estop_reset``) and its ACK
is the confirmation: motor power off, brakes engaged where fitted; after the reset power and
brakes stay as the stop left them. Whichever owner answers first (a bridge subscribed to
``hardware_command``, or a node serving ``estop``) is the one stopped; neither within
``--timeout`` is an error naming both and where it looked.

**Motion modes.** ``jointbus mode stand_up|stand|sit_down|idle`` publishes on
``/hb50/control_command`` and prints the control node's answer from ``/hb50/status`` (the mode
change, or why it refused: exit 1); a command that changes nothing (``idle`` while idle) is
confirmed from ``robot_state_10hz``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Final, TypeVar

import typer

from jointbus.cli.errors import CliError, user_errors
from jointbus.cli.options import (
    DEFAULT_NAMESPACE,
    BusOptions,
    cli_node_name,
    joins_bus,
    looked_on,
    refuse_denied,
)

if TYPE_CHECKING:
    from jointbus.bus import Bus, Publisher, ServiceClient
    from jointbus.messages.actarray.reply import ActuatorReply
    from jointbus.messages.base import Message
    from jointbus.messages.std_msgs import String
    from jointbus.robots.hb50.messages import BridgeState
    from jointbus.runtime import RealtimeConfig
    from jointbus.stack import Stack

__all__ = ["bridge", "control", "estop", "mode"]

#: What ``jointbus mode`` sends: every motion command (walk and run start the trot from STAND).
#: Spelled out rather than read from :class:`jointbus.robots.hb50.control.motion.MotionCommand`
#: so that ``jointbus estop`` / ``mode`` start without importing the controller (numpy-heavy
#: gait code); ``tests/cli/test_cli_launch.py`` checks the two agree.
MODE_COMMANDS: Final = ("stand_up", "stand", "sit_down", "idle", "walk", "run")
#: ``--start`` values of ``jointbus control``: :data:`jointbus.stack.START_COMMANDS` (same test).
START_COMMANDS: Final = ("stand_up", "stand", "sit_down", "idle")

#: How often ``estop`` repeats its command until the bridge confirms it (s).
ESTOP_REPEAT_S: Final = 0.1
#: The control node's name (the reporter of mode changes on the status topic).
CONTROL_NODE: Final = "control_node"
_M = TypeVar("_M", bound="Message")

NamespaceOption = Annotated[
    str, typer.Option("--namespace", help="Topic namespace of the robot (/NAMESPACE/...).")
]
TimeoutOption = Annotated[
    float,
    typer.Option(
        "--timeout",
        min=0.1,
        help="Seconds to wait for the robot to confirm, counted once the command has joined the "
        "bus (its own start-up, ≈ 0.5 s on a quiet host and seconds on a loaded one, comes "
        "first; an error says how long it took in all).",
    ),
]
DurationOption = Annotated[
    float | None,
    typer.Option("--duration", min=0.001, help="Stop after SECONDS (default: until Ctrl-C)."),
]
HeadlessOption = Annotated[
    bool, typer.Option("--headless", help="Plain summary lines, no terminal UI.")
]


def _stack(**kwargs: Any) -> Stack:
    from jointbus.stack import Stack, StackError  # the nodes: only bridge / control need them

    try:
        return Stack(**kwargs)
    except (StackError, LookupError, ValueError) as exc:
        raise CliError(str(exc)) from None


def _default_realtime() -> RealtimeConfig:
    from jointbus.stack import DEFAULT_REALTIME

    return DEFAULT_REALTIME


def _run(stack: Stack, *, duration: float | None, headless: bool) -> None:
    from jointbus.cli.demo import run_stack  # the demo's view (textual): only bridge / control

    run_stack(stack, duration=duration, headless=headless, monitor=False)


@joins_bus()
def bridge(  # noqa: PLR0917 (typer maps parameters to options)
    url: Annotated[
        str | None,
        typer.Option(
            "--url",
            help="Actuator array to open (default: sim://ROBOT, stepped by the bridge, with the "
            "robot's modelled sensor noise; sim://ROBOT?noise=false has none).",
        ),
    ] = None,
    robot: Annotated[str, typer.Option("--robot", help="Robot model (bundled name).")] = "hb50",
    duration: DurationOption = None,
    headless: HeadlessOption = False,
    realtime: Annotated[
        bool,
        typer.Option(
            "--realtime/--no-realtime",
            help="SCHED_FIFO and 1 ns timer slack for the bridge loop where the OS allows it.",
        ),
    ] = True,
    namespace: NamespaceOption = DEFAULT_NAMESPACE,
    estop_category: Annotated[
        int,
        typer.Option(
            "--estop-category",
            min=0,
            max=1,
            help="What an e-stop does to the drives: 1 (default) damps the joints until the "
            "robot is at rest (at most 2 s), then switches the drives off; 0 (STO) switches "
            "them off at once (a legged robot falls). See docs/SAFETY.md.",
        ),
    ] = 1,
    *,
    bus_options: BusOptions,
) -> None:
    """Run the bridge node alone (its own process, over Zenoh): it owns the actuators."""
    with user_errors():
        stack = _stack(
            robot=robot,
            url=url,
            nodes=("bridge",),
            zenoh=bus_options.zenoh_config(),
            realtime=_default_realtime() if realtime else None,
            namespace=namespace,
            start_command=None,
            estop_category=estop_category,
        )
        _run(stack, duration=duration, headless=headless)


@joins_bus()
def control(
    start: Annotated[
        str,
        typer.Option(
            "--start",
            help=f"Command sent once bridge frames arrive: {', '.join(START_COMMANDS)} or none.",
        ),
    ] = "stand_up",
    robot: Annotated[str, typer.Option("--robot", help="Robot model (bundled name).")] = "hb50",
    duration: DurationOption = None,
    headless: HeadlessOption = False,
    namespace: NamespaceOption = DEFAULT_NAMESPACE,
    *,
    bus_options: BusOptions,
) -> None:
    """Run the control node alone (its own process, over Zenoh); it stands the robot up."""
    with user_errors():
        if start != "none" and start not in START_COMMANDS:
            raise CliError(f"--start {start!r}: expected one of {', '.join(START_COMMANDS)}, none")
        stack = _stack(
            robot=robot,
            nodes=("control",),
            zenoh=bus_options.zenoh_config(),
            namespace=namespace,
            start_command=None if start == "none" else start,
        )
        _run(stack, duration=duration, headless=headless)


# ---- commands to a running robot -----------------------------------------------------------------
class _Latest:
    """Every message of a subscription in arrival order, appended by a realtime callback."""

    def __init__(self) -> None:
        self.messages: list[Any] = []

    def __call__(self, msg: Any) -> None:
        self.messages.append(msg)


def _watch(bus: Bus, topic: str, msg_type: type[_M]) -> _Latest:
    from jointbus.bus import RELIABLE

    seen = _Latest()
    bus.subscribe(topic, msg_type, seen, RELIABLE, realtime=True, node=cli_node_name())
    return seen


def _ran_s() -> float:
    """Seconds since this process started (its start-up included; by /proc on Linux, else since
    this module was imported)."""
    try:
        with open("/proc/self/stat", "rb") as f:
            start_ticks = int(f.read().rsplit(b")", 1)[1].split()[19])
        with open("/proc/uptime", "rb") as f:
            uptime = float(f.read().split()[0])
        return max(0.0, uptime - start_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return time.monotonic() - _IMPORTED


_IMPORTED = time.monotonic()


def _wait(predicate: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


def _command_publisher(bus: Bus, topic: str, timeout: float, who: str) -> Publisher[String]:
    from jointbus.bus import RELIABLE
    from jointbus.messages.std_msgs import String

    pub = bus.publisher(topic, String, RELIABLE, node=cli_node_name())
    if not _wait(lambda: pub.remote_matched, timeout):
        refuse_denied(bus, pub, timeout)
        raise CliError(
            f"no {who} subscribes to {topic} (waited {timeout:g} s; {looked_on(bus)}): "
            "is it running there? See --hub-port / JOINTBUS_HUB_PORT, --connect, --router"
        )
    return pub


def _wait_owner(bridge: Callable[[], bool], array: Callable[[], bool], timeout: float) -> bool:
    """Wait until a bridge subscribes to the hardware command topic or an array node serves its
    e-stop (asked every 0.1 s: a service look-up asks the network)."""
    deadline = time.monotonic() + timeout
    while True:
        if bridge() or array():
            return True
        if time.monotonic() >= deadline:
            return False
        _wait(bridge, min(0.1, max(0.0, deadline - time.monotonic())))


def _estop_array(
    client: ServiceClient[String, ActuatorReply], reason: str, reset: bool, timeout: float
) -> None:
    """E-stop (or reset) an array node through its service; its ACK confirms the latch."""
    from jointbus.bus import ServiceError
    from jointbus.drivers.errors import RejectReason
    from jointbus.messages.std_msgs import String

    try:
        reply = client.call(String("" if reset else reason), timeout)
    except ServiceError as exc:
        raise CliError(f"e-stop {'reset ' if reset else ''}NOT confirmed: {exc}") from None
    if reset and not reply.accepted and reply.reason == RejectReason.NOT_LATCHED.name:
        typer.echo("the e-stop is not latched: nothing to reset")
        return
    if not reply.accepted:
        raise CliError(f"{client.name} refused: {reply.text or reply.error}")
    if reset:
        typer.echo(
            f"e-stop reset ({client.name}): power and brakes stay as the stop left them; "
            "a client switches power on"
        )
    else:
        typer.echo(
            f"e-stop latched ({client.name}): motor power off, brakes engaged where fitted "
            f"(jointbus estop --reset --namespace {client.name.split('/')[1]} re-arms)"
        )


def _estop_of(state: BridgeState) -> str | None:
    from jointbus.robots.hb50.messages import BridgeStatus

    return BridgeStatus.of(state).estop_reason


@joins_bus()
def estop(
    reset: Annotated[
        bool,
        typer.Option(
            "--reset",
            help="Re-arm a latched e-stop (explicit, never automatic); a robot that was "
            "standing stands up again from where it lies (`mode idle` first keeps it down).",
        ),
    ] = False,
    reason: Annotated[
        str, typer.Option("--reason", help="Why (reported by the bridge).")
    ] = "jointbus_cli",
    timeout: TimeoutOption = 3.0,
    namespace: NamespaceOption = DEFAULT_NAMESPACE,
    *,
    bus_options: BusOptions,
) -> None:
    """Latch the e-stop of whatever owns the actuators of --namespace and wait for it to confirm;
    --reset re-arms.

    The owner is the hb50 bridge (sent on /NS/hardware_command, confirmed by its bridge_state) or
    an array node of `jointbus serve` (its /NS/estop or /NS/estop_reset service, confirmed by
    its ACK: motor power off, brakes engaged where fitted). Exit 1 if nothing confirmed it.
    """
    from jointbus.bus import RELIABLE
    from jointbus.messages.actarray.reply import ActuatorReply
    from jointbus.messages.std_msgs import String
    from jointbus.robots.hb50.messages import BridgeState

    with user_errors():
        if reset and reason != "jointbus_cli":
            raise CliError("--reason goes with an e-stop, not with --reset")
        bus = bus_options.open_bus()
        try:
            states = _watch(bus, f"/{namespace}/bridge_state_10hz", BridgeState)
            pub = bus.publisher(
                f"/{namespace}/hardware_command", String, RELIABLE, node=cli_node_name()
            )
            service = f"/{namespace}/estop_reset" if reset else f"/{namespace}/estop"
            array = bus.client(service, String, ActuatorReply, timeout_s=timeout)
            deadline = time.monotonic() + timeout
            if not _wait_owner(lambda: pub.remote_matched, array.available, timeout):
                raise CliError(
                    f"nothing owns the actuators of /{namespace}: no bridge subscribes to "
                    f"/{namespace}/hardware_command and no array node serves {service} "
                    f"(waited {timeout:g} s; {looked_on(bus)}): is it running there? "
                    "See --namespace, --hub-port / JOINTBUS_HUB_PORT, --connect, --router"
                )
            if not pub.remote_matched and states.messages:
                # A bridge runs (its state came) and serves the array's e-stop too; its service
                # can be found before its hardware_command subscription is matched (a long test
                # got the array's reply, without the reason, from the hb50 bridge): take the
                # bridge's path, which reports the reason and its stop. An array node publishes
                # no bridge state: its e-stop is not delayed.
                _wait(lambda: pub.remote_matched, max(0.0, deadline - time.monotonic()))
            if not pub.remote_matched:
                _estop_array(array, reason, reset, max(0.1, deadline - time.monotonic()))
                return
            if reset:
                if not _wait(lambda: bool(states.messages), timeout):
                    raise CliError(
                        f"no bridge_state from the bridge within {timeout:g} s ({looked_on(bus)})"
                    )
                if _estop_of(states.messages[-1]) is None:
                    typer.echo("the e-stop is not latched: nothing to reset")
                    return
                seen = len(states.messages)
                pub.publish(String("reset"))

                def reset_seen() -> bool:
                    return any(_estop_of(s) is None for s in states.messages[seen:])

                if not _wait(reset_seen, max(0.0, deadline - time.monotonic())):
                    raise CliError(
                        f"the bridge did not report the e-stop reset within {timeout:g} s"
                    )
                typer.echo(
                    "e-stop reset: drives on, holding the measured position until a new "
                    "command arrives"
                )
                return
            text = f"estop {reason}".strip()
            latched: str | None = None
            while latched is None and time.monotonic() < deadline:
                pub.publish(String(text))  # idempotent: a latched e-stop keeps its first reason
                _wait(lambda: any(_estop_of(s) for s in states.messages), ESTOP_REPEAT_S)
                latched = next((r for s in states.messages if (r := _estop_of(s))), None)
            if latched is None:
                raise CliError(
                    f"e-stop sent but NOT confirmed by the bridge within {timeout:g} s of "
                    f"joining the bus ({_ran_s():.1f} s since this command started)"
                )
            typer.echo(f"e-stop latched: {latched} (jointbus estop --reset re-arms)")
        finally:
            bus.close()


@joins_bus()
def mode(
    command: Annotated[
        str, typer.Argument(metavar="COMMAND", help=f"One of: {', '.join(MODE_COMMANDS)}.")
    ],
    timeout: TimeoutOption = 3.0,
    namespace: NamespaceOption = DEFAULT_NAMESPACE,
    *,
    bus_options: BusOptions,
) -> None:
    """Send a motion command to the control node and print its answer."""
    from jointbus.messages.std_msgs import String
    from jointbus.robots.hb50.messages import Level, MotionMode, RobotState, Status

    with user_errors():
        if command not in MODE_COMMANDS:
            raise CliError(
                f"unknown mode command {command!r}; expected one of {', '.join(MODE_COMMANDS)}"
            )
        bus = bus_options.open_bus()
        try:
            reports = _watch(bus, f"/{namespace}/status", Status)
            robot = _watch(bus, f"/{namespace}/robot_state_10hz", RobotState)
            pub = _command_publisher(bus, f"/{namespace}/control_command", timeout, "control node")
            pub.publish(String(command))

            def answer() -> Status | None:
                report: Status
                for report in reports.messages:
                    if report.reporting_node == CONTROL_NODE and repr(command) in report.status:
                        return report
                return None

            # A command that changes the mode is reported; one that does not (idle while idle,
            # stand while standing) is not: after a short wait, show the mode instead.
            _wait(lambda: answer() is not None, min(timeout, 1.0))
            report = answer()
            if report is None:
                if not _wait(lambda: bool(robot.messages), max(0.0, timeout - 1.0)):
                    raise CliError(
                        f"no answer from the control node within {timeout:g} s ({looked_on(bus)})"
                    )
                now = robot.messages[-1].motion_mode
                typer.echo(f"{command}: sent; control node in mode {MotionMode(now).name}")
                return
            typer.echo(f"{report.reporting_node}: {report.status}")
            if report.level != Level.OK:
                raise typer.Exit(1)
        finally:
            bus.close()
