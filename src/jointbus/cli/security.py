"""``jointbus security rules``: a robot's Zenoh access rules, from roles and certificate names.

Where it sits: :mod:`jointbus.cli`, the ``security`` group of :mod:`jointbus.cli.main`.
The mechanism (roles → Zenoh's ``access_control`` block) is :mod:`jointbus.bus.access_roles`; this
module holds :data:`ROBOT_ROLES`, the table of which of the robots' topics and services each role
adds — the one place where a new command topic or service must be placed (until then every role
is denied it: the rules' default is deny). The names are those of the array node
(:class:`jointbus.drivers.bus.array_names.ArrayNames`, every served array and hb50's bridge) and of
hb50's bridge and control node; ``tests/cli/test_cli_security.py`` checks that every topic a running
hb50 subscribes to and every service it offers is in the table or deliberately left out.

Use::

    jointbus security rules --controller controller.hb50 --observer monitor.hb50 \\
        --robot robot.hb50 > rules.json5
    jointbus bridge --tls-cert robot.pem ... --access-rules rules.json5
"""

from __future__ import annotations

from typing import Annotated, Final

import typer

from jointbus.cli.errors import CliError, user_errors

__all__ = ["ROBOT_ROLES", "app", "rules"]

#: What each role adds, by name relative to the robot's namespace (``*``: one name chunk): role →
#: the keyword arguments of its :class:`jointbus.bus.access_roles.RoleNames`. Plain data, turned
#: into a :class:`~jointbus.bus.access_roles.RoleTable` when ``rules`` runs, so that declaring the
#: command imports no bus (``jointbus security --help`` stays cheap).
ROBOT_ROLES: Final[dict[str, dict[str, tuple[str, ...]]]] = dict(
    # read-only services: they change nothing
    observer=dict(services=("actarray/get_geometry", "actarray/describe")),
    # hb50's velocity commands (``jointbus teleop``) and motion modes (``jointbus mode``); the
    # e-stop *service* of the array node and of hb50's bridge, which only latches it
    operator=dict(topics=("velocity_command", "control_command"), services=("estop",)),
    controller=dict(
        topics=(
            "joint_command",  # hb50's bridge
            "hardware_command",  # hb50's bridge: estop, and also reset, power on / off
            "joint_impedance",  # the array node's arbitrated impedance stream
            "joints_command",  # Rock Joints
            "actarray/*",  # Player one-shot commands: position, speed, home, current, multi_*
            "config_update",  # live parameters (jointbus param set)
            "heartbeat",  # a control node on the controller host: its liveliness
        ),
        # Player requests and commands as services (power, brakes, joint_power, speed_config,
        # accel_config, position, home, ...), Rock joints, and re-arming the e-stop
        services=("actarray/*", "joints_command", "estop_reset"),
    ),
)

app = typer.Typer(
    help="Access rules for a robot on a TLS-only bus.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _names(option: str, help_text: str) -> object:
    return typer.Option(option, help=help_text, metavar="CN", show_default=False)


@app.command("rules")
def rules(
    observer: Annotated[
        list[str] | None,
        _names(
            "--observer",
            "Certificate common name that may read every topic, the graph and the read-only "
            "services, and call nothing that changes anything (repeatable).",
        ),
    ] = None,
    operator: Annotated[
        list[str] | None,
        _names(
            "--operator",
            "... that may also send velocity commands and motion modes and latch the e-stop "
            "(repeatable).",
        ),
    ] = None,
    controller: Annotated[
        list[str] | None,
        _names(
            "--controller",
            "... that may also send joint commands and call the actuator services: power, "
            "brakes, home, e-stop reset (repeatable).",
        ),
    ] = None,
    robot: Annotated[
        list[str] | None,
        _names(
            "--robot",
            "Certificate of the robot's own processes: everything (repeatable).",
        ),
    ] = None,
) -> None:
    """Print Zenoh access rules (JSON5) giving each certificate name its role; load them with
    --access-rules in every process of the robot. Everything not granted is denied."""
    from jointbus.bus.access_roles import RoleNames, RoleTable, access_rules
    from jointbus.bus.errors import ZenohConfigError

    with user_errors():
        members = {
            "observer": observer or [],
            "operator": operator or [],
            "controller": controller or [],
            "robot": robot or [],
        }
        try:
            table = RoleTable(
                **{role: RoleNames(**names) for role, names in ROBOT_ROLES.items()}
            )
            text = access_rules(members, table)
        except ZenohConfigError as exc:
            raise CliError(str(exc)) from None
        typer.echo(text, nl=False)
