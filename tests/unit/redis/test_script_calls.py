"""The callers' script calls read back by position from the spec (redis/scripts.py), as the Lua scripts read them:
every key is the one its name says (prefix P, owner O, session S spell the patterns of docs/scripts.md), every
argument the value its name says. The pipelines are real and never sent."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson
from redis.asyncio import Redis

from turnstream.prompt.read import ArchiveQuery
from turnstream.redis.archive import (
    BM25_B,
    BM25_K1,
    PACKED_MAX,
    POSTINGS_KEPT,
    POSTINGS_TRIMMED,
    WEIGHT_SCALE,
    ArchiveStore,
    arrival_number,
)
from turnstream.redis.keys import KeyLayout
from turnstream.redis.memory_store import MemoryStore, _Upsert
from turnstream.redis.recall import recall_request
from turnstream.redis.scripts import ARCHIVE_APPEND, ARCHIVE_EVICT, RECALL, REMEMBER, WRITE_CONTEXT, ScriptSpec
from turnstream.redis.writer import ContextWriter
from turnstream.schemas.archive import ArchiveEntry
from turnstream.schemas.context import ContextDoc
from turnstream.schemas.memory import Memory
from turnstream.settings import Settings

SETTINGS = Settings(topic_prefix="P")


def read_back(spec: ScriptSpec, keys: Sequence[Any], args: Sequence[Any]) -> dict[str, Any]:
    """A call by name, read by position as the script reads it: fixed keys and arguments, tails as lists (of dicts,
    for an ARGV tail of items)."""
    named: dict[str, Any] = {p.name: args[n] for n, p in enumerate(spec.argv)}
    named |= {p.name: keys[n] for n, p in enumerate(spec.keys)}
    at = len(spec.keys)
    for tail in spec.key_tails:
        end = at + int(named[tail.counted_by]) if tail.counted_by else len(keys)
        named[tail.name], at = list(keys[at:end]), end
    assert at == len(keys), "keys beyond the declared tails"
    rest = list(args[len(spec.argv) :])
    if spec.arg_tail and spec.arg_tail.fields:
        size = len(spec.arg_tail.fields)
        assert len(rest) % size == 0, f"{spec.arg_tail.name} is not whole items of {size}"
        named[spec.arg_tail.name] = [
            dict(zip([f.name for f in spec.arg_tail.fields], rest[i : i + size])) for i in range(0, len(rest), size)
        ]
    elif spec.arg_tail:
        named[spec.arg_tail.name] = rest
    else:
        assert not rest, "arguments beyond the declared ones"
    return named


def patterns(spec: ScriptSpec) -> dict[str, str]:
    return {p.name: p.pattern for p in spec.keys}


def sent(pipe: Any) -> tuple[list[Any], list[Any]]:
    """KEYS and ARGV of the first EVALSHA queued in `pipe`."""
    command = pipe.command_stack[0][0]
    assert command[0] == "EVALSHA"
    count = command[2]
    return list(command[3 : 3 + count]), list(command[3 + count :])


def test_recall_request_names_the_session_and_owner_keys_and_counts_the_keyword_sets() -> None:
    archive = ArchiveQuery(
        ["budget"],
        hits=9,
        postings_per_term=11,
        scored_terms=7,
        neighbours=3,
        pool=30,
        semantic_terms=("budget", "money"),
        vector_tag="m1",
    )
    call = recall_request(
        KeyLayout("P"), SETTINGS, "O", "S", ["budget", "lisbon"], 5, archive, record=False, now=1000.0
    )
    named = read_back(RECALL, call.keys, call.args)
    assert named == {
        **patterns(RECALL),
        "keyword_sets": ["P:memkw:{O}:budget", "P:memkw:{O}:lisbon"],
        "postings": ["P:arcpost:{O}:budget"],
        "k": 5,
        "window": SETTINGS.recall_dedup_window,
        "ttl": SETTINGS.session_ttl_seconds,
        "now": 1000.0,
        "record": 0,
        "keyword_count": 2,
        "hits": 9,
        "postings_per_term": 11,
        "scored_terms": 7,
        "neighbours": 3,
        "terms": "budget",
        "weight_scale": WEIGHT_SCALE,
        "pool": 30,
        "semantic_terms": "budget money",
        "vector_tag": "m1",
    }


async def test_a_context_write_names_its_keys_channel_and_turn_ids() -> None:
    store = ContextWriter.on(Redis(), SETTINGS)
    doc = ContextDoc(
        session_id="S",
        version=4,
        last_turn_id="t2",
        updated_at=1.0,
        messages=[],
        tokens={"before": 0, "after": 0, "budget": 100},
    )
    async with store.redis.pipeline(transaction=False) as pipe:
        await store.queue_write(pipe, doc, ["t1", "t2"], owner="O")
        named = read_back(WRITE_CONTEXT, *sent(pipe))
    assert named == {
        **patterns(WRITE_CONTEXT),
        "version": 4,
        "doc": doc.to_json(),
        "last_turn_id": "t2",
        "ttl": SETTINGS.session_ttl_seconds,
        "dedup_window": SETTINGS.dedup_window,
        "updates": "P:updates:S",
        "turn_ids": ["t1", "t2"],
    }


async def test_an_archive_append_packs_its_entries_and_names_the_postings_keys_it_knows_of() -> None:
    store = ArchiveStore(Redis(), SETTINGS)
    entries = [
        ArchiveEntry("e1", "S", 1, "user", None, 1.0, "dog dog"),
        ArchiveEntry("e2", "S", 2, "user", None, 2.0, "cat dog"),
    ]
    store._named("O").add("cat")  # as a reply of an earlier append told it
    async with store.redis.pipeline(transaction=False) as pipe:
        await store.queue_append(pipe, "O", entries)
        named = read_back(ARCHIVE_APPEND, *sent(pipe))
    assert {name: named.pop(name) for name in patterns(ARCHIVE_APPEND)} == patterns(ARCHIVE_APPEND)
    assert named.pop("postings") == ["P:arcpost:{O}:cat"]
    assert orjson.loads(named.pop("entries")) == [
        {
            "id": "e1",
            "json": entries[0].to_json().decode(),
            "record": "2\tS#1\tdog",
            "field": "S#1",
            "length": 2,
            "postings": [1, 2],
        },
        {
            "id": "e2",
            "json": entries[1].to_json().decode(),
            "record": "2\tS#2\tcat dog",
            "field": "S#2",
            "length": 2,
            "postings": [2, 1, 1, 1],
        },
    ]
    assert named == {
        "ttl": SETTINGS.owner_ttl_seconds,
        "cap": SETTINGS.archive_max_entries,
        "evict_chunk": SETTINGS.archive_max_entries // 100,
        "k1": BM25_K1,
        "b": BM25_B,
        "terms": "dog cat",
        "keyed": "2",
        "weight_scale": WEIGHT_SCALE,
        "packed_max": PACKED_MAX,
        "postings_kept": POSTINGS_KEPT,
        "postings_trimmed": POSTINGS_TRIMMED,
    }


def test_an_eviction_names_the_postings_of_the_terms_its_entries_were_indexed_under() -> None:
    call = ArchiveStore(Redis(), SETTINGS).evict_call(
        "O", [(b"1", b"2\tS#1\tdog"), (b"2", b"2\tS#2\tcat dog"), (b"3", b"")]
    )
    assert read_back(ARCHIVE_EVICT, call.keys, call.args) == {
        **patterns(ARCHIVE_EVICT),
        "postings": ["P:arcpost:{O}:dog", "P:arcpost:{O}:cat"],
        "terms": "dog cat",
        "entries": [
            {"id": b"1", "field": "S#1", "length": "2", "terms": "1"},
            {"id": b"2", "field": "S#2", "length": "2", "terms": "2 1"},
            {"id": b"3", "field": "", "length": "0", "terms": ""},
        ],
    }


def test_a_remember_call_names_its_keys_the_profile_it_sets_and_each_memory() -> None:
    memory = Memory(
        id="m1",
        owner="O",
        type="fact",
        text="Gate 4",
        key="gate",
        keywords=["gate", "4"],
        importance=0.5,
        created_at=10.5,
        updated_at=10.5,
        source_session="S",
    )
    upsert = _Upsert("O", [memory], ["I fly on Monday"], asked={"P:memkw:{O}:old"})
    upsert.read_base(iter([(b"Ana", b"3"), [None], [None]]))
    call = MemoryStore(Redis(), SETTINGS)._call(upsert)
    named = read_back(REMEMBER, call.keys, call.args)
    assert named.pop("profile_text").startswith("Ana")
    assert named == {
        **patterns(REMEMBER),
        "keyword_sets": ["P:memkw:{O}:4", "P:memkw:{O}:gate", "P:memkw:{O}:old"],
        "keyword_prefix": "P:memkw:{O}:",
        "expected_version": "3",
        "ttl": SETTINGS.owner_ttl_seconds,
        "cap": SETTINGS.memory_max_per_owner,
        "evict_chunk": SETTINGS.memory_max_per_owner // 20,
        "memories_written": [{"id": "m1", "json": memory.stored_json(), "created_at": "10.5", "keywords": "gate\n4"}],
    }


def test_a_short_id_is_its_arrival_number_in_base_62_so_sorting_by_it_is_the_age_order() -> None:
    assert [arrival_number(id_) for id_ in ("1", "9", "A", "z", "10", b"zz", "100")] == [1, 9, 10, 61, 62, 3843, 3844]
    assert sorted(["10", "z", "2", "Zz"], key=arrival_number) == ["2", "z", "10", "Zz"]
