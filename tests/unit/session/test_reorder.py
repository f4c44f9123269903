"""Order after a detour: forwarded turns ahead of a gap wait, and go round again once it is filled."""

from __future__ import annotations

from collections import deque
from typing import Any

from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from tests.support.conversations import react_messages
from turnstream.schemas.turn import Turn
from turnstream.session import CoreConfig, Forwarded, SessionCore, SessionState
from turnstream.session.reorder import MAX_HELD, MAX_WAIT_SECONDS
from turnstream.settings import Settings

NOW = 1_700_000_000.0
MESSAGES = react_messages(seed=3, count=40)


def turn(n: int, message: dict[str, Any] | None = None) -> Turn:
    return Turn(turn_id=f"t{n}", session_id="s1", user_id="maya", seq=n, message=message or MESSAGES[n])


def run(core: SessionCore, arrivals: list[Turn | Forwarded], now: float = NOW) -> tuple[SessionState, list[str]]:
    """What the worker does: apply each arrival in order; a released turn comes back at the end of the queue."""
    queue: deque[Turn | Forwarded] = deque(arrivals)
    state = core.new_state(queue[0])
    applied: list[str] = []
    while queue:
        step = core.on_turn(state, queue.popleft(), now)
        if step.outcome == "applied":
            applied.append(step.applied_turn_id or "")
        queue.extend(Forwarded(t) for t in step.release)
    return state, applied


@hypothesis_settings(max_examples=60, deadline=None)
@given(st.permutations(range(16)))
def test_forwarded_turns_apply_once_in_seq_order_whatever_order_they_arrive_in(order: list[int]) -> None:
    state, applied = run(
        SessionCore(CoreConfig.from_settings(Settings(budget_tokens=300))), [Forwarded(turn(n)) for n in order]
    )
    assert applied == [f"t{n}" for n in range(16)]
    assert state.held == [] and state.version == 16


def test_a_keyed_turn_after_a_gap_is_applied_at_once() -> None:
    """Gateways that key their turns may skip seq numbers: nothing waits for them."""
    said = {"role": "user", "content": "noted"}
    state, applied = run(SessionCore(CoreConfig.from_settings(Settings())), [turn(0), turn(5, said), turn(9, said)])
    assert applied == ["t0", "t5", "t9"] and state.held == []


def test_a_keyed_turn_does_not_overtake_forwarded_ones_that_wait() -> None:
    state, applied = run(
        SessionCore(CoreConfig.from_settings(Settings())), [turn(0), Forwarded(turn(2)), turn(3), Forwarded(turn(1))]
    )
    assert applied == ["t0", "t1", "t2", "t3"]


def test_a_second_copy_of_a_held_turn_is_a_duplicate() -> None:
    core = SessionCore(CoreConfig.from_settings(Settings()))
    state = core.new_state(turn(0))
    assert core.on_turn(state, Forwarded(turn(2)), NOW).outcome == "held"
    assert core.on_turn(state, Forwarded(turn(2)), NOW).outcome == "duplicate"
    assert len(state.held) == 1


def test_a_gap_that_never_fills_is_given_up_after_the_wait_and_the_turns_apply() -> None:
    core = SessionCore(CoreConfig.from_settings(Settings()))
    state = core.new_state(turn(0))
    core.on_turn(state, turn(0), NOW)
    held = [core.on_turn(state, Forwarded(turn(n)), NOW) for n in (3, 2)]  # seq 1 never comes
    assert [s.outcome for s in held] == ["held", "held"] and all(not s.release for s in held)
    later = core.on_turn(state, Forwarded(turn(5)), NOW + MAX_WAIT_SECONDS)
    assert [t.turn_id for t in later.release] == ["t2", "t3", "t5"]
    outcomes = [core.on_turn(state, Forwarded(t), NOW + MAX_WAIT_SECONDS).outcome for t in later.release]
    assert outcomes == ["applied", "applied", "applied"] and state.held == []  # gaps 1 and 4 given up
    assert core.on_turn(state, turn(1), NOW).outcome == "duplicate"  # too late: taken for a replay


def test_at_most_max_held_turns_wait() -> None:
    core = SessionCore(CoreConfig.from_settings(Settings()))
    state = core.new_state(turn(0))
    message = {"role": "user", "content": "and another thing"}
    steps = [core.on_turn(state, Forwarded(turn(n, message)), NOW) for n in range(1 + 1, MAX_HELD + 2)]
    assert [s.release for s in steps[:-1]] == [()] * (MAX_HELD - 1)
    assert len(steps[-1].release) == MAX_HELD and state.held == []
    assert state.released_through == MAX_HELD + 1


def test_held_turns_survive_the_table_row() -> None:
    core = SessionCore(CoreConfig.from_settings(Settings()))
    state = core.new_state(turn(0))
    core.on_turn(state, Forwarded(turn(1)), NOW)
    restored = SessionState.restore(state.snapshot())
    assert restored.held == state.held and restored.released_through is None
    step = core.on_turn(restored, turn(0), NOW)
    assert [t.turn_id for t in step.release] == ["t1"] and step.release[0] == turn(1)
