"""`turnstream serve` when the broker or Redis is away, when the worker is behind, and on SIGTERM: a clear status,
nothing half-written, a clean exit. No worker runs here: the API itself never writes a context."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
import orjson
from aiokafka import AIOKafkaConsumer

from tests.integration.client.fixtures import make_doc
from tests.integration.serve.conftest import ACME_TOKEN, turn
from tests.support.contract import Api, Contract
from tests.support.serve import Served, serving
from tests.support.services import on_each_broker
from tests.support.worker import running_worker
from turnstream.client import ContextClient
from turnstream.connections import kafka_options
from turnstream.kafka.admin import ensure_topics
from turnstream.redis.connect import redis_client
from turnstream.redis.writer import ContextWriter
from turnstream.serve.openapi import openapi_document
from turnstream.settings import Settings
from turnstream.stack.services import free_port

TURNS = "/v1/sessions/{session_id}/turns"
PROMPT = "/v1/sessions/{session_id}/prompt"


def prefix() -> str:
    return f"t-serve-fail-{uuid.uuid4().hex[:8]}"


@asynccontextmanager
async def api_on(settings: Settings, tokens_file: Path) -> AsyncIterator[tuple[Api, Served]]:
    with serving(settings, tokens_file) as served:
        async with aiohttp.ClientSession() as http:
            yield Api(served.url, ACME_TOKEN, Contract(openapi_document()), http), served


async def until(api: Api, ready: dict[str, bool], timeout: float = 30.0) -> None:
    """Until /readyz says what `ready` says (of the fields it names)."""
    deadline = time.monotonic() + timeout
    while {name: (await api.call("GET", "/readyz"))[1].get(name) for name in ready} != ready:
        assert time.monotonic() < deadline, f"readiness never became {ready}"
        await asyncio.sleep(0.1)


async def test_without_the_broker_a_record_is_503_and_nothing_is_written(redis_url: str, tokens_file: Path) -> None:
    settings = Settings(kafka_url=f"kafka://127.0.0.1:{free_port()}", redis_url=redis_url, topic_prefix=prefix())
    async with api_on(settings, tokens_file) as (api, _):
        assert (await api.call("GET", "/readyz"))[:2] == (
            503,
            {"ready": False, "broker": False, "redis": True, "worker": None, "detail": None},
        )
        status, body, headers = await api.call(
            "POST", TURNS, {"session_id": "s1"}, {"turns": [turn("s1", "t1", "hello", "maya")], "timeout_seconds": 2}
        )
        assert status == 503 and body["acknowledged"] is False and int(headers["Retry-After"]) > 0
        status, prompt, _ = await api.call("POST", PROMPT, {"session_id": "s1"}, {"text": "hello", "user_id": "maya"})
        assert status == 200 and prompt["messages"] == [{"role": "user", "content": "hello"}]  # reads need Redis only
    redis = redis_client(settings)
    try:
        assert [key async for key in redis.scan_iter(f"{settings.topic_prefix}:ctx:*")] == []
    finally:
        await redis.aclose()


async def test_without_redis_a_record_reports_that_the_broker_has_the_turn(
    apache_kafka_url: str, tokens_file: Path
) -> None:
    settings = Settings(
        kafka_url=apache_kafka_url,
        redis_url=f"redis://127.0.0.1:{free_port()}/0",
        topic_prefix=prefix(),
        turn_partitions=2,
    )
    await ensure_topics(settings)
    async with api_on(settings, tokens_file) as (api, _):
        await until(api, {"ready": False, "broker": True, "redis": False})
        status, body, headers = await api.call(
            "POST", TURNS, {"session_id": "s1"}, {"turns": [turn("s1", "t1", "hello", "maya")], "timeout_seconds": 5}
        )
        assert status == 503 and body["acknowledged"] is True and "Redis" in body["detail"] and "Retry-After" in headers
        for method, template, payload in (
            ("POST", PROMPT, {"text": "hi"}),
            ("GET", "/v1/sessions/{session_id}/context", None),
        ):
            status, body, headers = await api.call(method, template, {"session_id": "s1"}, payload)
            assert status == 503 and body["error"] == "unavailable" and "Retry-After" in headers
    consumer = AIOKafkaConsumer(
        settings.turns_topic, **kafka_options(settings), group_id=None, auto_offset_reset="earliest"
    )
    await consumer.start()
    try:
        records = await consumer.getmany(timeout_ms=5000)
        values = [orjson.loads(r.value) for batch in records.values() for r in batch]
    finally:
        await consumer.stop()
    assert [(v["turn_id"], v["tenant"], v["session_id"]) for v in values] == [("t1", "acme", "s1")]  # once, scoped


async def test_a_wait_that_runs_out_is_202_with_the_version_there_is(
    apache_kafka_url: str, redis_url: str, tokens_file: Path
) -> None:
    settings = Settings(kafka_url=apache_kafka_url, redis_url=redis_url, topic_prefix=prefix(), turn_partitions=2)
    await ensure_topics(settings)
    store = ContextWriter.from_settings(settings)
    await store.write(make_doc(3, "s1", tenant="acme"), owner="acme:maya")  # what a worker wrote earlier
    await store.aclose()
    async with api_on(settings, tokens_file) as (api, _):
        await until(api, {"ready": True, "broker": True, "redis": True})
        status, body, _ = await api.call(
            "POST",
            TURNS,
            {"session_id": "s1"},
            {"turns": [turn("s1", "t9", "anyone there?", "maya")], "timeout_seconds": 1},
        )
        assert (status, body) == (202, {"fresh": False, "version": 3, "detail": None})  # too soon to blame a worker
        status, body, _ = await api.call(
            "POST",
            TURNS,
            {"session_id": "new"},
            {"turns": [turn("new", "t1", "hello", "maya")], "timeout_seconds": 0.5},
        )
        assert (status, body) == (202, {"fresh": False, "version": None, "detail": None})


@on_each_broker
async def test_without_a_worker_a_202_and_readyz_say_that_turns_wait_for_one(
    kafka_url: str, redis_url: str, tokens_file: Path
) -> None:
    # no topic made here: the API's producer creates the turns topic, and the worker started later the rest
    settings = Settings(kafka_url=kafka_url, redis_url=redis_url, topic_prefix=prefix(), turn_partitions=2)
    async with api_on(settings, tokens_file) as (api, _):
        await until(api, {"ready": True, "worker": True})  # nothing waits yet
        status, body, _ = await api.call(
            "POST", TURNS, {"session_id": "s1"}, {"turns": [turn("s1", "t1", "hello", "maya")], "timeout_seconds": 10}
        )
        assert (status, body["fresh"], body["version"]) == (202, False, None)
        assert body["detail"].startswith("no worker has applied a turn for ")
        assert f"TURNSTREAM_TOPIC_PREFIX={settings.topic_prefix}" in body["detail"]
        status, ready, _ = await api.call("GET", "/readyz")
        assert (status, ready["ready"], ready["worker"]) == (200, True, False)  # reads and records still work
        assert ready["detail"].startswith("no worker has applied a turn for ")
        with running_worker(settings):
            await until(api, {"worker": True, "detail": None}, timeout=120)  # it applied the turn that waited
            client = ContextClient.from_settings(settings)
            try:
                assert (await client.wait_for("s1", "t1", 30, tenant="acme", user_id="maya")).fresh
            finally:
                await client.aclose()


async def test_sigterm_lets_a_request_in_flight_finish_then_exits_0(
    apache_kafka_url: str, redis_url: str, tokens_file: Path
) -> None:
    settings = Settings(kafka_url=apache_kafka_url, redis_url=redis_url, topic_prefix=prefix(), turn_partitions=2)
    await ensure_topics(settings)
    async with api_on(settings, tokens_file) as (api, served):
        await until(api, {"ready": True, "broker": True, "redis": True})
        waiting = asyncio.create_task(
            api.call("POST", TURNS, {"session_id": "s1"}, {"turns": [turn("s1", "t1", "hello")], "timeout_seconds": 3})
        )
        await asyncio.sleep(1.0)  # the request is in its wait for the context
        stopping = time.monotonic()
        served.process.terminate()
        status, body, _ = await waiting
        assert (status, body) == (202, {"fresh": False, "version": None, "detail": None})
        assert await asyncio.to_thread(served.process.wait, 15) == 0
        assert time.monotonic() - stopping < 10
