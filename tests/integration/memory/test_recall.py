"""Recall over the archive: a detail from the first session of a long chat comes back, in one slot, bounded."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest
from redis.asyncio import Redis
from redis.crc import key_slot

from tests.support.contexts import with_context
from tests.support.memory import entries
from tests.support.pipeline import produce, wait_for_versions
from tests.support.worker import running_worker
from turnstream.client import ContextClient
from turnstream.kafka.admin import ensure_topics
from turnstream.memory.archive import archive_entry
from turnstream.redis.archive import (
    BM25_B,
    BM25_K1,
    PACKED_MAX,
    POSTINGS_KEPT,
    POSTINGS_TRIMMED,
    WEIGHT_SCALE,
    ArchiveStore,
)
from turnstream.redis.keys import OwnerKeys
from turnstream.redis.scripts import ARCHIVE_APPEND
from turnstream.schemas.archive import ArchiveEntry
from turnstream.settings import Settings
from turnstream.text.tokens import count_messages
from turnstream_tools.samples.recall_set import START_TS, recall_case

DETAILS = {
    "en": (
        "By the way, my sister's cat is called Pistachio.",
        "What is my sister's cat called?",
        "[1 May 2023] Maya: By the way, my sister's cat is called Pistachio.",
    ),
    "zh": ("对了，我妹妹的猫叫开心果。", "我妹妹的猫叫什么？", "[2023年5月1日] Lin: 对了，我妹妹的猫叫开心果。"),
}


def long_chat(language: str) -> tuple[str, str, list[dict[str, Any]]]:
    """A detail stated in the first session (after its opening turns), then 500+ turns of later sessions."""
    case = recall_case(language)  # type: ignore[arg-type]
    detail = DETAILS[language][0]
    other = [t for t in case.turns if t["message"]["content"] != detail]
    first = {"role": "user", "name": case.turns[0]["message"]["name"], "content": detail}
    messages = [(t["message"], START_TS) for t in other[:6]] + [(first, START_TS)]
    messages += [(t["message"], t["ts"] + 7 * 86400) for t in other[46:]]
    turns = [
        {
            "turn_id": f"{case.session_id}-{i}",
            "session_id": case.session_id,
            "user_id": case.user_id,
            "seq": i,
            "ts": ts,
            "message": m,
        }
        for i, (m, ts) in enumerate(messages)
    ]
    assert len(turns) > 500
    return case.session_id, case.user_id, turns


@pytest.mark.parametrize("language", ["en", "zh"])
async def test_a_detail_from_the_first_session_comes_back_after_500_turns(settings: Settings, language: str) -> None:
    # a prefix of its own per language: the test's name, cut to fit, is the same for both
    settings = settings.model_copy(
        update={
            "topic_prefix": f"{settings.topic_prefix[:50]}-{language}",
            "budget_tokens": 1500,
            "prompt_budget_tokens": 2500,
            "recall_budget_tokens": 800,
        }
    )
    session_id, user_id, turns = long_chat(language)
    _, question, line = DETAILS[language]
    await ensure_topics(settings)
    with running_worker(settings) as worker:
        await produce(settings, turns)
        async with ContextClient.from_settings(settings) as client:
            docs = await wait_for_versions(client, {session_id: len(turns)}, worker)
            prompt = await client.build_prompt(session_id, question, user_id=user_id)
    assert docs[session_id].dropped > 400  # the detail is long gone from the compacted context
    assert not any(DETAILS[language][0] == m.get("content") for m in docs[session_id].messages[1:])
    day, said = line.split("] ", 1)
    day += "]"
    # the key facts may quote the detail too, dated; the recalled turn is the line that is the detail alone
    block = next(
        lines for m in prompt.messages if m["role"] == "system" and said in (lines := m["content"].splitlines())
    )
    assert block.count(said) == 1  # on a line of its own, under the heading of the day it was said
    assert [text for text in block[: block.index(said)] if text.startswith("[")][-1] == day
    assert any(t["hit"] and t["line"] == line for t in prompt.archived)
    # nothing recalled repeats a message the prompt already carries
    shown = {m.get("content") for m in prompt.messages if m["role"] != "system"}
    assert not [t for t in prompt.archived if t["text"] in shown]
    assert count_messages(prompt.messages) <= settings.prompt_budget_tokens


async def postings_of(redis: Redis, keys: OwnerKeys) -> dict[str, set[str]]:
    """Term -> the short ids of its postings, packed in the dictionary or in the term's own key."""
    found = {}
    for term, value in (await redis.hgetall(keys.dictionary)).items():
        if b" " in term:  # the field that keeps the hash's encoding
            continue
        if b":" in value:
            found[term.decode()] = {posting.split(b":")[0].decode() for posting in value.split(b",")}
        else:
            found[term.decode()] = {m.decode() for m in await redis.zrange(keys.term_prefix + term.decode(), 0, -1)}
    return found


