"""Per-owner bounds of long-term memory on a real Redis: the cap, its eviction order, one expiry for every key."""

import time
from collections.abc import AsyncIterator

import pytest

from tests.support.contexts import with_context
from turnstream.compaction.strategies.keyinfo import KeyInfoExtractor
from turnstream.memory import memories_from_facts, profile_additions
from turnstream.redis.memory_store import ArchiveQuery, MemoryStore
from turnstream.schemas.ids import owner_key
from turnstream.schemas.memory import Memory
from turnstream.settings import Settings

OWNER = owner_key("u1", "acme", "s1")
OBJECTS = ["locker", "gate", "seat", "room", "badge", "table", "desk", "bike"]


@pytest.fixture
async def memory(redis_settings: Settings) -> AsyncIterator[MemoryStore]:
    store = MemoryStore.from_settings(
        redis_settings.model_copy(update={"memory_max_per_owner": 50, "owner_ttl_seconds": 1000})
    )
    await with_context(store.redis, store.settings, "s1", OWNER)  # only a session with a context counts accesses
    yield store
    await store.aclose()


def stated(n: int, now: float | None = None) -> list[Memory]:
    """The memory the write path makes of the user's turn "My <object> <n> number is <7n>"."""
    text = f"My {OBJECTS[n % len(OBJECTS)]} {n} number is {n * 7}"
    facts = KeyInfoExtractor().extract((), [{"role": "user", "content": text}], n)
    return memories_from_facts(OWNER, facts, "acme:s1", time.time() if now is None else now)


async def ttls(memory: MemoryStore, keys: list[str]) -> list[int]:
    return [await memory.redis.ttl(key) for key in keys]


async def keyword_sets(memory: MemoryStore) -> dict[str, set[str]]:
    prefix = memory.keys(OWNER).keyword_prefix
    found = {}
    async for key in memory.redis.scan_iter(match=prefix + "*", count=1000):
        found[key.decode()[len(prefix) :]] = {m.decode() for m in await memory.redis.smembers(key)}
    return found


async def test_two_hundred_statements_leave_the_cap_and_no_orphan_keyword_set(memory: MemoryStore) -> None:
    evicted = []
    for n in range(220):
        (remembered,) = stated(n)
        evicted.append(len(await memory.remember(OWNER, [remembered], profile_additions([remembered]))))
    # past the cap of 50, each eviction takes two more than the excess (a twentieth of the cap), so two writes
    # in three evict nothing
    assert evicted[:50] == [0] * 50 and evicted[50:] == [3, 0, 0] * 56 + [3, 0]
    kept = await memory.list(OWNER)
    assert len(kept) == 49
    assert {m.text for m in kept} == {m.text for n in range(171, 220) for m in stated(n)}  # no access: the oldest went
    keys = memory.keys(OWNER)
    assert await memory.redis.hlen(keys.created) == 49
    index = await keyword_sets(memory)
    expected: dict[str, set[str]] = {}
    for m in kept:
        for keyword in m.keywords:
            expected.setdefault(keyword, set()).add(m.id)
    assert index == expected  # every set member is a kept memory, every kept memory is in its sets


async def test_eviction_takes_the_fewest_accessed_then_the_oldest(memory: MemoryStore) -> None:
    memory.settings = memory.settings.model_copy(update={"memory_max_per_owner": 3})
    start = time.time()
    a, b, c, d, e = (stated(n, start + n)[0] for n in range(5))
    await memory.remember(OWNER, [a, b, c])
    for m in (a, b):  # a prompt recalls a and b: one access each
        await memory.recall(OWNER, "acme:s1", [m.keywords[0]], 1, ArchiveQuery(terms=[]))
    assert await memory.remember(OWNER, [d]) == [c.id]  # the caller is told, so the journal can drop it too
    assert {m.id for m in await memory.list(OWNER)} == {a.id, b.id, d.id}  # c: never accessed, not the newest write
    assert await memory.remember(OWNER, [e]) == [d.id]
    assert {m.id for m in await memory.list(OWNER)} == {
        a.id,
        b.id,
        e.id,
    }  # d: no access, and no longer the newest write
    assert await memory.remember(OWNER, [e]) == []  # a rewrite of a kept memory evicts nothing
    assert set(await keyword_sets(memory)) == {k for m in (a, b, e) for k in m.keywords}


async def test_every_memory_key_of_the_owner_expires_together_after_the_latest_write(memory: MemoryStore) -> None:
    (first,) = stated(1)
    await memory.remember(OWNER, [first], profile_additions([first]))
    keys = memory.keys(OWNER)
    prefix = keys.keyword_prefix
    await memory.recall(OWNER, "acme:s1", first.keywords[:1], 1, ArchiveQuery(terms=[]))  # creates the access hash
    owner_keys = [keys.memories, keys.created, keys.access, keys.profile] + [prefix + k for k in first.keywords]
    assert all(990 <= ttl <= 1000 for ttl in await ttls(memory, owner_keys))

    for key in owner_keys:  # as if 500 s had gone by
        await memory.redis.expire(key, 500)
    (second,) = stated(2)
    await memory.remember(OWNER, [second])
    owner_keys += [prefix + k for k in second.keywords if k not in first.keywords]
    assert all(990 <= ttl <= 1000 for ttl in await ttls(memory, owner_keys))  # restarted, old keyword sets too

    await memory.redis.expire(keys.memories, 995)  # within 1% of the ttl: only what the write touched follows it
    (third,) = stated(3)
    await memory.remember(OWNER, [third])
    assert all(0 < ttl <= 995 for ttl in await ttls(memory, [prefix + k for k in third.keywords]))
