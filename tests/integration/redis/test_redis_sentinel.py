"""A worker and the gateway clients through Sentinel (primary, replica, three sentinels on loopback): they find the
primary, and after a failover the worker's writes and the clients' reads follow the new one."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest
import redis

from tests.support.conversations import lines, turns
from tests.support.pipeline import produce, wait_for_versions
from tests.support.redis_sentinel import MASTER, SentinelSetup, redis_sentinel
from tests.support.worker import running_worker
from turnstream.client import ContextClient
from turnstream.client.sync import SyncContextClient
from turnstream.kafka.admin import ensure_topics
from turnstream.redis.keys import KeyLayout
from turnstream.settings import Settings
from turnstream.stack.services import LOOPBACK

FAILOVER_TIMEOUT_SECONDS = 30.0


@pytest.fixture
def sentinel_settings(settings: Settings) -> Iterator[tuple[Settings, SentinelSetup]]:
    with redis_sentinel() as setup:
        yield (
            settings.model_copy(update={"redis_url": setup.url(), "redis_sentinel_master": MASTER}),
            setup,
        )


def fail_over(setup: SentinelSetup) -> None:
    with redis.Redis(host=LOOPBACK, port=setup.sentinel_port) as sentinel:
        sentinel.execute_command("SENTINEL FAILOVER", MASTER)
    deadline = time.monotonic() + FAILOVER_TIMEOUT_SECONDS
    while setup.current_primary() != setup.replica_port:
        assert time.monotonic() < deadline, "Sentinel did not promote the replica"
        time.sleep(0.2)
    # Sentinel then turns the old primary into a replica and closes its clients, which reconnect to the new one
    with redis.Redis(host=LOOPBACK, port=setup.primary_port) as old:
        while (info := old.info("replication"))["role"] != "slave" or info.get("master_link_status") != "up":
            assert time.monotonic() < deadline, f"the old primary was not turned into a replica: {info}"
            time.sleep(0.2)


async def test_worker_and_clients_follow_the_primary_through_a_failover(
    sentinel_settings: tuple[Settings, SentinelSetup],
) -> None:
    settings, setup = sentinel_settings
    before = {f"trip-{u}": turns(f"trip-{u}", f"user{u}", lines(u)) for u in range(3)}
    await ensure_topics(settings)
    with running_worker(settings) as worker:
        await produce(settings, [t for batch in before.values() for t in batch])
        async with ContextClient.from_settings(settings) as client:
            await wait_for_versions(client, {sid: len(batch) for sid, batch in before.items()}, worker)
            prompt = await client.build_prompt("trip-1", "What is my budget for the trip?", user_id="user1")
            assert any("1100" in m["text"] for m in prompt.recalled), prompt.recalled

            after = {
                sid: turns(sid, f"user{sid[-1]}", ["My seat number is 42."], first_seq=len(batch))
                for sid, batch in before.items()
            }
            # a gateway waiting through the failover: its subscription moves to the new primary
            waiting = asyncio.create_task(
                client.wait_for("trip-0", after["trip-0"][-1]["turn_id"], timeout=60, user_id="user0")
            )
            await asyncio.sleep(0.5)
            await asyncio.to_thread(fail_over, setup)
            await produce(settings, [t for batch in after.values() for t in batch])
            produced_at = time.monotonic()
            assert (await waiting).fresh
            assert time.monotonic() - produced_at < 20, "woken by the update, not by the 60 s timeout's last look"
            await wait_for_versions(client, {sid: len(before[sid]) + len(after[sid]) for sid in before}, worker)
            waited = await client.wait_for("trip-2", after["trip-2"][-1]["turn_id"], timeout=10, user_id="user2")
            assert waited.fresh

        with redis.Redis(host=LOOPBACK, port=setup.replica_port) as promoted:
            assert promoted.info("replication")["role"] == "master"
            context = KeyLayout(settings.topic_prefix).session("user2", "trip-2").context
            assert int(promoted.hget(context, "version")) == len(before["trip-2"]) + len(after["trip-2"])

        def sync_read() -> int:
            with SyncContextClient.from_settings(settings) as sync:
                doc = sync.get("trip-0", user_id="user0")
                return doc.version if doc else 0

        assert await asyncio.to_thread(sync_read) == len(before["trip-0"]) + len(after["trip-0"])
        assert worker.poll() is None
