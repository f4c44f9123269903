"""The session core: every rule of a turn and a summary, without Kafka or Redis."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from tests.support.conversations import react_messages
from tests.unit.session.helpers import NOW, core, doc_body, fresh, turn
from turnstream.schemas.summaries import SummaryResult
from turnstream.schemas.turn import Turn
from turnstream.session import CoreConfig, SessionCore, SessionState, SnapshotError
from turnstream.settings import Settings


def test_an_applied_turn_asks_for_its_context_archive_and_memories() -> None:
    c = core()
    first = turn(0, {"role": "user", "name": "Maya", "content": "My budget is 3500 EUR for Lisbon."})
    state = fresh(c, first)
    step = c.on_turn(state, first, NOW)
    assert (step.outcome, step.context_changed, step.applied_turn_id, step.owner) == ("applied", True, "s1-0", "maya")
    assert [(e.position, e.speaker, e.ts) for e in step.archive] == [(0, "Maya", NOW)]
    assert any("3500" in m.text for m in step.memories) and step.profile_additions
    assert state.version == 1 and state.last_turn_id == "s1-0"


def test_an_archived_turn_has_its_dates_pinned_in_the_conversations_language() -> None:
    c = core()
    first = turn(0, {"role": "user", "content": "我昨天到了成都，明天去重庆。"})
    step = c.on_turn(fresh(c, first), first, NOW)  # NOW + 0 is 14 November 2023
    (entry,) = step.archive
    assert entry.text == "我昨天到了成都，明天去重庆。"
    assert entry.dates == ((3, "（2023年11月13日）"), (10, "（2023年11月15日）"))


def test_a_duplicate_changes_nothing_and_asks_for_a_resync() -> None:
    c = core()
    first = turn(0, {"role": "user", "content": "Plan Lisbon."})
    state = fresh(c, first)
    c.on_turn(state, first, NOW)
    before = state.snapshot()
    step = c.on_turn(state, first, NOW + 5)
    assert (step.outcome, step.context_changed, step.archive, step.memories) == ("duplicate", True, (), ())
    assert state.snapshot() == before


def test_a_turn_that_cannot_follow_is_a_dead_letter_and_leaves_the_state_alone() -> None:
    c = core()
    first = turn(0, {"role": "user", "content": "Plan Lisbon."})
    state = fresh(c, first)
    c.on_turn(state, first, NOW)
    before = state.snapshot()
    orphan = turn(1, {"role": "tool", "tool_call_id": "nope", "content": "42"})
    step = c.on_turn(state, orphan, NOW)
    assert step.outcome == "dead_letter" and step.dead_letter[0] == "message" and not step.context_changed
    assert state.snapshot() == before


def test_greetings_feed_no_memory_but_are_archived() -> None:
    c = core()
    hello = turn(0, {"role": "user", "content": "hi there!"})
    step = c.on_turn(fresh(c, hello), hello, NOW)
    assert step.memories == () and len(step.archive) == 1


def test_a_tool_result_is_archived_with_the_call_it_answers() -> None:
    c = core()
    messages = react_messages(3, 12)
    state = fresh(c, turn(0, messages[0]))
    steps = [c.on_turn(state, turn(n, m), NOW) for n, m in enumerate(messages)]
    results = [s.archive[0] for s, m in zip(steps, messages) if m["role"] == "tool"]
    assert results and all("(" in e.text and "→" in e.text for e in results)


def test_a_dropped_span_asks_for_a_summary_only_with_an_llm() -> None:
    messages = [{"role": "system", "content": "x"}] + [
        {"role": "user" if n % 2 else "assistant", "content": "word " * 40} for n in range(1, 30)
    ]
    for llm, expect in ((None, False), ("http://127.0.0.1:9/v1", True)):
        c = core(openai_base_url=llm)
        state = fresh(c, turn(0, messages[0]))
        requests = [c.on_turn(state, turn(n, m), NOW).summary_request for n, m in enumerate(messages)]
        assert any(requests) is expect
        assert sum(r is not None for r in requests) <= 1  # one in flight at a time


def test_a_summary_answering_the_request_in_flight_changes_the_context_once() -> None:
    c = core(openai_base_url="http://127.0.0.1:9/v1")
    messages = [{"role": "system", "content": "x"}] + [
        {"role": "user" if n % 2 else "assistant", "content": "word " * 40} for n in range(1, 30)
    ]
    state = fresh(c, turn(0, messages[0]))
    request = next(r for n, m in enumerate(messages) if (r := c.on_turn(state, turn(n, m), NOW).summary_request))
    version = state.version
    answer = SummaryResult(request.session_key, request.request_id, "The LLM summary.")
    step = c.on_summary(state, answer, NOW)
    assert (step.outcome, step.context_changed, state.version) == ("summary", True, version + 1)
    assert "The LLM summary." in c.context_doc(state, 0.0, {}).summary
    stale = c.on_summary(state, answer, NOW)
    assert (stale.outcome, stale.context_changed, state.version) == ("stale_summary", False, version + 1)


def trip_messages() -> list[dict[str, Any]]:
    """A trip whose budget is corrected after the first summary request went out."""

    def filler(n: int) -> dict[str, Any]:
        return {"role": "user" if n % 2 else "assistant", "content": f"note {n} " + "word " * 40}

    return [
        {"role": "system", "content": "You plan trips."},
        {"role": "user", "content": "Plan Tokyo for two."},
        {"role": "user", "content": "My budget is 3000 EUR. I pick flight CA929."},
        *(filler(n) for n in range(3, 12)),
        {"role": "user", "content": "Actually my budget is 4000 EUR."},
        *(filler(n) for n in range(13, 30)),
    ]


def test_a_request_carries_the_sessions_facts_and_where_its_span_starts() -> None:
    c = core(openai_base_url="http://127.0.0.1:9/v1")
    messages = trip_messages()
    state = fresh(c, turn(0, messages[0]))
    request = next(r for n, m in enumerate(messages) if (r := c.on_turn(state, turn(n, m), NOW).summary_request))
    assert request.dropped == messages[request.first_seq : request.first_seq + len(request.dropped)]
    assert ("budget", 2) in {(key, seq) for _, _, key, seq in request.facts}  # its keys, for the model to reuse


def test_an_answers_facts_join_the_context_over_the_offline_ones_and_never_over_newer_turns() -> None:
    c = SessionCore(CoreConfig.from_settings(Settings(budget_tokens=800, openai_base_url="http://127.0.0.1:9/v1")))
    messages = trip_messages()
    state = fresh(c, turn(0, messages[0]))
    # the budget's correction is dropped while the first request is in flight
    request = [r for n, m in enumerate(messages) if (r := c.on_turn(state, turn(n, m), NOW).summary_request)][0]
    assert any(
        fact.key == "budget" and fact.source_seq >= state.summaries.inflight_until
        for fact in state.compactor.digest.facts
    )
    found = (
        ("fact", "The user chose flight CA929.", "fact:pick-flight-ca929", request.first_seq),
        ("constraint", "Budget 3000 EUR.", "budget", request.first_seq),  # read before the correction
    )
    step = c.on_summary(
        state, SummaryResult(request.session_key, request.request_id, "The LLM summary.", None, found), NOW
    )
    assert step.outcome == "summary"
    doc = c.context_doc(state, 0.0, {})
    texts = {fact.key: fact.text for fact in doc.facts}
    assert texts["fact:pick-flight-ca929"] == "The user chose flight CA929."  # replaced by key
    assert "4000" in texts["budget"]  # the correction came after what the model read
    block = doc.messages[doc.marker_index + 1]["content"]  # type: ignore[operator]
    assert "The user chose flight CA929." in block


def test_an_answer_without_facts_leaves_the_offline_facts() -> None:
    c = core(openai_base_url="http://127.0.0.1:9/v1")
    messages = trip_messages()
    state = fresh(c, turn(0, messages[0]))
    request = next(r for n, m in enumerate(messages) if (r := c.on_turn(state, turn(n, m), NOW).summary_request))
    before = state.compactor.digest.facts
    c.on_summary(state, SummaryResult(request.session_key, request.request_id, "S.", None, None), NOW)
    assert state.compactor.digest.facts == before


conversations = st.builds(lambda seed, count: react_messages(seed, count), st.integers(0, 50), st.integers(3, 60))


@hypothesis_settings(max_examples=25, deadline=None)
@given(conversations)
def test_snapshot_then_restore_then_snapshot_is_identity(messages: list[dict[str, Any]]) -> None:
    c = core()
    state = fresh(c, turn(0, messages[0]))
    for n, message in enumerate(messages):
        c.on_turn(state, turn(n, message), NOW)
        row = state.snapshot()
        assert SessionState.restore(row).snapshot() == row


@hypothesis_settings(max_examples=20, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.booleans()), min_size=1, max_size=60), st.integers(0, 20))
def test_one_batch_gives_what_one_event_at_a_time_gives(plan: list[tuple[int, bool]], seed: int) -> None:
    """Interleaved sessions and redeliveries: a batch's shared states end where restore-per-event states end."""
    c = core()
    sessions = {s: react_messages(seed + s, 40) for s in range(3)}
    cursor = dict.fromkeys(sessions, 0)
    events: list[Turn] = []
    for session, again in plan:
        n = cursor[session] if not again or cursor[session] == 0 else cursor[session] - 1
        events.append(turn(n, sessions[session][n], session=f"s{session}"))
        cursor[session] = min(max(cursor[session], n + 1), 39)
    batched: dict[str, SessionState] = {}
    rows: dict[str, bytes] = {}
    for event in events:
        state = batched.setdefault(event.session_key, c.new_state(event))
        c.on_turn(state, event, NOW)
        one = SessionState.restore(rows[event.session_key]) if event.session_key in rows else c.new_state(event)
        c.on_turn(one, event, NOW)
        rows[event.session_key] = one.snapshot()
    for key, state in batched.items():
        assert state.snapshot() == rows[key]
        assert doc_body(c, state) == doc_body(c, SessionState.restore(rows[key]))


