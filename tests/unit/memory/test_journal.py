"""The memory journal's records and what a replay of them leaves (memory/journal.py)."""

from __future__ import annotations

import pytest
from aiokafka.partitioner import DefaultPartitioner
from hypothesis import given
from hypothesis import strategies as st

from turnstream.memory.journal import replay
from turnstream.schemas.archive import ArchiveEntry
from turnstream.schemas.ids import partition_of
from turnstream.schemas.journal import (
    JournalError,
    JournalRecord,
    archive_record,
    erasure_record,
    journal_key,
    parse_key,
)
from turnstream.schemas.memory import Memory

DAY = 86_400.0
ids = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=0, max_size=20)


def memory(owner: str, key: str, text: str, session: str = "s1", at: float = 1000.0) -> Memory:
    return Memory(
        id=f"id-{key}",
        owner=owner,
        type="fact",
        text=text,
        key=key,
        keywords=[key],
        importance=0.5,
        created_at=at,
        updated_at=at,
        source_session=session,
    )


def entry(id_: str, session: str = "s1", position: int = 0) -> ArchiveEntry:
    return ArchiveEntry(id_, session, position, "user", None, 1000.0, f"text of {id_}")


def record(key_value: tuple[bytes, bytes | None], at: float) -> JournalRecord:
    return JournalRecord(key_value[0], key_value[1], at)


def memory_rec(m: Memory, at: float) -> JournalRecord:
    return JournalRecord(journal_key("m", m.owner, m.id), m.model_dump_json().encode(), at)


@given(kind=st.sampled_from(["m", "a", "x"]), owner=ids, id_=ids)
def test_a_key_splits_back_into_its_parts(kind: str, owner: str, id_: str) -> None:
    assert parse_key(journal_key(kind, owner, id_)) == (kind, owner, id_)  # type: ignore[arg-type]


@pytest.mark.parametrize("key", [b"m\x1fonly-two", b"q\x1fo\x1fi", b"plain"])
def test_a_foreign_key_is_a_clear_error(key: bytes) -> None:
    with pytest.raises(JournalError, match="not a memory journal key"):
        parse_key(key)


@given(owner=st.text(min_size=1, max_size=30), partitions=st.integers(1, 64))
def test_an_owner_lands_where_kafkas_default_partitioner_puts_its_name(owner: str, partitions: int) -> None:
    every = list(range(partitions))
    assert partition_of(owner, partitions) == DefaultPartitioner()(owner.encode(), every, every)


def test_the_latest_write_of_a_memory_wins_and_keeps_the_order_of_its_latest_write() -> None:
    first, other = memory("alice", "city", "lives in Paris"), memory("alice", "pet", "has a cat")
    moved = memory("alice", "city", "lives in Lyon")
    kept = replay(
        [memory_rec(first, 1.0), memory_rec(other, 2.0), memory_rec(moved, 3.0)], now=10.0, owner_ttl_seconds=DAY
    ).owners
    assert [m.text for m in kept["alice"].memories] == ["has a cat", "lives in Lyon"]


def test_a_tombstone_removes_an_archived_turn() -> None:
    records = [
        record(archive_record("alice", entry("e1")), 1.0),
        record(archive_record("alice", entry("e2")), 2.0),
        JournalRecord(journal_key("a", "alice", "e1"), None, 3.0),
    ]
    assert [e.id for e in replay(records, 10.0, DAY).owners["alice"].entries] == ["e2"]


def test_an_erased_owner_keeps_only_what_was_written_after_the_erasure() -> None:
    records = [
        record(archive_record("alice", entry("old")), 1.0),
        memory_rec(memory("alice", "city", "Paris"), 1.5),
        record(archive_record("bob", entry("bobs")), 1.7),
        record(erasure_record("alice", None, 2.0), 2.0),
        record(archive_record("alice", entry("new")), 3.0),
    ]
    kept = replay(records, 10.0, DAY).owners
    assert [e.id for e in kept["alice"].entries] == ["new"]
    assert kept["alice"].memories == []
    assert [e.id for e in kept["bob"].entries] == ["bobs"]


def test_an_erased_session_takes_only_its_own_turns_and_memories() -> None:
    records = [
        record(archive_record("alice", entry("a1", session="s1")), 1.0),
        record(archive_record("alice", entry("b1", session="s2")), 1.0),
        memory_rec(memory("alice", "city", "Paris", session="s1"), 1.0),
        memory_rec(memory("alice", "pet", "cat", session="s2"), 1.0),
        record(erasure_record("alice", "s1", 2.0), 2.0),
    ]
    kept = replay(records, 10.0, DAY).owners["alice"]
    assert [e.id for e in kept.entries] == ["b1"]
    assert [m.key for m in kept.memories] == ["pet"]


