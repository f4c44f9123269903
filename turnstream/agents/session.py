"""The session agent: executes the session core's effects for a batch of events, one partition's single writer.

Per batch: every event goes through the pure core in order (states loaded once per session), then the
effects are carried out coalesced — dead letters, one memory upsert per owner, ONE Redis round trip for
every archive append and the latest context document of every session, one Table row per session (on
the changelog partition of that session's own events), the summary requests. Faust acknowledges the
batch's offsets only after this body returns, so nothing is committed before its effects are stored.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Awaitable, Callable, Sequence, TypeVar

import faust
import redis.exceptions
from faust.streams import _current_event  # the event a Table write is attributed to (its changelog partition)
from faust.types import EventT
from tenacity import AsyncRetrying, retry_if_exception_type, wait_exponential

from turnstream.agents.fields import record_fields
from turnstream.agents.ingest import dead_letter, forward, send_round, was_forwarded
from turnstream.client.store import ContextStore
from turnstream.memory import MemoryStore
from turnstream.memory.archive_store import ArchiveStore
from turnstream.memory.journal import archive_record, journal_key, memory_record
from turnstream.schemas import Turn, TurnError, decode_turn
from turnstream.schemas.control import ForgetRequest, forget_marker, is_forget_marker, parse_forget
from turnstream.schemas.keys import Forward, partition_of, route
from turnstream.session import Forwarded, SessionCore, SessionState, Step, SummaryResult
from turnstream.settings import Settings
from turnstream.streams.metrics import observe_ms, redis_write_retries_total, turns_total
from turnstream.streams.topics import Topics
from turnstream.tracing import carried, kafka_attributes, record_span, recording, traceparent

log = logging.getLogger(__name__)
T = TypeVar("T")
CHANGELOG_WAIT_SECONDS = 5.0


def _ms_since(start: float) -> float:
    return (time.perf_counter() - start) * 1000


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
class Batch:
    """One batch's sessions and the effects their events asked for, in event order."""

    states: dict[str, SessionState] = field(default_factory=dict)
    last_event: dict[str, EventT] = field(default_factory=dict)
    """Per session, its latest event: the Table row goes to that event's changelog partition."""
    inputs: defaultdict[str, list[Turn | Forwarded | SummaryResult]] = field(default_factory=lambda: defaultdict(list))
    """Per session, what this batch fed its state: enough to rebuild it if one event breaks it."""
    steps: list[Step] = field(default_factory=list)
    carried: list[list[tuple[str, bytes]]] = field(default_factory=list)
    """Per step, its event's trace-context headers: what the step produces carries them on."""
    traceparents: list[str] = field(default_factory=list)
    """The batch's traced events, parents and links of its Redis write span."""
    dead: list[tuple[EventT, str, str]] = field(default_factory=list)
    forgotten: dict[str, tuple[EventT, ForgetRequest]] = field(default_factory=dict)
    """Sessions erased by a forget record in this batch: their row becomes a forget marker."""
    forwards: list[tuple[EventT, Forward]] = field(default_factory=list)
    """Turns keyed by anything but their session key: re-produced under it, not applied here."""
    broker_wait_ms: list[float] = field(default_factory=list)
    decode_ms: float = 0.0
    core_ms: float = 0.0


