"""Pipelines with script calls: one round trip each, and a Redis that lost its scripts gets them again."""

from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from tests.integration.client.fixtures import make_doc
from tests.support.memory import entries
from turnstream.redis.archive import ArchiveStore
from turnstream.redis.memory_store import MemoryStore
from turnstream.redis.writer import ContextWriter
from turnstream.settings import Settings


@pytest.fixture
async def redis(redis_settings: Settings) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_settings.redis_url)
    yield client
    await client.aclose()


async def calls(redis: Redis, command: str) -> int:
    return int((await redis.info("commandstats")).get(f"cmdstat_{command}", {}).get("calls", 0))


async def test_a_scripted_pipeline_asks_redis_nothing_before_it(redis: Redis, redis_settings: Settings) -> None:
    store, archive = ContextWriter.on(redis, redis_settings), ArchiveStore(redis, redis_settings)
    assert await store.write(make_doc(1), ["t1"])  # the scripts are loaded by now, whatever ran before
    await archive.append("u1", entries(1))
    asked, sent = await calls(redis, "script"), await calls(redis, "evalsha")
    for version in range(2, 7):
        assert await store.write(make_doc(version), [f"t{version}"])
        await archive.append("u1", entries(1, start=version))
    assert await calls(redis, "script") == asked  # no SCRIPT EXISTS (nor LOAD) before each pipeline
    assert await calls(redis, "evalsha") == sent + 10


async def test_writes_go_on_after_redis_lost_its_scripts(redis: Redis, redis_settings: Settings) -> None:
    store, archive, memory = (
        ContextWriter.on(redis, redis_settings),
        ArchiveStore(redis, redis_settings),
        MemoryStore(redis, redis_settings),
    )
    assert await store.write(make_doc(1), ["t1"])
    await redis.script_flush()
    assert await store.write(make_doc(2), ["t2"])
    assert (await store.reader.read("acme:s1")).version == 2
    await redis.script_flush()
    assert await archive.append("u1", entries(3)) == 3
    assert len(await archive.entries("u1")) == 3
    await redis.script_flush()
    await memory.remember_many({"u1": ([], ["I am allergic to peanuts"]), "u2": ([], ["I prefer aisle seats"])})
    assert await memory.profile("u1") == ("I am allergic to peanuts", 1)
    assert await memory.profile("u2") == ("I prefer aisle seats", 1)
