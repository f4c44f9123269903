"""The session agent: executes the session core's effects for a batch of events, one partition's single writer.

Per batch: every event goes through the pure core in order (agents/batch.py: states loaded once per session),
then the effects are carried out coalesced — dead letters and forwards, one memory upsert per owner, ONE
Redis round trip for every archive append and the latest context document of every session, the memory
journal's records (sent once the contexts are readable: the produce would otherwise compete with the Redis
write for the event loop; their acks come before the Table rows), one Table row per session (on the
changelog partition of that session's own events), the summary requests. The batch's offsets are
acknowledged only after this body returns, so nothing is committed before its effects are stored.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Awaitable, Callable, Sequence, TypeVar, cast

import faust
import redis.exceptions
from faust.types import EventT
from mode import CrashingSupervisor
from redis.asyncio.client import Pipeline
from tenacity import AsyncRetrying, retry_if_exception_type, wait_exponential

from turnstream.agents.batch import Batch, Stepper, Tombstones, ms_since
from turnstream.agents.ingest import dead_letter, forward, send_round
from turnstream.store import ContextStore
from turnstream.faust_private.tables import attributed_to
from turnstream.memory import Memory, MemoryStore
from turnstream.memory.archive_store import ArchiveStore
from turnstream.memory.journal import archive_record, journal_key, memory_record
from turnstream.memory.scripts import run_pipeline
from turnstream.memory.store import Remembered
from turnstream.schemas.control import forget_marker
from turnstream.schemas.keys import partition_of
from turnstream.session import SessionCore, SessionState, Step
from turnstream.settings import Settings
from turnstream.streams.batches import acknowledge, take_batches
from turnstream.streams.delivery import OrderedConsumer
from turnstream.streams.metrics import observe_ms, redis_write_retries_total, turns_total
from turnstream.streams.topics import Topics
from turnstream.tracing import record_span

log = logging.getLogger(__name__)
T = TypeVar("T")
CHANGELOG_WAIT_SECONDS = 5.0


async def _until_redis_answers(write: Callable[[], Awaitable[T]]) -> T:
    """Retry a write until Redis takes it: while Redis is away the partition waits rather than drop turns."""
    async for attempt in AsyncRetrying(
        retry=retry_if_exception_type((redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)),
        wait=wait_exponential(multiplier=0.1, max=5),
        after=lambda retry: redis_write_retries_total.inc(),  # tenacity calls it only for an attempt it retries
        before_sleep=lambda retry: log.warning("Redis write failed, retrying: %s", retry.outcome.exception()),
    ):
        with attempt:
            return await write()
    raise AssertionError("unreachable: AsyncRetrying retries until the write succeeds")

@dataclass
class SessionExecutor:
    """Runs the core over a batch of events and carries out its effects; the only I/O of the session agent."""

    settings: Settings
    topics: Topics
    sessions: faust.Table
    store: ContextStore
    memory: MemoryStore
    archive: ArchiveStore
    core: SessionCore
    stepper: Stepper
    last_redis_write_ms: float = 0.0
    """The latest write's latency: a document cannot carry the time of its own write."""

    async def run(self, events: Sequence[EventT]) -> None:
        batch = Batch()
        for event in events:
            self.stepper.step(batch, event)
        for event, reason, detail in batch.dead:
            await dead_letter(self.topics.dlq, event, reason, detail)
        for event, where in batch.forwards:
            await forward(self.topics.turns, event, where)
        for turn in (turn for step in batch.steps for turn in step.release):
            await send_round(self.topics.turns, turn)  # before the Table row that no longer holds it
        remembered = await self._remember(batch.steps)
        writing = time.perf_counter()
        per_turn = max(len(events), 1)
        evicted_entries = await self._write_redis(batch, {"ingest": batch.decode_ms / per_turn,
                                                          "compaction": batch.core_ms / per_turn, "batch_events": len(events)})
        self.last_redis_write_ms = ms_since(writing)
        journaling = time.perf_counter()
        record_span("turnstream.redis_write", writing, journaling, next(iter(batch.traceparents), None),
                    {"db.system": "redis", "turnstream.batch_events": len(events)}, batch.traceparents[1:], kind="CLIENT")
        journaled = await self._journal(batch.steps, remembered.created)
        # tombstones for what the caps evicted, after the records they may follow on the same partition
        journaled += [await self._send_journal(owner, journal_key(kind, owner, evicted_id), None)
                      for kind, owners in (("m", remembered.evicted), ("a", evicted_entries))
                      for owner, ids in owners.items() for evicted_id in ids]
        await asyncio.gather(*journaled)  # the journal has the batch's memory writes before its rows move on
        journal_ms = ms_since(journaling)
        tabling = time.perf_counter()
        self._write_rows(batch)
        await self._changelog_sent()
        table_ms = ms_since(tabling)
        await self._confirm_forgotten(batch)
        for step, headers in zip(batch.steps, batch.carried):
            if step.summary_request is not None:
                request = step.summary_request
                await self.topics.compaction.send(key=request.session_key.encode(), value=request.to_bytes(), headers=headers)
        self._count(batch, per_turn, journal_ms, table_ms)

    async def _confirm_forgotten(self, batch: Batch) -> None:
        """Once the markers are on the changelog, tell `turnstream forget` (which erases Redis only then)."""
        if not batch.forgotten:
            return
        lifetime = self.settings.forget_marker_seconds

        async def write() -> list[object]:
            async with self.store.redis.pipeline(transaction=False) as pipe:
                for key, (_, request) in batch.forgotten.items():
                    pipe.set(self.store.layout.forgotten(key), repr(request.requested_at), ex=lifetime)
                return await pipe.execute()

        await _until_redis_answers(write)

    async def _journal(self, steps: list[Step], created: dict[str, dict[str, float]]) -> list[Awaitable[object]]:
        """Send the batch's memory and archive writes to the memory journal, each memory with its created_at as
        Redis keeps it (`created`, per owner); the acks to wait for."""
        sent = []
        for step in steps:
            kept = created.get(step.owner, {})
            for memory in step.memories:
                memory = memory.model_copy(update={"created_at": kept.get(memory.id, memory.created_at)})
                sent.append(await self._send_journal(step.owner, *memory_record(memory)))
            for entry in step.archive:
                sent.append(await self._send_journal(step.owner, *archive_record(step.owner, entry)))
        return sent

    async def _send_journal(self, owner: str, key: bytes, value: bytes | None) -> Awaitable[object]:
        partition = partition_of(owner, self.settings.turn_partitions)
        return await self.sessions.app.producer.send(self.settings.memory_topic, key, value, partition, None, None)

    async def _remember(self, steps: list[Step]) -> Remembered:
        """Every owner's memory upsert, sharing one read and one write. Before the context write, so a prompt built
        once the context shows a turn finds its memories; a crash in between replays the turns, and upserts are
        idempotent. Returns the ids of the memories the per-owner cap evicted, per owner, and their created_at."""
        writes: defaultdict[str, tuple[list[Memory], list[str]]] = defaultdict(lambda: ([], []))
        for step in steps:
            if step.memories:
                writes[step.owner][0].extend(step.memories)
                writes[step.owner][1].extend(step.profile_additions)
        if not writes:
            return Remembered()
        return await _until_redis_answers(lambda: self.memory.remember_many(writes))

    async def _write_redis(self, batch: Batch, timings: dict[str, float]) -> dict[str, list[str]]:
        """Every archive append and each changed session's latest context in ONE round trip (all idempotent),
        then the evictions the appends asked for; returns the evicted archive entries' ids per owner.

        Redis before the Table: a crash in between replays the events onto the old state, which recomputes
        the same versions, and the compare-and-set turns the second write into a no-op.
        """
        archived: dict[str, list] = defaultdict(list)
        applied: dict[str, list[str]] = defaultdict(list)
        changed: dict[str, SessionState] = {}
        for step in batch.steps:
            archived[step.owner] += step.archive
            if step.applied_turn_id:
                applied[step.session_key].append(step.applied_turn_id)
            if step.context_changed:
                changed[step.session_key] = batch.states[step.session_key]
        if not changed and not any(archived.values()):
            return {}
        now = time.time()
        timings = {**timings, "broker_wait": max(batch.broker_wait_ms, default=0.0), "redis_write_last": self.last_redis_write_ms}
        docs = [(self.core.context_doc(state, now, timings), state.owner, applied[key]) for key, state in changed.items()]
        owners = [owner for owner, entries in archived.items() if entries]

        async def queue(pipe: Pipeline) -> None:
            for owner in owners:
                await self.archive.queue_append(pipe, owner, archived[owner])
            for doc, owner, turn_ids in docs:
                await self.store.queue_write(pipe, doc, turn_ids, owner)

        replies = await _until_redis_answers(lambda: run_pipeline(self.store.redis, queue))
        return {owner: await _until_redis_answers(lambda: self.archive.evict_overflow(owner, reply))  # type: ignore[arg-type]
                for owner, reply in zip(owners, replies)}

    def _write_rows(self, batch: Batch) -> None:
        """One Table row per session (its state, or the forget marker of an erased one), sent to the changelog
        partition of that session's own events."""
        rows = [(key, state.snapshot(), batch.last_event[key]) for key, state in batch.states.items()
                if key in batch.last_event]
        rows += [(key, forget_marker(request.requested_at), event) for key, (event, request) in batch.forgotten.items()]
        for key, row, event in rows:
            with attributed_to(event):  # the row goes to the changelog partition of the session's own events
                self.sessions[key] = row

    async def _changelog_sent(self) -> None:
        """Wait, for at most CHANGELOG_WAIT_SECONDS, until the broker has every Table row of the batch: the
        offsets that cover them are acknowledged next, and Faust's own flush before a commit gives up on a
        record after 0.1 s. Bounded, because a rebalance can hold the producer's buffer while it waits for
        this agent."""
        producer = self.sessions.app.producer
        deadline = time.monotonic() + CHANGELOG_WAIT_SECONDS
        while producer.buffer.size and time.monotonic() < deadline:
            await producer.buffer.flush_atmost(producer.buffer.size)
        try:
            if producer.buffer.size:
                raise asyncio.TimeoutError
            await asyncio.wait_for(producer.flush(), max(deadline - time.monotonic(), 0.1))
        except asyncio.TimeoutError:
            log.warning("Table rows not confirmed by the broker within %.0f s; acknowledging the batch anyway",
                        CHANGELOG_WAIT_SECONDS)

    def _count(self, batch: Batch, per_turn: int, journal_ms: float, table_ms: float) -> None:
        for step in batch.steps:
            if step.outcome in ("applied", "duplicate"):
                turns_total.labels(step.outcome).inc()
        for wait in batch.broker_wait_ms:
            observe_ms("broker_wait", wait)
        observe_ms("ingest", batch.decode_ms / per_turn)
        observe_ms("compaction", batch.core_ms / per_turn)
        observe_ms("redis_write", self.last_redis_write_ms)
        observe_ms("journal_write", journal_ms)
        observe_ms("table_write", table_ms)


