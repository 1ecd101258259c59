"""Which ROS 2 middleware a bus speaks: rmw_zenoh's wire, or DDS's, chosen as ROS 2 users choose.

Where it sits: the bottom of :mod:`jointbus.bus`, read by :class:`jointbus.bus.Bus` and the CLI's
``--rmw`` option. Plain functions: no transport is loaded here.

A ROS 2 user picks the middleware of every process with ``RMW_IMPLEMENTATION``; jointbus reads the
same variable, so a machine set up for Cyclone DDS or Fast DDS needs no other setting:

- ``rmw_zenoh_cpp`` — or the variable unset — keeps jointbus's Zenoh transport
  (:mod:`jointbus.bus.zenoh_transport`, rmw_zenoh's keys, tokens and attachment);
- ``rmw_cyclonedds_cpp`` and ``rmw_fastrtps_cpp`` (``rmw_fastrtps_dynamic_cpp``) put the bus on DDS
  (:mod:`jointbus.bus.dds_transport`): ROS 2's DDS conventions, so both meet jointbus on the same
  RTPS wire. jointbus's DDS is Cyclone DDS in either case; the name says what the *other* side runs
  and is shown where the bus says where it looked.

Any other name (``rmw_connextdds``, ``rmw_gurumdds_cpp``, a typo) is refused with the list of the
supported ones, rather than silently falling back to Zenoh and finding nobody.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Final

from jointbus.bus.errors import BusError

#: Environment variable ROS 2 reads the middleware from.
RMW_ENV: Final = "RMW_IMPLEMENTATION"
#: rmw_zenoh: jointbus's Zenoh transport.
ZENOH_RMW: Final = "rmw_zenoh_cpp"
#: Cyclone DDS's rmw: jointbus's DDS transport.
CYCLONEDDS_RMW: Final = "rmw_cyclonedds_cpp"
#: Fast DDS's rmws: the same RTPS wire, so jointbus's DDS transport too.
FASTRTPS_RMWS: Final = ("rmw_fastrtps_cpp", "rmw_fastrtps_dynamic_cpp")
#: Every middleware name jointbus accepts that puts the bus on DDS.
DDS_RMWS: Final = (CYCLONEDDS_RMW, *FASTRTPS_RMWS)
#: Every middleware name jointbus accepts.
SUPPORTED_RMWS: Final = (ZENOH_RMW, *DDS_RMWS)


def check_rmw(name: object) -> str:
    """Return ``name`` if jointbus speaks that middleware, else raise BusError naming them."""
    if type(name) is not str or name not in SUPPORTED_RMWS:
        raise BusError(
            f"middleware {name!r} is not supported; expected one of {', '.join(SUPPORTED_RMWS)} "
            f"(the values of {RMW_ENV} jointbus speaks)"
        )
    return name


def rmw_from_env(environ: Mapping[str, str] | None = None) -> str | None:
    """The middleware ``RMW_IMPLEMENTATION`` names (None when unset or empty); BusError when it
    names one jointbus does not speak."""
    raw = (os.environ if environ is None else environ).get(RMW_ENV, "").strip()
    if not raw:
        return None
    try:
        return check_rmw(raw)
    except BusError as exc:
        raise BusError(f"{RMW_ENV}={raw!r}: {exc}") from None


def resolve_rmw(explicit: str | None, environ: Mapping[str, str] | None = None) -> str:
    """The middleware a bus uses: ``explicit`` when given, else ``RMW_IMPLEMENTATION``, else
    rmw_zenoh (jointbus's default)."""
    if explicit is not None:
        return check_rmw(explicit)
    return rmw_from_env(environ) or ZENOH_RMW


def is_dds(name: str) -> bool:
    """True when middleware ``name`` puts the bus on DDS."""
    return name in DDS_RMWS


__all__ = [
    "CYCLONEDDS_RMW",
    "DDS_RMWS",
    "FASTRTPS_RMWS",
    "RMW_ENV",
    "SUPPORTED_RMWS",
    "ZENOH_RMW",
    "check_rmw",
    "is_dds",
    "resolve_rmw",
    "rmw_from_env",
]
