import time

import orjson
import pytest
from redis.asyncio import Redis

from tests.support.cli import turnstream
from tests.support.contexts import with_context
from turnstream.compaction.strategies.base import Fact
from turnstream.memory import memories_from_facts
from turnstream.memory.archive import archive_entry
from turnstream.redis.archive import ArchiveStore
from turnstream.redis.memory_store import MemoryStore
from turnstream.schemas.ids import owner_key
from turnstream.settings import Settings


@pytest.fixture
async def remembered(redis_settings: Settings) -> str:
    """One budget memory of user u1 of tenant acme; returns its id."""
    store = MemoryStore.from_settings(redis_settings)
    (memory,) = memories_from_facts(
        owner_key("u1", "acme", "s1"), [Fact("constraint", "My budget is 3500 EUR", "budget")], "acme:s1", time.time()
    )
    await store.remember(memory.owner, [memory], [memory.text])
    await with_context(store.redis, redis_settings, "s1", memory.owner)  # a prompt counts only in a session with one
    await store.aclose()
    return memory.id


async def test_context_prompt_prints_json_and_counts_for_the_window(redis_settings: Settings, remembered: str) -> None:
    args = ("context", "prompt", "s1", "what's my budget for the trip?", "--tenant", "acme", "--user", "u1")
    first = turnstream(redis_settings, *args)
    assert first.returncode == 0, first.stderr
    output = orjson.loads(first.stdout)
    assert set(output) == {"messages", "recalled", "archived", "skipped_recall", "timings"}
    assert output["recalled"] == [{"id": remembered, "type": "fact", "text": "My budget is 3500 EUR"}]
    assert output["messages"][-1] == {"role": "user", "content": "what's my budget for the trip?"}
    second = orjson.loads(turnstream(redis_settings, *args).stdout)
    assert second["recalled"] == [] and not second["skipped_recall"]
    greeting = orjson.loads(
        turnstream(redis_settings, "context", "prompt", "s1", "你好", "--tenant", "acme", "--user", "u1").stdout
    )
    assert greeting["skipped_recall"] and greeting["recalled"] == []
    traced = orjson.loads(turnstream(redis_settings, *args, "--provenance").stdout)
    assert len(traced["sources"]) == len(traced["messages"]) and traced["sources"][-1] == [{"kind": "question"}]


async def test_memory_list_prints_the_users_memories(redis_settings: Settings, remembered: str) -> None:
    result = turnstream(redis_settings, "memory", "list", "u1", "--tenant", "acme")
    assert result.returncode == 0, result.stderr
    (memory,) = orjson.loads(result.stdout)
    assert (memory["id"], memory["owner"], memory["type"], memory["key"]) == (remembered, "acme:u1", "fact", "budget")


async def test_memory_search_shows_what_recall_finds_and_records_nothing(
    redis_settings: Settings, remembered: str
) -> None:
    archive = ArchiveStore(Redis.from_url(redis_settings.redis_url), redis_settings)
    turns = [
        ("I adopted a greyhound named Biscuit.", "Caroline"),
        ("That is lovely!", "Melanie"),
        ("We hiked in Sintra.", "Caroline"),
    ]
    entries = [
        archive_entry("acme:s1", f"t{n}", n, {"role": "user", "content": text, "name": who}, 1683554160.0 + n)
        for n, (text, who) in enumerate(turns)
    ]
    await archive.append("acme:u1", [e for e in entries if e is not None])
    await archive.redis.aclose()
    args = ("memory", "search", "u1", "What is the name of my budget dog Biscuit?", "--tenant", "acme")
    first = orjson.loads(turnstream(redis_settings, *args).stdout)
    assert [(t["line"], t["hit"]) for t in first["archived"]] == [
        ("[8 May 2023] Caroline: I adopted a greyhound named Biscuit.", True),
        ("[8 May 2023] Melanie: That is lovely!", False),
        ("[8 May 2023] Caroline: We hiked in Sintra.", False),  # two turns either side of a hit
    ]
    assert first["archived"][0]["score"] > 0 and first["recalled"] == [
        {"id": remembered, "type": "fact", "text": "My budget is 3500 EUR"}
    ]
    assert orjson.loads(turnstream(redis_settings, *args).stdout) == first  # nothing recorded: the same answer again


def test_memory_list_of_an_unknown_user_exits_1(redis_settings: Settings) -> None:
    result = turnstream(redis_settings, "memory", "list", "nobody", "--tenant", "acme")
    assert (result.returncode, result.stdout, result.stderr) == (
        1,
        "",
        "turnstream: no memories for user nobody of tenant acme\n",
    )


@pytest.mark.parametrize("args", [("memory", "list", "u1"), ("context", "prompt", "s1", "hi")])
def test_unconfigured_redis_is_one_line(redis_settings: Settings, args: tuple[str, ...]) -> None:
    result = turnstream(redis_settings.model_copy(update={"redis_url": None}), *args)
    assert (
        result.returncode == 1
        and result.stderr.startswith("turnstream: no Redis configured")
        and result.stderr.count("\n") == 1
    )
