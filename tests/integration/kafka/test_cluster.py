"""A three-broker Apache Kafka cluster (every topic replicated three times, two replicas in sync required) under a
steady load from an outside producer, with two workers: the broker that leads the most partitions of the turns
topic is killed with SIGKILL and started again 20 s later. No turn is lost or applied twice, every context equals
batch compaction of its session's turns, the archive holds each turn once, and the contexts are fresh again within
FRESH_BOUND_SECONDS of the kill. A rolling restart of all three brokers under the same load (each stopped with
SIGTERM and started again, the next once every partition has its replicas back in sync) loses and doubles nothing
either."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Iterator
from typing import Any

import pytest
from aiokafka.admin import AIOKafkaAdminClient

from tests.conftest import topic_prefix
from tests.integration.agents.test_pipeline import (
    assert_archive_holds_each_turn_once,
    assert_context_matches_batch,
    interleave,
    wait_for_shares,
    wait_for_versions,
)
from tests.support.conversations import turns_for
from tests.support.worker import running_worker
from turnstream.client import ContextClient, TurnProducer
from turnstream.connections import kafka_options
from turnstream.kafka.admin import ensure_topics
from turnstream.settings import Settings
from turnstream.stack.services import ChildService, EmbeddedStack

pytestmark = pytest.mark.kafka

DOWN_SECONDS = 20.0
"""How long the killed broker stays down."""
FRESH_BOUND_SECONDS = 15.0
"""How long after the kill every session's context may wait to move again."""
PACE_SECONDS = 0.3
"""Between the producer's chunks of turns: the load spans the kill, the outage and the restart."""


@pytest.fixture(scope="module")
def cluster() -> Iterator[EmbeddedStack]:
    with EmbeddedStack(broker="kafka", kafka_brokers=3, redis=False, start_timeout=120) as stack:
        yield stack


def cluster_settings(cluster: EmbeddedStack, redis_url: str, request: pytest.FixtureRequest) -> Settings:
    """The cluster, the test Redis, a topic prefix of the test's own, and a budget that compacts often."""
    return Settings(
        kafka_url=cluster.kafka_url,
        redis_url=redis_url,
        topic_prefix=topic_prefix(request.node.name),
        budget_tokens=1200,
        turn_partitions=6,
    )


async def partitions(settings: Settings) -> list[dict[str, Any]]:
    """The turns topic's partitions as the cluster describes them: leader, replicas, in-sync replicas."""
    admin = AIOKafkaAdminClient(**kafka_options(settings))
    await admin.start()
    try:
        (topic,) = await admin.describe_topics([settings.turns_topic])
        return list(topic["partitions"])
    finally:
        await admin.close()


async def leaders(settings: Settings) -> dict[int, int]:
    """Partition of the turns topic -> the node id of its leader."""
    return {part["partition"]: part["leader"] for part in await partitions(settings)}


