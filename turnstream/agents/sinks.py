"""The session agent's effect sinks: each carries out one kind of a batch's effects, and nothing else.

Every sink is `await sink.write(batch, done)`: `batch` is what the stepper collected (agents/batch.py), `done`
what the stages before stored that a later one needs (the memory upsert's created_at and evictions for the
journal, the archive's evictions). The order they run in is the executor's PLAN (agents/executor.py).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

import faust
from faust.types import AppT, EventT
from tenacity import AsyncRetrying, retry_if_exception_type, wait_exponential

from turnstream.agents.batch import Batch, ms_since
from turnstream.agents.ingest import dead_letter, forward, send_round
from turnstream.kafka.faust_private.producer import send_buffered
from turnstream.kafka.faust_private.table_rows import attributed_to
from turnstream.metrics import redis_write_retries_total
from turnstream.redis.aio import run_pipeline
from turnstream.redis.archive import ArchiveStore
from turnstream.redis.errors import REDIS_UNAVAILABLE
from turnstream.redis.memory_store import MemoryStore, Remembered
from turnstream.redis.writer import ContextWriter
from turnstream.schemas.archive import ArchiveEntry
from turnstream.schemas.context import EncodedContext
from turnstream.schemas.control import forget_marker
from turnstream.schemas.ids import partition_of
from turnstream.session import SessionCore, SessionState
from turnstream.session.writes import archive_appends, changed_contexts, journal_writes, memory_writes
from turnstream.tracing import record_span

if TYPE_CHECKING:
    from redis.asyncio.client import Pipeline

log = logging.getLogger(__name__)
T = TypeVar("T")
CHANGELOG_WAIT_SECONDS = 5.0


@dataclass
class Done:
    """What a batch's earlier stages stored, for the later ones."""

    remembered: Remembered = field(default_factory=Remembered)
    """The memory upsert's result: per owner, the memories' created_at as Redis keeps them and the evicted ids."""
    evicted_entries: dict[str, list[str]] = field(default_factory=dict)
    """Per owner, the archive entries the cap evicted."""
    stage_ms: dict[str, float] = field(default_factory=dict)
    """How long each stage took, by its name in the plan."""


class Sink(Protocol):
    """One kind of effect, carried out for a whole batch; raises when it could not be stored."""

    async def write(self, batch: Batch, done: Done) -> None: ...


async def until_redis_answers(write: Callable[[], Awaitable[T]]) -> T:
    """Retry a write until Redis takes it: while Redis is away the partition waits rather than drop turns."""
    async for attempt in AsyncRetrying(
        retry=retry_if_exception_type(REDIS_UNAVAILABLE),
        wait=wait_exponential(multiplier=0.1, max=5),
        after=lambda retry: redis_write_retries_total.inc(),  # tenacity calls it only for an attempt it retries
        before_sleep=lambda retry: log.warning(
            "Redis write failed, retrying: %s", retry.outcome.exception() if retry.outcome else None
        ),
    ):
        with attempt:
            return await write()
    raise AssertionError("unreachable: AsyncRetrying retries until the write succeeds")


@dataclass
class DeadLetterSink:
    """Refused records, with their original bytes and headers, to the dead-letter topic (each waited for)."""

    dlq: faust.TopicT

    async def write(self, batch: Batch, done: Done) -> None:
        for envelope, reason, detail in batch.dead:
            await dead_letter(self.dlq, envelope, reason, detail)


@dataclass
class ForwardSink:
    """Misrouted turns back to the turns topic under their session key (each waited for)."""

    turns: faust.TopicT

    async def write(self, batch: Batch, done: Done) -> None:
        for envelope in batch.forwards:
            await forward(self.turns, envelope)


class NothingSent:
    """A shadow's forward and release stages: it never produces into the turns topic it reads, since the live worker
    sends those same turns there (it steps the same records), and the shadow applies the copies as they come."""

    async def write(self, batch: Batch, done: Done) -> None:
        return None


