"""The embedding agent: archived turns embedded off the context's path, in batches, from the memory journal.

The session agent writes every applied turn to its owner's archive and to the memory journal (agents/sinks.py);
this agent reads the journal's archive records, embeds each turn with its language's model (in a thread, so the
session agent's event loop keeps going while the model runs), stores the vectors and semantic postings beside the
entries (ArchiveStore.embed) and journals them (`v` records), so a Redis that loses them gets them back from the
journal, as it gets the archive, without the model. It scales with the journal's partitions, which are the turns
topic's, like the session agent.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import defaultdict
from typing import cast

import faust
from faust.types import EventT

from turnstream.embeddings.factory import Embedders
from turnstream.embeddings.turns import embed_entries
from turnstream.redis.archive import ArchiveStore
from turnstream.redis.connect import redis_client
from turnstream.redis.errors import REDIS_UNAVAILABLE
from turnstream.schemas.archive import ArchiveEntry, EmbeddedTurn
from turnstream.schemas.ids import partition_of
from turnstream.schemas.journal import JournalError, embedded_record, parse_key
from turnstream.settings import Settings
from turnstream.streams.metrics import embedding_lag_seconds, turns_embedded_total

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


def register_embedding_agent(app: faust.App, settings: Settings, embedders: Embedders) -> None:
    """Attach the agent: one per worker, on the partitions of the memory journal it is assigned."""
    journal = app.topic(settings.memory_topic, key_type=bytes, value_type=bytes, key_serializer="raw",
                        value_serializer="raw", partitions=settings.turn_partitions)

    @app.agent(journal, name=f"{settings.topic_prefix}.embedder")
    async def embed_archive(stream: faust.StreamT[bytes]) -> None:
        archive = ArchiveStore(redis_client(settings), settings)
        try:
            # Faust's Stream: take_events is not declared on StreamT
            batches = cast(faust.Stream[bytes], stream).take_events(settings.embedding_batch_size, within=BATCH_WITHIN_SECONDS)
            async for events in batches:
                owners = archived_in(list(events))
                if owners:
                    await _embed(owners, archive, embedders, settings, app)
        finally:
            await archive.redis.aclose()


async def _embed(owners: dict[str, list[tuple[ArchiveEntry, float]]], archive: ArchiveStore, embedders: Embedders,
                 settings: Settings, app: faust.App) -> None:
    """Embed one batch (the model in a thread), store it owner by owner, journal it; waits for Redis to answer."""
    entries = [entry for items in owners.values() for entry, _ in items]
    embedded = await asyncio.to_thread(embed_entries, embedders, entries, settings.embedding_expansion_terms)
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
    sent = [await app.producer.send(settings.memory_topic, *embedded_record(owner, turn), partition, None, None)
            for turn in turns]
    await asyncio.gather(*sent)
