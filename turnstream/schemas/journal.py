"""The memory journal's records: what Redis holds of an owner's long-term data, as a compacted topic.

Keyed by what each writes (`m`, owner, memory id / `a`, owner, entry id / `v`, owner, entry id: the entry's
vector), so log compaction keeps only the latest of each; `x`, owner, session or "" is an erasure
(memory/journal.py replays them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeGuard, get_args

import orjson

from turnstream.errors import TurnstreamError
from turnstream.schemas.archive import ArchiveEntry, EmbeddedTurn
from turnstream.schemas.memory import Memory

Kind = Literal["m", "a", "v", "x"]
SEPARATOR = "\x1f"
"""Between a key's parts: ids are escaped (schemas/ids.py) and never hold a control character."""


class JournalError(TurnstreamError, ValueError):
    """A journal record this version cannot read."""


def journal_key(kind: Kind, owner: str, id_: str) -> bytes:
    return SEPARATOR.join((kind, owner, id_)).encode()


def parse_key(key: bytes) -> tuple[Kind, str, str]:
    """(kind, owner, id) of a record key; JournalError for any other shape."""
    parts = key.decode().split(SEPARATOR)
    if len(parts) != 3 or not _is_kind(kind := parts[0]):
        raise JournalError(f"not a memory journal key: {key[:80]!r}")
    return kind, parts[1], parts[2]


def _is_kind(value: str) -> TypeGuard[Kind]:
    return value in get_args(Kind)


def memory_record(memory: Memory) -> tuple[bytes, bytes]:
    return journal_key("m", memory.owner, memory.id), memory.model_dump_json(exclude={"access_count"}).encode()


def archive_record(owner: str, entry: ArchiveEntry) -> tuple[bytes, bytes]:
    return journal_key("a", owner, entry.id), entry.to_json()


def embedded_record(owner: str, embedded: EmbeddedTurn) -> tuple[bytes, bytes]:
    """A turn's vector and semantic terms, keyed by its entry: a re-embedding replaces it, the entry's tombstone
    comes with one of its own."""
    return journal_key("v", owner, embedded.id), embedded.to_json()


def erasure_record(owner: str, session: str | None, erased_at: float) -> tuple[bytes, bytes]:
    """Everything of `owner` (or, with `session`, of that session within it) written before `erased_at` is gone."""
    return journal_key("x", owner, session or ""), orjson.dumps({"erased_at": erased_at})


@dataclass(frozen=True, slots=True)
class JournalRecord:
    key: bytes
    value: bytes | None
    timestamp: float
    """When it was written (the Kafka record's timestamp), epoch seconds."""
    offset: int = -1
    """Where it sits in its partition; -1 for a record not read from one."""


def decode_value(kind: Kind, value: bytes) -> Memory | ArchiveEntry | EmbeddedTurn:
    if kind == "m":
        return Memory.model_validate_json(value)
    return EmbeddedTurn.from_json(value) if kind == "v" else ArchiveEntry.from_json(value)
