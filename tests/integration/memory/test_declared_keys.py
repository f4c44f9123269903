"""remember.lua touches only keys its caller declared (as a Redis Cluster requires), on every path: a first write,
a correction that drops keywords, eviction over the cap, a full expiry restart; and when it needs a keyword set
the caller did not name, it writes nothing and names it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from redis.asyncio import Redis

from turnstream.compaction.strategies.keyinfo import KeyInfoExtractor
from turnstream.memory import memories_from_facts
from turnstream.redis.memory_store import MemoryStore
from turnstream.redis.scripts import REMEMBER
from turnstream.schemas.ids import owner_key
from turnstream.schemas.memory import Memory
from turnstream.settings import Settings

OWNER = owner_key("u1", "acme", "s1")


@pytest.fixture
async def memory(redis_settings: Settings) -> AsyncIterator[MemoryStore]:
    store = MemoryStore.from_settings(
        redis_settings.model_copy(update={"memory_max_per_owner": 4, "owner_ttl_seconds": 1000})
    )
    yield store
    await store.aclose()


def stated(text: str, n: int) -> Memory:
    facts = KeyInfoExtractor().extract((), [{"role": "user", "content": text}], n)
    (memory,) = memories_from_facts(OWNER, facts, "acme:s1", time.time() + n)
    return memory


async def scripted(settings: Settings, action: Any) -> list[tuple[set[str], set[str]]]:
    """Per script call during `action`: (the keys it declared, the keys its commands touched)."""
    lines: list[tuple[str, bool]] = []
    monitor_client = Redis.from_url(settings.redis_url)
    async with monitor_client.monitor() as monitor:

        async def collect() -> None:
            while True:
                info = await monitor.next_command()
                lines.append((info["command"], info.get("client_type") == "lua"))

        listening = asyncio.create_task(collect())
        await asyncio.sleep(0.2)
        await action()
        await asyncio.sleep(0.5)
        listening.cancel()
    await monitor_client.aclose()
    calls: list[tuple[set[str], set[str]]] = []
    for command, from_lua in lines:
        words = [w.strip('"') for w in command.split()]
        if words[0].upper() in ("EVALSHA", "EVAL") and not from_lua:
            count = int(words[2])
            calls.append((set(words[3 : 3 + count]), set()))
        elif from_lua and calls and len(words) > 1:
            calls[-1][1].add(words[1])
    return calls


async def test_every_key_remember_touches_is_declared(memory: MemoryStore, redis_settings: Settings) -> None:
    older = [stated(f"My {thing} number is {n}", n) for n, thing in enumerate(["locker", "gate", "seat", "badge"])]
    corrected = stated("My locker number is 2000", 0).model_copy(update={"id": older[0].id})

    async def writes() -> None:
        await memory.remember(OWNER, older)  # first write: the expiry starts
        await memory.remember(OWNER, [corrected])  # re-indexed: the old keyword "0" loses it
        await memory.redis.expire(memory.keys(OWNER).memories, 500)  # half the ttl gone: a full restart
        await memory.remember(OWNER, [stated("My bike number is 88", 9)])  # over the cap of 4: one evicted

    await memory.redis.script_load(REMEMBER.text())  # no NOSCRIPT round in what is watched
    calls = await scripted(redis_settings, writes)
    assert 3 <= len(calls) <= 5  # evicting and restarting ask for more keyword sets once, at most
    for declared, touched in calls:
        assert touched and touched <= declared, touched - declared
    keys = memory.keys(OWNER)
    assert any(k.startswith(keys.keyword_prefix) for _, touched in calls for k in touched)
    assert await memory.redis.hlen(keys.memories) == 4


async def test_an_undeclared_keyword_set_is_named_and_nothing_written(memory: MemoryStore) -> None:
    first = stated("My gate number is 12", 1)
    await memory.remember(OWNER, [first])
    keys = memory.keys(OWNER)
    second = stated("My seat number is 34", 2)
    args = [
        keys.keyword_prefix,
        "",
        "",
        1000,
        4,
        0,
        second.id,
        second.stored_json(),
        repr(second.created_at),
        "\n".join(second.keywords),
    ]
    fixed = [keys.memories, keys.created, keys.profile, keys.access]

    left_out = keys.keyword_prefix + second.keywords[0]
    declared = [keys.keyword_prefix + k for k in second.keywords[1:]]
    assert await memory._remember(keys=[*fixed, *declared], args=args) == [left_out.encode()]
    assert [m.id for m in await memory.list(OWNER)] == [first.id]

    assert await memory._remember(keys=[*fixed, *declared, left_out], args=args) == [1]  # applied, nothing evicted
    assert [m.id for m in await memory.list(OWNER)] == [first.id, second.id]