async def all_in_sync(settings: Settings, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while any(len(part["isr"]) < len(part["replicas"]) for part in await partitions(settings)):
        assert time.monotonic() < deadline, "the restarted broker never caught up"
        await asyncio.sleep(0.5)


def node_service(cluster: EmbeddedStack, node_id: int) -> ChildService:
    """The broker process of KRaft node `node_id` (nodes are numbered from 1, in the stack's order)."""
    return cluster.kafka_services[node_id - 1]


async def produce_paced(settings: Settings, turns: list[dict[str, Any]], chunk: int = 8) -> None:
    async with TurnProducer(settings) as producer:
        for start in range(0, len(turns), chunk):
            for turn in turns[start : start + chunk]:
                await producer.send(turn)
            await asyncio.sleep(PACE_SECONDS)
        await producer.flush()


async def test_a_broker_killed_under_load_loses_no_turn_and_applies_none_twice(
    cluster: EmbeddedStack, redis_url: str, request: pytest.FixtureRequest
) -> None:
    settings = cluster_settings(cluster, redis_url, request)
    sessions = {f"c{i:02d}": turns_for(f"c{i:02d}", seed=300 + i, count=80) for i in range(12)}
    ordered = interleave(list(sessions.values()))
    await ensure_topics(settings)
    seen: dict[str, list[tuple[float, int]]] = {sid: [] for sid in sessions}

    async def sample(client: ContextClient, stop: asyncio.Event) -> None:
        while not stop.is_set():
            for sid in sessions:
                doc = await client.get(sid)
                seen[sid].append((time.monotonic(), doc.version if doc else 0))
            await asyncio.sleep(0.1)

    with running_worker(settings, "first") as first, running_worker(settings, "second") as second:
        await wait_for_shares([first, second], settings)
        async with ContextClient.from_settings(settings) as client:
            stop = asyncio.Event()
            sampler = asyncio.create_task(sample(client, stop))
            load = asyncio.create_task(produce_paced(settings, ordered))
            await asyncio.sleep(5.0)
            led = await leaders(settings)
            busiest = max(set(led.values()), key=lambda node: sum(1 for leader in led.values() if leader == node))
            victim = node_service(cluster, busiest)
            os.kill(victim.process.pid, signal.SIGKILL)
            killed = time.monotonic()
            victim.process.wait()
            await asyncio.sleep(DOWN_SECONDS)
            await asyncio.to_thread(cluster.restart, victim)
            await load
            docs = await wait_for_versions(client, {sid: len(turns) for sid, turns in sessions.items()}, first)
            assert second.poll() is None, "a worker died with the broker"
            stop.set()
            await sampler
    for sid, turns in sessions.items():
        assert_context_matches_batch(docs[sid], turns, settings)
    await assert_archive_holds_each_turn_once(settings, sessions)
    stalled = max(_stalled_after(seen[sid], killed) for sid in sessions)
    print(
        f"broker {busiest} killed (leading {sum(1 for n in led.values() if n == busiest)} of 6 partitions): "
        f"every context moved again within {stalled:.1f}s"
    )
    assert stalled <= FRESH_BOUND_SECONDS, f"a context waited {stalled:.1f}s after the broker was killed"


async def test_a_rolling_restart_of_every_broker_under_load_loses_no_turn_and_applies_none_twice(
    cluster: EmbeddedStack, redis_url: str, request: pytest.FixtureRequest
) -> None:
    settings = cluster_settings(cluster, redis_url, request)
    sessions = {f"r{i:02d}": turns_for(f"r{i:02d}", seed=400 + i, count=60) for i in range(10)}
    await ensure_topics(settings)
    with running_worker(settings, "first") as first, running_worker(settings, "second") as second:
        await wait_for_shares([first, second], settings)
        load = asyncio.create_task(produce_paced(settings, interleave(list(sessions.values()))))
        for node_id in (1, 2, 3):
            await asyncio.sleep(2.0)
            service = node_service(cluster, node_id)
            await asyncio.to_thread(service.stop, cluster.stop_grace, True)  # SIGTERM: a controlled shutdown
            await asyncio.to_thread(cluster.restart, service)
            await all_in_sync(settings)
        await load
        async with ContextClient.from_settings(settings) as client:
            docs = await wait_for_versions(client, {sid: len(turns) for sid, turns in sessions.items()}, first)
        assert second.poll() is None, "a worker died in the rolling restart"
    for sid, turns in sessions.items():
        assert_context_matches_batch(docs[sid], turns, settings)
    await assert_archive_holds_each_turn_once(settings, sessions)


def _stalled_after(samples: list[tuple[float, int]], killed: float) -> float:
    """Seconds from the kill until the session's context moved again; 0 when it had no turn left to apply."""
    at_kill = max((version for at, version in samples if at <= killed), default=0)
    final = samples[-1][1] if samples else 0
    if final <= at_kill:
        return 0.0
    return next(at - killed for at, version in samples if at > killed and version > at_kill)