class Tombstones:
    """Records with a null value (Kafka tombstones) on the session agent's topics: nothing to apply.

    Each is counted (turns_total{outcome="tombstone"}) and acknowledged; the first is logged at info, the rest at debug.
    """

    def __init__(self) -> None:
        self.count = 0

    def skip(self, event: EventT) -> None:
        self.count += 1
        turns_total.labels("tombstone").inc()
        message = event.message
        log.log(
            logging.INFO if self.count == 1 else logging.DEBUG,
            "ignoring a record with a null value (tombstone) at %s/%s/%s; further ones are logged at debug level",
            message.topic, message.partition, message.offset, extra=record_fields(message),
        )


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
    tombstones: Tombstones
    last_redis_write_ms: float = 0.0
    """The latest write's latency: a document cannot carry the time of its own write."""

    async def run(self, events: Sequence[EventT]) -> None:
        batch = Batch()
        for event in events:
            self._step(batch, event)
        for event, reason, detail in batch.dead:
            await dead_letter(self.topics.dlq, event, reason, detail)
        for event, where in batch.forwards:
            await forward(self.topics.turns, event, where)
        for turn in (turn for step in batch.steps for turn in step.release):
            await send_round(self.topics.turns, turn)  # before the Table row that no longer holds it
        journaled = await self._journal(batch.steps)
        await self._remember(batch.steps)
        writing = time.perf_counter()
        per_turn = max(len(events), 1)
        evicted = await self._write_redis(batch, {"ingest": batch.decode_ms / per_turn,
                                                  "compaction": batch.core_ms / per_turn, "batch_events": len(events)})
        self.last_redis_write_ms = _ms_since(writing)
        journaled += [await self._send_journal(owner, journal_key("a", owner, entry_id), None)
                      for owner, ids in evicted.items() for entry_id in ids]
        await asyncio.gather(*journaled)  # the journal has the batch's memory writes before its rows move on
        record_span("turnstream.redis_write", writing, time.perf_counter(), next(iter(batch.traceparents), None),
                    {"db.system": "redis", "turnstream.batch_events": len(events)}, batch.traceparents[1:], kind="CLIENT")
        tabling = time.perf_counter()
        self._write_rows(batch)
        await self._changelog_sent()
        table_ms = _ms_since(tabling)
        await self._confirm_forgotten(batch)
        for step, headers in zip(batch.steps, batch.carried):
            if step.summary_request is not None:
                request = step.summary_request
                await self.topics.compaction.send(key=request.session_key.encode(), value=request.to_bytes(), headers=headers)
        self._count(batch, per_turn, table_ms)

    def _step(self, batch: Batch, event: EventT) -> None:
        """The core's step for one event, on the batch's state of its session; a refused event is noted as dead."""
        if event.value is None:
            self.tombstones.skip(event)
            return
        key: str | None = None
        try:
            decoding = time.perf_counter()
            if event.message.topic == self.settings.summaries_topic:
                item: Turn | Forwarded | SummaryResult = SummaryResult.from_bytes(event.value)
                key = item.session_key
            elif (request := parse_forget(event.value)) is not None:
                self._forget(batch, event, request)
                return
            else:
                try:
                    item = decode_turn(event.value, self.settings.max_content_bytes)
                except TurnError as error:
                    batch.dead.append((event, error.reason, error.detail))
                    _trace(event, decoding, None, error.reason)
                    return
                if (where := route(event.message.key, item.session_key)) is not None:
                    batch.forwards.append((event, where))
                    return
                if was_forwarded(event):
                    item = Forwarded(item)
                key = item.session_key
                batch.broker_wait_ms.append(max(0.0, time.time() - event.message.timestamp) * 1000)
            computing = time.perf_counter()
            batch.decode_ms += (computing - decoding) * 1000
            step = self._apply(batch, key, item)
            batch.core_ms += _ms_since(computing)
        except Exception as error:  # noqa: BLE001 - one bad event must not take the batch (or the worker) down
            log.exception("event at %s/%s failed; dead-lettered%s", event.message.partition, event.message.offset,
                          "" if key is None else ", its session's state rebuilt without it",
                          extra=record_fields(event.message, key))
            batch.dead.append((event, "internal", repr(error)))
            if key is not None:
                self._rebuild(batch, key)
            return
        _trace(event, decoding, computing)
        if step is None:
            return  # a summary for a session this worker has no state of
        batch.inputs[key].append(item)
        batch.last_event[key] = event
        if step.outcome == "duplicate":
            turn_id = item.turn_id if isinstance(item, Turn) else None
            log.debug("turn %s at %s/%s seen already: replay skipped", turn_id, event.message.partition,
                      event.message.offset, extra=record_fields(event.message, key, turn_id))
        if step.dead_letter is not None:
            batch.dead.append((event, *step.dead_letter))
        batch.steps.append(step)
        batch.carried.append(carried(event.message.headers))
        if parent := traceparent(event.message.headers):
            batch.traceparents.append(parent)

    def _apply(self, batch: Batch, key: str, item: Turn | Forwarded | SummaryResult) -> Step | None:
        if key in batch.forgotten or is_forget_marker(self.sessions.get(key)):
            turns_total.labels("forgotten").inc()
            return None  # erased: a replay or a late turn must not bring it back
        if isinstance(item, SummaryResult):
            state = batch.states.get(key) or self._stored(key)
            if state is None:
                return None
            batch.states[key] = state
            return self.core.on_summary(state, item, time.time())
        state = batch.states.get(key) or self._stored(key) or self.core.new_state(item)
        batch.states[key] = state
        return self.core.on_turn(state, item, time.time())

    def _stored(self, key: str) -> SessionState | None:
        raw = self.sessions.get(key)
        return None if raw is None else SessionState.restore(raw)

    @staticmethod
    def _forget(batch: Batch, event: EventT, request: ForgetRequest) -> None:
        """Drop everything this batch did for the session so far; its row becomes a forget marker."""
        key = request.session_key
        batch.forgotten[key] = (event, request)
        for part in (batch.states, batch.inputs, batch.last_event):
            part.pop(key, None)
        batch.steps = [step for step in batch.steps if step.session_key != key]

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

    def _rebuild(self, batch: Batch, key: str) -> None:
        """The session's state as the Table has it plus this batch's earlier inputs, which are applied again
        (the core is deterministic): an event that failed half-way leaves no trace in it."""
        batch.states.pop(key, None)
        for item in batch.inputs[key]:
            self._apply(batch, key, item)

    async def _journal(self, steps: list[Step]) -> list[Awaitable[object]]:
        """Send the batch's memory and archive writes to the memory journal; the acks to wait for."""
        sent = []
        for step in steps:
            for memory in step.memories:
                sent.append(await self._send_journal(step.owner, *memory_record(memory)))
            for entry in step.archive:
                sent.append(await self._send_journal(step.owner, *archive_record(step.owner, entry)))
        return sent

    async def _send_journal(self, owner: str, key: bytes, value: bytes | None) -> Awaitable[object]:
        partition = partition_of(owner, self.settings.turn_partitions)
        return await self.sessions.app.producer.send(self.settings.memory_topic, key, value, partition, None, None)

    async def _remember(self, steps: list[Step]) -> None:
        """One upsert per owner. Before the context write: a crash in between replays the turns, and upserts are idempotent."""
        memories: dict[str, list] = defaultdict(list)
        additions: dict[str, list[str]] = defaultdict(list)
        for step in steps:
            if step.memories:
                memories[step.owner] += step.memories
                additions[step.owner] += step.profile_additions
        for owner, remembered in memories.items():
            await _until_redis_answers(lambda: self.memory.remember(owner, remembered, additions[owner]))

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

        async def write() -> list[object]:
            async with self.store.redis.pipeline(transaction=False) as pipe:
                for owner in owners:
                    await self.archive.queue_append(pipe, owner, archived[owner])
                for doc, owner, turn_ids in docs:
                    await self.store.queue_write(pipe, doc, turn_ids, owner)
                return await pipe.execute()

        replies = await _until_redis_answers(write)
        return {owner: await _until_redis_answers(lambda: self.archive.evict_overflow(owner, reply))  # type: ignore[arg-type]
                for owner, reply in zip(owners, replies)}

    def _write_rows(self, batch: Batch) -> None:
        """One Table row per session, sent to the changelog partition of that session's own events."""
        for key, state in batch.states.items():
            if key not in batch.last_event:
                continue
            token = _current_event.set(weakref.ref(batch.last_event[key]))
            try:
                self.sessions[key] = state.snapshot()
            finally:
                _current_event.reset(token)
        for key, (event, request) in batch.forgotten.items():
            token = _current_event.set(weakref.ref(event))
            try:
                self.sessions[key] = forget_marker(request.requested_at)
            finally:
                _current_event.reset(token)

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

    def _count(self, batch: Batch, per_turn: int, table_ms: float) -> None:
        for step in batch.steps:
            if step.outcome in ("applied", "duplicate"):
                turns_total.labels(step.outcome).inc()
        for wait in batch.broker_wait_ms:
            observe_ms("broker_wait", wait)
        observe_ms("ingest", batch.decode_ms / per_turn)
        observe_ms("compaction", batch.core_ms / per_turn)
        observe_ms("redis_write", self.last_redis_write_ms)
        observe_ms("table_write", table_ms)