async def test_the_cap_evicts_the_oldest_entries_with_their_postings(redis_settings: Settings) -> None:
    settings = redis_settings.model_copy(update={"archive_max_entries": 50})
    archive = ArchiveStore(Redis.from_url(settings.redis_url), settings)
    keys = archive.layout.owner("u1")
    try:
        assert await archive.append("u1", entries(40)) == 40
        assert await archive.append("u1", entries(40)) == 0  # the same turns again: nothing new
        assert await archive.append("u1", entries(30, start=40)) == 30
        kept = await archive.entries("u1")
        # over the cap, the oldest go, and a hundredth of the cap more (here 1), so most appends evict nothing
        assert [e.position for e in kept] == list(range(21, 70))
        postings = await postings_of(archive.redis, keys)
        ids = {id_.decode() for id_ in await archive.redis.hkeys(keys.archive)}
        assert len(ids) == 49 and set().union(*postings.values()) == ids  # no posting of an evicted entry is left
        assert "word3" not in postings and "word69" in postings
        assert [
            key async for key in archive.redis.scan_iter(keys.term_prefix + "*")
        ]  # frequent terms have their own key
        total = int(await archive.redis.hget(keys.stats, "total_length"))
        assert total == sum(sum(e.term_counts().values()) for e in kept)
        assert await archive.redis.hlen(keys.positions) == 49
        frequencies = Counter(term for e in kept for term in e.term_counts())
        assert await document_frequencies(archive.redis, keys) == dict(frequencies)  # the idf counts only what is kept
    finally:
        await archive.redis.aclose()


async def document_frequencies(redis: Redis, keys: OwnerKeys) -> dict[str, int]:
    """Term -> its document frequency as the read script takes it from the dictionary."""
    found = {}
    for term, value in (await redis.hgetall(keys.dictionary)).items():
        if b" " in term:
            continue
        found[term.decode()] = value.count(b",") + 1 if b":" in value else int(value.split()[0])
    return found


async def test_a_replayed_turn_is_the_same_entry_and_another_turn_at_its_position_a_new_one(
    redis_settings: Settings,
) -> None:
    archive = ArchiveStore(Redis.from_url(redis_settings.redis_url), redis_settings)
    keys = archive.layout.owner("u3")
    try:
        assert await archive.append("u3", entries(3)) == 3
        assert await archive.append("u3", entries(3)[1:]) == 0
        (again,) = [
            e for e in [archive_entry("s1", "other", 1, {"role": "user", "content": "a turn after a reset"}, 9.0)] if e
        ]
        assert await archive.append("u3", [again]) == 1  # a reused session key: its turn 1 is not the old turn 1
        assert [e.text for e in await archive.entries("u3")][-1] == "a turn after a reset"
        assert (
            await archive.redis.hget(keys.archive, await archive.redis.hget(keys.positions, "s1#1")) == again.to_json()
        )
        assert await archive.append("u3", [again]) == 0
        assert sorted(await archive.stable_ids("u3")) == sorted([e.id for e in entries(3)] + [again.id])
    finally:
        await archive.redis.aclose()


async def test_one_call_with_a_turn_twice_and_a_reused_position_stores_what_calls_one_by_one_store(
    redis_settings: Settings,
) -> None:
    archive = ArchiveStore(Redis.from_url(redis_settings.redis_url), redis_settings)
    (reset,) = [
        e for e in [archive_entry("s1", "other", 1, {"role": "user", "content": "a turn after a reset"}, 9.0)] if e
    ]
    calls = [entries(3), [*entries(5)[2:], entries(5)[3], reset, reset]]
    try:
        added = [await archive.append("one-call", [e for call in calls for e in call])]
        added += [await archive.append("one-by-one", [e]) for call in calls for e in call]
        assert added == [6, 1, 1, 1, 0, 1, 1, 0, 1, 0]
        one, each = archive.layout.owner("one-call"), archive.layout.owner("one-by-one")
        for name in ("archive", "positions", "entry_terms", "stats", "dictionary"):
            assert await archive.redis.hgetall(getattr(one, name)) == await archive.redis.hgetall(
                getattr(each, name)
            ), name
    finally:
        await archive.redis.aclose()


