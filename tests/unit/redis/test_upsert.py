"""What a memory upsert takes from its base reads (redis/memory_store.py): the created_at Redis keeps, which the memory
journal is written with."""

from __future__ import annotations

import orjson

from turnstream.redis.memory_store import _Upsert
from turnstream.schemas.memory import Memory


def memory(key: str, text: str, at: float) -> Memory:
    return Memory(
        id=f"id-{key}",
        owner="acme:ana",
        type="fact",
        text=text,
        key=key,
        keywords=[key],
        importance=0.5,
        created_at=at,
        updated_at=at,
        source_session="acme:s1",
    )


def test_a_rewritten_memory_keeps_the_stored_created_at_a_new_one_its_first_writes() -> None:
    corrected, new, again = (
        memory("locker", "My locker is 12", 500.0),
        memory("gate", "Gate 4", 500.0),
        memory("gate", "Gate 5", 501.0),
    )
    upsert = _Upsert("acme:ana", [corrected, new, again], [])
    stored = [orjson.dumps({"text": "My locker is 11", "keywords": ["locker"]}), None, None]
    upsert.read_base(iter([(b"", b"3"), stored, [b"100.5", None, None]]))
    assert upsert.created == {"id-locker": 100.5, "id-gate": 500.0}  # as remember.lua keeps them (set once)
    assert upsert.replaced == ["My locker is 11"] and upsert.version == 3


def test_a_profile_only_upsert_reads_no_memories() -> None:
    upsert = _Upsert("acme:ana", [], ["I live in Porto"])
    upsert.read_base(iter([(b"Ana", b"2")]))
    assert (upsert.created, upsert.profile, upsert.version) == ({}, "Ana", 2)
