"""Malformed payloads and attachments on the wire: counted, reported, survived; valid ones flow.

What a user relies on: a jointbus process subscribed over Zenoh meets whatever a peer puts on its
keys — corrupted CDR, another type's bytes, random attachments, rmw_zenoh attachments with absurd
sequence numbers or times, samples on the topic under another type hash. Every undecodable payload
is counted and reported as a :class:`~jointbus.bus.MalformedPayloadEvent`, a sample under another
type hash is never decoded (the bus subscribes to the exact key), nothing but messages of the
topic's type reaches the callback, and every decodable payload on the topic's own key is
delivered, in order, before and after the garbage.

How: a plain Zenoh session (no jointbus) on loopback puts seeded mutants of valid encodings
(:class:`fuzz_support.Mutator`), random bytes and valid payloads onto the data keys of a jointbus
bus's subscribers (rmw_zenoh keys, :mod:`jointbus.bus.names`), each with a random attachment
(none, random bytes, the right size with a wrong GID length, truncated or padded, rmw_zenoh's
33-byte record with extreme fields). Whether a payload decodes is decided locally with
``from_cdr`` first, so the test knows exactly what must arrive and what must be reported. A final
valid sentinel on each topic marks the end (Zenoh keeps one publisher's samples in order on a
reliable channel).

``make test`` puts 400 samples; ``make fuzz`` puts 40 000.
"""

from __future__ import annotations

import random
import socket
import struct
import time
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any, Final

import pytest
import zenoh

from jointbus.bus import RELIABLE, Bus, MalformedPayloadEvent, QosEvent, ZenohConfig, data_key
from jointbus.bus import attachment as jb_attachment
from jointbus.codec import DecodeError
from jointbus.codec.type_hash import rihs01_of
from jointbus.messages.std_msgs import String
from jointbus.robots.hb50.messages import BridgeData, JointCommand, Status
from support.fuzz import Mutator, class_id, corpus, message_classes

TYPES: Final = (JointCommand, BridgeData, Status, String)
QUICK_SAMPLES: Final = 400
LONG_SAMPLES: Final = 40_000
_I64: Final = (-(2**63), -1, 0, 1, 2**63 - 1)
_U64: Final = (0, 1, 2, 2**32, 2**63, 2**128 - 1)
#: A type hash no message has: samples under it must never be decoded.
_WRONG_HASH: Final = "RIHS01_" + "0" * 64


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_until(predicate: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.005)
    return predicate()


def random_attachment(rng: random.Random) -> bytes | None:
    roll = rng.randrange(6)
    if roll == 0:
        return None
    if roll == 1:
        return rng.randbytes(rng.choice((0, 1, 32, 34, 36, 64)))
    if roll == 2:  # the right size, a wrong GID length byte
        raw = bytearray(rng.randbytes(33))
        raw[16] = rng.choice((0, 15, 17, 255))
        return bytes(raw)
    if roll == 3:  # truncated or padded rmw_zenoh attachment
        full = jb_attachment.pack(rng.choice(_I64), rng.choice(_I64), rng.randbytes(16))
        return full[: rng.randrange(33)] if rng.random() < 0.5 else full + b"\x00"
    # rmw_zenoh's record with extreme values: gaps of 2**64, times at the ends of int64
    return struct.pack(
        "<qqB16s", rng.choice(_I64), rng.choice(_I64), 16, rng.choice(_U64).to_bytes(16, "little")
    )


def _matched(pub: zenoh.Publisher) -> bool:
    return bool(getattr(pub.matching_status, "matching", False))


class Wire:
    """A jointbus bus with one subscriber per fuzzed type, and a raw Zenoh session facing it."""

    def __init__(self) -> None:
        port = free_port()
        self.bus = Bus(name="fuzzed", zenoh=ZenohConfig.loopback(port))
        self.got: dict[str, list[Any]] = {}
        self.events: list[QosEvent] = []
        self.subs = {}
        for cls in TYPES:
            topic = f"/fuzz/{cls.__name__.lower()}"
            self.got[topic] = []
            self.subs[topic] = self.bus.subscribe(
                topic,
                cls,
                self.got[topic].append,
                RELIABLE,
                realtime=True,  # straight from Zenoh's thread: no keep-last queue to overflow
                on_event=self.events.append,
            )
        config = zenoh.Config()
        for key, value in ZenohConfig.loopback(None, (port,)).json5_items(
            ("tcp/127.0.0.1:0",), (f"tcp/127.0.0.1:{port}",)
        ):
            config.insert_json5(key, value)
        self.raw = zenoh.open(config)
        self.pubs = {}
        self.foreign = {}
        assert self.bus.zenoh is not None
        domain = self.bus.zenoh.domain_id
        for cls in TYPES:
            topic = f"/fuzz/{cls.__name__.lower()}"
            for table, type_hash in ((self.pubs, rihs01_of(cls)), (self.foreign, _WRONG_HASH)):
                table[topic] = self.raw.declare_publisher(
                    data_key(domain, topic, cls.TYPE_NAME, type_hash),
                    reliability=zenoh.Reliability.RELIABLE,
                    congestion_control=zenoh.CongestionControl.BLOCK,
                )
        for topic, pub in self.pubs.items():
            assert wait_until(partial(_matched, pub))
            assert self.bus.zenoh is not None
            assert self.bus.zenoh.subscription(topic) is not None

    def close(self) -> None:
        for pub in (*self.pubs.values(), *self.foreign.values()):
            pub.undeclare()  # type: ignore[no-untyped-call]
        self.raw.close()  # type: ignore[no-untyped-call]
        self.bus.close()


