import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from redis import Redis as SyncRedis
from redis.asyncio import Redis
from redis.asyncio.connection import Connection

from tests.support.contexts import compacted_doc
from tests.support.contexts import with_context as write_context
from tests.support.memory import OWNER, state_budget
from turnstream.client import ContextClient
from turnstream.compaction.strategies.base import Fact
from turnstream.compaction.strategies.keyinfo import KeyInfoExtractor
from turnstream.memory import memories_from_facts, profile_additions, summary_memory
from turnstream.redis.memory_store import MemoryStore
from turnstream.redis.reader import ContextReader
from turnstream.redis.writer import ContextWriter
from turnstream.schemas.ids import owner_key
from turnstream.settings import Settings
from turnstream.text.tokens import count_messages

BUDGET_QUESTION = "what's my budget for the trip?"


class Wire:
    """Every request the client sends: one entry per round trip (a pipeline is one)."""

    def __init__(self) -> None:
        self.requests: list[bytes] = []

    def connection_class(self) -> type[Connection]:
        wire = self

        class CountingConnection(Connection):
            async def send_packed_command(self, command: Any, check_health: bool = True) -> None:
                wire.requests.append(command if isinstance(command, bytes) else b"".join(command))
                await super().send_packed_command(command, check_health)

        return CountingConnection


@pytest.fixture
def wire() -> Wire:
    return Wire()


@pytest.fixture
async def client(redis_settings: Settings, wire: Wire) -> AsyncIterator[ContextClient]:
    redis = Redis.from_url(redis_settings.redis_url, connection_class=wire.connection_class())
    client = ContextClient(ContextReader(redis, redis_settings), MemoryStore(redis, redis_settings))
    yield client
    await client.aclose()


async def test_stated_restated_corrected_fact_is_one_memory(client: ContextClient) -> None:
    memory = client.memory
    await state_budget(memory)
    (budget,) = await memory.list(OWNER)
    # the correction in its own words: the old value is said only as what the budget no longer is
    assert budget.key == "budget" and budget.text == "Actually my budget is 3500 EUR, not 2000"
    assert budget.created_at < budget.updated_at  # the slot's first statement, the correction's write
    keyword_index = memory.keys(OWNER).keyword_prefix
    # one memory holds the slot: the stated and restated texts left no memory of their own behind
    assert await client.memory.redis.smembers(keyword_index + "2000") == {budget.id.encode()}
    assert await client.memory.redis.smembers(keyword_index + "3500") == {budget.id.encode()}
    profile, version = await memory.profile(OWNER)
    assert profile.splitlines() == [budget.text] and version >= 1


async def test_a_rewritten_memory_keeps_the_keywords_it_keeps_and_a_lost_keyword_set_comes_back(
    client: ContextClient,
) -> None:
    memory, redis = client.memory, client.memory.redis
    index = memory.keys(OWNER).keyword_prefix
    first = summary_memory(OWNER, "acme:s1", "Maya booked the Lisbon flight and the Porto hotel", time.time())
    second = summary_memory(OWNER, "acme:s1", "Maya booked the Lisbon flight and the Seville train", time.time())
    assert first and second and first.id == second.id
    await memory.remember(OWNER, [first])
    await redis.delete(index + "flight")  # a set lost on its own (an eviction, a partial restore)
    await memory.remember(OWNER, [second])
    members = {word: await redis.smembers(index + word) for word in ("lisbon", "flight", "porto", "seville")}
    assert members == {
        "lisbon": {first.id.encode()},
        "flight": {first.id.encode()},
        "porto": set(),
        "seville": {first.id.encode()},
    }
    ttls = [await redis.ttl(index + word) for word in ("lisbon", "flight", "seville")]
    assert all(0 < ttl <= memory.settings.owner_ttl_seconds for ttl in ttls), ttls  # kept, re-made, new: each expires


async def test_related_question_recalls_it_and_a_greeting_skips_recall(client: ContextClient) -> None:
    await state_budget(client.memory)
    greeting = await client.build_prompt("s2", "hi!", tenant="acme", user_id="u1")
    assert greeting.skipped_recall and greeting.recalled == []
    assert "3500" in greeting.messages[0]["content"]  # the profile still comes along
    assert await client.memory.redis.exists(client.memory.layout.session(OWNER, "acme:s2").injected) == 0
    assert (await client.memory.list(OWNER))[0].access_count == 0

    prompt = await client.build_prompt("s2", BUDGET_QUESTION, tenant="acme", user_id="u1")
    assert not prompt.skipped_recall
    assert [m["text"] for m in prompt.recalled] == ["Actually my budget is 3500 EUR, not 2000"]
    assert prompt.messages[-1] == {"role": "user", "content": BUDGET_QUESTION}
    assert set(prompt.timings) == {"redis", "assemble", "total"}