def test_a_first_format_row_still_restores_and_an_unknown_one_is_refused() -> None:
    c = core()
    first = turn(0, {"role": "user", "content": "Plan Lisbon."})
    state = fresh(c, first)
    c.on_turn(state, first, NOW)
    current = orjson.loads(state.snapshot())
    v1 = {  # the layout written before formats were numbered
        "session_id": current["session_id"],
        "tenant": current["tenant"],
        "owner": current["owner"],
        "compactor": current["compactor"],
        "recent": current["recent_turn_ids"],
        "window": current["dedup_window"],
        "version": current["version"],
        "last": current["last_turn_id"],
        "greetings": current["greetings"],
        "summaries": current["summaries"],
        "user_facts": current["user_facts"],
    }
    # the first format knew no gateway seq: everything else comes back as it was
    assert orjson.loads(SessionState.restore(orjson.dumps(v1)).snapshot()) == {**current, "last_seq": None}
    with pytest.raises(SnapshotError, match="format 9"):
        SessionState.restore(orjson.dumps({**current, "v": 9}))
    with pytest.raises(SnapshotError, match="not JSON"):
        SessionState.restore(b"{oops")


def test_a_replayed_history_is_a_no_op_however_long_when_the_gateway_numbers_its_turns() -> None:
    c = core(dedup_window=4)
    messages = react_messages(9, 40)
    state = fresh(c, turn(0, messages[0]))
    for n, message in enumerate(messages):
        c.on_turn(state, turn(n, message), NOW)
    version = state.version
    replay = [c.on_turn(state, turn(n, message), NOW) for n, message in enumerate(messages)]
    assert {step.outcome for step in replay} == {"duplicate"} and state.version == version
    # without seq, only the turn-id window protects: the newest ids are still recognised
    unnumbered = Turn(turn_id="s1-39", session_id="s1", user_id="maya", message=messages[39])
    assert c.on_turn(state, unnumbered, NOW).outcome == "duplicate"


