"""The memory journal's replay (pure): what Redis holds of an owner's long-term data, rebuilt from the compacted
topic whose records schemas/journal.py defines.

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

import orjson

from turnstream.schemas.archive import ArchiveEntry, EmbeddedTurn
from turnstream.schemas.journal import JournalRecord, decode_value, parse_key
from turnstream.schemas.memory import Memory


@dataclass
class OwnerReplay:
    """What a rebuild writes back for one owner, in the order it was first written."""

    memories: list[Memory] = field(default_factory=list)
    entries: list[ArchiveEntry] = field(default_factory=list)
    embedded: list[EmbeddedTurn] = field(default_factory=list)
    """The entries' vectors: written back after the entries they belong to."""


@dataclass
class Gone:
    """What the journal says one owner no longer has: ids whose latest record is a tombstone (a cap's eviction, a
    forget), or whose write an erasure came after."""

    memories: set[str] = field(default_factory=set)
    entries: set[str] = field(default_factory=set)
    """Archived turns' ids (entry_id); their vectors go with them."""


@dataclass
class Replay:
    """What the records of one partition leave, per owner, and how many records could not be read."""

    owners: dict[str, OwnerReplay] = field(default_factory=dict)
    unreadable: int = 0
    gone: dict[str, Gone] = field(default_factory=dict)
    """What a Redis that lost deletions (a replica promoted before they reached it) may still hold, per owner."""
    erased_owners: set[str] = field(default_factory=set)
    """Owners erased whole (`turnstream forget --user`) with nothing written since: none of their keys should be left."""


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
    kept: list[tuple[str, Memory | ArchiveEntry | EmbeddedTurn, float]] = []
    gone: defaultdict[str, Gone] = defaultdict(Gone)
    for record in latest.values():
        try:
            kind, owner, id_ = parse_key(record.key)
            newest[owner] = max(newest[owner], record.timestamp)
            if record.value is None:
                _add_gone(gone[owner], kind, id_)
                continue
            if kind == "x":
                erased[owner, id_] = float(orjson.loads(record.value)["erased_at"])
            else:
                kept.append((owner, decode_value(kind, record.value), record.timestamp))
        except (ValueError, KeyError, TypeError):  # pydantic's and orjson's errors are ValueErrors
            result.unreadable += 1
    owners: defaultdict[str, OwnerReplay] = defaultdict(OwnerReplay)
    for owner, item, written in kept:
        session = item.source_session if isinstance(item, Memory) else item.session
        if now - newest[owner] > owner_ttl_seconds:
            continue  # Redis expires the owner's keys itself
        if _erased(erased, owner, session, written):
            _add_gone(gone[owner], "m" if isinstance(item, Memory) else "a", item.id)
            continue
        if isinstance(item, Memory):
            owners[owner].memories.append(item)
        elif isinstance(item, EmbeddedTurn):
            owners[owner].embedded.append(item)
        else:
            owners[owner].entries.append(item)
    result.owners = dict(owners)
    live = now - owner_ttl_seconds
    for owner, of in gone.items():
        if newest[owner] < live:
            continue
        kept_here = owners.get(owner, OwnerReplay())
        of.memories -= {memory.id for memory in kept_here.memories}
        of.entries -= {entry.id for entry in kept_here.entries}  # a vector's tombstone never takes its entry
        if of.memories or of.entries:
            result.gone[owner] = of
    result.erased_owners = {
        owner for owner, session in erased if not session and owner not in owners and newest[owner] >= live
    }
    return result


def _add_gone(gone: Gone, kind: str, id_: str) -> None:
    if kind == "m":
        gone.memories.add(id_)
    elif kind in ("a", "v"):  # a vector goes with its entry
        gone.entries.add(id_)


def _erased(erased: dict[tuple[str, str], float], owner: str, session: str, written: float) -> bool:
    never = float("-inf")
    return written <= max(erased.get((owner, ""), never), erased.get((owner, session), never))