@dataclass
class ReleaseSink:
    """Held turns now due, round again through their session's partition; before the Table row that no longer
    holds them, so a crash in between sends them again rather than losing them."""

    turns: faust.TopicT

    async def write(self, batch: Batch, done: Done) -> None:
        for turn in batch.released:
            await send_round(self.turns, turn)


@dataclass
class MemorySink:
    """Every owner's memory upsert, sharing one read and one write. Before the context write, so a prompt built
    once the context shows a turn finds its memories; a crash in between replays the turns, and upserts are
    idempotent."""

    memory: MemoryStore

    async def write(self, batch: Batch, done: Done) -> None:
        writes = memory_writes(step for step, _ in batch.steps)
        if writes:
            done.remembered = await until_redis_answers(lambda: self.memory.remember_many(writes))


@dataclass
class ArchiveSink:
    """Each owner's archive appends, queued on a shared pipeline; then what their replies ask for: a call again
    naming more postings keys, evictions."""

    archive: ArchiveStore

    @staticmethod
    def appends(batch: Batch) -> dict[str, list[ArchiveEntry]]:
        return archive_appends(step for step, _ in batch.steps)

    async def queue(self, pipe: Pipeline, appends: dict[str, list[ArchiveEntry]]) -> None:
        for owner, entries in appends.items():
            await self.archive.queue_append(pipe, owner, entries)

    async def complete(self, appends: dict[str, list[ArchiveEntry]], replies: list[Any]) -> dict[str, list[str]]:
        """Each append finished from its reply (redis/archive.py), and the evicted entries' ids per owner;
        `replies` start with the appends' own, in their order."""

        async def finish() -> dict[str, list[str]]:
            return {
                owner: await self.archive.complete(owner, entries, reply)
                for (owner, entries), reply in zip(appends.items(), replies)
            }

        # one retry loop for the batch, not one an owner (each costs even when the first attempt succeeds): finishing an append again is
        # idempotent (an append again skips what is there, an eviction again what is gone)
        return await until_redis_answers(finish)


@dataclass
class ContextSink:
    """The latest context document of every session the batch changed, queued on a shared pipeline (each a
    compare-and-set on its version, with the turn ids it applied)."""

    store: ContextWriter
    core: SessionCore

    @staticmethod
    def changed(batch: Batch) -> tuple[dict[str, SessionState], dict[str, list[str]]]:
        """The sessions whose document must be written, and the turn ids each applied in this batch."""
        return changed_contexts((step for step, _ in batch.steps), batch.sessions.states)

    def docs(
        self, changed: dict[str, SessionState], applied: dict[str, list[str]], timings: dict[str, float]
    ) -> list[tuple[EncodedContext, str, list[str]]]:
        now = time.time()
        return [
            (self.core.encoded_context(state, now, timings), state.owner, applied[key])
            for key, state in changed.items()
        ]

    async def queue(self, pipe: Pipeline, docs: list[tuple[EncodedContext, str, list[str]]]) -> None:
        for doc, owner, turn_ids in docs:
            await self.store.queue_write(pipe, doc, turn_ids, owner)


@dataclass
class RedisSink:
    """The archive appends and the context documents in ONE round trip (all idempotent), then the archive's
    evictions. Redis before the Table: a crash in between replays the records onto the old state, which
    recomputes the same versions, and the compare-and-set turns the second write into a no-op."""

    archive: ArchiveSink
    context: ContextSink
    last_write_ms: float = 0.0
    """The latest write's latency: a document cannot carry the time of its own write."""

    async def write(self, batch: Batch, done: Done) -> None:
        writing = time.perf_counter()
        done.evicted_entries = await self._write(batch)
        self.last_write_ms = ms_since(writing)
        record_span(
            "turnstream.redis_write",
            writing,
            time.perf_counter(),
            next(iter(batch.traceparents), None),
            {"db.system": "redis", "turnstream.batch_events": batch.events},
            batch.traceparents[1:],
            kind="CLIENT",
        )

    async def _write(self, batch: Batch) -> dict[str, list[str]]:
        appends = self.archive.appends(batch)
        changed, applied = self.context.changed(batch)
        if not changed and not appends:
            return {}
        per_record = max(batch.events, 1)
        timings = {
            "ingest": batch.decode_ms / per_record,
            "compaction": batch.core_ms / per_record,
            "batch_events": batch.events,
            "broker_wait": max(batch.broker_wait_ms, default=0.0),
            "redis_write_last": self.last_write_ms,
        }
        docs = self.context.docs(changed, applied, timings)

        async def queue(pipe: Pipeline) -> None:
            await self.archive.queue(pipe, appends)
            await self.context.queue(pipe, docs)

        replies = await until_redis_answers(lambda: run_pipeline(self.context.store.redis, queue))
        return await self.archive.complete(appends, replies)