async def test_a_turn_without_index_terms_is_evicted_like_any_other(redis_settings: Settings) -> None:
    settings = redis_settings.model_copy(update={"archive_max_entries": 3})
    archive = ArchiveStore(Redis.from_url(settings.redis_url), settings)
    (bare,) = [e for e in [archive_entry("s1", "t-bare", 0, {"role": "user", "content": "在吗？"}, 1.0)] if e]
    assert not bare.term_counts()
    try:
        await archive.append("u5", [bare])
        await archive.append("u5", entries(4, start=1))  # over the cap: the bare turn is the oldest, it goes first
        assert [e.position for e in await archive.entries("u5")] == [3, 4]
        assert int(await archive.redis.hget(archive.layout.owner("u5").stats, "total_length")) == sum(
            sum(e.term_counts().values()) for e in entries(2, start=3)
        )
        # erasure takes the same path: a session that holds such a turn is erased whole
        await archive.append("u6", [bare, *entries(2, start=1)])
        await archive.evict("u6", await archive.redis.hkeys(archive.layout.owner("u6").archive))
        assert await archive.entries("u6") == []
    finally:
        await archive.redis.aclose()


async def test_a_frequent_terms_postings_leave_the_dictionary_for_a_key_that_keeps_the_best(
    redis_settings: Settings,
) -> None:
    archive = ArchiveStore(Redis.from_url(redis_settings.redis_url), redis_settings)
    keys = archive.layout.owner("u4")
    # every entry says "turn"; the longer entries (more words) weigh less, so the best are known
    made = [
        archive_entry(
            "s1", f"t{i}", i, {"role": "user", "content": "turn " + " ".join(f"w{i}x{j}" for j in range(i % 9))}, 1.0
        )
        for i in range(PACKED_MAX + POSTINGS_KEPT + 40)
    ]
    written = [e for e in made if e is not None]
    try:
        await archive.append("u4", written[:PACKED_MAX])
        assert (await archive.redis.hget(keys.dictionary, "turn")).count(b",") == PACKED_MAX - 1  # packed
        assert not await archive.redis.exists(keys.term_prefix + "turn")
        await archive.append("u4", written[PACKED_MAX : PACKED_MAX + 1])
        assert await archive.redis.hget(keys.dictionary, "turn") == f"{PACKED_MAX + 1} {PACKED_MAX + 1} 0".encode()
        for start in range(PACKED_MAX + 1, len(written), 7):
            await archive.append("u4", written[start : start + 7])
        df, size, least = map(int, (await archive.redis.hget(keys.dictionary, "turn")).split())
        weights = await archive.redis.zrange(keys.term_prefix + "turn", 0, -1, withscores=True)
        assert df == len(written) and size == len(weights) and POSTINGS_TRIMMED <= size < POSTINGS_KEPT
        # the key holds the best: each posting's weight as written (against the average length then), the best
        # POSTINGS_TRIMMED of them all are in it whatever was cut
        short = {
            ArchiveEntry.from_json(raw).id: id_.decode()
            for id_, raw in (await archive.redis.hgetall(keys.archive)).items()
        }
        written_weights, total = {}, 0
        for count, entry in enumerate(written, 1):
            tf, length = entry.term_counts()["turn"], sum(entry.term_counts().values())
            total += length
            norm = BM25_K1 * (1 - BM25_B + BM25_B * length * count / total)
            written_weights[short[entry.id]] = max(1, int(tf * (BM25_K1 + 1) / (tf + norm) * WEIGHT_SCALE + 0.5))
        assert {m.decode(): int(w) for m, w in weights}.items() <= written_weights.items()
        assert 0 < least <= min(int(w) for _, w in weights)
        assert await archive.redis.object("encoding", keys.dictionary) == b"hashtable"
        best = sorted(written_weights.items(), key=lambda item: (item[1], item[0]), reverse=True)[:POSTINGS_TRIMMED]
        assert {id_ for id_, _ in best} <= {m.decode() for m, _ in weights}
        assert await archive.redis.object("encoding", keys.term_prefix + "turn") in (b"ziplist", b"listpack")
    finally:
        await archive.redis.aclose()


async def owner_contents(redis: Redis, owner: str) -> dict[bytes, Any]:
    """Every key of `owner`'s archive with what it holds (its hashes and sorted sets)."""
    contents: dict[bytes, Any] = {}
    async for key in redis.scan_iter(f"*{{{owner}}}*"):
        kind = await redis.type(key)
        contents[key] = await redis.hgetall(key) if kind == b"hash" else await redis.zrange(key, 0, -1, withscores=True)
    return contents


