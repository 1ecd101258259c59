"""Where a ``jointbus`` command joins the bus: the options every bus command shares, declared once.

Where it sits: :mod:`jointbus.cli`, imported by every command module. It imports only the standard
library and ``typer`` at module level — ``jointbus.bus`` (and with it Zenoh) only when a command
actually opens the bus — so that ``jointbus CMD --help`` stays cheap (see :mod:`jointbus.cli.main`).

**How a command takes the bus options.** A command function that joins the bus is decorated with
:func:`joins_bus` and declares one keyword parameter ``bus_options: BusOptions``::

    @joins_bus()
    def estop(reset: Annotated[bool, typer.Option("--reset", ...)] = False, *,
              bus_options: BusOptions) -> None:
        bus = bus_options.open_bus()

:func:`joins_bus` shows typer the fields of :class:`BusOptions` as options of their own
(``--hub-port``, ``--connect``, ``--router``, ``--domain-id``, ``--listen`` and the security
options ``--tls-cert``, ``--tls-key``, ``--tls-ca``, ``--access-rules``, each with its environment
variable where it has one) and hands the command one :class:`BusOptions` holding what the user
gave. **Adding a bus option is one change, here:** a field of :class:`BusOptions` annotated with
its ``typer.Option`` (name, variable, help), its use in :meth:`BusOptions.zenoh_config` (or
:meth:`BusOptions.open_bus`), and what a child command gets of it (:data:`_CHILD`); every bus
command then takes it, and ``tests/cli/test_cli_bus_options.py`` checks that they all do.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import os
import typing
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Final, TypeVar

import typer

if TYPE_CHECKING:
    from jointbus.bus import Bus, Publisher, ZenohConfig

#: ``jointbus.bus.DEFAULT_HUB_PORT``, spelled out so that declaring the option imports no bus
#: (``tests/cli/test_cli_options.py`` checks the two agree).
DEFAULT_HUB_PORT: Final = 7447
#: ``jointbus.runtime.DEFAULT_NAMESPACE``, the robot namespace commands default to (same test).
DEFAULT_NAMESPACE: Final = "hb50"

_R = TypeVar("_R")


@dataclasses.dataclass(frozen=True, slots=True)
class BusOptions:
    """What the user said about where to join the bus (see the module docstring).

    Each field is one command-line option, declared by its annotation: ``typer`` reads the
    ``typer.Option`` in it (through :func:`joins_bus`), mypy and the commands read the type.
    Repeatable options arrive as lists (or ``None`` when not given).
    """

    hub_port: Annotated[
        int,
        typer.Option(
            "--hub-port",
            envvar="JOINTBUS_HUB_PORT",
            min=1,
            max=65535,
            metavar="PORT",
            help="Loopback port of the local jointbus hub (the first jointbus process listens "
            "on it).",
        ),
    ] = DEFAULT_HUB_PORT
    connect: Annotated[
        list[str] | None,
        typer.Option(
            "--connect",
            envvar="JOINTBUS_CONNECT",
            metavar="ENDPOINT",
            help="Extra Zenoh endpoint to connect to, e.g. tcp/192.168.1.10:7447 (repeatable).",
        ),
    ] = None
    router: Annotated[
        str | None,
        typer.Option(
            "--router",
            envvar="JOINTBUS_ROUTER",
            metavar="ENDPOINT",
            help="Join through a Zenoh router at this endpoint (client mode, e.g. "
            "`jointbus router` or rmw_zenohd on another host).",
        ),
    ] = None
    domain_id: Annotated[
        int | None,
        typer.Option(
            "--domain-id",
            envvar="ROS_DOMAIN_ID",
            min=0,
            max=232,
            show_default=False,
            metavar="N",
            help="ROS domain id (0-232; default 0): only participants of the same domain see "
            "each other, jointbus and ROS 2 alike.",
        ),
    ] = None
    rmw: Annotated[
        str | None,
        typer.Option(
            "--rmw",
            envvar="RMW_IMPLEMENTATION",
            show_default=False,
            metavar="RMW",
            help="ROS 2 middleware, as ROS 2 chooses it: rmw_zenoh_cpp (default), or "
            "rmw_cyclonedds_cpp / rmw_fastrtps_cpp to join the ROS domain on DDS (loopback "
            "unless ROS_AUTOMATIC_DISCOVERY_RANGE says otherwise).",
        ),
    ] = None
    listen: Annotated[
        list[str] | None,
        typer.Option(
            "--listen",
            metavar="ENDPOINT",
            help="Zenoh endpoint to listen on instead of the hub scheme, e.g. tcp/127.0.0.1:0, "
            "or tls/192.168.1.10:7447 with the TLS options (repeatable).",
        ),
    ] = None
    tls_cert: Annotated[
        str | None,
        typer.Option(
            "--tls-cert",
            envvar="JOINTBUS_TLS_CERT",
            metavar="FILE",
            show_default=False,
            help="This host's certificate (PEM, signed by the robot's CA): join over mutual TLS "
            "only (tls/ endpoints; see docs/SECURITY.md).",
        ),
    ] = None
    tls_key: Annotated[
        str | None,
        typer.Option(
            "--tls-key",
            envvar="JOINTBUS_TLS_KEY",
            metavar="FILE",
            show_default=False,
            help="The private key of --tls-cert (PEM).",
        ),
    ] = None
    tls_ca: Annotated[
        str | None,
        typer.Option(
            "--tls-ca",
            envvar="JOINTBUS_TLS_CA",
            metavar="FILE",
            show_default=False,
            help="The robot's CA certificate (PEM) every peer must chain to.",
        ),
    ] = None
    access_rules: Annotated[
        str | None,
        typer.Option(
            "--access-rules",
            envvar="JOINTBUS_ACCESS_RULES",
            metavar="FILE",
            show_default=False,
            help="Zenoh access rules for this process (from `jointbus security rules`): what "
            "each certificate name may publish and call. Needs the TLS options.",
        ),
    ] = None

    @property
    def secured(self) -> bool:
        """True when any security option was given: the session is then TLS-only."""
        return any(
            v is not None for v in (self.tls_cert, self.tls_key, self.tls_ca, self.access_rules)
        )

    def zenoh_config(self) -> ZenohConfig:
        """The Zenoh settings these options ask for: the default hub scheme unless told otherwise.

        ``listen`` endpoints replace the hub scheme (the process then reaches others only through
        ``connect``); ``router`` replaces both. ``domain_id`` is the ROS domain (``None``: the
        bus's default, ``ROS_DOMAIN_ID`` else 0; typer already reads the variable into the
        option). ``rmw`` is the middleware (:func:`choose_rmw`). With the security options the
        session is TLS-only
        (:func:`jointbus.cli.bus_security.secure_config`). Raises
        :class:`~jointbus.cli.errors.CliError` for a malformed endpoint or missing TLS files.
        """
        from jointbus.bus import ZenohConfig, ZenohConfigError
        from jointbus.cli.errors import CliError

        choose_rmw(self.rmw)
        connect = tuple(self.connect or ())
        self._note_zenoh_options_on_dds(connect)
        if self.secured:  # on DDS the options cannot apply: say that before checking them
            from jointbus.bus import BusError
            from jointbus.bus.rmw import is_dds, resolve_rmw
            from jointbus.bus.zenoh_security import unsecured_dds_refusal

            try:
                middleware = resolve_rmw(None)
            except BusError as exc:  # RMW_IMPLEMENTATION names a middleware jointbus lacks
                raise CliError(str(exc)) from None
            if is_dds(middleware):
                held = ["TLS certificates"] if self.tls_cert or self.tls_key or self.tls_ca else []
                held += ["access rules"] if self.access_rules else []
                raise CliError(unsecured_dds_refusal(held, middleware))
        try:
            if self.secured:
                from jointbus.cli.bus_security import secure_config

                return secure_config(
                    tls_cert=self.tls_cert,
                    tls_key=self.tls_key,
                    tls_ca=self.tls_ca,
                    access_rules=self.access_rules,
                    connect=connect,
                    router=self.router,
                    listen=self.listen,
                    domain_id=self.domain_id,
                )
            if self.router:
                return ZenohConfig.for_router(
                    self.router, connect=connect, domain_id=self.domain_id
                )
            if self.listen:
                return ZenohConfig(
                    listen=tuple(self.listen), connect=connect, domain_id=self.domain_id
                )
            return ZenohConfig(hub_port=self.hub_port, connect=connect, domain_id=self.domain_id)
        except ZenohConfigError as exc:
            raise CliError(str(exc)) from None

    def _note_zenoh_options_on_dds(self, connect: tuple[str, ...]) -> None:
        """On DDS, say that ``--hub-port`` (another than the default), ``--connect`` /
        ``--router`` / ``--listen`` do nothing: a user's
        ``--router tcp/…`` beside ``--rmw rmw_cyclonedds_cpp`` was ignored without a word
        (trial, 2026-12-07). A note, not a refusal: the variables behind them
        (``JOINTBUS_CONNECT``, …) may be set for the user's Zenoh work."""
        from jointbus.bus import BusError
        from jointbus.bus.rmw import is_dds, resolve_rmw

        given = [
            flag
            for flag, value in (("--hub-port", self.hub_port != DEFAULT_HUB_PORT),
                                ("--connect", connect), ("--router", self.router),
                                ("--listen", self.listen))
            if value
        ]  # fmt: skip
        if not given:
            return
        try:
            middleware = resolve_rmw(None)
        except BusError:
            return  # said where the bus is opened
        if is_dds(middleware):
            from jointbus.cli.errors import note

            note(
                f"note: {', '.join(given)} {'is' if len(given) == 1 else 'are'} Zenoh's and do"
                f"{'es' if len(given) == 1 else ''} nothing on DDS ({middleware}): this command "
                "looks in the DDS domain (--domain-id / ROS_DOMAIN_ID)"
            )

    def open_bus(self) -> Bus:
        """A bus on Zenoh for one CLI command; raises CliError if Zenoh cannot be joined."""
        return open_bus(self.zenoh_config())

    def command_line(self) -> list[str]:
        """The arguments of a child ``jointbus`` command that joins this one (the demo's monitor):
        every option given, by its flag (a repeatable one once per value), as :data:`_CHILD`
        says — most the same; this process's ``--listen`` endpoints become the child's
        ``--connect`` (a fixed port only: ``:0`` cannot be dialled), and ``--access-rules``, which
        this process enforces, is not passed."""
        hints = typing.get_type_hints(BusOptions, include_extras=True)
        args: list[str] = []
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            how = _CHILD.get(field.name, "same")
            if value == field.default or how == "omit":
                continue
            values = value if isinstance(value, list) else [value]
            if how == "connect":
                flag = "--connect"
                values = [v for v in values if not str(v).endswith(":0")]
            else:
                flag = _option_flag(hints[field.name])
            for item in values:
                args += [flag] if item is True else [flag, str(item)]
        return args


