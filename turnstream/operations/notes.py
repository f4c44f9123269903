"""A note written outside the worker (the MCP server's `remember`) as a durable typed memory.

Redis is a projection of the memory journal, so a note goes to the journal first (acks=all) and then into
Redis; the worker writes its own memories the other way round because a crash in between replays the turns
that made them, while a note has no turn to replay. A journal append that fails leaves nothing written; a Redis
write that fails after it leaves the note durable, back in Redis at the next re-sync. Evictions the owner's
cap makes are tombstoned in the journal after the upsert, as the worker's journal sink does.
"""

from __future__ import annotations

from turnstream.kafka.journal_topic import append_records
from turnstream.redis.memory_store import MemoryStore
from turnstream.schemas.journal import journal_key, memory_record
from turnstream.schemas.memory import Memory
from turnstream.settings import Settings


async def record_note(settings: Settings, store: MemoryStore, memory: Memory) -> list[str]:
    """Journal `memory`, upsert it into Redis; the ids of the owner's memories the cap evicted (tombstoned)."""
    await append_records(settings, [(memory.owner, *memory_record(memory))])
    evicted = await store.remember(memory.owner, [memory])
    if evicted:
        await append_records(settings, [(memory.owner, journal_key("m", memory.owner, id_), None) for id_ in evicted])
    return evicted
