import asyncio
import time
from collections.abc import AsyncIterator

import pytest
from redis.asyncio.connection import AbstractConnection

from tests.integration.client.fixtures import make_doc
from turnstream.client import ContextClient
from turnstream.redis.writer import ContextWriter
from turnstream.settings import Settings


@pytest.fixture
async def client(redis_settings: Settings) -> AsyncIterator[ContextClient]:
    async with ContextClient.from_settings(redis_settings) as client:
        yield client


@pytest.fixture
def round_trips(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts writes to Redis sockets: a pipeline is one, as is a single command."""
    sent: list[int] = []
    original = AbstractConnection.send_packed_command

    async def counting(self: AbstractConnection, command: object, check_health: bool = True) -> None:
        sent.append(1)
        await original(self, command, check_health)

    monkeypatch.setattr(AbstractConnection, "send_packed_command", counting)
    return sent


async def test_get_is_one_round_trip_with_the_user_and_two_without(
    client: ContextClient, store: ContextWriter, round_trips: list[int]
) -> None:
    await store.write(make_doc(3), ["t3"], owner="acme:maya")
    expected = await store.reader.read("acme:s1", "acme:maya")
    await client.get("s1", tenant="acme", user_id="maya")  # connects; the pool then holds a live connection
    round_trips.clear()
    assert await client.get("s1", tenant="acme", user_id="maya") == expected
    assert len(round_trips) == 1
    round_trips.clear()
    assert await client.get("s1", tenant="acme") == expected  # the owner is looked up first
    assert len(round_trips) == 2
    assert await client.get("s1") is None  # no tenant: another session


async def test_wait_for_returns_promptly_after_a_concurrent_write(client: ContextClient, store: ContextWriter) -> None:
    await store.write(make_doc(1), ["t1"])
    started = time.monotonic()
    waiting = asyncio.create_task(client.wait_for("s1", "t3", timeout=10, tenant="acme"))
    await asyncio.sleep(0.2)
    await store.write(make_doc(2), ["t2"])  # an update without the turn: keep waiting
    await asyncio.sleep(0.1)
    assert not waiting.done()
    await store.write(make_doc(3), ["t3"])
    result = await asyncio.wait_for(waiting, 2)
    assert result.fresh and result.doc is not None and result.doc.version == 3
    assert time.monotonic() - started < 1.5


async def test_wait_for_a_turn_already_applied_returns_at_once(client: ContextClient, store: ContextWriter) -> None:
    await store.write(make_doc(1), ["t1"])
    started = time.monotonic()
    result = await client.wait_for("s1", "t1", timeout=10, tenant="acme")
    assert result.fresh and result.doc == await store.reader.read("acme:s1")
    assert time.monotonic() - started < 0.5


async def test_wait_for_times_out_with_the_latest_doc(client: ContextClient, store: ContextWriter) -> None:
    await store.write(make_doc(1), ["t1"])
    waiting = asyncio.create_task(client.wait_for("s1", "never", timeout=0.5, tenant="acme"))
    await asyncio.sleep(0.2)
    await store.write(make_doc(2), ["t2"])
    started = time.monotonic()
    result = await waiting
    assert not result.fresh
    assert result.doc is not None and result.doc.version == 2
    assert 0.1 < time.monotonic() - started < 1.0


async def test_wait_for_an_unknown_session_times_out_with_none(client: ContextClient) -> None:
    result = await client.wait_for("nobody", "t1", timeout=0.2)
    assert (result.doc, result.fresh) == (None, False)


async def test_from_url_reads_the_same_prefix(redis_settings: Settings, store: ContextWriter) -> None:
    await store.write(make_doc(4), ["t4"])
    assert redis_settings.redis_url
    async with ContextClient.from_url(redis_settings.redis_url, topic_prefix=redis_settings.topic_prefix) as client:
        assert (await client.get("s1", tenant="acme")) == await store.reader.read("acme:s1")
    async with ContextClient.from_url(redis_settings.redis_url, topic_prefix="other") as client:
        assert await client.get("s1", tenant="acme") is None


async def test_a_thousand_waits_share_one_subscription_and_leave_nothing_behind(redis_settings: Settings) -> None:
    settings = redis_settings.model_copy(update={"topic_prefix": redis_settings.topic_prefix + "-many"})
    async with ContextClient.from_settings(settings) as client:
        writer = ContextWriter.from_settings(settings)
        before = await _connections(writer)
        sessions = [f"w{n}" for n in range(1000)]
        waits = [asyncio.create_task(client.wait_for(s, "t1", timeout=10.0, tenant="acme")) for s in sessions]
        await asyncio.sleep(1.0)  # every wait subscribed and reading
        during = await _connections(writer)
        for session in sessions[:500]:
            await writer.write(make_doc(1, session_id=session), ["t1"])
        results = await asyncio.gather(*waits[:500])
        assert all(result.fresh for result in results)
        for wait in waits[500:]:
            wait.cancel()
        await asyncio.gather(*waits[500:], return_exceptions=True)
        await asyncio.sleep(0.2)
        left = await writer.redis.pubsub_numsub(*(writer.layout.updates_channel(f"acme:{s}") for s in sessions))
        assert all(count == 0 for _, count in left)  # cancelled or done: nothing subscribed
        assert client.store._hub.channels == 0
        await writer.aclose()
    # one pub/sub connection and a few pooled ones, not one per wait
    assert during - before <= 12, (before, during)


async def _connections(store: ContextWriter) -> int:
    return len(await store.redis.client_list())
