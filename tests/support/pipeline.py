"""Helpers of the pipeline's integration tests: producing turns, waiting for the worker's contexts, and checking
them against batch compaction of the log; reading a topic back; the partitions each worker holds."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer
from redis.asyncio import Redis

from tests.support.worker import RunningWorker
from turnstream.client import ContextClient, TurnProducer
from turnstream.compaction.compactor import compact
from turnstream.compaction.strategies.offline import build_strategy
from turnstream.memory.archive import archive_entry
from turnstream.redis.archive import ArchiveStore
from turnstream.schemas.archive import entry_id
from turnstream.schemas.context import ContextDoc
from turnstream.schemas.ids import owner_key, session_key
from turnstream.session import CoreConfig
from turnstream.settings import Settings

DRAIN_TIMEOUT = 180
"""How long a test waits for the worker to bring every context to its version, at most."""
PACE_SECONDS = 0.3
"""Between the producer's chunks of turns."""


def interleave(sessions: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Round-robin over sessions, so partitions carry many sessions mixed; each session stays in order."""
    longest = max(len(turns) for turns in sessions)
    return [turns[i] for i in range(longest) for turns in sessions if i < len(turns)]


async def produce(settings: Settings, turns: list[dict[str, Any]]) -> None:
    async with TurnProducer(settings) as producer:
        for turn in turns:
            await producer.send(turn)
        await producer.flush()


async def produce_paced(settings: Settings, turns: list[dict[str, Any]], stop: asyncio.Event, chunk: int = 8) -> int:
    """Send `turns` in order, `chunk` at a time PACE_SECONDS apart, until all are sent or `stop` is set; how many
    were sent, each acknowledged by the cluster."""
    sent = 0
    async with TurnProducer(settings) as producer:
        while sent < len(turns) and not stop.is_set():
            for turn in turns[sent : sent + chunk]:
                await producer.send(turn)
            sent = min(sent + chunk, len(turns))
            await asyncio.sleep(PACE_SECONDS)
        await producer.flush()
    return sent


async def wait_for_versions(
    client: ContextClient,
    expected: dict[str, int],
    worker: RunningWorker,
    timeout: float = DRAIN_TIMEOUT,
    tenant: str | None = None,
) -> dict[str, ContextDoc]:
    """Poll until every session's context (of `tenant`) reached its expected version; fail with what is missing."""
    deadline = time.monotonic() + timeout
    docs: dict[str, ContextDoc | None] = {}
    while time.monotonic() < deadline:
        assert worker.poll() is None, f"worker exited with status {worker.poll()}"
        docs = {sid: await client.get(sid, tenant) for sid in expected}
        if all(doc is not None and doc.version >= expected[sid] for sid, doc in docs.items()):
            return docs  # type: ignore[return-value]
        await asyncio.sleep(0.5)
    behind = {
        sid: (doc.version if doc else None, want)
        for sid, want in expected.items()
        if (doc := docs.get(sid)) is None or doc.version < want
    }
    pytest.fail(f"{len(behind)} sessions behind after {timeout}s, e.g. {list(behind.items())[:5]}")


def assert_context_matches_batch(doc: ContextDoc, turns: list[dict[str, Any]], settings: Settings) -> None:
    """The streamed context equals batch compaction of the session's own turns, each applied once, in order."""
    expected = compact(
        [t["message"] for t in turns],
        settings.budget_tokens,
        strategy=build_strategy(settings),
        times=[t["ts"] for t in turns],
        headroom_tokens=CoreConfig.from_settings(settings).headroom_tokens,
    ).to_dict()
    assert doc.messages == expected["messages"]
    assert doc.dropped == expected["dropped"]
    assert doc.summary == expected["summary"]
    assert doc.version == len(turns)
    assert doc.last_turn_id == turns[-1]["turn_id"]
    assert doc.tokens.after <= settings.budget_tokens
    assert doc.messages[0] == turns[0]["message"] and doc.messages[1] == turns[1]["message"]  # anchors
    assert doc.messages[-1] == turns[-1]["message"]  # the newest message


async def assert_archive_holds_each_turn_once(
    settings: Settings, sessions: dict[str, list[dict[str, Any]]], redis: Redis | None = None
) -> None:
    """Every archivable turn is one archive entry, at its position; nothing more, however often it came. Read through
    `redis` when given (a Sentinel's client, say), else a client of settings.redis_url."""
    archive = ArchiveStore(redis or Redis.from_url(settings.redis_url), settings)
    try:
        for sid, turns in sessions.items():
            owner = owner_key(turns[0]["user_id"], turns[0].get("tenant"), sid)
            stored = [
                entry
                for entry in await archive.entries(owner)
                if entry.session == session_key(sid, turns[0].get("tenant"))
            ]
            expected = {
                entry_id(e.session, t["turn_id"]): t["seq"]
                for t in turns
                if (e := archive_entry(session_key(sid, t.get("tenant")), t["turn_id"], t["seq"], t["message"], 0.0))
            }
            assert len(stored) == len(expected), sid
            assert {entry.id: entry.position for entry in stored} == expected, sid
    finally:
        if redis is None:
            await archive.redis.aclose()


async def read_topic(settings: Settings, topic: str, count: int, timeout: float = 30) -> list[Any]:
    """The first `count` records of `topic` (fewer if `timeout` seconds pass first), read from its start."""
    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=settings.bootstrap_servers,
        auto_offset_reset="earliest",
        group_id=f"{settings.topic_prefix}-{topic}-reader",
    )
    await consumer.start()
    records: list[Any] = []
    try:
        deadline = time.monotonic() + timeout
        while len(records) < count and time.monotonic() < deadline:
            batch = await consumer.getmany(timeout_ms=500)
            records += [r for rs in batch.values() for r in rs]
    finally:
        await consumer.stop()
    return records


async def read_dead_letters(settings: Settings, count: int, timeout: float = 60) -> list[Any]:
    return await read_topic(settings, settings.dlq_topic, count, timeout)


async def wait_for_shares(workers: list[RunningWorker], settings: Settings, timeout: float = 90) -> list[set[int]]:
    """Each worker's partitions of the turns topic, once each holds some and together they hold all of them.

    Apache Kafka forms the group as soon as the first worker joins, so it holds every partition until the
    second one's join rebalances them; the embedded broker's slow join usually takes both at once.
    """
    deadline = time.monotonic() + timeout
    while True:
        for worker in workers:
            assert worker.poll() is None, (
                f"worker {worker.pid} exited with status {worker.poll()}:\n{worker.log()[-3000:]}"
            )
        shares = [worker.assigned(settings.turns_topic) for worker in workers]
        if (
            all(shares)
            and set().union(*shares) == set(range(settings.turn_partitions))
            and sum(map(len, shares)) == settings.turn_partitions
        ):
            return shares
        assert time.monotonic() < deadline, f"partitions never settled on {len(workers)} workers: {shares}"
        await asyncio.sleep(0.25)


async def until(check: Callable[[], Awaitable[bool]], timeout: float = 60.0) -> None:
    """Poll `check` until it holds; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not await check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.3)
