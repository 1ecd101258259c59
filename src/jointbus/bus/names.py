"""Topic names and the Zenoh key expressions they map to.

Where it sits: the bottom of :mod:`jointbus.bus`; used by the topic table, the Zenoh transport and
discovery.

A topic name is a fully qualified ROS 2 name: it starts with ``/``, its tokens are made of ASCII
letters, digits and ``_`` and do not start with a digit, and tokens are separated by single ``/``
(no empty token, no trailing ``/``). Relative names and ``~`` substitution are a node's business
(the runtime layer resolves them); the bus only accepts the resolved, absolute name, so the same
string always means the same topic.

Key-expression mapping (documented because other Zenoh programs may want to read our traffic)::

    topic "/hb50/bridge_data"  →  data key      "jb/hb50/bridge_data"
                               →  history key   "@jointbus/hist/hb50/bridge_data/<publisher gid>"
    endpoint announcement      →  liveliness    "@jointbus/ep/<pub|sub>/<zid>/<gid>/<node>/<type>/
                                                  <qos>/hb50/bridge_data"  (one key, wrapped)

The data key is the topic without its leading ``/``, under the ``jb`` prefix, so that
``jb/**`` selects every jointbus topic and nothing else. Because ROS tokens only use
``[A-Za-z0-9_]``, every topic maps to a valid key expression and back without escaping. The
``@jointbus`` prefix is a Zenoh *verbatim* chunk: wildcard subscriptions such as ``**`` never match
it, so bookkeeping traffic never reaches a user's catch-all subscriber.
"""

from __future__ import annotations

import re
from typing import Final

from jointbus.bus.errors import TopicNameError

#: Prefix of every jointbus data key expression.
DATA_PREFIX: Final = "jb"
#: Prefix of jointbus bookkeeping keys (liveliness tokens, history queryables).
META_PREFIX: Final = "@jointbus"

_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def validate_topic_name(name: object) -> str:
    """Return ``name`` if it is a fully qualified ROS 2 topic name, else raise TopicNameError."""
    if type(name) is not str:
        raise TopicNameError(name, f"a topic name is a str, not {type(name).__name__}")
    if not name.startswith("/"):
        raise TopicNameError(
            name, "it does not start with '/' (relative names are not resolved here)"
        )
    if name == "/":
        raise TopicNameError(name, "it has no tokens")
    if name.endswith("/"):
        raise TopicNameError(name, "it ends with '/'")
    for index, token in enumerate(name[1:].split("/")):
        if token == "":
            raise TopicNameError(name, f"token {index} is empty ('//')")
        if not _TOKEN.match(token):
            raise TopicNameError(
                name,
                f"token {index} {token!r} has a character outside [A-Za-z0-9_] "
                "or starts with a digit",
            )
    return name


def topic_to_key(name: str) -> str:
    """The Zenoh data key expression of a (valid) topic: ``/a/b`` → ``jb/a/b``."""
    return DATA_PREFIX + validate_topic_name(name)


def key_to_topic(key: str) -> str:
    """Inverse of :func:`topic_to_key`; raises TopicNameError for keys outside ``jb/``."""
    if not key.startswith(DATA_PREFIX + "/"):
        raise TopicNameError(key, f"key expression is not under {DATA_PREFIX!r}/")
    return validate_topic_name(key[len(DATA_PREFIX) :])


__all__ = ["DATA_PREFIX", "META_PREFIX", "key_to_topic", "topic_to_key", "validate_topic_name"]
