"""A session's context at an earlier version, rebuilt from its log records with the worker's rules."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from tests.support.conversations import turns_for
from turnstream.schemas.context import ContextDoc
from turnstream.schemas.control import forget_record
from turnstream.schemas.headers import REASON_HEADER
from turnstream.schemas.turn import Turn
from turnstream.session import CoreConfig, SessionCore, SessionState
from turnstream.session.replay import LogRecord, Rebuilt, ReplayRules, Target, differences, rebuild
from turnstream.settings import Settings
from turnstream.testing import World, executor, record

pytestmark = pytest.mark.unit

TURNS = "t.turns"
SETTINGS = Settings(budget_tokens=300, topic_prefix="t")
RULES = ReplayRules.from_settings(SETTINGS)
CONVERSATION = turns_for("s1", seed=5, count=60)


def core() -> SessionCore:
    return SessionCore(CoreConfig.from_settings(SETTINGS))


def log(turn: dict[str, Any], key: bytes | None = b"s1", forwarded: bytes | None = None, at: float = 0.0) -> LogRecord:
    """The turns topic's record of `turn` (a worker's copy when `forwarded` names why), produced at its `ts`."""
    headers = [(REASON_HEADER, forwarded)] if forwarded else []
    return LogRecord(TURNS, key, orjson.dumps(turn), headers, at or float(turn["ts"]))


def replayed(records: list[LogRecord], target: Target | None = None, key: str = "s1") -> Rebuilt:
    return rebuild(core(), key, records, target, RULES)


def stepped(turns: list[dict[str, Any]]) -> SessionState:
    """The state after each turn went once through the core, in order: what a replay must come back to."""
    c = core()
    items = [Turn(**turn) for turn in turns]
    state = c.new_state(items[0])
    for item in items:
        c.on_turn(state, item, item.ts or 0.0)
    return state


def content(doc: ContextDoc | None) -> dict[str, Any]:
    assert doc is not None
    return doc.model_dump(exclude={"updated_at", "timings"})


def doc_of(state: SessionState) -> ContextDoc:
    return core().context_doc(state, 0.0, {})


@hypothesis_settings(max_examples=25)
@given(st.integers(1, len(CONVERSATION)))
def test_the_replay_to_version_n_is_the_state_after_n_turns(n: int) -> None:
    rebuilt = replayed([log(turn) for turn in CONVERSATION], Target(version=n))
    assert content(rebuilt.doc) == content(doc_of(stepped(CONVERSATION[:n])))
    assert rebuilt.doc is not None and rebuilt.doc.version == n and rebuilt.doc.last_turn_id == f"s1-{n - 1}"
    assert (rebuilt.latest, rebuilt.turns, rebuilt.refused, rebuilt.erased) == (60, 60, 0, False)


@hypothesis_settings(max_examples=25)
@given(st.lists(st.integers(0, len(CONVERSATION) - 1), max_size=40), st.integers(1, len(CONVERSATION)))
def test_redelivered_turns_change_no_version(again: list[int], n: int) -> None:
    """Each turn redelivered anywhere after its first delivery (at-least-once): skipped as the worker skips it."""
    records = [log(turn) for turn in CONVERSATION]
    for position in sorted(again, reverse=True):
        records.insert(position + 1 + len(again) % 3, log(CONVERSATION[position]))
    rebuilt = replayed(records, Target(version=n))
    assert content(rebuilt.doc) == content(doc_of(stepped(CONVERSATION[:n])))
    assert rebuilt.latest == len(CONVERSATION)


def test_at_a_turn_the_replay_stops_after_the_turn_that_applied_it() -> None:
    rebuilt = replayed([log(turn) for turn in CONVERSATION], Target(turn_id="s1-19"))
    assert content(rebuilt.doc) == content(doc_of(stepped(CONVERSATION[:20])))


def test_a_version_the_log_does_not_reach_is_no_document() -> None:
    rebuilt = replayed([log(turn) for turn in CONVERSATION[:12]], Target(version=40))
    assert (rebuilt.doc, rebuilt.latest, rebuilt.turns) == (None, 12, 12)
    assert replayed([log(turn) for turn in CONVERSATION[:12]], Target(turn_id="nope")).doc is None


def test_without_a_target_the_replay_gives_the_latest_document() -> None:
    rebuilt = replayed([log(turn) for turn in CONVERSATION])
    assert content(rebuilt.doc) == content(doc_of(stepped(CONVERSATION)))


def test_other_sessions_refused_records_and_tombstones_are_skipped() -> None:
    other = turns_for("s2", seed=6, count=10)
    records = [log(turn) for turn in CONVERSATION[:30]]
    records[3:3] = [LogRecord(TURNS, b"s1", b"{not json", [], 1.0), LogRecord(TURNS, b"s1", None, [], 1.0)]
    records[8:8] = [log(turn, key=b"s2") for turn in other]
    rebuilt = replayed(records, Target(version=30))
    assert content(rebuilt.doc) == content(doc_of(stepped(CONVERSATION[:30])))
    assert rebuilt.refused == 1
    assert content(replayed(records, Target(version=10), key="s2").doc) == content(doc_of(stepped(other)))


def test_a_misrouted_turn_applies_where_its_forwarded_copy_comes_in_seq_order() -> None:
    """Turn 5 keyed wrong is forwarded by a worker and overtaken by turn 6's forwarded copy, which waits for it; once
    turn 5 applies, turn 6 is sent round again and applies: the log holds every pass, as the worker made them."""
    first, (five, six), rest = CONVERSATION[:5], CONVERSATION[5:7], CONVERSATION[7:20]
    records = [
        *(log(turn) for turn in first),
        log(five, key=b"elsewhere"),  # misrouted: the worker forwards it, nothing happens here
        log(six, forwarded=b"wrong_key"),  # a forwarded turn ahead of its gap: held
        log(five, forwarded=b"wrong_key"),  # fills the gap: applied, turn 6 released
        log(six, forwarded=b"reordered"),  # the released copy: applied
        *(log(turn) for turn in rest),
    ]
    rebuilt = replayed(records, Target(version=20))
    assert content(rebuilt.doc) == content(doc_of(stepped(CONVERSATION[:20])))


def test_a_forget_erases_the_session_and_its_later_turns_stay_dropped() -> None:
    records = [log(turn) for turn in CONVERSATION[:10]]
    records.append(LogRecord(TURNS, b"s1", forget_record("s1", 1_700_000_010.0), [], 1_700_000_010.0))
    records += [log(turn, at=1_700_000_011.0) for turn in turns_for("s1", seed=7, count=5)]
    rebuilt = replayed(records, Target(version=3))
    assert (rebuilt.doc, rebuilt.erased, rebuilt.latest) == (None, True, 0)


def test_a_session_idle_past_its_ttl_starts_afresh() -> None:
    ttl = RULES.session_ttl_seconds
    later = [{**turn, "turn_id": f"late-{turn['seq']}"} for turn in turns_for("s1", seed=8, count=6)]
    records = [log(turn) for turn in CONVERSATION[:10]]
    records += [log(turn, at=float(CONVERSATION[9]["ts"]) + ttl + 1) for turn in later]
    rebuilt = replayed(records, Target(version=6))
    assert content(rebuilt.doc) == content(doc_of(stepped(later)))
    assert (rebuilt.latest, rebuilt.turns) == (6, 6)
    within = records[:10] + [log(turn, at=float(CONVERSATION[9]["ts"]) + ttl - 1) for turn in later]
    assert replayed(within, Target(version=6)).doc is not None and replayed(within).latest == 10  # seq: replays


def test_the_replay_rebuilds_what_the_worker_stored_whatever_its_batches() -> None:
    """The executor (turnstream.testing's in-memory sinks) steps records in batches; the replay, one at a time."""
    sessions = {f"w{i}": turns_for(f"w{i}", seed=20 + i, count=40) for i in range(3)}
    interleaved = [turns[i] for i in range(40) for turns in sessions.values()]
    values = [orjson.dumps(turn) for turn in interleaved]
    keys = [turn["session_id"].encode() for turn in interleaved]
    values[10:10], keys[10:10] = [b"{broken", values[4]], [b"w0", keys[4]]  # a refused record and a redelivery
    events = [record(value, key, offset) for offset, (value, key) in enumerate(zip(values, keys))]
    world = World()
    for start in range(0, len(events), 7):
        batch = events[start : start + 7]
        asyncio.run(executor(world).store_then_acknowledge(batch, world.acknowledge))
    records = [LogRecord(TURNS, e.message.key, e.message.value, [], e.message.timestamp) for e in events]
    for key in sessions:
        stored = doc_of(SessionState.restore(world.rows[key]))
        assert content(replayed(records, key=key).doc) == content(stored), key


def test_differences_name_the_content_fields_that_differ_and_never_the_times() -> None:
    doc = doc_of(stepped(CONVERSATION[:20]))
    other = doc.model_copy(update={"updated_at": 5.0, "timings": {"compaction": 1.0}})
    assert differences(doc, other) == []
    changed = other.model_copy(update={"summary": "else", "dropped": doc.dropped + 1})
    assert differences(doc, changed) == ["dropped", "summary"]


@pytest.mark.parametrize("target", [{}, {"version": 3, "turn_id": "t"}])
def test_a_target_is_a_version_or_a_turn(target: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="a version or a turn id"):
        Target(**target)
