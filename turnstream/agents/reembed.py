"""Re-embedding the archive for changed models: embeddings switched on over an archive made without them, or a model
replaced.

The embedders' timer (agents/embedder.py) checks the model tags the whole archive was embedded for, on every worker;
the one worker that takes the job reads the journal from its start and embeds every entry without a vector of the
current models, except those the embedders have still to reach (`agents_share`), so no entry is embedded and
journaled twice.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from turnstream.embeddings.base import model_tag
from turnstream.embeddings.factory import ModelIds
from turnstream.embeddings.process import EmbeddingProcess
from turnstream.kafka.journal_topic import JournalReader
from turnstream.memory.journal import replay
from turnstream.redis.connect import redis_client
from turnstream.redis.keys import KeyLayout
from turnstream.redis.replay import reindex_lock
from turnstream.schemas.archive import ArchiveEntry, EmbeddedTurn
from turnstream.schemas.journal import JournalRecord, parse_key
from turnstream.settings import Settings

Keep = Callable[[str, list[EmbeddedTurn]], Awaitable[None]]
"""Stores an owner's new vectors in Redis and journals them."""
Positions = Callable[[list[int]], Awaitable[dict[int, int]]]
"""Where the embedders go on in each of these journal partitions (a partition they start from its beginning left
out)."""


async def reindex(
    settings: Settings, kafka: dict[str, Any], process: EmbeddingProcess, keep: Keep, positions: Positions
) -> int | None:
    """Embed every archived turn the journal holds that has no vector of the current models, once per set of model
    tags and by one worker; how many were embedded, None when nothing was due (or another worker is at it)."""
    assert process.models is not None, "EmbeddingProcess.load runs first"
    models = process.models
    redis = redis_client(settings)
    lock = reindex_lock(redis, KeyLayout(settings.topic_prefix))
    tags = " ".join(sorted(model_tag(model_id) for model_id in models.distinct))
    try:
        if await lock.done() == tags or not await lock.take():
            return None
        try:
            embedded = await _reembed(settings, kafka, models, process, keep, positions, lock.renew)
            if await lock.still_held():
                await lock.mark_done(tags)
        finally:
            await lock.release()
        return embedded
    finally:
        await redis.aclose()


async def _reembed(
    settings: Settings,
    kafka: dict[str, Any],
    models: ModelIds,
    process: EmbeddingProcess,
    keep: Keep,
    positions: Positions,
    renew: Callable[[], Awaitable[None]],
) -> int:
    done = 0
    async with JournalReader(settings, kafka) as reader:
        partitions = await reader.partitions()
        # asked before the journal is read: whatever the embedders commit meanwhile is journaled with its vector by then
        theirs_from = await positions(partitions)
        for partition in partitions:
            records, _ = await reader.read(partition)
            theirs = agents_share(records, theirs_from.get(partition, 0))
            for owner, kept in replay(records, time.time(), settings.owner_ttl_seconds).owners.items():
                missing = not_embedded_for(models, kept.entries, {turn.id: turn.tag for turn in kept.embedded}, theirs)
                for start in range(0, len(missing), settings.embedding_batch_size):
                    batch = missing[start : start + settings.embedding_batch_size]
                    turns = await process.embed(batch, settings.embedding_expansion_terms)
                    await keep(owner, turns)
                    done += len(turns)
                await renew()
    return done


def not_embedded_for(
    models: ModelIds, entries: Iterable[ArchiveEntry], tags: dict[str, str], theirs: set[str]
) -> list[ArchiveEntry]:
    """The entries whose vector (tag by entry id) is not of the model that would embed them now (their language's),
    leaving out the embedders' share."""
    return [
        entry
        for entry in entries
        if entry.id not in theirs and tags.get(entry.id) != model_tag(models.for_text(entry.text))
    ]


def agents_share(records: Iterable[JournalRecord], committed: int) -> set[str]:
    """Ids of the archived entries of one journal partition that the embedders have still to embed: those journaled
    at or past the offset they go on from there (0 where they have none: they then start at the partition's
    beginning), which an embedder embeds next with the current models. A re-embedding leaves them to it: embedded by
    both, an entry would be journaled twice, and the journal's latest vector record could differ from the one Redis
    kept (the expansion terms depend on the batch)."""
    share = set()
    for record in records:
        if record.offset < committed:
            continue
        try:
            kind, _, entry = parse_key(record.key)
        except ValueError:  # not a journal key (a JournalError), or not UTF-8: the replay counts it as unreadable
            continue
        if kind == "a":
            share.add(entry)
    return share
