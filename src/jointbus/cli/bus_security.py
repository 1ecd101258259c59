"""The security options of every bus command — ``--tls-cert``, ``--tls-key``, ``--tls-ca``,
``--access-rules`` — turned into a TLS-only Zenoh configuration.

Where it sits: :mod:`jointbus.cli`. The options are fields of
:class:`jointbus.cli.options.BusOptions` (declared once there, so every command that joins the bus
takes them, each with its environment variable: ``JOINTBUS_TLS_CERT``, ``JOINTBUS_TLS_KEY``,
``JOINTBUS_TLS_CA``, ``JOINTBUS_ACCESS_RULES``); :meth:`BusOptions.zenoh_config
<jointbus.cli.options.BusOptions.zenoh_config>` calls :func:`secure_config` when any of them is
given. This module imports nothing heavy at module level.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from jointbus.cli.options import BUS_ENVIRONMENT, BUS_OPTIONS

if TYPE_CHECKING:
    from jointbus.bus import ZenohConfig

__all__ = ["SECURITY_ENVIRONMENT", "SECURITY_OPTIONS", "secure_config"]

#: The security options among the bus options, and their environment variables.
SECURITY_OPTIONS: Final = tuple(
    flag for flag in BUS_OPTIONS if flag.startswith(("--tls-", "--access-"))
)
SECURITY_ENVIRONMENT: Final = tuple(
    env
    for flag, env in zip(BUS_OPTIONS, BUS_ENVIRONMENT, strict=True)
    if flag in SECURITY_OPTIONS
)


def secure_config(
    *,
    tls_cert: str | None,
    tls_key: str | None,
    tls_ca: str | None,
    access_rules: str | None,
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

    given = dict(zip(SECURITY_OPTIONS[:3], (tls_cert, tls_key, tls_ca), strict=True))
    missing = [flag for flag, value in given.items() if value is None]
    if missing:
        raise ZenohConfigError(
            f"{' and '.join(missing)} missing: mutual TLS needs this host's certificate "
            "(--tls-cert), its key (--tls-key) and the robot's CA (--tls-ca)"
            + (" — and --access-rules needs them too" if access_rules else "")
        )
    if not (listen or connect or router):
        raise ZenohConfigError(
            "with TLS, give --listen tls/ADDRESS:PORT (where this process is reached: the "
            "robot) and/or --connect tls/ADDRESS:PORT (the robot it joins); the loopback hub "
            "scheme is plain tcp and is not used with TLS"
        )
    assert tls_ca and tls_cert and tls_key
    tls = ZenohTls(ca=tls_ca, certificate=tls_cert, private_key=tls_key)
    rules = None if access_rules is None else ZenohAccessControl.from_file(access_rules)
    if router:
        base = ZenohConfig.for_router(router, connect=tuple(connect or ()), domain_id=domain_id)
    else:
        base = ZenohConfig(
            listen=tuple(listen or ()), connect=tuple(connect or ()), domain_id=domain_id
        )
    return secure(base, tls, rules)