def test_a_call_whose_result_never_comes_is_answered_as_failed_and_the_session_goes_on() -> None:
    c = core()
    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "search", "arguments": "{}"}},
            {"id": "c2", "type": "function", "function": {"name": "weather", "arguments": "{}"}},
        ],
    }
    script = [
        {"role": "system", "content": "Agent."},
        {"role": "user", "content": "Find a hotel."},
        call,
        {"role": "tool", "tool_call_id": "c1", "content": "Hotel A"},
    ]
    state = fresh(c, turn(0, script[0]))
    for n, message in enumerate(script):
        assert c.on_turn(state, turn(n, message), NOW).outcome == "applied"
    # c2's result was refused upstream (oversize, malformed) or lost: the next user turn still applies
    step = c.on_turn(state, turn(4, {"role": "user", "content": "And the weather?"}), NOW)
    assert step.outcome == "applied" and step.archive[0].position == 5
    messages = c.context_doc(state, 0.0, {}).messages
    closed = messages[-2]
    assert (
        closed["role"] == "tool" and closed["tool_call_id"] == "c2" and "treat the call as failed" in closed["content"]
    )
    assert messages[-1]["content"] == "And the weather?"
    # a result for a call nobody made is still refused, and leaves the session as it was
    before = state.snapshot()
    orphan = c.on_turn(state, turn(5, {"role": "tool", "tool_call_id": "zz", "content": "?"}), NOW)
    assert orphan.outcome == "dead_letter" and state.snapshot() == before


def test_a_message_nested_too_deep_is_refused_before_anything_is_written() -> None:
    deep: dict[str, Any] = {"type": "x"}
    for _ in range(40):
        deep = {"type": "x", "inner": deep}
    with pytest.raises(ValueError, match="nested more than"):
        turn(0, {"role": "user", "content": [deep]})


def test_a_session_cuts_its_context_the_settings_share_below_the_budget_once_it_outgrows_it() -> None:
    c = core(drop_headroom=0.2)
    first = turn(0, {"role": "user", "content": "Plan a week in Lisbon for two."})
    state = fresh(c, first)
    assert state.compactor.headroom_tokens == 60
    filler = (
        "Day {n}: the tram to Belem at nine, pasteis at the bakery by the monastery, then the tower and the river walk."
    )
    for n in range(1, 40):
        dropped_before = state.compactor.dropped
        c.on_turn(state, turn(n, {"role": "user" if n % 2 == 0 else "assistant", "content": filler.format(n=n)}), NOW)
        after = state.compactor.result().tokens.after
        assert after <= 300
        if state.compactor.dropped > dropped_before:  # a cut: down to 60 tokens under the budget
            assert after <= 240
    assert state.compactor.dropped > 0
