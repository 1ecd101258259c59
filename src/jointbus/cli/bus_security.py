"""The security options every bus-joining command takes: ``--tls-cert``, ``--tls-key``,
``--tls-ca``, ``--access-rules`` (and ``--listen`` where a command had none).

Where it sits: :mod:`jointbus.cli`, applied by :mod:`jointbus.cli.main` to every command it
registers that has the shared bus options (``--hub-port``, ``--connect``, ``--router``,
``--domain-id``; :mod:`jointbus.cli.topic`), and read by :func:`jointbus.cli.topic.zenoh_config`,
which turns them into a TLS-only :class:`~jointbus.bus.ZenohConfig`
(:func:`jointbus.bus.zenoh_security.secure`).

Why a wrapper and not one more parameter in each of ~30 command signatures: the options are the
same everywhere and must never be forgotten by a new command; :func:`with_bus_security` adds them
to the command's signature (typer reads ``__signature__``), takes their values out before the
command runs and holds them for :func:`current` while it runs. A command keeps its own
``--listen`` where it has one. This module imports nothing heavy: ``jointbus estop`` starts fast.

Each option has an environment variable (``JOINTBUS_TLS_CERT``, ``JOINTBUS_TLS_KEY``,
``JOINTBUS_TLS_CA``, ``JOINTBUS_ACCESS_RULES``), so a host's identity is set once in its shell.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Final, TypeVar

import typer

if TYPE_CHECKING:
    from jointbus.bus import ZenohConfig

__all__ = [
    "SECURITY_ENVIRONMENT",
    "SECURITY_OPTIONS",
    "BusSecurity",
    "child_args",
    "current",
    "secure_config",
    "with_bus_security",
]

#: The options added to every bus-joining command, and their environment variables.
SECURITY_OPTIONS: Final = ("--tls-cert", "--tls-key", "--tls-ca", "--access-rules")
SECURITY_ENVIRONMENT: Final = (
    "JOINTBUS_TLS_CERT",
    "JOINTBUS_TLS_KEY",
    "JOINTBUS_TLS_CA",
    "JOINTBUS_ACCESS_RULES",
)
_F = TypeVar("_F", bound=Callable[..., Any])


@dataclass(frozen=True, slots=True)
class BusSecurity:
    """The security options of the running command (paths as given; checked when the bus is
    configured). ``listen``: the endpoints of the added ``--listen`` (None when the command has
    its own, or none was given)."""

    tls_cert: str | None = None
    tls_key: str | None = None
    tls_ca: str | None = None
    access_rules: str | None = None
    listen: tuple[str, ...] | None = None

    @property
    def any_tls(self) -> bool:
        """True if any TLS option was given."""
        return any(v is not None for v in (self.tls_cert, self.tls_key, self.tls_ca))


_CURRENT: contextvars.ContextVar[BusSecurity | None] = contextvars.ContextVar(
    "jointbus_bus_security", default=None
)


def current() -> BusSecurity:
    """The security options of the command running now (none given: all None)."""
    return _CURRENT.get() or BusSecurity()


def _option(flag: str, envvar: str, help_text: str) -> Any:
    return Annotated[
        str | None,
        typer.Option(flag, envvar=envvar, metavar="FILE", show_default=False, help=help_text),
    ]


_ADDED: Final = {
    "tls_cert": _option(
        "--tls-cert",
        "JOINTBUS_TLS_CERT",
        "This host's certificate (PEM, signed by the robot's CA): join over mutual TLS only "
        "(tls/ endpoints; see docs/SECURITY.md).",
    ),
    "tls_key": _option("--tls-key", "JOINTBUS_TLS_KEY", "The private key of --tls-cert (PEM)."),
    "tls_ca": _option(
        "--tls-ca", "JOINTBUS_TLS_CA", "The robot's CA certificate (PEM) every peer must chain to."
    ),
    "access_rules": _option(
        "--access-rules",
        "JOINTBUS_ACCESS_RULES",
        "Zenoh access rules for this process (from `jointbus security rules`): what each "
        "certificate name may publish and call. Needs the TLS options.",
    ),
}
_LISTEN: Final = Annotated[
    list[str] | None,
    typer.Option(
        "--listen",
        help="Zenoh endpoint to listen on instead of the hub scheme, e.g. tls/192.168.1.10:7447 "
        "(repeatable).",
    ),
]


def with_bus_security(command: _F) -> _F:
    """``command`` with the security options added, if it has the shared bus options; else
    ``command`` itself."""
    signature = inspect.signature(command, eval_str=True)
    if "hub_port" not in signature.parameters or hasattr(command, "__bus_security__"):
        return command
    added = dict(_ADDED)
    own_listen = "listen" in signature.parameters
    if not own_listen:
        added["listen"] = _LISTEN
    parameters = [
        *signature.parameters.values(),
        *(
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=kind)
            for name, kind in added.items()
        ),
    ]

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        values = {name: kwargs.pop(name, None) for name in added}
        listen = values.pop("listen", None)
        settings = BusSecurity(**values, listen=tuple(listen) if listen else None)
        token = _CURRENT.set(settings)
        try:
            return command(*args, **kwargs)
        finally:
            _CURRENT.reset(token)

    wrapper.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {**getattr(command, "__annotations__", {}), **added}
    wrapper.__bus_security__ = True  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


def secure_config(
    security: BusSecurity,
    *,
    connect: Sequence[str] | None,
    router: str | None,
    listen: Sequence[str] | None,
    domain_id: int | None,
) -> ZenohConfig:
    """The TLS-only Zenoh settings of a command given security options (raises
    ZenohConfigError naming what is missing or wrong).

    With TLS the loopback hub scheme is not used (it listens on plain ``tcp/127.0.0.1``, an
    unauthenticated way in): the command listens on its ``--listen`` endpoints only — none
    at all when it only joins others with ``--connect`` (Zenoh is then given an empty list and
    listens nowhere) — and every endpoint must be ``tls/``.
    """
    from jointbus.bus import ZenohConfig, ZenohConfigError
    from jointbus.bus.zenoh_security import ZenohAccessControl, ZenohTls, secure

    given = dict(
        zip(
            SECURITY_OPTIONS[:3],
            (security.tls_cert, security.tls_key, security.tls_ca),
            strict=True,
        )
    )
    missing = [flag for flag, value in given.items() if value is None]
    if missing:
        raise ZenohConfigError(
            f"{' and '.join(missing)} missing: mutual TLS needs this host's certificate "
            "(--tls-cert), its key (--tls-key) and the robot's CA (--tls-ca)"
            + (" — and --access-rules needs them too" if security.access_rules else "")
        )
    if not (listen or connect or router):
        raise ZenohConfigError(
            "with TLS, give --listen tls/ADDRESS:PORT (where this process is reached: the "
            "robot) and/or --connect tls/ADDRESS:PORT (the robot it joins); the loopback hub "
            "scheme is plain tcp and is not used with TLS"
        )
    assert security.tls_ca and security.tls_cert and security.tls_key
    tls = ZenohTls(ca=security.tls_ca, certificate=security.tls_cert, private_key=security.tls_key)
    rules = (
        None
        if security.access_rules is None
        else ZenohAccessControl.from_file(security.access_rules)
    )
    if router:
        base = ZenohConfig.for_router(router, connect=tuple(connect or ()), domain_id=domain_id)
    else:
        base = ZenohConfig(
            listen=tuple(listen or ()), connect=tuple(connect or ()), domain_id=domain_id
        )
    return secure(base, tls, rules)


def child_args(config: ZenohConfig | None) -> list[str]:
    """The options a child ``jointbus`` process needs to join the running command over TLS: the
    TLS files, and ``--connect`` to each of its ``tls/`` listen endpoints with a fixed port
    (empty without TLS)."""
    security = current()
    if not security.any_tls or config is None:
        return []
    args: list[str] = []
    for flag, value in zip(
        SECURITY_OPTIONS[:3], (security.tls_cert, security.tls_key, security.tls_ca), strict=True
    ):
        args += [flag, str(value)]
    for endpoint in config.listen or ():
        if not endpoint.endswith(":0"):
            args += ["--connect", endpoint]
    return args
