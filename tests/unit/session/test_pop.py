"""Taking back a session's newest message (a pop control record), in the pure core and the compactor."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.session.helpers import NOW, core, doc_body, fresh, turn
from turnstream.compaction.incremental import PopError, SessionCompactor
from turnstream.schemas.control import PopRequest, parse_pop, pop_record
from turnstream.session import SessionCore, SessionState

pytestmark = pytest.mark.unit

CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}],
}
RESULT = {"role": "tool", "tool_call_id": "c1", "content": "sunny"}


def session(messages: list[dict[str, Any]]) -> tuple[SessionCore, SessionState]:
    c = core()
    turns = [turn(n, message) for n, message in enumerate(messages)]
    state = fresh(c, turns[0])
    for t in turns:
        assert c.on_turn(state, t, NOW).outcome == "applied"
    return c, state


def pop(position: int, seq: int, control_id: str | None = None) -> PopRequest:
    return PopRequest("s1", None, control_id or f"pop-{seq}", seq, position)


def test_a_pop_removes_the_newest_tail_message_and_counts_as_a_turn() -> None:
    c, state = session([{"role": "user", "content": "Plan Lisbon."}, {"role": "assistant", "content": "Sure."}])
    step = c.on_pop(state, pop(1, 2))
    assert (step.outcome, step.context_changed, step.applied_turn_id) == ("applied", True, "pop-2")
    assert doc_body(c, state)["messages"] == [{"role": "user", "content": "Plan Lisbon."}]
    assert (state.version, state.last_turn_id, state.last_seq) == (3, "pop-2", 2)


def test_a_replayed_pop_changes_nothing() -> None:
    c, state = session(
        [
            {"role": "user", "content": "Plan Lisbon."},
            {"role": "assistant", "content": "A"},
            {"role": "assistant", "content": "B"},
        ]
    )
    c.on_pop(state, pop(2, 3))
    before = state.snapshot()
    step = c.on_pop(state, pop(2, 3))
    assert (step.outcome, step.applied_turn_id) == ("duplicate", None)
    assert state.snapshot() == before
    assert [m["content"] for m in doc_body(c, state)["messages"]] == ["Plan Lisbon.", "A"]


def test_a_pop_of_a_message_that_is_not_the_newest_in_the_tail_is_a_dead_letter() -> None:
    c, state = session([{"role": "user", "content": "Plan Lisbon."}, {"role": "assistant", "content": "Sure."}])
    before = state.snapshot()
    stale = c.on_pop(state, pop(0, 2))  # the first user message is an anchor, and not the newest
    assert stale.outcome == "dead_letter" and stale.dead_letter is not None
    assert stale.dead_letter[0] == "pop" and "newest is at position 1" in stale.dead_letter[1]
    assert state.snapshot() == before
    c.on_pop(state, pop(1, 2))
    anchored = c.on_pop(state, pop(0, 3))
    assert anchored.dead_letter is not None and "no message in the tail" in anchored.dead_letter[1]


def test_popping_a_tool_result_reopens_its_call_for_another_result() -> None:
    c, state = session([{"role": "user", "content": "Weather?"}, CALL, RESULT])
    assert c.on_pop(state, pop(2, 3)).outcome == "applied"
    assert state.compactor.tracker.pending == ["c1"]
    again = turn(4, {**RESULT, "content": "rainy"})
    assert c.on_turn(state, again, NOW).outcome == "applied"
    assert doc_body(c, state)["messages"][-1]["content"] == "rainy"


def test_popping_an_unanswered_call_takes_its_calls_with_it() -> None:
    c, state = session([{"role": "user", "content": "Weather?"}, CALL])
    c.on_pop(state, pop(1, 2))
    assert state.compactor.tracker.pending == []
    assert c.on_turn(state, turn(3, {"role": "assistant", "content": "No tools."}), NOW).outcome == "applied"


def test_a_popped_session_survives_its_snapshot_with_the_totals_adjusted() -> None:
    c, state = session([{"role": "user", "content": "Plan Lisbon."}, {"role": "assistant", "content": "Sure thing."}])
    tokens_before = doc_body(c, state)["tokens"]
    c.on_pop(state, pop(1, 2))
    restored = SessionState.restore(state.snapshot())
    assert doc_body(c, restored) == doc_body(c, state)
    tokens = doc_body(c, restored)["tokens"]
    assert tokens["before"] < tokens_before["before"] and tokens["after"] < tokens_before["after"]


def test_pop_newest_refuses_an_empty_tail() -> None:
    with pytest.raises(PopError, match="no message in the tail"):
        SessionCompactor(100).pop_newest(0)


def test_a_pop_record_round_trips_and_a_malformed_one_is_left_to_the_turn_decoder() -> None:
    request = PopRequest("s-1", "acme", "ts-7", 7, 12)
    assert parse_pop(pop_record(request)) == request
    assert request.session_key == "acme:s-1"
    assert (
        parse_pop(b'{"pop": {"session_id": "s 1", "tenant": null, "control_id": "x", "seq": 1, "position": 0}}') is None
    )
    assert (
        parse_pop(b'{"pop": {"session_id": "s", "tenant": null, "control_id": "x", "seq": -1, "position": 0}}') is None
    )
    assert parse_pop(b'{"pop": 1}') is None
    assert parse_pop(b'{"turn_id": "t"}') is None
