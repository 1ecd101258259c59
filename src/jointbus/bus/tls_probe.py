"""Why a TLS link did not come up: one handshake with the same certificates, to say so.

Where it sits: :mod:`jointbus.bus`, called by :func:`jointbus.bus.zenoh_transport.open_session`
when a session with TLS settings (:mod:`jointbus.bus.zenoh_security`) got no link to any of its
``connect`` endpoints in time.

Why: Zenoh retries a refused TLS link in the background and tells the application nothing, so a
host whose certificate the robot does not accept (another CA, none at all) or that does not trust
the robot's saw a bus that opened "fine" and received nothing. Python's :mod:`ssl` repeats the
handshake Zenoh made, with the same CA, certificate and key, and reads the outcome: the robot's
TLS alert (it refused this host's certificate), a verification error (this host refuses the
robot's certificate, or its address is not in it), or a connection refused (nothing listens there:
not a TLS problem, and the session keeps waiting for it as before). The probe sends no Zenoh
bytes; the robot's Zenoh sees one TLS connection close.
"""

from __future__ import annotations

import socket
import ssl
from dataclasses import dataclass
from typing import Final

__all__ = ["TlsFiles", "TlsRefusal", "probe", "speaks_tls"]

#: How long the probe waits for the TCP connection, the handshake and a refusal alert (s).
PROBE_TIMEOUT_S: Final = 2.0
#: How long :func:`speaks_tls` waits for an answer to its hello (s): a TLS listener answers in
#: milliseconds, while a plain Zenoh listener reads the hello's first bytes as the length of a
#: 5.6 kB frame and waits for the rest — silence is the answer of a listener that is not TLS.
HELLO_TIMEOUT_S: Final = 0.5


@dataclass(frozen=True, slots=True)
class TlsFiles:
    """The PEM files of a TLS session: the CA, this host's certificate and its key."""

    ca: str
    certificate: str
    private_key: str


@dataclass(frozen=True, slots=True)
class TlsRefusal:
    """A refused TLS link: ``endpoint`` and ``reason`` (which side refused, and why)."""

    endpoint: str
    reason: str

    def describe(self) -> str:
        """One line for an error message."""
        return f"the TLS link to {self.endpoint} was refused: {self.reason}"


def _address(endpoint: str) -> tuple[str, int] | None:
    address = endpoint.split("/", 1)[-1].split("#", 1)[0].split("?", 1)[0]
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        return None
    return host.strip("[]"), int(port)


def probe(endpoint: str, files: TlsFiles, verify_name: bool = True) -> TlsRefusal | None:
    """Handshake with ``endpoint`` (``tls/HOST:PORT``) as Zenoh would; the refusal, or None if
    the handshake is accepted or nothing answers (no listener: not a refusal)."""
    address = _address(endpoint)
    if address is None:
        return None
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = verify_name
    try:
        context.load_verify_locations(files.ca)
        context.load_cert_chain(files.certificate, files.private_key)
    except (OSError, ssl.SSLError) as exc:
        return TlsRefusal(endpoint, f"this host's TLS files cannot be loaded: {exc}")
    try:
        with (
            socket.create_connection(address, timeout=PROBE_TIMEOUT_S) as raw,
            context.wrap_socket(raw, server_hostname=address[0]) as tls,
        ):
            # TLS 1.3: a server refusing the client's certificate says so after the handshake.
            tls.settimeout(0.5)
            try:
                closed = tls.recv(1) == b""
            except TimeoutError:
                return None  # accepted: the listener waits for Zenoh's first message
            if closed:
                return TlsRefusal(endpoint, "the listener closed the link after the handshake")
    except ssl.SSLCertVerificationError as exc:  # before SSLError: it is one
        return TlsRefusal(
            endpoint,
            f"this host does not accept the listener's certificate ({exc.verify_message}): is it "
            "signed by --tls-ca, and does its subjectAltName hold the address dialled?",
        )
    except ssl.SSLError as exc:
        alert = (exc.reason or str(exc)).lower().replace("_", " ")
        return TlsRefusal(
            endpoint,
            f"the listener refused this host's certificate (TLS alert: {alert}): is it signed by "
            "the listener's CA?",
        )
    except (ConnectionRefusedError, TimeoutError, socket.gaierror):
        return None  # nothing listens there (yet)
    except OSError as exc:
        if "certificate" in str(exc).lower():
            return TlsRefusal(endpoint, f"the listener closed the handshake: {exc}")
        return None
    return None


def speaks_tls(endpoint: str) -> bool:
    """True when ``endpoint`` (``tcp/`` or ``tls/HOST:PORT``) answers a TLS handshake: a TLS-only
    listener that a session *without* certificates got no link to (Zenoh tells it nothing).
    Verifies nothing and offers no certificate: a server hello, or a TLS alert asking for a
    certificate, is a TLS listener; a closed connection or non-TLS bytes (a plain Zenoh ``tcp/``
    listener drops a TLS hello), no answer or no listener is not."""
    address = _address(endpoint)
    if address is None:
        return False
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        with (
            socket.create_connection(address, timeout=HELLO_TIMEOUT_S) as raw,
            context.wrap_socket(raw, server_hostname=address[0]),
        ):
            return True  # the handshake completed: a TLS listener (it would refuse us later)
    except ssl.SSLError as exc:
        reason = (exc.reason or "").upper()
        # WRONG_VERSION_NUMBER / UNEXPECTED_EOF: bytes that are not TLS, or a closed connection.
        return bool(reason) and "VERSION" not in reason and "EOF" not in reason
    except OSError:
        return False
