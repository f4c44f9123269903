from collections.abc import AsyncIterator

import pytest

from tests.integration.client.fixtures import make_doc
from turnstream.redis.writer import ContextWriter
from turnstream.schemas.ids import session_owner
from turnstream.settings import Settings

ANONYMOUS = session_owner("acme:s1")
"""The owner of session acme:s1, which names no user: the documents here are written without one."""


@pytest.fixture
async def store(redis_settings: Settings) -> AsyncIterator[ContextWriter]:
    store = ContextWriter.from_settings(
        redis_settings.model_copy(update={"dedup_window": 4, "session_ttl_seconds": 600})
    )
    yield store
    await store.aclose()


def test_keys_share_one_hash_tag_under_the_prefix(store: ContextWriter, redis_settings: Settings) -> None:
    prefix = redis_settings.topic_prefix
    assert store.reader.keys("acme:maya", "acme:s1") == (
        f"{prefix}:ctx:{{acme:maya}}:acme:s1",
        f"{prefix}:applied:{{acme:maya}}:acme:s1",
        f"{prefix}:injected:{{acme:maya}}:acme:s1",
        f"{prefix}:updates:acme:s1",
    )


async def test_newer_version_is_written(store: ContextWriter) -> None:
    assert await store.write(make_doc(1), ["t1"])
    assert await store.write(make_doc(2), ["t2"])
    doc = await store.reader.read("acme:s1")
    assert doc == make_doc(2, updated_at=doc.updated_at)
    stored = await store.redis.hgetall(store.reader.keys(ANONYMOUS, "acme:s1").context)
    assert (stored[b"version"], stored[b"last_turn_id"]) == (b"2", b"t2")


@pytest.mark.parametrize("replayed", [2, 1])
async def test_equal_or_older_version_is_a_no_op(store: ContextWriter, replayed: int) -> None:
    current = make_doc(2, summary="current")
    assert await store.write(current, ["t2"])
    assert not await store.write(make_doc(replayed, summary="replayed"), [f"replayed-{replayed}"])
    assert await store.reader.read("acme:s1") == current
    assert await store.reader.read_including("acme:s1", ANONYMOUS, f"replayed-{replayed}") == (current, False)


async def test_every_key_gets_the_session_ttl(store: ContextWriter) -> None:
    await store.write(make_doc(1), ["t1"])
    keys = store.reader.keys(ANONYMOUS, "acme:s1")
    for key in (keys.context, keys.applied):
        assert 590 <= await store.redis.ttl(key) <= 600


async def test_applied_ids_are_trimmed_to_the_newest_window(store: ContextWriter) -> None:
    for version in range(1, 7):
        await store.write(make_doc(version), [f"t{version}"])
    await store.write(make_doc(7), ["t7a", "t7b"])
    applied = await store.redis.zrange(store.reader.keys(ANONYMOUS, "acme:s1").applied, 0, -1, withscores=True)
    assert applied == [(b"t5", 5.0), (b"t6", 6.0), (b"t7a", 7.0), (b"t7b", 7.0)]


async def test_a_version_that_applies_more_turns_than_one_call_takes_records_each_of_them(
    redis_settings: Settings,
) -> None:
    store = ContextWriter.from_settings(redis_settings.model_copy(update={"dedup_window": 6_000}))
    try:
        turn_ids = [
            f"t{n}" for n in range(5_000)
        ]  # a batch of 5,000 events of one session: more than one ZADD can take
        assert await store.write(make_doc(3), turn_ids)
        applied = await store.redis.zrange(store.reader.keys(ANONYMOUS, "acme:s1").applied, 0, -1, withscores=True)
        assert sorted(applied) == sorted((turn_id.encode(), 3.0) for turn_id in turn_ids)
    finally:
        await store.aclose()


async def test_read_of_an_unknown_session_is_none(store: ContextWriter) -> None:
    assert await store.reader.read("nobody") is None
    assert await store.reader.read_including("nobody", "nobody", "t1") == (None, False)


async def test_write_publishes_the_version(store: ContextWriter) -> None:
    async with store.reader.updates("acme:s1") as updates:
        await store.write(make_doc(5), ["t5"])
        assert await updates.next(2.0) == 5
        assert not await store.write(make_doc(5), ["t5"])
        assert await updates.next(0.2) is None