@pytest.fixture
def wire() -> Iterator[Wire]:
    w = Wire()
    yield w
    w.close()


def fuzz_wire(wire: Wire, samples: int, seed: str) -> dict[str, int]:
    """Put ``samples`` fuzzed samples, then a sentinel per topic; check what arrived."""
    rng = random.Random(seed)
    classes = message_classes()
    corpora = {cls: corpus(cls, classes, 1, samples=8) for cls in TYPES}
    topics = {cls: f"/fuzz/{cls.__name__.lower()}" for cls in TYPES}
    mutator = Mutator(f"{seed}:bytes")
    expected: dict[str, list[bytes]] = {t: [] for t in topics.values()}
    malformed = 0
    foreign = 0
    for _ in range(samples):
        cls = rng.choice(TYPES)
        payloads = corpora[cls].payloads
        roll = rng.random()
        if roll < 0.05:  # a valid payload under another type hash: never decoded
            wire.foreign[topics[cls]].put(rng.choice(payloads))
            foreign += 1
            continue
        if roll < 0.2:
            data = rng.choice(payloads)
        elif roll < 0.35:
            data = mutator.random_bytes()
        elif roll < 0.45:  # another type's valid payload
            data = rng.choice(corpora[rng.choice(TYPES)].payloads)
        else:
            data = mutator.mutate(rng.choice(payloads), payloads)
        try:
            expected[topics[cls]].append(cls.from_cdr(data).to_cdr())
        except DecodeError:
            malformed += 1
        att = random_attachment(rng)
        if att is None:
            wire.pubs[topics[cls]].put(data)
        else:
            wire.pubs[topics[cls]].put(data, attachment=att)
    # The sentinels: plain valid samples, so the receive path is shown to be alive afterwards.
    sentinels = {}
    for cls, topic in topics.items():
        sentinel = corpora[cls].payloads[-1]
        sentinels[topic] = cls.from_cdr(sentinel).to_cdr()
        expected[topic].append(sentinels[topic])
        wire.pubs[topic].put(sentinel)
    assert wait_until(
        lambda: all(
            got and got[-1].to_cdr() == sentinels[topic] and len(got) >= len(expected[topic])
            for topic, got in wire.got.items()
        ),
        timeout=30.0 + samples / 500,
    ), {t: (len(g), len(expected[t])) for t, g in wire.got.items()}
    for cls, topic in topics.items():
        got = wire.got[topic]
        assert all(type(m) is cls for m in got)
        assert [m.to_cdr() for m in got] == expected[topic], class_id(cls)
    reported = [e for e in wire.events if isinstance(e, MalformedPayloadEvent)]
    assert len(reported) == malformed
    assert sum(s.stats().malformed for s in wire.subs.values()) == malformed
    assert all(e.error for e in reported)
    delivered = sum(map(len, wire.got.values()))
    return {"samples": samples, "malformed": malformed, "foreign": foreign, "delivered": delivered}


def test_quick_wire_fuzz_reports_every_malformed_payload_and_keeps_delivering(wire: Wire) -> None:
    counts = fuzz_wire(wire, QUICK_SAMPLES, seed="quick")
    assert counts["malformed"] > QUICK_SAMPLES // 5
    assert counts["delivered"] > QUICK_SAMPLES // 5
    assert counts["foreign"] > 0


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_fuzz_zenoh_receive_path_with_40_000_samples(
    wire: Wire, capsys: pytest.CaptureFixture[str]
) -> None:
    counts = fuzz_wire(wire, LONG_SAMPLES, seed="long")
    with capsys.disabled():
        print(f"\nzenoh receive fuzz: {counts}")
    assert counts["malformed"] > LONG_SAMPLES // 5
