"""SessionCompactor: validation against its state, bounded work and state, digest hand-offs."""

from __future__ import annotations

import orjson
import pytest

from turnstream.compaction import MessageError
from turnstream.compaction import compactor as compactor_module
from turnstream.compaction.compactor import compact
from turnstream.compaction.incremental import SessionCompactor
from turnstream.compaction.strategies.base import ArchivedTurn, Digest, Fact, Message
from turnstream.session.row_format import compactor_bytes, compactor_from_bytes, compactor_from_row, compactor_row

from .helpers import Recorder, call, result, sys_, thought, user

FILLER = "checking the train times between tokyo and kyoto for the second day "


def conversation(n: int) -> list[dict]:
    return [sys_(), user("plan the trip"), *((thought if i % 2 else user)(f"{i} {FILLER}") for i in range(n))]


def test_append_returns_the_dropped_span_after_folding_it() -> None:
    session = SessionCompactor(150, strategy=Recorder())
    spans = [session.append(message) for message in conversation(12)]
    dropped = [m for span in spans for m in span]
    assert len(dropped) == session.result().dropped > 0
    assert session.digest.summary == "Earlier turns were dropped."


def test_a_bad_append_raises_and_changes_nothing() -> None:
    session = SessionCompactor(200)
    for message in [sys_(), user("go"), call("a", "b"), result("a")]:
        session.append(message)
    before = compactor_bytes(session)
    for bad in [user("too early"), result("zz"), {"role": "tool"}, {"role": "robot", "content": "x"}]:
        with pytest.raises(MessageError) as raised:
            session.append(bad)
        assert raised.value.index == 4
    assert compactor_bytes(session) == before
    session.append(result("b"))
    assert session.result().messages[-1]["tool_call_id"] == "b"


def test_pending_calls_survive_serialization() -> None:
    session = SessionCompactor(200)
    for message in [sys_(), user("go"), call("a", "b"), result("a")]:
        session.append(message)
    restored = compactor_from_bytes(compactor_bytes(session))
    with pytest.raises(MessageError, match="still waiting for 'b'"):
        restored.append(user("hurry"))
    restored.append(result("b"))


def test_each_message_is_counted_once(monkeypatch: pytest.MonkeyPatch) -> None:
    counted: list[Message] = []
    real = compactor_module.count_message
    monkeypatch.setattr(compactor_module, "count_message", lambda m: counted.append(m) or real(m))
    session = SessionCompactor(300)
    messages = conversation(1000)
    for message in messages:
        session.append(message)
        session.result()
    # one count per message (the marker's cost is cached per language)
    assert len(counted) == len(messages)
    assert all(a is b for a, b in zip(counted, messages))


def test_state_size_depends_on_the_budget_not_the_length() -> None:
    sizes = []
    for n in (100, 2000):
        session = SessionCompactor(400)
        for message in conversation(n):
            session.append(message)
        sizes.append(len(compactor_bytes(session)))
    assert sizes[1] < sizes[0] * 1.2


def test_replace_digest_folds_in_a_late_llm_summary_and_facts() -> None:
    session = SessionCompactor(300, strategy=Recorder())
    for message in conversation(20):
        session.append(message)
    tail_before = len(session.result().messages)
    facts = (Fact("fact", "The user chose flight CA929.", "flight", 3),)
    pushed = session.replace_digest("The user plans ten days in Japan. " * 10, facts)
    res = session.result()
    assert res.summary.startswith("The user plans ten days") and res.facts[0] == facts[0]  # the pushed span folds after
    block = res.messages[res.marker_index + 1]["content"]  # type: ignore[index]
    assert "The user plans ten days" in block and "CA929" in block
    assert pushed and len(res.messages) < tail_before
    assert res.tokens.after <= 300


