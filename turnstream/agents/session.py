"""The session agent: the single writer of each session's state, one partition at a time."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Sequence, TypeVar

import faust
import redis.exceptions
from faust.types import EventT
from tenacity import AsyncRetrying, retry_if_exception_type, wait_exponential

from turnstream.agents.ingest import dead_letter
from turnstream.agents.sink import context_doc
from turnstream.agents.state import SessionState
from turnstream.agents.summary_requests import SummaryRequest, SummaryResult
from turnstream.client.store import ContextStore
from turnstream.compaction import MessageError
from turnstream.compaction.greeting import is_small_talk
from turnstream.compaction.strategies import KeyInfoExtractor, RollingSummarizer, Strategy, build_strategy
from turnstream.compaction.tokens import count_text
from turnstream.memory import MemoryStore, memories_from_facts, owner_key, profile_additions, summary_memory
from turnstream.memory.archive import ArchiveEntry, archive_entry
from turnstream.memory.archive_store import ArchiveStore
from turnstream.schemas import Turn, TurnError, decode_turn
from turnstream.settings import Settings
from turnstream.streams.metrics import observe_ms, turns_total
from turnstream.streams.topics import Topics
from turnstream.text.language import Language

log = logging.getLogger(__name__)
T = TypeVar("T")

SUMMARY_MEMORY_EVERY = 16
"""Applied turns between refreshes of a session's summary memory: a write per turn would buy little."""
STALE_REQUEST_MARGIN_SECONDS = 30.0
"""Beyond the summarizer's own retries: a request unanswered that long is taken as lost and re-sent."""

MIN_OFFLINE_TAIL_TOKENS = 32
"""Below this, a line of offline digest says too little to be worth its tokens."""


def _ms_since(start: float) -> float:
    return (time.perf_counter() - start) * 1000


async def _until_redis_answers(write: Callable[[], Awaitable[T]]) -> T:
    """Retry a write until Redis takes it: while Redis is away the partition waits rather than drop turns."""
    async for attempt in AsyncRetrying(
        retry=retry_if_exception_type((redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)),
        wait=wait_exponential(multiplier=0.1, max=5),
        before_sleep=lambda retry: log.warning("Redis write failed, retrying: %s", retry.outcome.exception()),
    ):
        with attempt:
            return await write()
    raise AssertionError("unreachable: AsyncRetrying retries until the write succeeds")