async def with_context(client: ContextClient, session_id: str, owner: str = OWNER) -> None:
    """The session has a context, as after its first turn: only then does a prompt record anything."""
    await write_context(client.memory.redis, client.memory.settings, session_id, owner)


async def test_not_injected_twice_within_the_window_per_session(client: ContextClient) -> None:
    await state_budget(client.memory)
    for session_id in ("s1", "s9"):
        await with_context(client, session_id)
    injected = [
        bool((await client.build_prompt("s1", BUDGET_QUESTION, tenant="acme", user_id="u1")).recalled)
        for _ in range(14)
    ]
    assert injected == [True] + [False] * 12 + [True]  # window 12: prompts 2..13 are within it
    other = await client.build_prompt("s9", BUDGET_QUESTION, tenant="acme", user_id="u1")
    assert len(other.recalled) == 1  # another session of the same user has its own window
    assert (await client.memory.list(OWNER))[0].access_count == 3


async def test_greetings_do_not_count_towards_the_window(redis_settings: Settings) -> None:
    redis = Redis.from_url(redis_settings.redis_url)
    narrow = redis_settings.model_copy(update={"recall_dedup_window": 1})
    client = ContextClient(ContextReader(redis, narrow), MemoryStore(redis, narrow))
    await state_budget(client.memory)
    await with_context(client, "s1")
    texts = [BUDGET_QUESTION, "hi!", BUDGET_QUESTION, BUDGET_QUESTION]
    injected = [bool((await client.build_prompt("s1", t, tenant="acme", user_id="u1")).recalled) for t in texts]
    await client.aclose()
    assert injected == [True, False, False, True]


async def test_a_prompt_in_a_session_without_a_context_recalls_as_usual_and_records_nothing(
    client: ContextClient,
) -> None:
    await state_budget(client.memory)
    injected = client.memory.layout.session(OWNER, "acme:s4").injected
    looks = [await client.build_prompt("s4", BUDGET_QUESTION, tenant="acme", user_id="u1") for _ in range(2)]
    assert [[m["text"] for m in p.recalled] for p in looks] == [["Actually my budget is 3500 EUR, not 2000"]] * 2
    assert await client.memory.redis.exists(injected) == 0  # no recall list: the session has no state
    assert (await client.memory.list(OWNER))[0].access_count == 0

    await with_context(client, "s4")  # its first turn is applied: from now on prompts count
    assert (await client.build_prompt("s4", BUDGET_QUESTION, tenant="acme", user_id="u1")).recalled
    assert not (await client.build_prompt("s4", BUDGET_QUESTION, tenant="acme", user_id="u1")).recalled
    assert await client.memory.redis.llen(injected) == 2 and (await client.memory.list(OWNER))[0].access_count == 1


async def test_build_prompt_is_one_round_trip(client: ContextClient, wire: Wire) -> None:
    await state_budget(client.memory)
    await client.build_prompt("s1", "hello there, what is my budget?", tenant="acme", user_id="u1")  # loads the script
    for text in (BUDGET_QUESTION, "hi!"):
        wire.requests.clear()
        await client.build_prompt("s1", text, tenant="acme", user_id="u1")
        assert len(wire.requests) == 1 and b"EVALSHA" in wire.requests[0]


async def test_prompt_order_and_budget(redis_settings: Settings) -> None:
    doc = compacted_doc("s1", tail_turns=4)
    budget = doc.tokens.after + 260  # the profile and about two of the five memories
    # the memory block gets what the context leaves: no room taken from the tail for it
    tight = redis_settings.model_copy(
        update={"prompt_budget_tokens": budget, "recall_budget_tokens": 260, "recall_k": 5}
    )
    async with ContextClient.from_settings(tight) as client:
        await ContextWriter.on(client.store.redis, tight).write(doc, ["t1"], owner=OWNER)
        facts = [
            Fact("preference", f"For hotel {n} in Lisbon I prefer " + "quiet rooms " * 15, f"pref:hotel-{n}")
            for n in range(5)
        ]
        memories = memories_from_facts(OWNER, facts, "acme:s1", time.time())
        await client.memory.remember(OWNER, memories, ["The user's name is Ana. " * 30])
        prompt = await client.build_prompt("s1", "Which hotel in Lisbon?", tenant="acme", user_id="u1")
    assert count_messages(prompt.messages) <= budget
    assert prompt.messages[:4] == doc.messages[:4]  # anchors, marker, summary block
    block = prompt.messages[4]
    assert block["role"] == "system" and block["content"].startswith("[Memory about the user")
    assert prompt.messages[5:-1] == doc.messages[4:]
    assert prompt.messages[-1] == {"role": "user", "content": "Which hotel in Lisbon?"}
    assert 1 <= len(prompt.recalled) < 5  # some memories had to go for the budget
    assert all(m["text"] in block["content"] for m in prompt.recalled)


