"""Test data of the memory layer: a budget stated three times, archive entries, every memory-journal record."""

from __future__ import annotations

import time

from turnstream.compaction.strategies.keyinfo import KeyInfoExtractor
from turnstream.connections import kafka_options
from turnstream.kafka.journal_topic import JournalReader
from turnstream.memory import changed_facts, memories_from_facts, profile_additions
from turnstream.memory.archive import archive_entry
from turnstream.redis.memory_store import MemoryStore
from turnstream.schemas.archive import ArchiveEntry
from turnstream.schemas.ids import owner_key
from turnstream.schemas.journal import JournalRecord
from turnstream.settings import Settings

OWNER = owner_key("u1", "acme", "s1")


async def state_budget(memory: MemoryStore, owner: str = OWNER, session: str = "acme:s1") -> None:
    """Three user turns through the key-info extractor and remember(), as the write path runs them."""
    extractor, facts = KeyInfoExtractor(), ()
    for seq, text in enumerate(
        ["My budget is 2000 EUR", "Again, budget 2000 EUR", "Actually my budget is 3500 EUR, not 2000"]
    ):
        new = extractor.extract(facts, [{"role": "user", "content": text}], seq)
        memories = memories_from_facts(owner, changed_facts(facts, new), session, time.time())
        await memory.remember(owner, memories, profile_additions(memories))
        facts = new


def entries(n: int, start: int = 0) -> list[ArchiveEntry]:
    made = [
        archive_entry(
            "s1", f"t{i}", i, {"role": "user", "content": f"turn {i} about topic{i % 7} and word{i}"}, float(i)
        )
        for i in range(start, start + n)
    ]
    return [e for e in made if e is not None]


async def journal_records(settings: Settings) -> list[JournalRecord]:
    """Every record of the memory journal, partition by partition."""
    records: list[JournalRecord] = []
    async with JournalReader(settings, kafka_options(settings)) as reader:
        for partition in await reader.partitions():
            read, _ = await reader.read(partition)
            records += read
    return records