#: What :meth:`BusOptions.command_line` gives a child of each field not passed on as it is.
_CHILD: Final = {"listen": "connect", "access_rules": "omit"}


def _option_info(annotation: Any) -> typer.models.OptionInfo:
    """The ``typer.Option`` of an ``Annotated[type, typer.Option(...)]`` annotation."""
    return next(
        m for m in typing.get_args(annotation)[1:] if isinstance(m, typer.models.OptionInfo)
    )


def _option_flag(annotation: Any) -> str:
    """The flag (``--hub-port``) an option annotation declares (typer keeps it as the default)."""
    return str(_option_info(annotation).default)


def _bus_parameters() -> list[inspect.Parameter]:
    """The keyword parameters typer shows for :class:`BusOptions` (see :func:`joins_bus`)."""
    hints = typing.get_type_hints(BusOptions, include_extras=True)
    return [
        inspect.Parameter(
            field.name,
            inspect.Parameter.KEYWORD_ONLY,
            default=field.default,
            annotation=hints[field.name],
        )
        for field in dataclasses.fields(BusOptions)
    ]


#: The options every bus command takes, and their environment variables (``None``: the option
#: has none), in declaration order.
BUS_OPTIONS: Final = tuple(_option_flag(p.annotation) for p in _bus_parameters())
BUS_ENVIRONMENT: Final[tuple[str | None, ...]] = tuple(
    None if (env := _option_info(p.annotation).envvar) is None else str(env)
    for p in _bus_parameters()
)


