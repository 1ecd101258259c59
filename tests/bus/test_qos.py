"""QoS profiles: the named profiles, invalid values, compatibility rules and the discovery token."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.bus import (
    LATCHED,
    MAB_RT,
    RELIABLE,
    Durability,
    QosError,
    QosProfile,
    Reliability,
    incompatibilities,
    profile,
)


def test_named_profiles_match_the_seed() -> None:
    assert (MAB_RT.reliability, MAB_RT.depth, MAB_RT.durability) == (
        Reliability.BEST_EFFORT,
        1,
        Durability.VOLATILE,
    )
    assert (RELIABLE.reliability, RELIABLE.depth, RELIABLE.durability) == (
        Reliability.RELIABLE,
        10,
        Durability.VOLATILE,
    )
    assert LATCHED.durability is Durability.TRANSIENT_LOCAL
    assert LATCHED.reliable
    assert profile("MAB_RT") is MAB_RT


def test_unknown_profile_name_lists_the_known_ones() -> None:
    with pytest.raises(QosError, match="MAB_RT, RELIABLE, LATCHED"):
        profile("mabRT")


@pytest.mark.parametrize(
    ("kwargs", "policy"),
    [
        ({"depth": 0}, "depth"),
        ({"depth": -3}, "depth"),
        ({"depth": 2.0}, "depth"),
        ({"depth": True}, "depth"),
        ({"deadline": 0.0}, "deadline"),
        ({"deadline": -1.0}, "deadline"),
        ({"deadline": math.inf}, "deadline"),
        ({"lifespan": math.nan}, "lifespan"),
        ({"lifespan": "1s"}, "lifespan"),
        ({"reliability": "reliable"}, "reliability"),
        ({"durability": 1}, "durability"),
    ],
)
def test_invalid_qos_names_the_policy_and_value(kwargs: dict[str, object], policy: str) -> None:
    with pytest.raises(QosError) as info:
        QosProfile(**kwargs)  # type: ignore[arg-type]
    assert info.value.policy == policy
    assert policy in str(info.value)


def test_ros2_incompatible_pairs() -> None:
    best_effort = MAB_RT
    assert incompatibilities(best_effort, RELIABLE) == (
        "reliability: best-effort publisher, reliable subscriber",
    )
    assert incompatibilities(RELIABLE, best_effort) == ()
    assert incompatibilities(RELIABLE, LATCHED) == (
        "durability: volatile publisher, transient-local subscriber",
    )
    assert incompatibilities(LATCHED, RELIABLE) == ()
    assert incompatibilities(RELIABLE, RELIABLE.with_(deadline=0.1))[0].startswith("deadline")
    assert incompatibilities(RELIABLE.with_(deadline=0.2), RELIABLE.with_(deadline=0.1))
    assert incompatibilities(RELIABLE.with_(deadline=0.05), RELIABLE.with_(deadline=0.1)) == ()


durations = st.one_of(st.none(), st.integers(1, 10**12).map(lambda ns: ns / 1e9))


@given(
    st.sampled_from(Reliability),
    st.integers(1, 10_000),
    st.sampled_from(Durability),
    durations,
    durations,
)
def test_token_round_trip(
    reliability: Reliability,
    depth: int,
    durability: Durability,
    deadline: float | None,
    lifespan: float | None,
) -> None:
    qos = QosProfile(reliability, depth, durability, deadline, lifespan)
    back = QosProfile.from_token(qos.to_token())
    assert back.to_token() == qos.to_token()
    assert (back.reliability, back.depth, back.durability) == (reliability, depth, durability)


def test_malformed_token_is_rejected() -> None:
    with pytest.raises(QosError, match="token"):
        QosProfile.from_token("X10V_0_0")
