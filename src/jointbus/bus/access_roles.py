"""Zenoh access rules made from roles, and the same rules read back to say who was denied what.

Where it sits: :mod:`jointbus.bus`, beside :mod:`jointbus.bus.zenoh_security` (which passes an
``access_control`` block to Zenoh). It knows no robot: which topics and services belong to which
role is a :class:`RoleTable` given by the layer that knows them (the ``jointbus security rules``
command, :mod:`jointbus.cli.security`). Zenoh (≥ 1.0) enforces the block in the robot's process;
:class:`AccessPolicy` evaluates the same block in Python so the transport can report a denied peer
by its certificate name (:mod:`jointbus.bus.zenoh_transport`).

**Why roles, not wildcards.** Services travel as Zenoh *queries* on the service's key, so a rule
that lets every peer ``query`` on ``**`` lets a watch-only certificate call
``/hb50/actarray/power`` with ``on: false`` — and discovery needs the ``@ros2_lv/...`` liveliness
keys, which ``**`` never matches (a chunk starting with ``@`` is only matched by itself). Roles
spell every key once, in one place, with a test per role:

- ``observer``: reads every topic (declares subscribers; the robot puts to it), the ROS 2 graph
  (liveliness tokens, subscribers and queries on ``@ros2_lv/**``), latched history
  (``<data key>/@adv/**`` queries) and the read-only services of ``RoleTable.observer``; it
  publishes nothing and calls nothing else;
- ``operator``: an observer that also publishes ``RoleTable.operator`` topics and calls its
  services (velocity commands, motion mode, the e-stop);
- ``controller``: an operator that also publishes ``RoleTable.controller`` topics and calls its
  services (joint commands, actuator requests: power, brakes, home, e-stop reset);
- ``robot``: everything — the certificate of the robot's own other processes (a bridge and a
  control node in two processes both hold it).

Names are relative to any namespace (``actarray/power`` is ``/hb50/actarray/power`` and
``/arm6/actarray/power``), so one file serves every robot of the table; ``*`` matches one name
chunk. Everything not granted is denied (``default_permission: "deny"``), including a peer whose
certificate names no role: a new command topic is closed to every role until it is placed in one.

**Declarations are filtered too.** A role is only told about the robot's subscribers and servers
it may use (``declare_subscriber`` / ``declare_queryable`` egress): an observer's publisher of
``/hb50/joint_command`` never matches, and its call of ``/hb50/actarray/power`` finds no route —
so Zenoh does not even send them, and the peer can tell the user so (the graph announces the
subscriber or server, Zenoh routes nothing to it); a raw Zenoh put or query is dropped at the
robot by the ingress rules regardless.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import zenoh

from jointbus.bus.errors import ZenohConfigError

__all__ = [
    "GRAPH_KEYS",
    "ROLES",
    "AccessPolicy",
    "Flow",
    "RoleNames",
    "RoleTable",
    "access_rules",
    "name_keys",
]

#: The roles, from the least to the most trusted; each has the grants of those before it.
ROLES: Final = ("observer", "operator", "controller", "robot")
Flow = Literal["ingress", "egress"]
#: Every Zenoh 1.x access-control message kind.
MESSAGES: Final = (
    "put",
    "delete",
    "declare_subscriber",
    "query",
    "reply",
    "declare_queryable",
    "liveliness_token",
    "declare_liveliness_subscriber",
    "liveliness_query",
)
_LIVELINESS: Final = ("liveliness_token", "declare_liveliness_subscriber", "liveliness_query")
#: Every topic's and service's data key, ``<domain>/<name>/<type>/<hash>`` (never an ``@`` key).
DATA_KEYS: Final = "*/**"
#: The caches of transient-local publishers (``<data key>/@adv/pub/<zid>/...``, zenoh-ext).
HISTORY_KEYS: Final = "*/**/@adv/**"
#: The ROS 2 graph (rmw_zenoh's liveliness tokens) and zenoh-ext's publisher detection tokens.
GRAPH_KEYS: Final = ("@ros2_lv/**", HISTORY_KEYS)


def name_keys(names: Iterable[str]) -> list[str]:
    """The data keys of topics or services ``names`` (relative to any namespace), in every ROS
    domain, of every type: ``actarray/power`` → ``*/**/actarray/power/*/*``."""
    keys = []
    for name in names:
        chunks = name.strip("/")
        if not chunks or any(c in chunks for c in "#?$@ ") or "**" in chunks:
            raise ZenohConfigError(
                f"role name {name!r}: expected a topic or service name relative to the "
                "namespace, like 'joint_command' or 'actarray/power' ('*' matches one chunk)"
            )
        keys.append(f"*/**/{chunks}/*/*")
    return keys


@dataclass(frozen=True, slots=True)
class RoleNames:
    """What a role adds to the roles before it: ``topics`` it may publish and ``services`` it may
    call, by name relative to the namespace (``joint_command``, ``actarray/power``)."""

    topics: tuple[str, ...] = ()
    services: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        name_keys((*self.topics, *self.services))  # ZenohConfigError now, not when Zenoh opens


@dataclass(frozen=True, slots=True)
class RoleTable:
    """Which topics and services each role adds (an observer's are read-only services only)."""

    observer: RoleNames = field(default_factory=RoleNames)
    operator: RoleNames = field(default_factory=RoleNames)
    controller: RoleNames = field(default_factory=RoleNames)

    def __post_init__(self) -> None:
        if self.observer.topics:
            raise ZenohConfigError(
                f"an observer publishes nothing; got topics {list(self.observer.topics)}"
            )

    def grants(self, role: str) -> RoleNames:
        """Every topic and service ``role`` may publish or call (its own and those before it)."""
        if role not in ROLES[:3]:
            raise ZenohConfigError(f"unknown role {role!r}; expected one of {', '.join(ROLES)}")
        upto = ROLES.index(role) + 1
        granted = (self.observer, self.operator, self.controller)[:upto]
        return RoleNames(
            tuple(t for g in granted for t in g.topics),
            tuple(s for g in granted for s in g.services),
        )


def _rule(rule_id: str, flows: Sequence[str], messages: Sequence[str], keys: Sequence[str]) -> Any:
    return {
        "id": rule_id,
        "permission": "allow",
        "flows": list(flows),
        "messages": list(messages),
        "key_exprs": list(keys),
    }


def _role_rules(role: str, table: RoleTable) -> list[Any]:
    if role == "robot":
        return [
            _rule(
                "everything",
                ("ingress", "egress"),
                MESSAGES,
                ("**", *GRAPH_KEYS),
            )
        ]
    rules = [
        _rule("reads topics", ("ingress",), ("declare_subscriber",), (DATA_KEYS,)),
        _rule("receives data", ("egress",), ("put", "delete", "reply"), (DATA_KEYS,)),
        _rule("sees the graph", ("ingress", "egress"), _LIVELINESS, GRAPH_KEYS),
        _rule("reads latched history", ("ingress",), ("query",), (HISTORY_KEYS,)),
        _rule("finds latched history", ("egress",), ("declare_queryable",), (HISTORY_KEYS,)),
    ]
    grants = table.grants(role)
    if grants.topics:
        keys = name_keys(grants.topics)
        rules.append(_rule("publishes", ("ingress",), ("put", "delete"), keys))
        rules.append(_rule("finds subscribers", ("egress",), ("declare_subscriber",), keys))
    if grants.services:
        keys = name_keys(grants.services)
        rules.append(_rule("calls", ("ingress",), ("query",), keys))
        rules.append(_rule("finds servers", ("egress",), ("declare_queryable",), keys))
    return rules


def access_rules(members: Mapping[str, Sequence[str]], table: RoleTable) -> str:
    """The ``access_control`` block (JSON5 text, comment lines then a JSON object) that gives
    each certificate common name in ``members[role]`` that role, and nothing to anyone else.

    Use it with mutual TLS only: the common name is what a peer's certificate proves.
    """
    unknown = sorted(set(members) - set(ROLES))
    if unknown:
        raise ZenohConfigError(f"unknown role {unknown[0]!r}; expected one of {', '.join(ROLES)}")
    seen: dict[str, str] = {}
    for role in ROLES:
        for name in members.get(role, ()):
            if not isinstance(name, str) or not name or name != name.strip():
                raise ZenohConfigError(f"{role}: certificate name {name!r} is empty or padded")
            if name in seen:
                raise ZenohConfigError(
                    f"certificate name {name!r} is given two roles ({seen[name]} and {role}); "
                    "give each certificate one"
                )
            seen[name] = role
    if not seen:
        raise ZenohConfigError("no certificate names: give at least one role a name")
    rules: list[Any] = []
    subjects: list[Any] = []
    policies: list[Any] = []
    for role in ROLES:
        names = list(members.get(role, ()))
        if not names:  # a subject without names would match every peer
            continue
        role_rules = _role_rules(role, table)
        for rule in role_rules:
            rule["id"] = f"{role}/{rule['id']}"
        rules.extend(role_rules)
        subjects.append({"id": role, "cert_common_names": names})
        policies.append({"id": role, "subjects": [role], "rules": [r["id"] for r in role_rules]})
    block = {
        "enabled": True,
        "default_permission": "deny",
        "rules": rules,
        "subjects": subjects,
        "policies": policies,
    }
    header = [
        "// Zenoh access control of the robot's processes, made by `jointbus security rules`.",
        "// Roles by certificate common name (mutual TLS proves the name):",
        *(f"//   {role}: {', '.join(members.get(role, ())) or '-'}" for role in ROLES),
        "// Load it with --access-rules FILE (or ZenohAccessControl.from_file) in every process",
        "// of the robot; see docs/SECURITY.md. Everything not granted here is denied.",
    ]
    return "\n".join(header) + "\n" + _dump(block) + "\n"


def _dump(block: Mapping[str, Any]) -> str:
    """JSON with one rule, subject or policy per line (reviewable in a diff)."""
    lines = []
    for key, value in block.items():
        if isinstance(value, list):
            items = [f"    {json.dumps(item)}," for item in value]
            if items:
                items[-1] = items[-1].rstrip(",")
            lines.append(f'  "{key}": [\n' + "\n".join(items) + "\n  ]")
        else:
            lines.append(f'  "{key}": {json.dumps(value)}')
    return "{\n" + ",\n".join(lines) + "\n}"


@dataclass(frozen=True, slots=True)
class _Subject:
    cert_common_names: frozenset[str] | None
    link_protocols: frozenset[str] | None
    zids: frozenset[str] | None
    #: Matched on attributes Python cannot see (network interfaces, user names): never decided.
    opaque: bool

    def matches(self, cert_name: str | None, protocol: str, zid: str) -> bool | None:
        if self.opaque:
            return None
        return (
            (self.cert_common_names is None or cert_name in self.cert_common_names)
            and (self.link_protocols is None or protocol in self.link_protocols)
            and (self.zids is None or zid in self.zids)
        )


@dataclass(frozen=True, slots=True)
class _Rule:
    allow: bool
    flows: frozenset[str]
    messages: frozenset[str]
    keys: tuple[zenoh.KeyExpr, ...]

    def covers(self, flow: str, message: str, key: zenoh.KeyExpr) -> bool:
        return (
            flow in self.flows
            and message in self.messages
            and any(k.includes(key) for k in self.keys)
        )


def _names(entry: Mapping[str, Any], attribute: str) -> frozenset[str] | None:
    values = entry.get(attribute)
    return None if values is None else frozenset(str(v) for v in values)


@dataclass(frozen=True, slots=True)
class AccessPolicy:
    """An ``access_control`` block read back, to tell what it lets a peer do (Zenoh's own
    decision, evaluated the same way: per matching subject, a deny rule covering the key wins,
    else an allow rule, else the default; any subject that allows is enough).

    Only blocks whose body is JSON after ``//`` comment lines can be read (what
    :func:`access_rules` writes); subjects by certificate name, link protocol and zid are decided,
    those by network interface or user name are not (:meth:`allows` answers None).
    """

    default_allow: bool
    subjects: Mapping[str, _Subject]
    #: subject id → rules of its policies
    policies: Mapping[str, tuple[_Rule, ...]]

    @classmethod
    def parse(cls, text: str) -> AccessPolicy | None:
        """The policy of a block, or None when it cannot be read (not JSON once comment lines
        are removed, or not Zenoh's shape)."""
        body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))
        try:
            block = json.loads(body)
            if not block.get("enabled", True):
                return None
            rules = {
                r["id"]: _Rule(
                    r.get("permission") == "allow",
                    frozenset(r.get("flows", ("ingress", "egress"))),
                    frozenset(r["messages"]),
                    tuple(zenoh.KeyExpr(k) for k in r["key_exprs"]),
                )
                for r in block.get("rules", ())
            }
            subjects = {
                s["id"]: _Subject(
                    _names(s, "cert_common_names"),
                    _names(s, "link_protocols"),
                    _names(s, "zids"),
                    bool(s.get("interfaces") or s.get("usernames")),
                )
                for s in block.get("subjects", ())
            }
            policies: dict[str, tuple[_Rule, ...]] = {}
            for policy in block.get("policies", ()):
                for subject in policy["subjects"]:
                    extra = tuple(rules[r] for r in policy["rules"])
                    policies[subject] = policies.get(subject, ()) + extra
            return cls(block.get("default_permission") == "allow", subjects, policies)
        except (ValueError, KeyError, TypeError, AttributeError, zenoh.ZError):
            return None

    def subjects_of(self, cert_name: str | None, protocol: str, zid: str) -> list[str] | None:
        """The subject ids a peer matches (None: a subject cannot be decided here)."""
        found = []
        for subject_id, subject in self.subjects.items():
            match = subject.matches(cert_name, protocol, zid)
            if match is None:
                return None
            if match:
                found.append(subject_id)
        return found

    def allows(self, subjects: Sequence[str], flow: Flow, message: str, key: str) -> bool:
        """Whether Zenoh lets a peer matching ``subjects`` send ``message`` on ``key``
        (``flow`` as seen by the process holding the rules: ``ingress`` = from the peer)."""
        expr = zenoh.KeyExpr(key)
        for subject in subjects:
            rules = [r for r in self.policies.get(subject, ()) if r.covers(flow, message, expr)]
            if any(not r.allow for r in rules):
                continue
            if self.default_allow or rules:
                return True
        return self.default_allow if not subjects else False
