"""A worker and the gateway clients on a three-node Redis Cluster (loopback, the embedded redis-server binary):
contexts, memories and archives of several users spread over every node, and every read path finds them."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from redis.asyncio import Redis

from tests.support.conversations import lines, turns
from tests.support.pipeline import produce, wait_for_versions
from tests.support.redis_cluster import redis_cluster
from tests.support.worker import running_worker
from turnstream.client import ContextClient
from turnstream.client.sync import SyncContextClient
from turnstream.kafka.admin import ensure_topics
from turnstream.redis.inspection import InspectReader
from turnstream.redis.memory_store import MemoryStore
from turnstream.settings import Settings

USERS = 8
SESSIONS_PER_USER = 2


@pytest.fixture
def cluster_settings(settings: Settings) -> Iterator[tuple[Settings, list[int]]]:
    with redis_cluster() as ports:
        yield settings.model_copy(update={"redis_url": f"redis://127.0.0.1:{ports[0]}/0", "redis_cluster": True}), ports


async def keys_per_node(ports: list[int], pattern: str) -> list[int]:
    counts = []
    for port in ports:
        node = Redis(host="127.0.0.1", port=port)
        counts.append(len([k async for k in node.scan_iter(match=pattern, count=1000)]))
        await node.aclose()
    return counts


async def test_worker_and_clients_on_a_three_node_cluster(cluster_settings: tuple[Settings, list[int]]) -> None:
    settings, ports = cluster_settings
    sessions = {f"trip-{u}-{s}": f"user{u}" for u in range(USERS) for s in range(SESSIONS_PER_USER)}
    produced = {sid: turns(sid, user, lines(int(user[4:]))) for sid, user in sessions.items()}
    await ensure_topics(settings)
    with running_worker(settings) as worker:
        await produce(settings, [t for batch in produced.values() for t in batch])
        async with ContextClient.from_settings(settings) as client:
            docs = await wait_for_versions(client, {sid: len(batch) for sid, batch in produced.items()}, worker)
            assert all(doc.last_turn_id == produced[sid][-1]["turn_id"] for sid, doc in docs.items())
            prefix = settings.topic_prefix
            for kind in ("ctx", "mem", "arcent", "owner"):
                assert all(await keys_per_node(ports, f"{prefix}:{kind}:*")), f"{kind} keys on every node"

            found = await InspectReader(client.store.redis, settings).sessions()  # SCAN node by node
            assert found.complete and {doc.session_id for _, doc in found.docs} == set(sessions)

            sid, user = "trip-3-1", "user3"
            assert (await client.get(sid, user_id=user)).version == len(produced[sid])  # one round trip, owner's slot
            assert (await client.get(sid)).version == len(produced[sid])  # through the owner pointer, another slot

            memories = await MemoryStore(client.store.redis, settings).list(user)
            assert any("1300" in m.text for m in memories), [m.text for m in memories]

            # pub/sub on a cluster: the wait starts before the turn exists
            later = turns(sid, user, ["My seat number is 42."], first_seq=len(produced[sid]))
            waiting = asyncio.create_task(client.wait_for(sid, later[-1]["turn_id"], timeout=60, user_id=user))
            await asyncio.sleep(0.5)
            await produce(settings, later)
            result = await waiting
            assert result.fresh and result.doc.last_turn_id == later[-1]["turn_id"]

            prompt = await client.build_prompt(sid, "What is my budget for the trip?", user_id=user)
            assert any("1300" in m["text"] for m in prompt.recalled), prompt.recalled
            assert not any("1400" in m["text"] for m in prompt.recalled), "another user's memory"
            lockers = await client.build_prompt("trip-5-0", "Which locker number did I give?", user_id="user5")
            assert any("705" in str(turn) for turn in lockers.archived) or any(
                "705" in m["text"] for m in lockers.recalled
            )

        def sync_reads() -> tuple[Any, Any, Any]:
            with SyncContextClient.from_settings(settings) as sync:
                return (
                    sync.get(sid, user_id=user),
                    sync.wait_for(sid, later[-1]["turn_id"], timeout=10, user_id=user),
                    # the user's other session: this one was just given the memory, so its window holds it back
                    sync.build_prompt("trip-3-0", "What is my budget for the trip?", user_id=user),
                )

        doc, waited, sync_prompt = await asyncio.to_thread(sync_reads)
        assert doc.last_turn_id == later[-1]["turn_id"] and waited.fresh
        assert any("1300" in m["text"] for m in sync_prompt.recalled), sync_prompt.recalled
        assert worker.poll() is None, worker.log()[-3000:]