async def test_an_append_that_does_not_name_a_postings_key_it_needs_writes_nothing_and_is_made_again_naming_it(
    redis_settings: Settings,
) -> None:
    redis = Redis.from_url(redis_settings.redis_url)
    # two workers appending to one owner (its sessions on two partitions): the second was never told its terms
    told, untold, reference = (ArchiveStore(redis, redis_settings) for _ in range(3))
    written = entries(PACKED_MAX + 10)  # "turn" in every one: its postings move to a key of their own
    try:
        await told.append("u5", written[:PACKED_MAX])
        await reference.append("ref", written[:PACKED_MAX])
        # the reply named "turn", half way to its key: the next append names it before it is needed
        assert told.layout.owner("u5").term_prefix + "turn" in told.append_call("u5", written[PACKED_MAX:]).keys
        before = await owner_contents(redis, "u5")
        call = untold.append_call("u5", written[PACKED_MAX:])
        reply = await redis.eval(ARCHIVE_APPEND.text(), len(call.keys), *call.keys, *call.args)
        assert reply[0] == -1 and b"turn" in reply[2 : 2 + reply[1]]
        assert await owner_contents(redis, "u5") == before
        assert await untold.append("u5", written[PACKED_MAX:]) == 10
        await reference.append("ref", written[PACKED_MAX:])
        keys, ref_keys = told.layout.owner("u5"), told.layout.owner("ref")
        assert await redis.hget(keys.dictionary, "turn") == f"{PACKED_MAX + 10} {PACKED_MAX + 10} 0".encode()
        assert await redis.zcard(keys.term_prefix + "turn") == PACKED_MAX + 10
        assert await postings_of(redis, keys) == await postings_of(redis, ref_keys)
        assert await redis.hgetall(keys.dictionary) == await redis.hgetall(ref_keys.dictionary)
    finally:
        await redis.aclose()


async def test_an_owners_archive_keys_expire_together(redis_settings: Settings) -> None:
    settings = redis_settings.model_copy(update={"owner_ttl_seconds": 2})
    archive = ArchiveStore(Redis.from_url(settings.redis_url), settings)
    try:
        await archive.append("u2", entries(40))  # "turn" in every one: past the packed postings, a key of its own
        tagged = [key async for key in archive.redis.scan_iter(f"{settings.topic_prefix}:*{{u2}}*")]
        assert len(tagged) > 5 and archive.layout.owner("u2").term_prefix.encode() + b"turn" in tagged
        ttls = [await archive.redis.ttl(key) for key in tagged]
        assert all(0 < ttl <= 2 for ttl in ttls), ttls
        await asyncio.sleep(2.5)
        assert [key async for key in archive.redis.scan_iter(f"{settings.topic_prefix}:*{{u2}}*")] == []
    finally:
        await archive.redis.aclose()


async def test_build_prompt_is_one_round_trip_and_every_key_in_one_slot(redis_settings: Settings) -> None:
    async with ContextClient.from_settings(redis_settings) as client:
        archive = ArchiveStore(client.store.redis, redis_settings)
        await archive.append("acme:maya", [e for e in entries(30)])
        # a session with a context: its prompt also records (the recall list, the memories' access counts)
        await with_context(client.store.redis, redis_settings, "s1", "acme:maya")
        await client.build_prompt("s1", "warm up topic3", tenant="acme", user_id="maya")  # scripts loaded, pool warm
        monitor_client = Redis.from_url(redis_settings.redis_url)
        commands: list[str] = []
        async with monitor_client.monitor() as monitor:
            listening = asyncio.create_task(_collect(monitor, commands))
            await asyncio.sleep(0.2)
            prompt = await client.build_prompt("s1", "what about topic3 and word10?", tenant="acme", user_id="maya")
            await asyncio.sleep(0.5)
            listening.cancel()
        await monitor_client.aclose()
    assert prompt.archived, "the archive was searched"
    sent = [c for c in commands if "lua" not in c]
    assert len(sent) == 1 and sent[0].split()[0].upper() == "EVALSHA"
    scripted_keys = [c.split()[1].strip('"') for c in commands if "lua" in c]
    assert len(scripted_keys) > 10
    assert {key_slot(key.encode()) for key in scripted_keys} == {key_slot(b"{acme:maya}")}


async def _collect(monitor: Any, commands: list[str]) -> None:
    while True:
        info = await monitor.next_command()
        if info["command"].upper().startswith(("EVALSHA", "EVAL ")) or info.get("client_type") == "lua":
            commands.append(f"{info['command']} {'lua' if info.get('client_type') == 'lua' else ''}")