def _trace(event: EventT, decoding: float, computing: float | None, error: str | None = None) -> None:
    """Spans of one event: processing it, with decode and (unless it was refused) compaction inside."""
    if not recording():
        return
    message, done = event.message, time.perf_counter()
    parent = record_span(f"process {message.topic}", decoding, done, traceparent(message.headers),
                         kafka_attributes(message.topic, message.partition, message.offset, message.key), error=error,
                         kind="CONSUMER")
    record_span("turnstream.decode", decoding, computing or done, parent, error=error)
    if computing is not None:
        record_span("turnstream.compaction", computing, done, parent)


async def _to_the_end(work: Awaitable[None]) -> None:
    """Run `work` to its end even when the agent is cancelled meanwhile (a stop, a rebalance), then let the
    cancellation through: take_events acknowledges a batch when its loop body ends, however it ends, and a
    batch whose effects were cut short must not be acknowledged."""
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

    @app.agent(topics.session_input, name=f"{settings.topic_prefix}.session", concurrency=1)
    async def session_agent(stream: faust.StreamT) -> None:
        store = ContextStore.from_settings(settings)
        executor = SessionExecutor(settings, topics, sessions, store, MemoryStore(store.redis, settings),
                                   ArchiveStore(store.redis, settings), SessionCore(settings), tombstones)
        try:
            async for events in stream.take_events(settings.batch_max_events, settings.batch_max_ms / 1000):
                await _to_the_end(executor.run(events))
        finally:
            await store.aclose()
