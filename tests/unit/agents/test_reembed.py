"""What a re-embedding leaves to the embedding agents: the entries journaled at or past their committed offset."""

from __future__ import annotations

from turnstream.agents.reembed import agents_share
from turnstream.schemas.archive import ArchiveEntry, EmbeddedTurn
from turnstream.schemas.journal import JournalRecord, archive_record, embedded_record, journal_key


def archived(entry: str, offset: int) -> JournalRecord:
    key, value = archive_record("alice", ArchiveEntry(entry, "s1", offset, "user", None, 1000.0, f"text of {entry}"))
    return JournalRecord(key, value, 1.0, offset)


def test_the_agents_share_is_the_entries_journaled_from_their_committed_offset_on() -> None:
    vector = EmbeddedTurn("e1", "s1", 0, "m", b"\x00", ())
    records = [
        archived("e0", 0),
        archived("e1", 1),
        JournalRecord(*embedded_record("alice", vector), 1.0, 2),  # e1's vector: not an entry to embed
        archived("e3", 3),
        JournalRecord(journal_key("a", "alice", "gone"), None, 1.0, 4),  # a tombstone names the entry it removes
        JournalRecord(b"not a journal key", b"{}", 1.0, 5),
    ]
    assert agents_share(records, committed=3) == {"e3", "gone"}
    assert agents_share(records, committed=0) == {"e0", "e1", "e3", "gone"}  # no commit: the agent reads it all
    assert agents_share(records, committed=6) == set()
