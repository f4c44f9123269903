"""The embedding agent: archived turns embedded off the context's path, in batches, from the memory journal.

The session agent writes every applied turn to its owner's archive and to the memory journal (agents/sinks.py);
this agent reads the journal's archive records, embeds each turn with its language's model (in a child process
below the worker's priority, embeddings/process.py, so the session agent's event loop neither waits for the model
nor shares a core with it), stores the vectors and semantic postings beside the entries (ArchiveStore.embed) and
journals them (`v` records), so a Redis that loses them gets them back from the journal, as it gets the archive,
without the model.

It reads the journal with a consumer of its own, in a group of its own (`<prefix>-embedder`), not as a Faust
agent: Faust feeds every topic of the app from one consumer, and a record that finds an agent's buffer full is
awaited in that consumer's one delivery loop, so a model slower than the traffic held back the turns topic too
(decision 0047). Here the embedder falls behind alone, and says so in `turnstream_embedding_lag_seconds`. It scales
with the journal's partitions, which are the turns topic's, like the session agent; its group balances them among
the workers' embedders.

A changed model (or embeddings switched on over an archive made without them) re-embeds what the archive already
holds (agents/reembed.py), checked by this service's timer.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

import faust
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRecord, TopicPartition
from aiokafka.abc import ConsumerRebalanceListener
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import CommitFailedError, ConsumerStoppedError, KafkaError
from mode import Service
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, wait_exponential

from turnstream.agents.reembed import reindex
from turnstream.embeddings.base import EmbeddingError
from turnstream.embeddings.process import EmbeddingProcess, EmbeddingProcessDied
from turnstream.kafka.admin import embedder_group, faust_app_id
from turnstream.kafka.groups import group_commits
from turnstream.kafka.journal_topic import JournalReadError
from turnstream.metrics import embedding_lag_seconds, embedding_restarts_total, turns_embedded_total
from turnstream.redis.archive import ArchiveStore
from turnstream.redis.connect import redis_client
from turnstream.redis.errors import REDIS_UNAVAILABLE
from turnstream.schemas.archive import ArchiveEntry, EmbeddedTurn
from turnstream.schemas.ids import partition_of
from turnstream.schemas.journal import JournalError, embedded_record, parse_key
from turnstream.settings import Settings

log = logging.getLogger(__name__)

FETCH_SECONDS = 1.0
"""How long one fetch waits for journal records before the loop looks again whether it should stop."""

Journaled = tuple[ArchiveEntry, float]
"""An archived entry and when it was journaled (epoch seconds)."""


def archived_in(records: Iterable[ConsumerRecord[bytes, bytes]]) -> dict[str, list[Journaled]]:
    """Per owner, the archive entries the journal `records` carry (with when each was journaled); other records
    (memories, vectors, erasures, tombstones) and unreadable ones are left out."""
    found: defaultdict[str, list[Journaled]] = defaultdict(list)
    for record in records:
        if record.value is None or record.key is None:
            continue
        try:
            kind, owner, _ = parse_key(record.key)
            if kind == "a":
                found[owner].append((ArchiveEntry.from_json(record.value), record.timestamp / 1000))
        except (JournalError, ValueError, KeyError, TypeError) as error:
            log.warning("unreadable journal record at %s/%s skipped: %r", record.partition, record.offset, error)
    return dict(found)


async def embedding_positions(settings: Settings, kafka: dict[str, Any], partitions: list[int]) -> dict[int, int]:
    """Where the embedders go on in each journal partition: their group's committed offset, else the one the
    worker's Faust group committed when the embedder was one of its agents (so an upgraded worker goes on where the
    old one stopped, and does not embed the whole journal again); a partition with neither is left out (its start)."""
    admin = AIOKafkaAdminClient(**kafka)
    await admin.start()
    try:
        mine = await group_commits(admin, embedder_group(settings), settings.memory_topic, partitions)
        if missing := [partition for partition in partitions if partition not in mine]:
            mine |= await group_commits(admin, faust_app_id(settings), settings.memory_topic, missing)
    finally:
        await admin.close()
    return mine


class JournalEmbedder(Service):
    """Embeds the archive records of the journal partitions its group gives it, committing each batch once its
    vectors are stored and journaled; and re-embeds the archive when the models change."""

    def __init__(self, settings: Settings, process: EmbeddingProcess, kafka: dict[str, Any]) -> None:
        super().__init__()
        self.settings = settings
        self.process = process
        self.kafka = kafka
        self._in_hand = asyncio.Lock()
        """Held while a batch is embedded until it is committed: a rebalance and a stop wait for it."""
        # made at start: aiokafka's clients and redis-py's take the running event loop
        self.consumer: AIOKafkaConsumer
        self.producer: AIOKafkaProducer
        self.archive: ArchiveStore

    async def on_start(self) -> None:
        settings = self.settings
        self.consumer = AIOKafkaConsumer(
            **self.kafka,
            group_id=embedder_group(settings),
            group_instance_id=settings.group_instance_id,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            max_poll_records=settings.embedding_batch_size,
            fetch_max_wait_ms=settings.fetch_wait_ms,
            session_timeout_ms=int(settings.broker_session_timeout * 1000),
            heartbeat_interval_ms=int(settings.heartbeat_seconds * 1000),
        )
        # idempotent as the worker's Faust producer is (where the broker issues producer ids; the worker resolved
        # "auto"); elsewhere a vector journaled twice is one record once the journal is compacted
        self.producer = AIOKafkaProducer(
            **self.kafka,
            acks="all",
            enable_idempotence=settings.idempotent_producer == "on",
            linger_ms=settings.producer_linger_ms,
        )
        self.archive = ArchiveStore(redis_client(settings), settings)
        await self.producer.start()
        self.consumer.subscribe([self.settings.memory_topic], listener=_GoOnWhereTheyStopped(self))
        await self.consumer.start()

    async def on_stop(self) -> None:
        async with self._in_hand:  # the batch in hand is stored, journaled and committed first
            await self.consumer.stop()
        await self.producer.stop()
        await self.archive.redis.aclose()

    @Service.task
    async def _embed_journal(self) -> None:
        try:
            while not self.should_stop:
                fetched = await self.consumer.getmany(timeout_ms=int(FETCH_SECONDS * 1000))
                if fetched:
                    async with self._in_hand:
                        await self._embed_in_a_live_process(fetched)
        except ConsumerStoppedError:  # the worker is stopping
            return
        except EmbeddingError as error:  # the embedding process is closed (the worker is stopping): nothing committed
            log.warning("embedding stopped: %s", error)

    async def _embed_in_a_live_process(
        self, fetched: Mapping[TopicPartition, list[ConsumerRecord[bytes, bytes]]]
    ) -> None:
        """The batch, embedded again in a new embedding process whenever the one it was given to dies (the
        kernel's OOM killer picks the biggest process, and the models make it that): not a worker that goes on
        without vectors, nor one that stops serving contexts for them."""
        async for attempt in AsyncRetrying(
            retry=retry_if_exception_type(EmbeddingProcessDied),
            wait=wait_exponential(multiplier=1, max=60),  # a child that dies at every start is not started in a loop
            before_sleep=self._restart_process,
        ):
            with attempt:
                await self._embed_batch(fetched)

    async def _restart_process(self, retry: RetryCallState) -> None:
        died = retry.outcome.exception() if retry.outcome else None
        assert isinstance(died, EmbeddingProcessDied)
        embedding_restarts_total.inc()
        log.error("%s: starting another, to embed the batch again (attempt %d)", died, retry.attempt_number)
        try:
            await self.process.restart(died)
        except EmbeddingError as error:  # the batch's next attempt meets the broken process and comes back here
            log.error("%s", error)

    async def _embed_batch(self, fetched: Mapping[TopicPartition, list[ConsumerRecord[bytes, bytes]]]) -> None:
        if owners := archived_in(record for records in fetched.values() for record in records):
            entries = [entry for items in owners.values() for entry, _ in items]
            by_id = {
                turn.id: turn for turn in await self.process.embed(entries, self.settings.embedding_expansion_terms)
            }
            for owner, items in owners.items():
                await self.keep(owner, [by_id[entry.id] for entry, _ in items if entry.id in by_id])
                now = time.time()
                for _, journaled in items:
                    embedding_lag_seconds.observe(max(0.0, now - journaled))
            turns_embedded_total.inc(len(by_id))
        try:
            await self.consumer.commit({tp: records[-1].offset + 1 for tp, records in fetched.items()})
        except CommitFailedError as error:  # its partitions went to another embedder, which embeds them again
            log.warning("embedded batch not committed: %s", error)

    async def keep(self, owner: str, turns: list[EmbeddedTurn]) -> None:
        """Store `owner`'s vectors in Redis (waiting for it to answer rather than lose them), then journal them."""
        while True:
            try:
                await self.archive.embed(owner, turns)
                break
            except REDIS_UNAVAILABLE as error:
                log.warning("Redis write of %d vectors failed, retrying: %r", len(turns), error)
                await asyncio.sleep(1.0)
        partition = partition_of(owner, self.settings.turn_partitions)
        sent = [
            await self.producer.send(self.settings.memory_topic, value, key=key, partition=partition)
            for key, value in (embedded_record(owner, turn) for turn in turns)
        ]
        await asyncio.gather(*sent)

    @Service.task
    async def _reembed_when_models_change(self) -> None:
        """Every TURNSTREAM_RESYNC_INTERVAL_SECONDS (or a minute), on every worker: does the archive need
        re-embedding for the current models?"""
        while not self.should_stop:
            await self.sleep(self.settings.resync_interval_seconds or 60)
            if not self.should_stop:
                await self._reembed()

    async def _reembed(self) -> None:
        try:
            embedded = await reindex(self.settings, self.kafka, self.process, self.keep, self._positions)
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

    async def _positions(self, partitions: list[int]) -> dict[int, int]:
        return await embedding_positions(self.settings, self.kafka, partitions)


class _GoOnWhereTheyStopped(ConsumerRebalanceListener):  # type: ignore[misc]  # aiokafka's abc is untyped
    """Partitions go after the batch in hand is committed, and come at `embedding_positions`."""

    def __init__(self, embedder: JournalEmbedder) -> None:
        self.embedder = embedder

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        async with self.embedder._in_hand:  # noqa: SLF001 - the listener is the embedder's own
            pass

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        topic = self.embedder.settings.memory_topic
        positions = await self.embedder._positions([tp.partition for tp in assigned])  # noqa: SLF001
        for partition, offset in positions.items():
            self.embedder.consumer.seek(TopicPartition(topic, partition), offset)


def register_embedding_agent(app: faust.App, settings: Settings, process: EmbeddingProcess) -> None:
    """Start and stop the embedder with the worker app, embedding in `process`, whose models are loaded."""
    assert process.models is not None, "EmbeddingProcess.load runs before the agents are registered"
    app.add_dependency(JournalEmbedder(settings, process, app.kafka_options))  # type: ignore[attr-defined]