def test_archived_turns_are_collected_across_folds_and_taken_once() -> None:
    class Archive:
        name = "archive"

        def apply(self, digest: Digest, dropped: list, first_seq: int) -> Digest:
            turns = tuple(ArchivedTurn(first_seq + i, m, ("k",)) for i, m in enumerate(dropped))
            return Digest(digest.summary, digest.facts, turns)

    session = SessionCompactor(150, strategy=Archive())
    for message in conversation(30):
        session.append(message)
    assert session.result().digest.archived == compact(conversation(30), 150, strategy=Archive()).digest.archived
    restored = compactor_from_bytes(compactor_bytes(session))
    taken = restored.take_archived()
    assert [turn.seq for turn in taken] == list(range(2, 2 + restored.result().dropped))
    assert restored.take_archived() == () and restored.result().digest.archived == ()


def test_an_unknown_state_format_is_refused() -> None:
    blob = orjson.loads(compactor_bytes(SessionCompactor(100)))
    blob["v"] = 99
    with pytest.raises(ValueError, match="format"):
        compactor_from_bytes(orjson.dumps(blob))


def test_times_travel_with_the_state_and_a_row_without_them_restores() -> None:
    session = SessionCompactor(400)
    session.append(user("plan the trip"), ts=1_683_540_000.0)
    session.append(user("and the hotel"))
    state = compactor_row(session)
    assert state["anchors"][0][3] == 1_683_540_000.0 and len(state["units"][0][0]) == 3  # no time: the old row shape
    restored = compactor_from_row(orjson.loads(orjson.dumps(state)))
    assert restored.anchors[0].ts == 1_683_540_000.0 and restored.units[0].entries[0].ts is None
    assert compactor_row(restored) == state


def test_a_fold_hands_the_span_its_times_and_clears_them() -> None:
    recorder = Recorder()
    session = SessionCompactor(60, strategy=recorder)
    for i, message in enumerate(conversation(8)):
        session.append(message, ts=1_683_540_000.0 + i)
    assert recorder.times and all(len(times) == len(span) for times, (_, span) in zip(recorder.times, recorder.spans))
    assert session.digest.times == ()


def _oversized_step() -> list[Message]:
    """A lookup whose result cannot fit a 300-token window whole: its last line's id lies past any cut of its text."""
    lines = [{"line_id": f"LN-{n:05d}", "note": "roaming enabled, data pack renewed monthly " * 2} for n in range(40)]
    return [
        sys_(),
        user("my son's phone has no data"),
        call("c1", args='{"customer_id": "CUS-1"}'),
        result("c1", orjson.dumps({"customer_id": "CUS-1", "lines": lines}).decode()),
    ]


def test_a_result_cut_to_fit_the_tail_is_folded_archived_and_popped_whole() -> None:
    whole = _oversized_step()[-1]

    class Archive:
        name = "archive"

        def apply(self, digest: Digest, dropped: list, first_seq: int) -> Digest:
            turns = tuple(ArchivedTurn(first_seq + i, m, ()) for i, m in enumerate(dropped))
            return Digest(digest.summary, digest.facts, turns)

    session = SessionCompactor(300, strategy=Archive())
    for message in _oversized_step():
        session.append(message)
    kept = session.result().messages[-1]
    assert kept["role"] == "tool" and kept != whole and "LN-00039" in whole["content"]  # the tail holds a cut copy
    restored = compactor_from_bytes(compactor_bytes(session), Archive())  # the whole result travels with the state
    assert restored.units[-1].entries[-1].said == whole
    dropped = [m for text in ("thanks", "and the bill?", "the July one") for m in restored.append(user(text))]
    assert whole in dropped  # what a fold, a summarizer and the archive get
    assert whole in [turn.message for turn in restored.take_archived()]

    popped = SessionCompactor(300)
    for message in _oversized_step():
        popped.append(message)
    assert popped.pop_newest(3) == whole


def test_the_facts_of_a_result_cut_in_the_tail_hold_what_the_cut_left_out() -> None:
    from turnstream.compaction.strategies.keyinfo import KeyInfoExtractor

    session = SessionCompactor(300, strategy=KeyInfoExtractor())
    for message in [*_oversized_step(), user("thanks"), user("and the bill?"), user("the July one")]:
        session.append(message)
    [fact] = [fact for fact in session.digest.facts if fact.key.startswith("data:")]
    # read from the whole JSON: keyed by the record it is about, with no cut copy's note in it
    assert fact.key == "data:#CUS-1" and "LN-00039" in fact.text and "trimmed" not in fact.text
