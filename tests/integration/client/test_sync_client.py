"""SyncContextClient against a real Redis: the asyncio client's answers, from a thread."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator

import pytest
from redis import Redis

from tests.integration.client.fixtures import make_doc
from tests.support.memory import entries, state_budget
from turnstream.client import ContextClient, SyncContextClient
from turnstream.redis.archive import ArchiveStore
from turnstream.redis.writer import ContextWriter
from turnstream.schemas.ids import owner_key
from turnstream.settings import Settings

OWNER = owner_key("maya", "acme", "s1")


@pytest.fixture
def sync_client(redis_settings: Settings) -> Iterator[SyncContextClient]:
    with SyncContextClient.from_settings(redis_settings) as client:
        yield client


def subscribers(redis_url: str, channel: str) -> tuple[int, int]:
    """(subscribers of `channel`, connections subscribed to anything), as the server sees them."""
    with Redis.from_url(redis_url) as redis:
        ((_, count),) = redis.pubsub_numsub(channel)
        listing = redis.client_list()
        return int(count), sum(1 for c in listing if int(c.get("sub", 0)) or int(c.get("psub", 0)))


async def test_get_reads_what_the_async_client_reads(sync_client: SyncContextClient, store: ContextWriter) -> None:
    await store.write(make_doc(3), ["t3"], owner=OWNER)
    expected = await store.reader.read("acme:s1", OWNER)
    assert expected is not None
    assert sync_client.get("s1", tenant="acme", user_id="maya") == expected
    assert sync_client.get("s1", tenant="acme") == expected  # the owner looked up first
    assert sync_client.get("s1") is None  # no tenant: another session


async def test_wait_for_a_turn_already_applied_returns_at_once(
    sync_client: SyncContextClient, store: ContextWriter
) -> None:
    await store.write(make_doc(1), ["t1"])
    started = time.monotonic()
    result = sync_client.wait_for("s1", "t1", timeout=10, tenant="acme")
    assert result.fresh and result.doc == await store.reader.read("acme:s1")
    assert time.monotonic() - started < 0.5


async def test_wait_for_wakes_on_the_write_that_applies_the_turn(
    sync_client: SyncContextClient, store: ContextWriter
) -> None:
    await store.write(make_doc(1), ["t1"])
    started = time.monotonic()
    waiting = asyncio.create_task(asyncio.to_thread(sync_client.wait_for, "s1", "t3", 10, "acme"))
    await asyncio.sleep(0.3)
    await store.write(make_doc(2), ["t2"])  # an update without the turn: keep waiting
    await asyncio.sleep(0.2)
    assert not waiting.done()
    await store.write(make_doc(3), ["t3"])
    result = await asyncio.wait_for(waiting, 2)
    assert result.fresh and result.doc is not None and result.doc.version == 3
    assert time.monotonic() - started < 2


async def test_a_timed_out_wait_returns_the_latest_doc_and_leaves_no_subscription(
    sync_client: SyncContextClient, store: ContextWriter, redis_settings: Settings
) -> None:
    assert redis_settings.redis_url
    channel = sync_client.layout.updates_channel("acme:s1")
    await store.write(make_doc(1), ["t1"])
    seen: list[tuple[int, int]] = []

    def wait() -> None:
        result = sync_client.wait_for("s1", "never", timeout=0.6, tenant="acme")
        assert not result.fresh and result.doc is not None and result.doc.version == 2

    waiting = threading.Thread(target=wait)
    started = time.monotonic()
    waiting.start()
    await asyncio.sleep(0.3)
    seen.append(subscribers(redis_settings.redis_url, channel))  # while it waits: subscribed
    await store.write(make_doc(2), ["t2"])
    await asyncio.to_thread(waiting.join, 5)
    assert 0.6 <= time.monotonic() - started < 1.5
    seen.append(subscribers(redis_settings.redis_url, channel))
    assert seen == [(1, 1), (0, 0)]


async def test_build_prompt_is_the_async_clients_prompt(
    redis_settings: Settings, sync_client: SyncContextClient
) -> None:
    async with ContextClient.from_settings(redis_settings) as client:
        assert client.memory is not None
        await ContextWriter.on(client.store.redis, redis_settings).write(
            make_doc(
                4,
                messages=[
                    {"role": "user", "content": "Plan my trip to Lisbon"},
                    {"role": "assistant", "content": "Gladly."},
                ],
            ),
            ["t4"],
            owner=OWNER,
        )
        await state_budget(client.memory, OWNER, "acme:s1")
        archive = ArchiveStore(client.store.redis, redis_settings)
        await archive.append(OWNER, entries(20))
        question = "Which hotels fit my budget? Anything about topic3?"
        expected = await client.build_prompt("s1", question, tenant="acme", user_id="maya", record=False)
    prompt = sync_client.build_prompt("s1", question, tenant="acme", user_id="maya", record=False)
    assert prompt.messages == expected.messages
    assert prompt.recalled == expected.recalled and any("3500" in m["text"] for m in prompt.recalled)
    assert prompt.archived == expected.archived and prompt.archived
    assert set(prompt.timings) == {"redis", "assemble", "total"}
    # without the user, the owner pointer the worker wrote leads to the same memories
    assert sync_client.build_prompt("s1", question, tenant="acme", record=False).messages == expected.messages


async def test_search_is_the_memory_stores_from_either_client_and_reads_one_owner(
    redis_settings: Settings,
    sync_client: SyncContextClient,
) -> None:
    question = "Which hotels fit my budget? Anything about topic3?"
    anonymous = owner_key(None, "acme", "anon-1")
    async with ContextClient.from_settings(redis_settings) as client:
        assert client.memory is not None
        await state_budget(client.memory, OWNER, "acme:s1")
        archive = ArchiveStore(client.store.redis, redis_settings)
        await archive.append(OWNER, entries(20))
        await archive.append(anonymous, entries(3, start=100))
        expected = await client.memory.search(OWNER, question, None, 400)
        found = await client.search(question, user_id="maya", tenant="acme", budget_tokens=400)
        anon = await client.search(question, session_id="anon-1", tenant="acme", budget_tokens=400)
    assert expected.archived and any("3500" in m["text"] for m in expected.recalled)
    assert (found.archived, found.recalled, found.messages) == (expected.archived, expected.recalled, expected.messages)
    synced = sync_client.search(question, user_id="maya", tenant="acme", budget_tokens=400)
    assert (synced.archived, synced.recalled, synced.messages) == (
        expected.archived,
        expected.recalled,
        expected.messages,
    )
    # the user's search is the user's alone: a session without a user keeps its own archive, and no tenant is another
    assert {t["id"] for t in anon.archived} == {e.id for e in entries(3, start=100)} and anon.recalled == []
    assert sync_client.search(question, session_id="anon-1", tenant="acme", budget_tokens=400).archived == anon.archived
    assert sync_client.search(question, user_id="maya").archived == []
    with pytest.raises(ValueError, match="names user_id or session_id"):
        sync_client.search(question)
