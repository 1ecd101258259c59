"""MIT-mode ("impedance mode") CAN actuators over python-can.

Where it sits: :mod:`jointbus.drivers`. The wire side lives here —

- :mod:`.mit_protocol`: the 8-byte command / 6- or 8-byte reply / special-frame format (pure);
- :mod:`.motor_models`: per-model wire ranges, as data (``motor_models.yaml``);
- :mod:`.motor_link`: the host side, N motors on one ``can.BusABC``, one exchange per cycle;
- :mod:`.firmware_twin`: a simulated motor firmware that answers on python-can's virtual bus,
  used by tests and benchmarks (import it explicitly; it pulls in the simulator physics).

The ``can://`` :class:`ActuatorArray` driver is built on :class:`MotorLink`.
"""

from jointbus.drivers.can.mit_protocol import (
    FrameError,
    MitCommand,
    MitProtocolError,
    MitReply,
    MotorRanges,
    OutOfRangeError,
    ReplyLayout,
    ReservedFrameError,
    SpecialFrame,
)
from jointbus.drivers.can.motor_link import (
    BusErrorFrame,
    BusOffError,
    CommandShapeError,
    LateReply,
    LinkEvent,
    LinkFeedback,
    MotorFeedback,
    MotorLink,
    MotorLinkError,
    MotorSpec,
    MotorSpecError,
    ReplyTimeout,
    UnexpectedFrame,
    UnknownMotorError,
)
from jointbus.drivers.can.motor_models import (
    MotorModel,
    MotorModelCatalog,
    MotorModelDataError,
    MotorModelError,
    UnknownMotorModelError,
    bundled_motor_models,
    load_motor_models,
)

__all__ = [
    "BusErrorFrame",
    "BusOffError",
    "CommandShapeError",
    "FrameError",
    "LateReply",
    "LinkEvent",
    "LinkFeedback",
    "MitCommand",
    "MitProtocolError",
    "MitReply",
    "MotorFeedback",
    "MotorLink",
    "MotorLinkError",
    "MotorModel",
    "MotorModelCatalog",
    "MotorModelDataError",
    "MotorModelError",
    "MotorRanges",
    "MotorSpec",
    "MotorSpecError",
    "OutOfRangeError",
    "ReplyLayout",
    "ReplyTimeout",
    "ReservedFrameError",
    "SpecialFrame",
    "UnexpectedFrame",
    "UnknownMotorError",
    "UnknownMotorModelError",
    "bundled_motor_models",
    "load_motor_models",
]
