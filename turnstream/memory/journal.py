"""The memory journal's records (pure): what Redis holds of an owner's long-term data, as a compacted topic.

Redis is a projection; contexts come back from the sessions Table, and memories, profiles and the recall
archive come back from this journal. Every memory upsert and archive append is also a record here, keyed
by what it writes (`m`, owner, memory id / `a`, owner, entry id) so log compaction keeps only the latest
of each; a memory or archive entry evicted by its per-owner cap leaves a tombstone. `turnstream forget`
leaves tombstones for what it erases plus an erasure record (`x`, owner, session or ""), and a rebuild
drops whatever of the erased owner (or session) is older than that, so nothing erased comes back even
before compaction has run.

All records of one owner go to the owner's partition (`schemas.ids.partition_of(owner)`), in write
order: a rebuild replays each owner's records in the order they were written, as the archive's age
order needs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

import orjson

from turnstream.memory.archive import ArchiveEntry
from turnstream.memory.model import Memory

Kind = Literal["m", "a", "x"]
SEPARATOR = "\x1f"
"""Between a key's parts: ids are escaped (schemas/ids.py) and never hold a control character."""


class JournalError(ValueError):
    """A journal record this version cannot read."""


def journal_key(kind: Kind, owner: str, id_: str) -> bytes:
    return SEPARATOR.join((kind, owner, id_)).encode()


def parse_key(key: bytes) -> tuple[Kind, str, str]:
    """(kind, owner, id) of a record key; JournalError for any other shape."""
    parts = key.decode().split(SEPARATOR)
    if len(parts) != 3 or parts[0] not in ("m", "a", "x"):
        raise JournalError(f"not a memory journal key: {key[:80]!r}")
    return parts[0], parts[1], parts[2]  # type: ignore[return-value]


def memory_record(memory: Memory) -> tuple[bytes, bytes]:
    return journal_key("m", memory.owner, memory.id), memory.model_dump_json(exclude={"access_count"}).encode()


def archive_record(owner: str, entry: ArchiveEntry) -> tuple[bytes, bytes]:
    return journal_key("a", owner, entry.id), entry.to_json()


def erasure_record(owner: str, session: str | None, erased_at: float) -> tuple[bytes, bytes]:
    """Everything of `owner` (or, with `session`, of that session within it) written before `erased_at` is gone."""
    return journal_key("x", owner, session or ""), orjson.dumps({"erased_at": erased_at})


@dataclass
class OwnerReplay:
    """What a rebuild writes back for one owner, in the order it was first written."""

    memories: list[Memory] = field(default_factory=list)
    entries: list[ArchiveEntry] = field(default_factory=list)


@dataclass(frozen=True)
class JournalRecord:
    key: bytes
    value: bytes | None
    timestamp: float
    """When it was written (the Kafka record's timestamp), epoch seconds."""


@dataclass
class Replay:
    """What the records of one partition leave, per owner, and how many records could not be read."""

    owners: dict[str, OwnerReplay] = field(default_factory=dict)
    unreadable: int = 0


def replay(records: Iterable[JournalRecord], now: float, owner_ttl_seconds: float) -> Replay:
    """What the records of one partition, in log order, leave for each owner.

    The latest record of each key wins (a tombstone removes it); an erasure drops what its owner (or its
    session) wrote before it; an owner whose latest write is older than the owner TTL is left out, as Redis
    would have expired it. A record this version cannot read is counted and left out, not a failed replay.
    """
    latest: dict[bytes, JournalRecord] = {}
    for record in records:
        latest.pop(record.key, None)  # a rewritten key takes the place of its latest write
        latest[record.key] = record
    result = Replay()
    erased: dict[tuple[str, str], float] = {}
    newest: defaultdict[str, float] = defaultdict(float)
    kept: list[tuple[str, Memory | ArchiveEntry, float]] = []
    for record in latest.values():
        try:
            kind, owner, id_ = parse_key(record.key)
            newest[owner] = max(newest[owner], record.timestamp)
            if record.value is None:
                continue
            if kind == "x":
                erased[owner, id_] = float(orjson.loads(record.value)["erased_at"])
            else:
                kept.append((owner, _decode(kind, record.value), record.timestamp))
        except (ValueError, KeyError, TypeError):  # pydantic's and orjson's errors are ValueErrors
            result.unreadable += 1
    owners: defaultdict[str, OwnerReplay] = defaultdict(OwnerReplay)
    for owner, item, written in kept:
        session = item.source_session if isinstance(item, Memory) else item.session
        if now - newest[owner] > owner_ttl_seconds or _erased(erased, owner, session, written):
            continue
        if isinstance(item, Memory):
            owners[owner].memories.append(item)
        else:
            owners[owner].entries.append(item)
    result.owners = dict(owners)
    return result


def _decode(kind: Kind, value: bytes) -> Memory | ArchiveEntry:
    return Memory.model_validate_json(value) if kind == "m" else ArchiveEntry.from_json(value)


def _erased(erased: dict[tuple[str, str], float], owner: str, session: str, written: float) -> bool:
    never = float("-inf")
    return written <= max(erased.get((owner, ""), never), erased.get((owner, session), never))
