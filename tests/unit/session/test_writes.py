"""What a batch's steps ask of Redis and the memory journal, grouped: per owner, per session, in step order."""

from __future__ import annotations

from typing import Any

from turnstream.schemas.archive import ArchiveEntry
from turnstream.schemas.journal import parse_key
from turnstream.schemas.memory import Memory, memory_id
from turnstream.session.core import Step
from turnstream.session.writes import archive_appends, changed_contexts, journal_writes, memory_writes


def memory(owner: str, key: str, text: str, created: float = 1.0) -> Memory:
    return Memory(
        id=memory_id(owner, key),
        owner=owner,
        type="preference",
        text=text,
        key=key,
        keywords=[],
        importance=0.7,
        created_at=created,
        updated_at=created,
        source_session="s1",
    )


def entry(n: int) -> ArchiveEntry:
    return ArchiveEntry(f"e{n}", "s1", n, "user", None, float(n), f"turn {n}")


def step(owner: str = "maya", session: str = "s1", **effects: Any) -> Step:
    return Step(session, owner, "applied", **effects)


def test_a_memory_corrected_later_in_the_batch_adds_only_its_last_text_to_the_profile() -> None:
    first, again = (
        memory("maya", "pref:seat", "I prefer aisle seats."),
        memory("maya", "pref:seat", "Window, not aisle."),
    )
    other = memory("kai", "pref:tea", "I like tea.")
    writes = memory_writes(
        [
            step(memories=(first,), profile_additions=(first.text,)),
            step("kai", memories=(other,), profile_additions=(other.text,)),
            step(memories=(again,), profile_additions=(again.text,)),
        ]
    )
    assert writes == {"maya": ([first, again], ["Window, not aisle."]), "kai": ([other], ["I like tea."])}


def test_archive_appends_are_per_owner_in_order_and_owners_without_any_are_left_out() -> None:
    steps = [step(archive=(entry(0),)), step("kai"), step(archive=(entry(1), entry(2)))]
    assert archive_appends(steps) == {"maya": [entry(0), entry(1), entry(2)]}


def test_the_contexts_to_write_are_the_changed_sessions_with_the_turns_each_applied() -> None:
    states: dict[str, Any] = {"s1": "state of s1", "s2": "state of s2"}
    steps = [
        step(applied_turn_id="t0", context_changed=True),
        step(session="s2", context_changed=False),
        step(applied_turn_id="t1", context_changed=True),
        step(session="s3", context_changed=True),
    ]
    states["s3"] = "state of s3"  # a summary changed it: written, with no turn applied
    assert changed_contexts(steps, states) == (
        {"s1": "state of s1", "s3": "state of s3"},
        {"s1": ["t0", "t1"], "s3": []},
    )


def test_the_journal_carries_each_memory_with_the_created_at_redis_keeps_then_the_evictions() -> None:
    corrected = memory("maya", "pref:seat", "Window, not aisle.", created=50.0)
    writes = journal_writes(
        [step(memories=(corrected,), archive=(entry(3),))],
        {"maya": {corrected.id: 10.0}},
        {"maya": ["old-memory"]},
        {"maya": ["old-entry"]},
    )
    kinds = [(owner, *parse_key(key)[::2], value is None) for owner, key, value in writes]
    assert kinds == [
        ("maya", "m", corrected.id, False),
        ("maya", "a", "e3", False),
        ("maya", "m", "old-memory", True),
        ("maya", "a", "old-entry", True),
        ("maya", "v", "old-entry", True),
    ]
    assert Memory.model_validate_json(writes[0][2] or b"").created_at == 10.0  # the first write's, not the correction's
