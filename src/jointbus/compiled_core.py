"""Loading the optional compiled cores: the C extensions ``setup.py`` builds when a C compiler is
present (the CDR codec's, the drive's limit guard, the hb50 control step's and messages').

Where it sits: the bottom layer, beside :mod:`jointbus.errors`; every module with a compiled core
loads it here, once, at import. Each keeps a pure-Python reference that its tests hold the core to.

Why one place: ``JOINTBUS_NO_ACCEL=1`` must switch every core off the same way (one copy of this
check per module had drifted: the limit guard took ``JOINTBUS_NO_ACCEL=0`` as "off", the others
as "on").
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

__all__ = ["disabled", "load"]


def disabled() -> bool:
    """``JOINTBUS_NO_ACCEL`` is set to anything but empty or ``0``: run the Python references."""
    return os.environ.get("JOINTBUS_NO_ACCEL", "") not in ("", "0")


def load(module: str) -> ModuleType | None:
    """The compiled core ``module`` (a dotted name), or None when it was not built or
    :func:`disabled` says so."""
    if disabled():
        return None
    try:
        return importlib.import_module(module)
    except ImportError:
        return None