def joins_bus() -> Callable[[Callable[..., _R]], Callable[..., _R]]:
    """Decorate a command that joins the bus: it receives ``bus_options: BusOptions``.

    typer builds a command's options from its signature; this gives the command's signature the
    fields of :class:`BusOptions` in place of the ``bus_options`` parameter, and collects what
    typer parses back into one :class:`BusOptions`.
    """

    def decorate(command: Callable[..., _R]) -> Callable[..., _R]:
        signature = inspect.signature(command, eval_str=True)
        if "bus_options" not in signature.parameters:
            raise TypeError(f"{command.__qualname__} has no parameter 'bus_options: BusOptions'")
        extra = _bus_parameters()
        names = [p.name for p in extra]
        clash = sorted(set(names) & set(signature.parameters))
        if clash:
            raise TypeError(f"{command.__qualname__}: parameters {clash} are bus options")
        own = [p for p in signature.parameters.values() if p.name != "bus_options"]

        @functools.wraps(command)
        def run(*args: Any, **kwargs: Any) -> _R:
            chosen = {name: kwargs.pop(name) for name in names if name in kwargs}
            return command(*args, bus_options=BusOptions(**chosen), **kwargs)

        parameters = sorted([*own, *extra], key=lambda p: p.kind)  # stable: keeps each order
        run.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=parameters
        )
        run.__annotations__ = {p.name: p.annotation for p in parameters}
        return run

    return decorate