async def test_session_memories_without_a_user(client: ContextClient) -> None:
    owner = owner_key(None, "acme", "s7")
    summary = summary_memory(
        owner, "acme:s7", "The user compared flights to Lisbon with a budget airline.", time.time()
    )
    assert summary is not None
    await client.memory.remember(owner, [summary])
    prompt = await client.build_prompt("s7", "Which airline for Lisbon?", tenant="acme")
    assert [m["id"] for m in prompt.recalled] == [summary.id]
    assert (await client.build_prompt("s7", "Which airline for Lisbon?", tenant="acme", user_id="u1")).recalled == []


async def test_profile_replace_is_compare_and_set(client: ContextClient) -> None:
    memory = client.memory
    await memory.remember(OWNER, [], ["My name is Ana", "I love window seats"])
    text, version = await memory.profile(OWNER)
    assert (text, version) == ("My name is Ana\nI love window seats", 1)
    assert await memory.replace_profile(OWNER, "Ana; window seats", version)
    assert not await memory.replace_profile(OWNER, "stale merge", version)
    assert await memory.profile(OWNER) == ("Ana; window seats", 2)
    await memory.remember(OWNER, [], ["I live in Porto"])  # the cheap path appends to the merged text
    assert await memory.profile(OWNER) == ("Ana; window seats\nI live in Porto", 3)


async def test_remember_many_writes_every_owner_in_two_round_trips(client: ContextClient, wire: Wire) -> None:
    memory = client.memory
    assert memory is not None
    owners = [owner_key(f"u{n}", "acme", "s1") for n in range(5)]
    writes = {}
    for n, owner in enumerate(owners):
        facts = KeyInfoExtractor().extract((), [{"role": "user", "content": f"My budget is {1000 + n} EUR"}], 0)
        memories = memories_from_facts(owner, facts, f"acme:s{n}", time.time())
        writes[owner] = (memories, profile_additions(memories))
    await state_budget(memory, owner_key("warm", "acme", "s1"))  # the connection is up and the script loaded
    wire.requests.clear()
    await memory.remember_many(writes)
    # the reads, then the writes (no SCRIPT EXISTS before them: scripts are loaded only when Redis lacks one)
    assert [request.split(b"\r\n")[2] for request in wire.requests] == [b"HMGET", b"EVALSHA"]
    for n, owner in enumerate(owners):
        assert [m.text for m in await memory.list(owner)] == [m.text for m in writes[owner][0]]
        assert f"{1000 + n}" in (await memory.profile(owner))[0]


async def test_remember_many_retries_only_the_owner_whose_profile_moved(
    client: ContextClient, redis_settings: Settings
) -> None:
    memory = client.memory
    assert memory is not None
    moved, steady = owner_key("mover", "acme", "s1"), owner_key("steady", "acme", "s1")
    await state_budget(memory, moved)
    facts = KeyInfoExtractor().extract((), [{"role": "user", "content": "I am allergic to peanuts"}], 0)
    writes = {
        owner: (mems, profile_additions(mems))
        for owner in (moved, steady)
        for mems in [memories_from_facts(owner, facts, "acme:s1", time.time())]
    }
    calls: list[str] = []
    original, other_writer = memory._call, SyncRedis.from_url(redis_settings.redis_url)

    def racing(upsert: Any) -> Any:
        """Another writer appends to one profile after this upsert read it and before it writes."""
        if upsert.owner == moved and moved not in calls:
            other_writer.hset(
                memory.keys(moved).profile,
                mapping={"text": "A line another writer added", "version": upsert.version + 1},
            )
        calls.append(upsert.owner)
        return original(upsert)

    memory._call = racing  # type: ignore[method-assign]
    try:
        await memory.remember_many(writes)
    finally:
        other_writer.close()
    assert sorted(calls) == sorted([moved, moved, steady])  # the steady owner was written on the first attempt
    for owner in (moved, steady):
        assert "peanuts" in (await memory.profile(owner))[0]
    assert "A line another writer added" in (await memory.profile(moved))[0]
