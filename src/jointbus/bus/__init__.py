"""jointbus.bus — topics with QoS, the in-process transport and the Zenoh transport.

Where it sits: above :mod:`jointbus.messages`, below :mod:`jointbus.runtime` (nodes, heartbeats and
the rate loop sit on a :class:`Bus`). Start with :class:`Bus`, :meth:`Bus.publisher`,
:meth:`Bus.subscribe`, :meth:`Bus.serve` / :meth:`Bus.client` (request/reply) and the profiles
:data:`MAB_RT`, :data:`RELIABLE`, :data:`LATCHED`, and :data:`SUBSCRIPTION_DEFAULT` (what a
subscription that names no QoS asks for: best effort, so it also hears the 500 Hz best-effort
topics).
The Zenoh parts (:class:`ZenohConfig`, :mod:`jointbus.bus.zenoh_transport`) load ``zenoh`` only
when a bus attaches it; the DDS parts (:class:`DdsConfig`, :mod:`jointbus.bus.dds_transport`) load
``cyclonedds`` only when a bus joins DDS (``RMW_IMPLEMENTATION``, :mod:`jointbus.bus.rmw`).
"""

from jointbus.bus.bus import Bus, default_bus
from jointbus.bus.clock import SYSTEM_CLOCK, Clock, ManualClock, SystemClock
from jointbus.bus.dds_config import DdsConfig, DiscoveryRange
from jointbus.bus.discovery import EndpointInfo, TopicInfo
from jointbus.bus.dispatcher import Dispatcher
from jointbus.bus.errors import (
    BusClosedError,
    BusError,
    DdsConfigError,
    QosError,
    TopicNameError,
    TopicTypeError,
    ZenohConfigError,
)
from jointbus.bus.events import (
    AccessDeniedEvent,
    AttachmentEvent,
    DeadlineMissedEvent,
    MalformedPayloadEvent,
    MessagesLostEvent,
    PublicationDeniedEvent,
    QosEvent,
    QosIncompatibleEvent,
    TypeMismatchEvent,
)
from jointbus.bus.names import data_key, parse_data_key, topic_selector, validate_topic_name
from jointbus.bus.publisher import Publisher, PublisherStats
from jointbus.bus.qos import (
    LATCHED,
    MAB_RT,
    PROFILES,
    RELIABLE,
    SUBSCRIPTION_DEFAULT,
    Durability,
    QosProfile,
    Reliability,
    incompatibilities,
    profile,
)
from jointbus.bus.service import ServiceClient, ServiceInfo, ServiceServer
from jointbus.bus.service_errors import (
    ServiceDeniedError,
    ServiceError,
    ServiceRefused,
    ServiceTimeoutError,
    ServiceTypeError,
    ServiceUnavailableError,
)
from jointbus.bus.subscriber import Subscriber, SubscriberStats
from jointbus.bus.zenoh_config import DEFAULT_HUB_PORT, ZenohConfig

__all__ = [
    "DEFAULT_HUB_PORT",
    "LATCHED",
    "MAB_RT",
    "PROFILES",
    "RELIABLE",
    "SUBSCRIPTION_DEFAULT",
    "SYSTEM_CLOCK",
    "AccessDeniedEvent",
    "AttachmentEvent",
    "Bus",
    "BusClosedError",
    "BusError",
    "Clock",
    "DdsConfig",
    "DdsConfigError",
    "DeadlineMissedEvent",
    "DiscoveryRange",
    "Dispatcher",
    "Durability",
    "EndpointInfo",
    "MalformedPayloadEvent",
    "ManualClock",
    "MessagesLostEvent",
    "PublicationDeniedEvent",
    "Publisher",
    "PublisherStats",
    "QosError",
    "QosEvent",
    "QosIncompatibleEvent",
    "QosProfile",
    "Reliability",
    "ServiceClient",
    "ServiceDeniedError",
    "ServiceError",
    "ServiceInfo",
    "ServiceRefused",
    "ServiceServer",
    "ServiceTimeoutError",
    "ServiceTypeError",
    "ServiceUnavailableError",
    "Subscriber",
    "SubscriberStats",
    "SystemClock",
    "TopicInfo",
    "TopicNameError",
    "TopicTypeError",
    "TypeMismatchEvent",
    "ZenohConfig",
    "ZenohConfigError",
    "data_key",
    "default_bus",
    "incompatibilities",
    "parse_data_key",
    "profile",
    "topic_selector",
    "validate_topic_name",
]