def _is_greeting(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return message.get("role") == "user" and isinstance(content, str) and is_small_talk(content)


@dataclass
class SessionWriter:
    """Applies one event: decode, dedup, compact, write Redis, then record the state in the Table."""

    settings: Settings
    topics: Topics
    sessions: faust.Table
    store: ContextStore
    memory: MemoryStore
    archive: ArchiveStore
    strategy: Strategy
    extractor: KeyInfoExtractor
    last_redis_write_ms: float = 0.0
    """The latest write's latency: a document cannot carry the time of its own write."""

    async def handle(self, event: EventT) -> None:
        if event.message.topic == self.settings.summaries_topic:
            await self.handle_summary(SummaryResult.from_bytes(event.value))
        else:
            await self.handle_turn(event)

    async def handle_turn(self, event: EventT) -> None:
        started = time.perf_counter()
        broker_wait = max(0.0, time.time() - event.message.timestamp) * 1000  # Faust gives seconds
        try:
            turn = decode_turn(event.value, self.settings.max_content_bytes)
        except TurnError as error:
            await dead_letter(self.topics.dlq, event, error.reason, error.detail)
            return
        ingest = _ms_since(started)
        state = self._load(turn)
        if state.seen(turn.turn_id):
            turns_total.labels("duplicate").inc()
            # a crash may have come between the Redis write and the Table update: re-sync (a CAS no-op otherwise)
            await self._write(state, {}, [])
            return
        compacting = time.perf_counter()
        try:
            greeting = _is_greeting(turn.message)
            dropped = state.apply(turn.turn_id, turn.message, self.strategy, greeting=greeting)
        except MessageError as error:
            await dead_letter(self.topics.dlq, event, "message", str(error))
            return
        await self._remember(state, turn, greeting)
        entry = archive_entry(state.key, turn.turn_id, state.compactor.seq - 1, turn.message,
                              turn.ts if turn.ts is not None else time.time(), state.compactor.step_call())
        timings = {
            "broker_wait": broker_wait,
            "ingest": ingest,
            "compaction": _ms_since(compacting),
            "redis_write_last": self.last_redis_write_ms,
        }
        request = None
        if dropped and self.settings.llm_enabled:
            request = state.summaries.queue(dropped, state.key, state.owner, time.time(), self._stale_after())
        await self._commit(state, timings, [entry] if entry else [])
        await self._request_summary(request)
        for stage in ("broker_wait", "ingest", "compaction"):
            observe_ms(stage, timings[stage])
        turns_total.labels("applied").inc()

    async def handle_summary(self, result: SummaryResult) -> None:
        raw = self.sessions.get(result.session_key)
        if raw is None:
            return
        state = SessionState.from_bytes(raw)
        started = time.perf_counter()
        changed = state.apply_summary(result, self._lay_on, self.strategy)
        follow_up = state.summaries.follow_up(result.session_key, state.owner, time.time()) if changed else None
        if changed:
            await self._commit(state, {"summary_merge": _ms_since(started), "redis_write_last": self.last_redis_write_ms})
        else:
            self.sessions[result.session_key] = state.to_bytes()
        await self._request_summary(follow_up)

    def _lay_on(self, summary: str, waiting: list[dict[str, Any]], language: Language) -> str:
        """The LLM summary kept whole, with the offline digest of the spans that waited in the room left."""
        room = self.settings.summary_max_tokens - count_text(summary)
        if not waiting or room < MIN_OFFLINE_TAIL_TOKENS:
            return summary
        return f"{summary}\n{RollingSummarizer(room).fold('', waiting, language)}"

    async def _commit(self, state: SessionState, timings: dict[str, float], archived: Sequence[ArchiveEntry] = ()) -> None:
        writing = time.perf_counter()
        # Redis before the Table: a crash in between replays the event onto the old state, which
        # recomputes the same version, and the CAS turns that second write into a no-op
        await self._write(state, timings, archived)
        self.sessions[state.key] = state.to_bytes()
        self.last_redis_write_ms = _ms_since(writing)
        observe_ms("redis_write", self.last_redis_write_ms)

    async def _remember(self, state: SessionState, turn: Turn, greeting: bool) -> None:
        """Long-term memory from a user turn (facts, preferences) and, now and then, the session's summary.

        Before the context write: a crash in between replays the turn, and the upsert is idempotent.
        """
        owner = state.owner
        now = time.time()
        memories = []
        if turn.message.get("role") == "user" and not greeting:
            memories = memories_from_facts(owner, state.learn(turn.message, self.extractor), state.key, now)
        if state.compactor.dropped and state.version % SUMMARY_MEMORY_EVERY == 0:
            memories += filter(None, [summary_memory(owner, state.key, state.compactor.digest.summary, now)])
        if memories:
            await _until_redis_answers(lambda: self.memory.remember(owner, memories, profile_additions(memories)))

    async def _request_summary(self, request: SummaryRequest | None) -> None:
        if request is not None:
            await self.topics.compaction.send(key=request.session_key.encode(), value=request.to_bytes())

    def _stale_after(self) -> float:
        settings = self.settings
        return settings.llm_timeout_seconds * (settings.llm_max_retries + 1) + STALE_REQUEST_MARGIN_SECONDS

    async def _write(self, state: SessionState, timings: dict[str, float], archived: Sequence[ArchiveEntry]) -> None:
        """The turn's archive entries and the context in one round trip (both idempotent), then any eviction."""
        doc = context_doc(state, timings)
        # only the turn this version applied: older ids keep the versions that applied them
        applied = [state.last_turn_id] if state.last_turn_id else []

        async def write() -> list[object]:
            async with self.store.redis.pipeline(transaction=False) as pipe:
                if archived:
                    await self.archive.queue_append(pipe, state.owner, archived)
                await self.store.queue_write(pipe, doc, applied, state.owner)
                return await pipe.execute()

        replies = await _until_redis_answers(write)
        if archived:
            await _until_redis_answers(lambda: self.archive.evict_overflow(state.owner, replies[0]))

    def _load(self, turn: Turn) -> SessionState:
        """The session's state, its owner set from this turn (a session may learn its user later)."""
        owner = owner_key(turn.user_id, turn.tenant, turn.session_id)
        raw = self.sessions.get(turn.session_key)
        if raw is None:
            return SessionState.new(turn.session_id, turn.tenant, owner, self.settings)
        state = SessionState.from_bytes(raw)
        state.owner = owner
        return state


def register_session_agent(app: faust.App, settings: Settings, topics: Topics, sessions: faust.Table) -> None:
    """Attach the session agent to `app`: concurrency 1, so per-partition order and commits stay exact."""

    @app.agent(topics.session_input, name=f"{settings.topic_prefix}.session", concurrency=1)
    async def session_agent(stream: faust.StreamT) -> None:
        store = ContextStore.from_settings(settings)
        writer = SessionWriter(
            settings, topics, sessions, store, MemoryStore(store.redis, settings), ArchiveStore(store.redis, settings),
            build_strategy(settings, llm=False, archive=False), KeyInfoExtractor(settings.max_facts),
        )
        try:
            async for event in stream.events():
                try:
                    await writer.handle(event)
                except Exception as error:  # noqa: BLE001 - an escaping error would skip the record (faust #315)
                    log.exception("event at %s/%s failed", event.message.partition, event.message.offset)
                    await dead_letter(topics.dlq, event, "internal", repr(error))
        finally:
            await store.aclose()