def test_an_owner_idle_past_the_ttl_is_left_out_as_redis_would_have_expired_it() -> None:
    records = [
        record(archive_record("idle", entry("e1")), 1.0),
        record(archive_record("busy", entry("e2")), 1.0),
        record(archive_record("busy", entry("e3")), 5 * DAY),
    ]
    kept = replay(records, now=5 * DAY + 1, owner_ttl_seconds=2 * DAY).owners
    assert set(kept) == {"busy"}
    assert [e.id for e in kept["busy"].entries] == ["e2", "e3"]


@given(st.lists(st.tuples(st.sampled_from(["e1", "e2", "e3"]), st.booleans()), max_size=30))
def test_replay_keeps_exactly_the_entries_whose_latest_record_is_not_a_tombstone(
    writes: list[tuple[str, bool]],
) -> None:
    records = [
        record(archive_record("o", entry(id_)), float(n))
        if alive
        else JournalRecord(journal_key("a", "o", id_), None, float(n))
        for n, (id_, alive) in enumerate(writes)
    ]
    latest = {id_: alive for id_, alive in writes}
    replayed = replay(records, float(len(writes)), DAY)
    kept = replayed.owners.get("o")
    assert sorted(e.id for e in (kept.entries if kept else [])) == sorted(id_ for id_, alive in latest.items() if alive)
    # and what a Redis that lost deletions must drop: exactly the others
    gone = replayed.gone.get("o")
    assert (gone.entries if gone else set()) == {id_ for id_, alive in latest.items() if not alive}


def test_unreadable_records_are_counted_and_left_out_and_the_rest_replays() -> None:
    records = [
        JournalRecord(b"not a journal key", b"{}", 1.0),
        JournalRecord(journal_key("m", "alice", "broken"), b"{not json", 1.0),
        JournalRecord(journal_key("x", "alice", ""), b"{}", 1.0),
        record(archive_record("alice", entry("ok")), 2.0),
    ]
    result = replay(records, 10.0, DAY)
    assert result.unreadable == 3
    assert [e.id for e in result.owners["alice"].entries] == ["ok"]


def test_what_a_tombstone_or_an_erasure_removed_is_gone_and_what_came_back_is_not() -> None:
    city = memory("alice", "city", "Paris")
    records = [
        record(archive_record("alice", entry("evicted")), 1.0),
        record(archive_record("alice", entry("erased", session="s2")), 1.1),
        record(archive_record("alice", entry("back")), 1.2),
        memory_rec(city, 1.3),
        JournalRecord(journal_key("a", "alice", "evicted"), None, 2.0),  # the cap's tombstone
        JournalRecord(journal_key("a", "alice", "back"), None, 2.1),
        record(erasure_record("alice", "s2", 3.0), 3.0),  # the session's forget
        record(archive_record("alice", entry("back")), 4.0),  # written again after its tombstone
        JournalRecord(journal_key("v", "alice", "back"), None, 4.5),  # a vector's tombstone leaves its entry
        JournalRecord(journal_key("m", "alice", city.id), None, 5.0),
    ]
    replayed = replay(records, 10.0, DAY)
    assert [e.id for e in replayed.owners["alice"].entries] == ["back"]
    assert replayed.gone["alice"].entries == {"evicted", "erased"}
    assert replayed.gone["alice"].memories == {city.id}
    assert replayed.erased_owners == set()


def test_an_owner_erased_whole_with_nothing_written_since_is_erased_whole() -> None:
    records = [
        record(archive_record("alice", entry("old")), 1.0),
        record(archive_record("bob", entry("old")), 1.0),
        record(erasure_record("alice", None, 2.0), 2.0),
        record(erasure_record("bob", None, 2.0), 2.0),
        record(archive_record("bob", entry("new")), 3.0),  # bob came back
        record(erasure_record("carol", None, 2.0), 2.0),
    ]
    replayed = replay(records, 10.0, DAY)
    assert replayed.erased_owners == {"alice", "carol"}
    assert replayed.gone["alice"].entries == replayed.gone["bob"].entries == {"old"}
    assert replay(records, 2.0 + DAY + 0.5, DAY).erased_owners == set()  # alice and carol expired in Redis meanwhile