def choose_rmw(rmw: str | None) -> None:
    """Make ``rmw`` this process's middleware, as ``RMW_IMPLEMENTATION`` makes it a ROS 2
    process's: every bus and stack the command opens — and every process it starts — follows the
    variable (:mod:`jointbus.bus.rmw`), so a DDS name puts them all on DDS in the same ROS domain
    (the Zenoh options then do not apply). ``None`` leaves the environment as it is."""
    if rmw is None:
        return
    from jointbus.bus import BusError
    from jointbus.bus.rmw import RMW_ENV, check_rmw
    from jointbus.cli.errors import CliError

    try:
        os.environ[RMW_ENV] = check_rmw(rmw.strip())
    except BusError as exc:
        raise CliError(f"--rmw: {exc}") from None


def open_bus(config: ZenohConfig) -> Bus:
    """A bus for one CLI command, on Zenoh with ``config`` or on DDS (``RMW_IMPLEMENTATION``);
    raises CliError if the network cannot be joined."""
    from jointbus.bus import Bus, DdsConfigError, ZenohConfigError
    from jointbus.cli.errors import CliError

    try:
        return Bus(name="jointbus-cli", zenoh=config)
    except ZenohConfigError as exc:
        raise CliError(f"cannot join the Zenoh network: {exc}") from None
    except DdsConfigError as exc:
        raise CliError(f"cannot join the DDS domain: {exc}") from None


def cli_node_name() -> str:
    """The hidden node that owns this CLI process's endpoints (``_jointbus_cli_<pid>``; a leading
    ``_`` hides a node, as in ROS 2)."""
    return f"_jointbus_cli_{os.getpid()}"


def looked_on(bus: Bus) -> str:
    """``looked on hub port 7447, domain 0`` (or the router / endpoints): every "nothing there"
    error says where it looked, so a wrong port or domain is seen at once."""
    transport = bus.transport
    return f"looked on {transport.where}" if transport is not None else "looked in process"


def where_to_look(bus: Bus) -> str:
    """The options that choose where a command looks, for a "nothing there" error: Zenoh's
    (hub port, connect, router) or, on DDS, the domain — a user's ``topic list --rmw
    rmw_cyclonedds_cpp`` that found nothing was pointed at the Zenoh options, which do nothing
    on DDS (trial, 2026-12-07)."""
    if bus.transport is not None and bus.zenoh is None:
        return "see --domain-id / ROS_DOMAIN_ID; DDS is searched on this host's loopback"
    return "see --hub-port / JOINTBUS_HUB_PORT, --connect, --router"


def refuse_denied(bus: Bus, publisher: Publisher[Any], waited_s: float) -> None:
    """:class:`~jointbus.cli.errors.CliError` when ``publisher`` is denied: a subscriber of its
    topic is announced but Zenoh routes nothing to it (a TLS-only robot's access rules,
    ``docs/SECURITY.md``). Called once a command has waited ``waited_s`` for a match in vain, so
    that it says *denied* rather than "nobody subscribes" or "publishing anyway"."""
    from jointbus.bus.zenoh_transport import ROUTE_SETTLE_S
    from jointbus.cli.errors import CliError

    transport = bus.zenoh
    if transport is None or not transport.secured or waited_s < ROUTE_SETTLE_S / 3:
        # Only a TLS session can be denied by certificate; and a subscriber's declaration can
        # follow its graph token by up to ≈ 1 s: a shorter wait proves nothing (the publisher's
        # own PublicationDeniedEvent still comes, as a warning, once it has published).
        return
    denial = transport.publication_denied(publisher, waited_s)
    if denial is not None:
        raise CliError(f"{denial.describe()}: nothing sent")


def joined_line(bus: Bus) -> str | None:
    """``jointbus: Zenoh: hub port 7447 is taken by a Zenoh router …: joined it, …`` — where the
    bus joined, for a long-running command's first lines (``demo``, ``bridge``, ``control``):
    a user who meant to start a robot of their own sees at once that it joined another one's
    router or hub. ``None`` for a bus without Zenoh."""
    transport = bus.zenoh
    return None if transport is None else f"jointbus: Zenoh: {transport.joined()}"


__all__ = [
    "BUS_ENVIRONMENT",
    "BUS_OPTIONS",
    "DEFAULT_HUB_PORT",
    "DEFAULT_NAMESPACE",
    "BusOptions",
    "choose_rmw",
    "cli_node_name",
    "joined_line",
    "joins_bus",
    "looked_on",
    "open_bus",
    "refuse_denied",
]
