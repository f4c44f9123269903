"""SyncTurnProducer and the gateway clients' `record` against a real broker, worker and Redis."""

from __future__ import annotations

import gc
import threading
import time
import uuid
from collections.abc import Iterator

import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.errors import MessageSizeTooLargeError

from tests.support.worker import running_worker
from turnstream.client import (
    GatewayClient,
    ProducerBufferFull,
    ProducerClosedError,
    RecordTimeout,
    SyncGatewayClient,
    SyncTurnProducer,
)
from turnstream.kafka.admin import ensure_topics
from turnstream.settings import Settings

THREADS = 8
TURNS = 40
WORKER_START = 120.0
"""Seconds the first record may take: the worker joins its group and gets its partitions first."""


RUN = uuid.uuid4().hex[:8]
"""Part of every session id: a rerun on the same services (TURNSTREAM_TEST_*_URL) starts new sessions."""


def user_turn(session: str, number: int, size: int = 0) -> dict[str, object]:
    content = f"turn {number} " + "x" * size
    return {
        "turn_id": f"t-{number}",
        "session_id": f"{session}-{RUN}",
        "user_id": "maya",
        "seq": number,
        "message": {"role": "user", "content": content},
    }


@pytest.fixture
async def topic_settings(settings: Settings) -> Settings:
    await ensure_topics(settings)
    return settings


@pytest.fixture
def producer(topic_settings: Settings) -> Iterator[SyncTurnProducer]:
    with SyncTurnProducer(topic_settings) as producer:
        yield producer


def aiokafka_producers() -> list[AIOKafkaProducer]:
    gc.collect()
    return [thing for thing in gc.get_objects() if isinstance(thing, AIOKafkaProducer)]


@pytest.mark.timeout(400)
def test_eight_threads_record_through_one_producer_and_every_wait_is_fresh(topic_settings: Settings) -> None:
    versions: dict[str, list[int]] = {}

    def converse(gateway: SyncGatewayClient, session_id: str) -> None:
        versions[session_id] = [gateway.record(user_turn(session_id, n), timeout=30) for n in range(1, TURNS + 1)]

    with running_worker(topic_settings), SyncGatewayClient(topic_settings) as gateway:
        gateway.record(user_turn("warm-up", 0), timeout=WORKER_START)
        threads = [threading.Thread(target=converse, args=(gateway, f"s-{i}")) for i in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=300)
        assert aiokafka_producers() == [gateway.producer.turn_producer.producer]
    assert sorted(versions) == [f"s-{i}" for i in range(THREADS)]  # a thread that raised recorded nothing here
    for session_versions in versions.values():
        assert session_versions == sorted(set(session_versions)) and len(session_versions) == TURNS


def test_a_full_buffer_raises_after_the_send_timeout(topic_settings: Settings) -> None:
    # two turns fill the room and linger 3 s in aiokafka's batch: the third finds none within 0.5 s
    producer = SyncTurnProducer(topic_settings, send_timeout=0.5, max_pending=2, linger_ms=3000)
    try:
        held = [producer.send(user_turn("s-full", n)) for n in range(2)]
        started = time.monotonic()
        with pytest.raises(ProducerBufferFull, match="within 0.5 s"):
            producer.send(user_turn("s-full", 2))
        assert 0.5 <= time.monotonic() - started < 2.5
        assert not any(handle.done() for handle in held)
    finally:
        producer.close(timeout=30)
    first, second = (handle.result(0) for handle in held)  # delivered on close, in order
    assert (second.partition, second.offset) == (first.partition, first.offset + 1)


def test_a_record_too_large_for_the_client_fails_through_its_handle(topic_settings: Settings) -> None:
    with SyncTurnProducer(topic_settings, max_request_size=1000) as producer:
        handle = producer.send(user_turn("s-big", 1, size=2000))
        with pytest.raises(MessageSizeTooLargeError):
            handle.result(10)
        assert producer.send(user_turn("s-big", 2)).result(10).offset >= 0  # the next turn is not held up


def test_a_record_the_broker_refuses_fails_through_its_handle(topic_settings: Settings) -> None:
    # past the broker's message.max.bytes (1 MiB by default), within what the client allows itself
    with SyncTurnProducer(topic_settings, max_request_size=4 << 20, max_batch_size=4 << 20) as producer:
        handle = producer.send(user_turn("s-huge", 1, size=2 << 20))
        with pytest.raises(MessageSizeTooLargeError):
            handle.result(30)


def test_close_is_idempotent_and_a_send_after_it_is_refused(producer: SyncTurnProducer) -> None:
    first, second = (producer.send(user_turn("s-close", n)).result(10) for n in (1, 2))
    assert (second.partition, second.offset) == (first.partition, first.offset + 1)
    producer.close()
    producer.close()
    with pytest.raises(ProducerClosedError, match="closed"):
        producer.send(user_turn("s-close", 3))


async def test_the_async_gateway_records_and_returns_the_fresh_version(topic_settings: Settings) -> None:
    with running_worker(topic_settings):
        async with GatewayClient(topic_settings) as gateway:
            first = await gateway.record(user_turn("s-async", 0), timeout=WORKER_START)
            latest = await gateway.record([user_turn("s-async", 1), user_turn("s-async", 2)])
            doc = await gateway.context.get(f"s-async-{RUN}", user_id="maya")
    assert doc is not None and doc.version == latest > first and doc.last_turn_id == "t-2"


async def test_the_async_gateway_raises_record_timeout_without_a_worker(topic_settings: Settings) -> None:
    async with GatewayClient(topic_settings) as gateway:
        started = time.monotonic()
        with pytest.raises(RecordTimeout, match=f"'s-idle-{RUN}'.*'t-1' not in the context within 1 s"):
            await gateway.record(user_turn("s-idle", 1), timeout=1.0)
    assert 1.0 <= time.monotonic() - started < 3.0
