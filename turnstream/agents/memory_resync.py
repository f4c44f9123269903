"""Memory re-sync: after Redis lost data, memories, profiles and the recall archive come back from the journal.

Each worker checks, every TURNSTREAM_RESYNC_INTERVAL_SECONDS, one key that is set once the memory journal
(memory/journal.py) has been replayed into this Redis, to the primary's replication id at the replay's start;
FLUSHALL or a Redis restarted empty removes it, and a replica promoted after its primary died (which may lack
writes the primary acknowledged) has another id (redis/replication.py). Either makes the replay due: the
worker that takes the replay lock reads every journal partition to its end, keeps what the records leave
(latest per key, erasures and expired owners left out) and writes it back through the same upserts and
appends the session agent uses, partition by partition; then it reads each partition again from where it
stopped, for what the session agents wrote meanwhile, and sets the key. Over a Redis that kept most of the
data the writes are no-ops but for what is missing: an archived turn already there is not appended again,
a memory is rewritten as it stands, a profile line already present is not added. After a failover the replay
also deletes what the journal says is gone, since the promoted replica may lack deletions as it lacks writes: the
memories and archived turns whose latest record is a tombstone (a cap's eviction, a forget) or older than an
erasure, and every key of an owner erased whole with nothing written since.

Profiles are rebuilt by appending the restored facts and preferences, as on the write path; an LLM-merged
profile is merged again on its next summary. Access counts and recall lists start over.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from aiokafka.errors import KafkaError

from turnstream.kafka.delivery_policy import App
from turnstream.kafka.journal_topic import JournalReader, JournalReadError
from turnstream.kafka.timers import timer
from turnstream.memory import profile_additions
from turnstream.memory.journal import Replay, replay
from turnstream.metrics import journal_replayed_total, redis_failovers_detected_total
from turnstream.redis.archive import ArchiveStore
from turnstream.redis.connect import redis_client
from turnstream.redis.erase import Eraser
from turnstream.redis.errors import REDIS_UNAVAILABLE
from turnstream.redis.keys import KeyLayout
from turnstream.redis.memory_store import MemoryStore
from turnstream.redis.replay import JobLock, replay_lock
from turnstream.redis.replication import Lineage, lineage, replication_id
from turnstream.schemas.journal import JournalRecord
from turnstream.settings import Settings

log = logging.getLogger(__name__)

CHUNK = 200
"""Memories or archive entries per Redis call."""


@dataclass
class Replayed:
    owners: set[str] = field(default_factory=set)
    memories: int = 0
    """Memories written (each rewritten as the journal has it: one that was there is unchanged)."""
    entries: int = 0
    """Archived turns appended: those Redis did not hold."""
    unreadable: int = 0
    """Journal records this version could not read (left out)."""
    removed: int = 0
    """Memories and archived turns Redis still held though the journal says they are gone (a failover's lost
    deletions)."""
    erased: int = 0
    """Owners erased whole again: their erasure was among the lost writes."""


async def _write_back(
    left: Replay, memory: MemoryStore, archive: ArchiveStore, done: Replayed, eraser: Eraser | None
) -> None:
    """Every owner's memories (the owners sharing each round trip, as on the write path), then archived turns and
    their vectors; with `eraser` (after a failover), the deletions first: what the journal says is gone."""
    done.unreadable += left.unreadable
    if eraser is not None:
        await _remove_gone(left, eraser, done)
    longest = max((len(kept.memories) for kept in left.owners.values()), default=0)
    for start in range(0, longest, CHUNK):
        chunks = {owner: kept.memories[start : start + CHUNK] for owner, kept in left.owners.items()}
        await memory.remember_many({owner: (chunk, profile_additions(chunk)) for owner, chunk in chunks.items()})
    for owner, kept in left.owners.items():
        for start in range(0, len(kept.entries), CHUNK):
            # only what is missing is indexed and appended: after a failover that is a few turns an owner
            done.entries += await archive.append(
                owner, await archive.missing(owner, kept.entries[start : start + CHUNK])
            )
        await archive.embed(owner, kept.embedded)  # after the entries they belong to
        done.owners.add(owner)
        done.memories += len(kept.memories)


async def _remove_gone(left: Replay, eraser: Eraser, done: Replayed) -> None:
    """Delete what Redis may hold though the journal says it is gone: owners erased whole, and the memories and
    archived turns whose latest record is a tombstone or older than an erasure. A replica promoted after its
    primary died may lack the deletions it acknowledged, as it may lack the writes."""
    for owner in sorted(left.erased_owners):
        held = await eraser.erase_owner(owner, await eraser.sessions_of(owner), dry_run=False)
        if any(held.values()):
            done.erased += 1
            log.warning("owner %s was erased, but Redis held some of its data (%s): erased again", owner, dict(held))
    for owner, gone in left.gone.items():
        if owner not in left.erased_owners:
            done.removed += await eraser.memories.forget(owner, gone.memories)
            done.removed += await eraser.archive.evict_entries(owner, gone.entries)


async def replay_journal(
    settings: Settings,
    kafka: dict[str, Any],
    memory: MemoryStore,
    archive: ArchiveStore,
    renew: Callable[[], Awaitable[None]],
    eraser: Eraser | None = None,
) -> Replayed:
    """Write back what the journal holds, then what was appended to it meanwhile; counts of what was written. With
    `eraser`, also delete what the journal says is gone (after a failover, not after a flush: nothing is there)."""
    done = Replayed()
    positions: dict[int, int] = {}
    async with JournalReader(settings, kafka) as reader:
        for partition in await reader.partitions():
            records, positions[partition] = await reader.read(partition)
            await _write_back(_kept(records, settings), memory, archive, done, eraser)
            await renew()
        for partition, start in positions.items():  # the session agents kept writing: Redis must end on their latest
            records, _ = await reader.read(partition, start)
            await _write_back(_kept(records, settings), memory, archive, done, eraser)
    return done


def _kept(records: list[JournalRecord], settings: Settings) -> Replay:
    return replay(records, time.time(), settings.owner_ttl_seconds)


def replay_due(state: Lineage) -> bool:
    """Whether the journal must be replayed: this Redis lost everything (no mark) or may have lost acknowledged
    writes (its primary changed since the last replay)."""
    return state in (Lineage.UNMARKED, Lineage.CHANGED)


async def _due(lock: JobLock, current: str | None) -> tuple[Lineage, str | None]:
    """The replay mark's lineage against `current`, and the mark; a mark without an id takes the current one."""
    marked = await lock.done()
    state = lineage(marked, current)
    if state is Lineage.FIRST_SIGHT and current is not None:
        await lock.mark_done(current)
    return state, marked


