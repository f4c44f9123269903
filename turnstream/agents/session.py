"""The session agent: the single writer of each session's state, one partition at a time."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import faust
import redis.exceptions
from faust.types import EventT
from tenacity import AsyncRetrying, retry_if_exception_type, wait_exponential

from turnstream.agents.ingest import dead_letter
from turnstream.agents.sink import context_doc
from turnstream.agents.state import SessionState
from turnstream.client.store import ContextStore
from turnstream.compaction import MessageError
from turnstream.compaction.greeting import is_small_talk
from turnstream.compaction.strategies import Strategy, build_strategy
from turnstream.schemas import ContextDoc, TurnError, decode_turn
from turnstream.settings import Settings
from turnstream.streams.metrics import observe_ms, turns_total
from turnstream.streams.topics import Topics

log = logging.getLogger(__name__)


def _ms_since(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def _is_greeting(message: dict) -> bool:
    content = message.get("content")
    return message.get("role") == "user" and isinstance(content, str) and is_small_talk(content)


@dataclass
class SessionWriter:
    """Applies one event: decode, dedup, compact, write Redis, then record the state in the Table."""

    settings: Settings
    topics: Topics
    sessions: faust.Table
    store: ContextStore
    strategy: Strategy
    last_redis_write_ms: float = 0.0
    """The latest write's latency: a document cannot carry the time of its own write."""

    async def handle(self, event: EventT) -> None:
        started = time.perf_counter()
        broker_wait = max(0.0, time.time() * 1000 - event.message.timestamp)
        try:
            turn = decode_turn(event.value, self.settings.max_content_bytes)
        except TurnError as error:
            await dead_letter(self.topics.dlq, event, error.reason, error.detail)
            return
        ingest = _ms_since(started)
        state = self._load(turn.session_key)
        if state.seen(turn.turn_id):
            turns_total.labels("duplicate").inc()
            # a crash may have come between the Table update and the Redis write: re-sync (a CAS no-op otherwise)
            await self._write(context_doc(state, turn, {}), state)
            return
        compacting = time.perf_counter()
        try:
            state.apply(turn.turn_id, turn.message, self.strategy, greeting=_is_greeting(turn.message))
        except MessageError as error:
            await dead_letter(self.topics.dlq, event, "message", str(error))
            return
        timings = {
            "broker_wait": broker_wait,
            "ingest": ingest,
            "compaction": _ms_since(compacting),
            "redis_write_last": self.last_redis_write_ms,
        }
        writing = time.perf_counter()
        # Redis before the Table: a crash in between replays the turn onto the old state, which
        # recomputes the same version, and the CAS turns that second write into a no-op
        await self._write(context_doc(state, turn, timings), state)
        self.sessions[turn.session_key] = state.to_bytes()
        self.last_redis_write_ms = _ms_since(writing)
        for stage in ("broker_wait", "ingest", "compaction"):
            observe_ms(stage, timings[stage])
        observe_ms("redis_write", self.last_redis_write_ms)
        turns_total.labels("applied").inc()

    async def _write(self, doc: ContextDoc, state: SessionState) -> None:
        """Write until Redis takes it: while Redis is away the partition waits rather than drop turns."""
        async for attempt in AsyncRetrying(
            retry=retry_if_exception_type((redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)),
            wait=wait_exponential(multiplier=0.1, max=5),
            before_sleep=lambda retry: log.warning("Redis write failed, retrying: %s", retry.outcome.exception()),
        ):
            with attempt:
                await self.store.write(doc, list(state.recent_turn_ids))

    def _load(self, session_key: str) -> SessionState:
        raw = self.sessions.get(session_key)
        if raw is None:
            return SessionState.new(self.settings.budget_tokens, self.settings.budget_messages, self.settings.dedup_window)
        return SessionState.from_bytes(raw)


def register_session_agent(app: faust.App, settings: Settings, topics: Topics, sessions: faust.Table) -> None:
    """Attach the session agent to `app`: concurrency 1, so per-partition order and commits stay exact."""

    @app.agent(topics.turns, name=f"{settings.topic_prefix}.session", concurrency=1)
    async def session_agent(stream: faust.StreamT) -> None:
        store = ContextStore.from_settings(settings)
        writer = SessionWriter(settings, topics, sessions, store, build_strategy(settings, llm=False))
        try:
            async for event in stream.events():
                try:
                    await writer.handle(event)
                except Exception as error:  # noqa: BLE001 - an escaping error would skip the record (faust #315)
                    log.exception("turn at %s/%s failed", event.message.partition, event.message.offset)
                    await dead_letter(topics.dlq, event, "internal", repr(error))
        finally:
            await store.aclose()
