"""Figure 9: worker memory under churning sessions, with the Table's idle expiry against the same worker keeping every session.

Each side is a fresh worker on a topic prefix of its own, fed `sessions` short conversations (a new session
every turn pair, none ever coming back) at full speed; its resident set size is read once the first tenth
and once all of them are applied. With expiry the Table holds only the sessions of the last TTL, so the
worker's memory stays flat; without it every session stays in the Table (and in every restart's recovery).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import orjson

from turnstream.client import TurnProducer
from turnstream.kafka.admin import ensure_topics
from turnstream.redis.writer import ContextWriter
from turnstream.schemas.ids import session_owner
from turnstream.settings import Settings
from turnstream_tools.benchmarks.children import Children
from turnstream_tools.benchmarks.figures import Figure, Row, Target
from turnstream_tools.benchmarks.live import POLL_SECONDS, READY_TIMEOUT_SECONDS, BenchTimeout
from turnstream_tools.benchmarks.pinning import rss_mb

TTL_SECONDS = 5
"""The expiring side's session TTL: short, so a run of a minute churns through many TTLs."""
BATCH_EVENTS = 64
"""Both sides take events in batches, so the run is short; memory does not depend on it."""
CHUNK_SESSIONS = 1000
"""Sessions produced between waits until the worker applied them: the producer never runs far ahead."""
TARGET_GROWTH = 1.2
"""With expiry, RSS after every session at most this multiple of RSS after the first tenth."""
ANSWER = (
    "The harbour first: boats fill up by ten. Then the old town on foot, it is compact and the lanes are "
    "shaded until noon, and the castle last, when the tour groups have left. Book the harbour tickets "
    "online the day before; the castle sells them at the gate and the old town needs none."
)


def session_turns(prefix: str, index: int) -> list[dict[str, Any]]:
    """One short conversation: a question and its answer, under a session id never used again."""
    sid = f"{prefix}-{index}"
    question = f"Trip {index}: harbour, old town and castle on day {index % 7 + 1} - what should I book first?"
    return [
        {"turn_id": f"{sid}-0", "session_id": sid, "seq": 0, "message": {"role": "user", "content": question}},
        {"turn_id": f"{sid}-1", "session_id": sid, "seq": 1, "message": {"role": "assistant", "content": ANSWER}},
    ]


async def _applied(store: ContextWriter, session_ids: list[str], version: int, children: Children, what: str) -> None:
    """Wait until every session in `session_ids` has its context at `version` (they are polled right after their write,
    well within the TTL)."""
    deadline = time.monotonic() + READY_TIMEOUT_SECONDS
    waiting = list(session_ids)
    while waiting:
        async with store.redis.pipeline(transaction=False) as pipe:
            for sid in waiting:
                pipe.hget(
                    store.layout.session(session_owner(sid), sid).context, "version"
                )  # no user: the session owns its memory
            versions = await pipe.execute()
        waiting = [sid for sid, got in zip(waiting, versions) if got is None or int(got) < version]
        children.check()
        if time.monotonic() > deadline:
            raise BenchTimeout(f"{what}: {len(waiting)} sessions not applied after {READY_TIMEOUT_SECONDS:.0f}s")
        await asyncio.sleep(POLL_SECONDS * 10)


async def _side(settings: Settings, children: Children, sessions: int, progress: Callable[[str], None]) -> list[float]:
    """RSS in MB at start (after one session), after a tenth of the sessions, after all of them."""
    await ensure_topics(settings)
    name = settings.topic_prefix.rsplit("-", 1)[-1]
    child = children.worker(settings, f"worker-churn-{name}")
    store = ContextWriter.from_settings(settings)
    producer = TurnProducer(settings.model_copy(update={"idempotent_producer": "off"}))
    await producer.start()
    try:
        tenth = max(sessions // 10, 1)
        chunk = min(CHUNK_SESSIONS, tenth)
        rss: list[float] = []
        started = time.monotonic()
        produced = 0
        for last in sorted({1, *range(chunk, sessions, chunk), sessions}):  # the first session alone: the baseline
            for index in range(produced, last):
                for turn in session_turns(name, index):
                    await producer.send_raw(turn["session_id"].encode(), orjson.dumps(turn))
            await producer.flush()
            # the last sessions produced: one of them on every partition, almost surely
            tail = [f"{name}-{i}" for i in range(max(last - 64, produced), last)]
            produced = last
            await _applied(store, tail, 2, children, f"churn ({name}) at {last:,} sessions")
            if last in (1, tenth, sessions):
                rss.append(rss_mb(child.process.pid))
                progress(
                    f"churn ({name}): {last:,} sessions in {time.monotonic() - started:.0f}s, worker RSS {rss[-1]:.0f} MB"
                )
        return rss
    finally:
        await producer.stop()
        await store.aclose()
        children.stop_one(child)


async def churn_memory(
    settings: Settings, children: Children, sessions: int, progress: Callable[[str], None]
) -> Figure:
    """Worker RSS with the idle expiry (TTL_SECONDS) against the same worker keeping every session (TTL of a week)."""
    common = {"batch_max_events": BATCH_EVENTS}
    expiring = settings.model_copy(
        update={**common, "topic_prefix": f"{settings.topic_prefix}-expiry", "session_ttl_seconds": TTL_SECONDS}
    )
    keeping = settings.model_copy(
        update={**common, "topic_prefix": f"{settings.topic_prefix}-kept", "session_ttl_seconds": 7 * 24 * 3600}
    )
    a = await _side(expiring, children, sessions, progress)
    b = await _side(keeping, children, sessions, progress)
    labels = ["after 1 session", f"after {max(sessions // 10, 1):,} sessions", f"after {sessions:,} sessions"]
    rows = [Row.of(f"worker RSS {label}", "MB", x, y) for label, x, y in zip(labels, a, b)]
    growth = a[-1] / a[1]
    target = Target(f"with expiry, RSS after all ≤ {TARGET_GROWTH}× after a tenth", growth <= TARGET_GROWTH)
    return Figure(
        "churn",
        f"9 Worker memory, {sessions:,} churning sessions",
        f"expiry after {TTL_SECONDS}s idle",
        "no expiry",
        rows,
        target,
        {"sessions": sessions, "ttl_seconds": TTL_SECONDS, "rss_mb": {"expiry": a, "kept": b}},
    )
