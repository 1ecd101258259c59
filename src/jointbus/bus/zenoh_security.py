"""Zenoh mutual TLS and access control for a bus: the config entries, built from plain settings.

Where it sits: :mod:`jointbus.bus`, beside :mod:`jointbus.bus.zenoh_config`. It adds nothing to the
session code: :class:`ZenohTls` and :class:`ZenohAccessControl` only produce the
``(key, json5 value)`` pairs that :class:`~jointbus.bus.ZenohConfig` passes to
``zenoh.Config.insert_json5`` through its ``options``, and :func:`secure` returns a config with
them added. Zenoh (≥ 1.0) does the TLS handshake, the certificate checks and the filtering; this
module only spells its configuration (keys under ``transport/link/tls`` and ``access_control``)
correctly and checks the inputs early, with errors that name the setting.

Why it matters: by default every jointbus endpoint listens on ``127.0.0.1`` only, so nothing off
the host can reach it. Going multi-host means listening on a robot network interface, and from then
on anyone on that network could publish ``/hb50/joint_command``. Mutual TLS makes every link
authenticate both ends with certificates signed by the robot's CA (a peer without one cannot
connect at all), and access-control rules then decide, per certificate common name, who may put
on which key — e.g. only the named controller hosts may publish commands (``docs/SECURITY.md``,
``examples/zenoh_acl.json5``).

Use::

    tls = ZenohTls(ca="ca.pem", certificate="robot.pem", private_key="robot.key")
    config = secure(ZenohConfig(listen=("tls/192.168.1.10:7447",)), tls,
                    ZenohAccessControl.from_file("zenoh_acl.json5"))
    bus = Bus(zenoh=config)
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

from jointbus.bus.errors import ZenohConfigError
from jointbus.bus.zenoh_config import ZenohConfig

#: The ``insert_json5`` key prefix of Zenoh's TLS link settings.
TLS_PREFIX: Final = "transport/link/tls"
#: The ``insert_json5`` key of Zenoh's access-control block.
ACCESS_CONTROL_KEY: Final = "access_control"


def _existing_file(setting: str, value: str | Path) -> str:
    path = Path(value)
    if not path.is_file():
        raise ZenohConfigError(f"{setting} {str(value)!r} is not a readable file")
    return str(path.resolve())


@dataclass(frozen=True, slots=True)
class ZenohTls:
    """A session's TLS identity: the CA that signs every peer, its own certificate and key.

    ``ca``: PEM of the certificate authority (root) that peers' certificates must chain to;
    ``certificate`` / ``private_key``: this host's PEM certificate chain and its private key (PKCS#8
    or SEC1), used both when listening and when connecting. ``mutual``: require the *other* end to
    present a certificate too (mutual TLS, the point of this module; default on).
    ``verify_name``: check that the listener's certificate names the address dialled (its
    ``subjectAltName`` must hold the IP or DNS name of the ``tls/...`` endpoint).
    """

    ca: str | Path
    certificate: str | Path
    private_key: str | Path
    mutual: bool = True
    verify_name: bool = True

    def __post_init__(self) -> None:
        for flag in ("mutual", "verify_name"):
            if type(getattr(self, flag)) is not bool:
                value = getattr(self, flag)
                raise ZenohConfigError(f"ZenohTls.{flag} must be a bool, got {value!r}")
        object.__setattr__(self, "ca", _existing_file("TLS ca", self.ca))
        object.__setattr__(self, "certificate", _existing_file("TLS certificate", self.certificate))
        object.__setattr__(self, "private_key", _existing_file("TLS private_key", self.private_key))

    def json5_items(self) -> list[tuple[str, str]]:
        """The ``insert_json5`` pairs (Zenoh 1.x ``transport/link/tls/...`` keys)."""
        return [
            (f"{TLS_PREFIX}/root_ca_certificate", json.dumps(str(self.ca))),
            (f"{TLS_PREFIX}/listen_certificate", json.dumps(str(self.certificate))),
            (f"{TLS_PREFIX}/listen_private_key", json.dumps(str(self.private_key))),
            (f"{TLS_PREFIX}/connect_certificate", json.dumps(str(self.certificate))),
            (f"{TLS_PREFIX}/connect_private_key", json.dumps(str(self.private_key))),
            (f"{TLS_PREFIX}/enable_mtls", json.dumps(self.mutual)),
            (f"{TLS_PREFIX}/verify_name_on_connect", json.dumps(self.verify_name)),
        ]


def _strip_comments(text: str) -> str:
    """``text`` without leading blank lines and ``//`` comment lines (for the shape check)."""
    lines = text.strip().splitlines()
    while lines and (not lines[0].strip() or lines[0].lstrip().startswith("//")):
        lines.pop(0)
    return "\n".join(lines).strip()


