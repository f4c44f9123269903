"""The session agent's executor: a batch stepped through the pure core, then its effects carried out by the
sinks (agents/sinks.py) in the order of PLAN; the batch is acknowledged only after the last stage returns.

The order is the delivery guarantee. Nothing is acknowledged before every stage has stored its effects, so a
failure at any stage leaves the batch unacknowledged and its partition's next owner applies it again from
the last committed offset, onto the Table row as the last complete batch left it: every write before the
Table row is idempotent (dead letters and forwards are sent again, memory upserts and archive appends are
keyed, context writes compare-and-set on a version the replay recomputes). After it, the replay finds the
new rows: a forget is confirmed again (its record replays whatever the row), and a summary request lost there
is not asked again by the replay (its turns are duplicates now) but re-sent with the next dropped span once
it is stale (session/summaries.py).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from turnstream.agents.batch import Batch, Stepper, ms_since
from turnstream.agents.envelope import Consumed
from turnstream.agents.sinks import Done, Sink
from turnstream.agents.throttle import TokenBucket
from turnstream.metrics import observe_ms, turns_total

E = TypeVar("E", bound=Consumed)
"""A consumed event: Faust's, or a test's stand-in (turnstream.testing)."""
PLAN: tuple[str, ...] = (
    "dead_letter",  # refused records to the DLQ: waited for, so a reject is never lost
    "forward",  # misrouted turns to their session's partition: waited for
    "release",  # held turns due, round again: before the Table row that no longer holds them
    "memory",  # memory upserts: before the context, so a prompt that shows a turn finds its memories
    "redis",  # archive appends and context documents, one round trip; then archive evictions
    "journal",  # memory-journal records and tombstones for what the caps evicted: acks waited for
    "table",  # one Table row per session, on the changelog before the offsets that cover it are acknowledged
    "forget",  # erasures confirmed in Redis once their markers are on the changelog
    "summary_request",  # LLM summary requests, once the state that expects their answers is stored
)
"""The stages of a batch, in order: each names a field of Sinks."""
METRIC_OF_STAGE = {"redis": "redis_write", "journal": "journal_write", "table": "table_write"}
"""The stages whose latency is a per-stage metric (metrics.py)."""


@dataclass(frozen=True)
class Sinks:
    """One sink per stage of PLAN."""

    dead_letter: Sink
    forward: Sink
    release: Sink
    memory: Sink
    redis: Sink
    journal: Sink
    table: Sink
    forget: Sink
    summary_request: Sink


@dataclass
class Executor:
    """Runs a batch through the stepper, then walks PLAN: the only I/O of the session agent."""

    stepper: Stepper
    sinks: Sinks
    throttle: TokenBucket | None = None
    """TURNSTREAM_MAX_TURNS_PER_SECOND: a batch waits for its tokens before it is stepped; None: no limit."""

    async def store(self, batch: Batch) -> Done:
        """Store every effect `batch` asks for; raises, with the stages after unrun, when one fails."""
        done = Done()
        for stage in PLAN:
            started = time.perf_counter()
            await getattr(self.sinks, stage).write(batch, done)
            done.stage_ms[stage] = ms_since(started)
        _count(batch, done)
        return done

    async def store_then_acknowledge(self, events: list[E], acknowledge: Callable[[list[E]], Awaitable[None]]) -> None:
        """Step the batch, and acknowledge its records only once every stage has stored its effects; its sessions'
        states live on only then (a batch that fails leaves the next one, or the replay, their Table rows)."""
        if self.throttle is not None and (wait := self.throttle.take(len(events), time.monotonic())) > 0:
            await asyncio.sleep(wait)
        batch = self.stepper.batch(events)
        try:
            await self.store(batch)
            await acknowledge(events)
        except BaseException:
            self.stepper.loader.failed(batch.sessions)
            raise
        self.stepper.loader.stored(batch.sessions, time.monotonic())


def _count(batch: Batch, done: Done) -> None:
    for step, _ in batch.steps:
        if step.outcome in ("applied", "duplicate"):
            turns_total.labels(step.outcome).inc()
    for wait in batch.broker_wait_ms:
        observe_ms("broker_wait", wait)
    per_record = max(batch.events, 1)
    observe_ms("ingest", batch.decode_ms / per_record)
    observe_ms("compaction", batch.core_ms / per_record)
    for stage, metric in METRIC_OF_STAGE.items():
        observe_ms(metric, done.stage_ms[stage])


async def to_the_end(work: Awaitable[None]) -> None:
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
