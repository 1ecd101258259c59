"""The lifecycle state machine: allowed and refused transitions, hook failures, re-entrancy."""

from __future__ import annotations

import pytest

from jointbus.runtime import (
    Lifecycle,
    LifecycleError,
    LifecycleHookError,
    LifecycleState,
    Transition,
)

S = LifecycleState
T = Transition


def nothing() -> None:
    pass


def fail() -> None:
    raise ValueError("hook failed")


def test_the_normal_path_cycles_several_times_then_finalizes() -> None:
    life = Lifecycle("n")
    assert life.state is S.UNCONFIGURED
    assert life.run(T.CONFIGURE, nothing) is S.INACTIVE
    for _ in range(3):
        assert life.run(T.ACTIVATE, nothing) is S.ACTIVE
        assert life.run(T.DEACTIVATE, nothing) is S.INACTIVE
    assert life.run(T.SHUTDOWN, nothing) is S.FINALIZED


@pytest.mark.parametrize("start", [S.UNCONFIGURED, S.INACTIVE, S.ACTIVE])
def test_shutdown_is_allowed_from_every_live_state(start: LifecycleState) -> None:
    life = Lifecycle("n")
    path = {S.UNCONFIGURED: [], S.INACTIVE: [T.CONFIGURE], S.ACTIVE: [T.CONFIGURE, T.ACTIVATE]}
    for step in path[start]:
        life.run(step, nothing)
    assert life.run(T.SHUTDOWN, nothing) is S.FINALIZED


@pytest.mark.parametrize(
    ("path", "refused"),
    [
        ([], T.ACTIVATE),
        ([], T.DEACTIVATE),
        ([T.CONFIGURE], T.CONFIGURE),
        ([T.CONFIGURE], T.DEACTIVATE),
        ([T.CONFIGURE, T.ACTIVATE], T.ACTIVATE),
        ([T.CONFIGURE, T.ACTIVATE], T.CONFIGURE),
        ([T.SHUTDOWN], T.CONFIGURE),
        ([T.SHUTDOWN], T.ACTIVATE),
        ([T.SHUTDOWN], T.SHUTDOWN),
    ],
)
def test_invalid_transitions_raise_a_typed_error_and_change_nothing(
    path: list[Transition], refused: Transition
) -> None:
    life = Lifecycle("arm")
    for step in path:
        life.run(step, nothing)
    before = life.state
    ran: list[int] = []
    with pytest.raises(LifecycleError) as info:
        life.run(refused, lambda: ran.append(1))
    assert life.state is before
    assert ran == []
    err = info.value
    assert (err.node, err.transition, err.state) == ("arm", refused, before)
    assert before not in err.allowed
    assert f"cannot {refused.value} while {before.value}" in str(err)


@pytest.mark.parametrize(("path", "failing"), [([], T.CONFIGURE), ([T.CONFIGURE], T.ACTIVATE)])
def test_a_failing_configure_or_activate_leaves_the_state(
    path: list[Transition], failing: Transition
) -> None:
    life = Lifecycle("n")
    for step in path:
        life.run(step, nothing)
    before = life.state
    with pytest.raises(LifecycleHookError) as info:
        life.run(failing, fail)
    assert life.state is before
    assert not info.value.completed
    assert isinstance(info.value.__cause__, ValueError)
    assert life.run(failing, nothing) is not before  # and it can be retried


@pytest.mark.parametrize("failing", [T.DEACTIVATE, T.SHUTDOWN])
def test_stopping_completes_even_when_its_hook_fails(failing: Transition) -> None:
    life = Lifecycle("n")
    life.run(T.CONFIGURE, nothing)
    life.run(T.ACTIVATE, nothing)
    with pytest.raises(LifecycleHookError) as info:
        life.run(failing, fail)
    expected = S.INACTIVE if failing is T.DEACTIVATE else S.FINALIZED
    assert life.state is expected
    assert info.value.completed
    assert info.value.state is expected


def test_a_transition_requested_during_another_is_refused() -> None:
    life = Lifecycle("n")
    inner: list[BaseException] = []

    def reenter() -> None:
        try:
            life.run(T.SHUTDOWN, nothing)
        except LifecycleError as exc:
            inner.append(exc)

    assert life.run(T.CONFIGURE, reenter) is S.INACTIVE
    assert len(inner) == 1
    assert "still running" in str(inner[0])


def test_check_does_not_change_the_state() -> None:
    life = Lifecycle("n")
    life.check(T.CONFIGURE)
    with pytest.raises(LifecycleError):
        life.check(T.ACTIVATE)
    assert life.state is S.UNCONFIGURED
