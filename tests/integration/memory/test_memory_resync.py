"""Redis loses everything: memories, profiles and archived turns come back from the memory journal without new
input; what `turnstream forget` erased before stays erased."""

from __future__ import annotations

import time

import orjson
import pytest

from tests.support.forgetting import TENANT, conversation, forget
from tests.support.memory import journal_records
from tests.support.pipeline import produce, until, wait_for_versions
from tests.support.resync import INTERVAL, REPLAY_TIMEOUT, drop_every_key, long_chat, owner_data, replayed
from tests.support.services import on_each_broker
from tests.support.worker import running_worker
from turnstream.client import ContextClient, TurnProducer
from turnstream.kafka.admin import ensure_topics
from turnstream.memory.journal import replay
from turnstream.redis.archive import ArchiveStore
from turnstream.redis.erase import Eraser
from turnstream.redis.replication import replication_id
from turnstream.schemas.journal import parse_key
from turnstream.settings import Settings

pytestmark = pytest.mark.integration


@on_each_broker
async def test_memories_profiles_and_archive_come_back_and_erased_data_does_not(settings: Settings) -> None:
    settings = settings.model_copy(
        update={"turn_partitions": 3, "resync_interval_seconds": INTERVAL, "budget_tokens": 1500}
    )
    maya = conversation("m-a", "maya", 0) + conversation("m-b", "maya", 10) + long_chat("m-long", "maya")
    anon = conversation("m-x", None, 20)
    olga = conversation("m-c", "olga", 30)
    owners = ("acme:maya", ":acme:m-x", "acme:olga")
    await ensure_topics(settings)
    with running_worker(settings) as worker:
        async with TurnProducer(settings) as producer, ContextClient.from_settings(settings) as client:
            archive = ArchiveStore(client.store.redis, settings)
            for turn in maya + anon + olga:
                await producer.send(turn)
            await producer.flush()
            await wait_for_versions(
                client, {"m-a": 6, "m-b": 6, "m-long": 60, "m-x": 6, "m-c": 6}, worker, tenant=TENANT
            )
            await replayed(client, REPLAY_TIMEOUT)  # the first check after start: this Redis never had the journal
            before = {owner: await owner_data(client, archive, owner) for owner in owners}
            asked = await client.build_prompt(
                "m-a", "Which locker is mine?", tenant=TENANT, user_id="maya", record=False
            )
            assert all(before[owner]["memories"] and before[owner]["archive"] for owner in owners), before
            assert len(before["acme:maya"]["archive"]) > 60

            erased = forget(settings, "--user", "olga", "--tenant", TENANT)
            assert erased.returncode == 0, erased.stderr

            assert await drop_every_key(settings) > 0
            took = await replayed(client, REPLAY_TIMEOUT)
            after = {owner: await owner_data(client, archive, owner) for owner in owners}
            prompt = await client.build_prompt(
                "m-a", "Which locker is mine?", tenant=TENANT, user_id="maya", record=False
            )
        log = worker.log()
    for owner in ("acme:maya", ":acme:m-x"):
        assert after[owner] == before[owner], f"{owner} not as it was, {took:.1f} s after the loss"
    assert after["acme:olga"] == {"memories": [], "profile": [], "archive": []}
    assert prompt.recalled and (prompt.recalled, prompt.archived) == (asked.recalled, asked.archived)
    assert "replayed the memory journal" in log and "Traceback" not in log


async def test_after_a_failover_deletions_the_new_primary_lacks_are_made_again(settings: Settings) -> None:
    """A replica promoted before `turnstream forget`'s deletions reached it still holds what was erased: the
    replay after the failover deletes it again, and leaves the rest as it was."""
    settings = settings.model_copy(update={"turn_partitions": 3, "resync_interval_seconds": INTERVAL})
    kept, erased_session, erased_user = (
        conversation("f-a", "nina", 0),
        conversation("f-b", "nina", 10),
        conversation("f-c", "omar", 20),
    )
    await ensure_topics(settings)
    with running_worker(settings) as worker:
        async with ContextClient.from_settings(settings) as client:
            redis, eraser = client.store.redis, Eraser(client.store.redis, settings)
            archive = ArchiveStore(redis, settings)
            await produce(settings, kept + erased_session + erased_user)
            await wait_for_versions(client, {"f-a": 6, "f-b": 6, "f-c": 6}, worker, tenant=TENANT)
            await replayed(client, REPLAY_TIMEOUT)
            before = await owner_data(client, archive, "acme:nina")
            assert {entry["session"] for entry in map(orjson.loads, before["archive"])} == {"acme:f-a", "acme:f-b"}
            # what the replica has: every key of both owners as it was before the deletions
            saved = {
                key: await redis.dump(key)
                for owner in ("acme:nina", "acme:omar")
                for key in await eraser.owner_keys(owner)
            }
            for args in (("--session", "f-b"), ("--user", "omar")):
                done = forget(settings, *args, "--tenant", TENANT)
                assert done.returncode == 0, done.stderr
            assert await eraser.owner_keys("acme:omar") == []

            for key, value in saved.items():  # the primary dies; its replica, promoted, never had the deletions
                await redis.restore(key, 0, value, replace=True)
            marker = client.store.layout.journal_replayed()
            await redis.set(marker, "0" * 40)  # the replay was last done under another primary

            async def replayed_again() -> bool:
                return (await redis.get(marker)) == (await replication_id(redis) or "").encode()

            await until(replayed_again, timeout=REPLAY_TIMEOUT)
            after = await owner_data(client, archive, "acme:nina")
            omar_left = await eraser.owner_keys("acme:omar")
        log = worker.log()
    assert omar_left == []
    assert {entry["session"] for entry in map(orjson.loads, after["archive"])} == {"acme:f-a"}
    assert after["archive"] == [entry for entry in before["archive"] if orjson.loads(entry)["session"] == "acme:f-a"]
    assert after["memories"] and all(memory[5] == "acme:f-a" for memory in after["memories"])
    assert "erased again" in log and "Traceback" not in log


async def test_memories_the_cap_evicts_leave_the_journal_too(settings: Settings) -> None:
    """The journal leaves an owner the memories Redis holds, not every memory ever written: an eviction by the
    per-owner cap writes a tombstone, as an archive eviction does, so a replay has nothing to evict again."""
    settings = settings.model_copy(update={"turn_partitions": 3, "memory_max_per_owner": 3})
    turns = conversation("cap-a", "ivan", 40) + conversation("cap-b", "ivan", 50)
    await ensure_topics(settings)
    with running_worker(settings) as worker:
        await produce(settings, turns)
        async with ContextClient.from_settings(settings) as client:
            await wait_for_versions(client, {"cap-a": 6, "cap-b": 6}, worker, tenant=TENANT)
            kept = {memory.id for memory in await client.memory.list("acme:ivan")}
    records = await journal_records(settings)
    written = {parse_key(record.key)[2] for record in records if parse_key(record.key)[:2] == ("m", "acme:ivan")}
    left = replay(records, time.time(), settings.owner_ttl_seconds).owners["acme:ivan"]
    assert len(kept) == 3 and len(written) == 6, (kept, written)  # six statements, three over the cap
    assert {memory.id for memory in left.memories} == kept