async def _to_the_end(work: Awaitable[None]) -> None:
    """Run `work` to its end even when the agent is cancelled meanwhile (a stop, a rebalance), then let the
    cancellation through: a batch is stored and acknowledged whole, never cut short between the two."""
    task = asyncio.ensure_future(work)
    cancelled = False
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            cancelled = True
    task.result()
    if cancelled:
        raise asyncio.CancelledError


def register_session_agent(app: faust.App, settings: Settings, topics: Topics, sessions: faust.Table) -> None:
    """Attach the session agent to `app`: concurrency 1, so per-partition order and commits stay exact."""
    tombstones = Tombstones()  # one per worker: an agent restarted by a rebalance does not log the first again

    # A batch whose effects could not be stored (an error no retry mends) is not acknowledged, and no later
    # turn of its partition may be applied on top of the gap: the agent's crash stops the worker, rather
    # than Faust's default of restarting the agent on the next events; the partition's next owner (or this
    # worker, restarted) applies the batch again from the last committed offset.
    @app.agent(topics.session_input, name=f"{settings.topic_prefix}.session", concurrency=1,
               supervisor_strategy=CrashingSupervisor)
    async def session_agent(stream: faust.StreamT) -> None:
        store = ContextStore.from_settings(settings)
        core = SessionCore(settings)
        executor = SessionExecutor(settings, topics, sessions, store, MemoryStore(store.redis, settings),
                                   ArchiveStore(store.redis, settings), core, Stepper(settings, sessions, core, tombstones))

        async def store_and_acknowledge(events: list[EventT]) -> None:
            await executor.run(events)
            await acknowledge(stream, events)

        try:
            gate = cast(OrderedConsumer, app.consumer)
            gate.gate(topics.session_input.topics)
            async for events in take_batches(stream, settings.batch_max_events, settings.batch_max_ms / 1000, gate):
                try:
                    await _to_the_end(store_and_acknowledge(events))
                except Exception:
                    log.critical("a batch of %d events could not be stored; its offsets stay unacknowledged and the "
                                 "worker stops, so the partition's next owner applies it again", len(events), exc_info=True)
                    raise
        finally:
            await store.aclose()