@dataclass(frozen=True, slots=True)
class ZenohAccessControl:
    """Zenoh access-control rules (the ``access_control`` block of a Zenoh 1.x config).

    ``text`` is the block as JSON5 — an object with ``enabled``, ``default_permission``, ``rules``,
    ``subjects`` and ``policies`` (see ``examples/zenoh_acl.json5``). It is passed to Zenoh
    verbatim, and Zenoh validates it when the session opens (a bad block makes opening fail with
    :class:`~jointbus.bus.ZenohConfigError`).
    """

    text: str

    def __post_init__(self) -> None:
        if not isinstance(self.text, str) or not _strip_comments(self.text).startswith("{"):
            raise ZenohConfigError(
                "access control must be a JSON5 object ({ enabled, default_permission, rules, "
                f"subjects, policies }}), got {str(self.text)[:60]!r}"
            )

    @classmethod
    def from_file(cls, path: str | Path) -> ZenohAccessControl:
        """Read the block from a JSON5 file (comments allowed; the file holds the block itself,
        as ``examples/zenoh_acl.json5`` does)."""
        return cls(Path(_existing_file("access control file", path)).read_text(encoding="utf-8"))

    def json5_items(self) -> list[tuple[str, str]]:
        """The ``insert_json5`` pair."""
        return [(ACCESS_CONTROL_KEY, self.text)]


def secure(
    config: ZenohConfig,
    tls: ZenohTls | None = None,
    access_control: ZenohAccessControl | None = None,
) -> ZenohConfig:
    """``config`` with TLS and/or access-control entries appended to its ``options``.

    With ``tls``, every ``listen`` / ``connect`` / router endpoint must be a ``tls/`` one, and
    ``listen`` must be given: a ``tcp/`` endpoint left beside TLS — including the default
    loopback scheme's ``tcp/127.0.0.1`` hub, which ``listen=None`` means — would be an
    unauthenticated way in, so it is refused here (ZenohConfigError) rather than silently kept.
    ``listen=()`` listens nowhere (a host that only dials the robot; ``docs/SECURITY.md`` §1).
    ``access_control`` is the block Zenoh enforces (:mod:`jointbus.bus.access_roles` makes it).
    """
    options = list(config.options)
    if tls is not None:
        endpoints = (*(config.listen or ()), *config.connect)
        if config.router is not None:
            endpoints = (*endpoints, config.router)
        plain = [e for e in endpoints if not e.startswith("tls/")]
        if plain or config.listen is None:
            raise ZenohConfigError(
                "with TLS every listen/connect endpoint must be tls/..., and listen must be given "
                f"explicitly; got listen={config.listen}, connect={config.connect}, "
                f"router={config.router}"
            )
        options.extend(tls.json5_items())
    if access_control is not None:
        options.extend(access_control.json5_items())
    return replace(config, options=tuple(options))


def security_of(config: ZenohConfig) -> list[str]:
    """What of jointbus's security ``config`` holds: ``"TLS certificates"``, ``"access rules"``
    (empty: none).
    A bus put on DDS by ``RMW_IMPLEMENTATION`` refuses such a config (:meth:`Bus.attach`)."""
    keys = {key for key, _ in config.options}
    held = []
    if any(key.startswith(TLS_PREFIX) for key in keys):
        held.append("TLS certificates")
    if ACCESS_CONTROL_KEY in keys:
        held.append("access rules")
    return held


def unsecured_dds_refusal(held: list[str], middleware: str) -> str:
    """Why a bus (or a command) given jointbus's security (``held``: :func:`security_of`'s
    names) refuses to join DDS (``middleware``): one text for :meth:`Bus.attach` and the CLI,
    which says it before checking the TLS options themselves — a user given an error about
    the TLS endpoints first fixed those only to be told DDS cannot use them."""
    return (
        f"the {' and '.join(held)} given secure only the Zenoh network, but the "
        f"middleware is {middleware} (RMW_IMPLEMENTATION / --rmw): jointbus's DDS "
        "has no DDS Security (SROS 2), so every participant that reaches the domain "
        "could read and command the robot. Refusing to join DDS unsecured: for a "
        "TLS-only robot use Zenoh (rmw_zenoh_cpp, the default); to stay on DDS, "
        "leave out the security options — DDS is then loopback-only by default "
        "(docs/SECURITY.md)"
    )


__all__ = [
    "ACCESS_CONTROL_KEY",
    "TLS_PREFIX",
    "ZenohAccessControl",
    "ZenohTls",
    "secure",
    "security_of",
    "unsecured_dds_refusal",
]