async def resync_memories(settings: Settings, kafka: dict[str, Any]) -> Replayed | None:
    """Replay the journal if this Redis has not had it (or may have lost some of it) and no other worker is at it;
    None when nothing was due."""
    redis = redis_client(settings)
    lock = replay_lock(redis, KeyLayout(settings.topic_prefix))
    try:
        current = await replication_id(redis)
        if not replay_due((await _due(lock, current))[0]) or not await lock.take():
            return None
        try:
            state, marked = await _due(lock, current)  # again: a replay may have ended between the look and the lock
            if not replay_due(state):
                return None
            if state is Lineage.CHANGED:
                _failover_seen(marked, current)
            eraser = Eraser(redis, settings) if state is Lineage.CHANGED else None
            done = await replay_journal(
                settings, kafka, MemoryStore(redis, settings), ArchiveStore(redis, settings), lock.renew, eraser
            )
            if await lock.still_held():
                await lock.mark_done(current or repr(time.time()))
        finally:
            await lock.release()
        return done
    finally:
        await redis.aclose()


def _failover_seen(marked: str | None, current: str | None) -> None:
    redis_failovers_detected_total.labels("journal").inc()
    log.warning(
        "Redis's primary changed since the memory journal was last replayed into it (replication id %s, now %s): "
        "acknowledged writes may be lost; replaying the journal",
        marked,
        current,
    )


def register_memory_resync(app: App, settings: Settings) -> None:
    """Check every TURNSTREAM_RESYNC_INTERVAL_SECONDS, on every worker, whether Redis needs the journal replayed."""
    if not settings.resync_interval_seconds:
        return

    @timer(app, settings.resync_interval_seconds, name=f"{settings.topic_prefix}.memory_resync")
    async def resync_lost_memories() -> None:
        started = time.monotonic()
        try:
            done = await resync_memories(settings, app.kafka_options)
        except REDIS_UNAVAILABLE as error:
            log.info("memory re-sync skipped, Redis does not answer: %s", error)  # the next check tries again
            return
        except (KafkaError, JournalReadError) as error:
            log.warning(
                "memory re-sync failed reading the journal, tried again in %ss: %s",
                settings.resync_interval_seconds,
                error,
            )
            return
        if done is None:
            return
        journal_replayed_total.labels("memory").inc(done.memories)
        journal_replayed_total.labels("archive").inc(done.entries)
        log.warning(
            "replayed the memory journal into Redis in %.1f s: %d memories written and %d missing archived turns "
            "appended, of %d owners%s%s",
            time.monotonic() - started,
            done.memories,
            done.entries,
            len(done.owners),
            f"; {done.removed} memories and archived turns the journal says are gone removed, "
            f"{done.erased} erased owners erased again"
            if done.removed or done.erased
            else "",
            f"; {done.unreadable} unreadable records left out" if done.unreadable else "",
        )