@dataclass
class JournalSink:
    """The batch's memory and archive writes to the memory journal (each memory with its created_at as Redis
    keeps it), then tombstones for what the caps evicted, after the records they may follow on the same
    partition; waits for every ack, so the journal has the batch's memory writes before its rows move on.
    After the context write: the produce would otherwise compete with it for the event loop."""

    app: AppT
    topic: str
    partitions: int

    async def write(self, batch: Batch, done: Done) -> None:
        writes = journal_writes(
            [step for step, _ in batch.steps], done.remembered.created, done.remembered.evicted, done.evicted_entries
        )
        await asyncio.gather(*[await self._send(owner, key, value) for owner, key, value in writes])

    async def _send(self, owner: str, key: bytes, value: bytes | None) -> Awaitable[object]:
        partition = partition_of(owner, self.partitions)
        return await self.app.producer.send(self.topic, key, value, partition, None, None)


@dataclass
class TableSink:
    """One Table row per session (its state, or the forget marker of an erased one), on the changelog partition
    of that session's own records; then waits, for at most CHANGELOG_WAIT_SECONDS, until the broker has them."""

    table: faust.Table[str, bytes]

    async def write(self, batch: Batch, done: Done) -> None:
        for key, row, envelope in batch.sessions.rows():
            value = row.snapshot() if isinstance(row, SessionState) else forget_marker(row.requested_at)
            # the row goes to the changelog partition of the session's own records (the worker's envelopes hold
            # Faust's events)
            with attributed_to(cast(EventT[bytes], envelope.event)):
                self.table[key] = value
        await self._changelog_sent()

    async def _changelog_sent(self) -> None:
        """The offsets that cover the rows are acknowledged next, and Faust's own flush before a commit gives up on
        a record after 0.1 s. Bounded, because a rebalance can hold the producer's buffer while it waits for
        this agent."""
        producer = self.table.app.producer
        deadline = time.monotonic() + CHANGELOG_WAIT_SECONDS
        try:
            if not await send_buffered(producer, deadline):
                raise TimeoutError
            await asyncio.wait_for(producer.flush(), max(deadline - time.monotonic(), 0.1))
        except TimeoutError:
            log.warning(
                "Table rows not confirmed by the broker within %.0f s; acknowledging the batch anyway",
                CHANGELOG_WAIT_SECONDS,
            )


@dataclass
class ForgetSink:
    """Once the forget markers are on the changelog, tell `turnstream forget` (which erases Redis only then)."""

    store: ContextWriter
    lifetime: int
    """Seconds the confirmation lives (TURNSTREAM_FORGET_MARKER_SECONDS)."""

    async def write(self, batch: Batch, done: Done) -> None:
        forgotten = batch.sessions.forgotten
        if not forgotten:
            return

        markers = {key: request.requested_at for key, (_, request) in forgotten.items()}
        await until_redis_answers(lambda: self.store.mark_forgotten(markers, self.lifetime))


@dataclass
class SummaryRequestSink:
    """The LLM summary requests, to the compaction topic, with the trace headers of the record that asked."""

    compaction: faust.TopicT

    async def write(self, batch: Batch, done: Done) -> None:
        for step, envelope in batch.steps:
            if (request := step.summary_request) is not None:
                await self.compaction.send(
                    key=request.session_key.encode(), value=request.to_bytes(), headers=envelope.carried
                )
