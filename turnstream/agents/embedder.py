"""The embedding agent: archived turns embedded off the context's path, in batches, from the memory journal.

The session agent writes every applied turn to its owner's archive and to the memory journal (agents/sinks.py);
this agent reads the journal's archive records, embeds each turn with its language's model (in a child process
below the worker's priority, embeddings/process.py, so the session agent's event loop neither waits for the model
nor shares a core with it), stores the vectors and semantic postings beside the
entries (ArchiveStore.embed) and journals them (`v` records), so a Redis that loses them gets them back from the
journal, as it gets the archive, without the model. It scales with the journal's partitions, which are the turns
topic's, like the session agent.

A changed model (or embeddings switched on over an archive made without them) re-embeds what the archive already
holds: a timer on every worker checks the model tags the whole archive was embedded for, and the one worker that
takes the job reads the journal from its start and embeds every entry without a vector of the current models,
except those the agents have still to embed (`agents_share`), so no entry is embedded and journaled twice.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, cast

import faust
from aiokafka.errors import KafkaError
from faust.types import EventT

from turnstream.embeddings.base import EmbeddingError, model_tag
from turnstream.embeddings.factory import ModelIds
from turnstream.embeddings.process import EmbeddingProcess
from turnstream.kafka.admin import faust_app_id
from turnstream.kafka.journal_topic import JournalReader, JournalReadError
from turnstream.kafka.timers import timer
from turnstream.memory.journal import replay
from turnstream.metrics import embedding_lag_seconds, turns_embedded_total
from turnstream.redis.archive import ArchiveStore
from turnstream.redis.connect import redis_client
from turnstream.redis.errors import REDIS_UNAVAILABLE
from turnstream.redis.keys import KeyLayout
from turnstream.redis.replay import reindex_lock
from turnstream.schemas.archive import ArchiveEntry, EmbeddedTurn
from turnstream.schemas.ids import partition_of
from turnstream.schemas.journal import JournalError, JournalRecord, embedded_record, parse_key
from turnstream.settings import Settings

log = logging.getLogger(__name__)

BATCH_WITHIN_SECONDS = 0.05
"""How long a batch keeps filling while records come: a few turns more per model call, a little more lag."""


def archived_in(events: list[EventT[bytes]]) -> dict[str, list[tuple[ArchiveEntry, float]]]:
    """Per owner, the archive entries the journal records of `events` carry (with when each was journaled); other
    records (memories, vectors, erasures, tombstones) and unreadable ones are left out."""
    found: defaultdict[str, list[tuple[ArchiveEntry, float]]] = defaultdict(list)
    for event in events:
        message = event.message
        if message.value is None or message.key is None:
            continue
        try:
            kind, owner, _ = parse_key(message.key)
            if kind == "a":
                found[owner].append((ArchiveEntry.from_json(message.value), message.timestamp))
        except (JournalError, ValueError, KeyError, TypeError) as error:
            log.warning("unreadable journal record at %s/%s skipped: %r", message.partition, message.offset, error)
    return dict(found)


def register_embedding_agent(app: faust.App, settings: Settings, process: EmbeddingProcess) -> None:
    """Attach the agent (one per worker, on the partitions of the memory journal it is assigned) and the
    re-embedding timer, both embedding in `process`, whose models are loaded."""
    assert process.models is not None, "EmbeddingProcess.load runs before the agents are registered"
    register_reindex(app, settings, process.models, process)
    journal = app.topic(
        settings.memory_topic,
        key_type=bytes,
        value_type=bytes,
        key_serializer="raw",
        value_serializer="raw",
        partitions=settings.turn_partitions,
    )

    @app.agent(journal, name=f"{settings.topic_prefix}.embedder")
    async def embed_archive(stream: faust.StreamT[bytes]) -> None:
        archive = ArchiveStore(redis_client(settings), settings)
        try:
            # Faust's Stream: take_events is not declared on StreamT
            batches = cast(faust.Stream[bytes], stream).take_events(
                settings.embedding_batch_size, within=BATCH_WITHIN_SECONDS
            )
            async for events in batches:
                owners = archived_in(list(events))
                if owners:
                    await _embed(owners, archive, process, settings, app)
        finally:
            await archive.redis.aclose()


async def _embed(
    owners: dict[str, list[tuple[ArchiveEntry, float]]],
    archive: ArchiveStore,
    process: EmbeddingProcess,
    settings: Settings,
    app: faust.App,
) -> None:
    """Embed one batch (in the embedding process), store it owner by owner, journal it; waits for Redis to answer."""
    entries = [entry for items in owners.values() for entry, _ in items]
    embedded = await process.embed(entries, settings.embedding_expansion_terms)
    by_id = {turn.id: turn for turn in embedded}
    for owner, items in owners.items():
        turns = [by_id[entry.id] for entry, _ in items if entry.id in by_id]
        while True:
            try:
                await archive.embed(owner, turns)
                break
            except REDIS_UNAVAILABLE as error:  # the partition waits for Redis rather than lose the vectors
                log.warning("Redis write of %d vectors failed, retrying: %r", len(turns), error)
                await asyncio.sleep(1.0)
        await _journal(app, settings, owner, turns)
        now = time.time()
        for _, journaled in items:
            embedding_lag_seconds.observe(max(0.0, now - journaled))
    turns_embedded_total.inc(len(embedded))


async def _journal(app: faust.App, settings: Settings, owner: str, turns: list[EmbeddedTurn]) -> None:
    partition = partition_of(owner, settings.turn_partitions)
    sent = [
        await app.producer.send(settings.memory_topic, *embedded_record(owner, turn), partition, None, None)
        for turn in turns
    ]
    await asyncio.gather(*sent)


async def reindex(
    settings: Settings, kafka: dict[str, Any], models: ModelIds, process: EmbeddingProcess, app: faust.App
) -> int | None:
    """Embed every archived turn the journal holds that has no vector of the current models, once per set of model
    tags and by one worker; how many were embedded, None when nothing was due (or another worker is at it)."""
    redis = redis_client(settings)
    lock = reindex_lock(redis, KeyLayout(settings.topic_prefix))
    tags = " ".join(sorted(model_tag(model_id) for model_id in models.distinct))
    try:
        if await lock.done() == tags or not await lock.take():
            return None
        try:
            archive = ArchiveStore(redis, settings)
            embedded = await _reembed(settings, kafka, models, process, app, archive, lock.renew)
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
    app: faust.App,
    archive: ArchiveStore,
    renew: Callable[[], Awaitable[None]],
) -> int:
    done = 0
    async with JournalReader(settings, kafka) as reader:
        partitions = await reader.partitions()
        # asked before the journal is read: whatever the agents commit meanwhile is journaled with its vector by then
        committed = await reader.committed(faust_app_id(settings), partitions)
        for partition in partitions:
            records, _ = await reader.read(partition)
            theirs = agents_share(records, committed.get(partition, 0))
            for owner, kept in replay(records, time.time(), settings.owner_ttl_seconds).owners.items():
                tags = {turn.id: turn.tag for turn in kept.embedded}
                # an entry is done when its vector is of the model that would embed it now (its language's)
                missing = [
                    entry
                    for entry in kept.entries
                    if entry.id not in theirs and tags.get(entry.id) != model_tag(models.for_text(entry.text))
                ]
                for start in range(0, len(missing), settings.embedding_batch_size):
                    batch = missing[start : start + settings.embedding_batch_size]
                    turns = await process.embed(batch, settings.embedding_expansion_terms)
                    await archive.embed(owner, turns)
                    await _journal(app, settings, owner, turns)
                    done += len(turns)
                await renew()
    return done


def agents_share(records: Iterable[JournalRecord], committed: int) -> set[str]:
    """Ids of the archived entries of one journal partition that the embedding agents have still to embed: those
    journaled at or past the offset their group committed there (0 where it committed none: an agent then starts at
    the partition's beginning), which an agent embeds next with the current models. A re-embedding leaves them to
    it: embedded by both, an entry would be journaled twice, and the journal's latest vector record could differ
    from the one Redis kept (the expansion terms depend on the batch)."""
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


def register_reindex(app: faust.App, settings: Settings, models: ModelIds, process: EmbeddingProcess) -> None:
    """Check every TURNSTREAM_RESYNC_INTERVAL_SECONDS (or a minute), on every worker, whether the archive needs
    re-embedding for the current models."""

    @timer(app, settings.resync_interval_seconds or 60, name=f"{settings.topic_prefix}.embedding_reindex")
    async def reembed_archive() -> None:
        try:
            embedded = await reindex(settings, app.kafka_options, models, process, app)  # type: ignore[attr-defined]
        except REDIS_UNAVAILABLE as error:
            log.info("archive re-embedding skipped, Redis does not answer: %s", error)
            return
        except (KafkaError, JournalReadError) as error:
            log.warning("archive re-embedding failed reading the journal, tried again later: %s", error)
            return
        except EmbeddingError as error:  # the worker is stopping, or its embedding process is gone
            log.warning("archive re-embedding stopped: %s", error)
            return
        if embedded:
            turns_embedded_total.inc(embedded)
            log.warning("re-embedded %d archived turns for the current models", embedded)
