"""ArchiveStore: every applied turn of an owner in Redis, with a BM25 index built on the write path.

The layout is in redis/keys.py. A posting is a short entry id and the entry's BM25 term weight,
length-normalised at write time and stored as an integer, so a read takes each query term's best entries
without scoring them all and its work stays bounded however large the archive grows.

Most terms of an archive are rare: their postings sit packed in the term's field of the owner's term
dictionary (no key per term, which costs more than the postings). A term with more than PACKED_MAX
postings gets a sorted set of its own, holding its best POSTINGS_TRIMMED to POSTINGS_KEPT: a read takes
at most `postings_per_term` of them (64), and the dictionary keeps the term's document frequency for the
idf, the set's size (so a full set is cut without asking its size) and the lowest weight the set kept at
its last cut (a posting below it is never among the best, and is not written at all).
A key that keeps the best only forgets the rest: once eviction has removed some of a frequent term's best
postings, that term's next best among the older entries no longer come back (its newer postings do).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import orjson
from redis.asyncio import Redis
from redis.asyncio.client import Pipeline

from turnstream.redis.aio import load_script, queue_script, run_pipeline
from turnstream.redis.keys import KeyLayout, OwnerKeys
from turnstream.redis.recent_owners import RecentOwners
from turnstream.redis.scripts import ARCHIVE_APPEND, ARCHIVE_EMBED, ARCHIVE_EVICT, Call
from turnstream.schemas.archive import ArchiveEntry, EmbeddedTurn
from turnstream.settings import Settings

BM25_K1 = 1.2
BM25_B = 0.75
EVICT_SHARE = 100
"""A full archive evicts a hundredth of its cap at a time, so most appends need no second call."""
EVICT_CALL_ENTRIES = 500
"""Entries per eviction call when a session is erased: one call holds Redis alone."""
WEIGHT_SCALE = 10_000
"""Weights are stored as integers of weight × this: below 2.2 × 10,000 a sorted set holds each in 2 bytes."""
PACKED_MAX = 32
"""Postings a term keeps packed in its dictionary field: a read parses them all, and a key costs more below this."""
POSTINGS_KEPT = 127
"""Best postings a frequent term's key holds at most: one below Redis's limit of its compact encoding of a sorted
set (zset-max-listpack-entries, 128 by default), as a posting is added before the worst go, and a set that once
passed the limit would stay in the larger encoding."""
POSTINGS_TRIMMED = 96
"""What a full key is cut back to: one cut every 31 additions, and still half again what a read takes (64)."""
SEMANTIC_POSTINGS = 32
"""Best postings a semantic term keeps: a read takes them all, so it reads at most this many per term."""
EMBED_CALL_ENTRIES = 200
"""Entries per embedding call: one call holds Redis alone."""
APPEND_ATTEMPTS = 5
"""Calls of one append at most, each naming the postings keys the last one asked for."""
KEYED_OWNERS = 4096
"""Owners whose named terms a store remembers at most, the most recently written: one forgotten costs its next
append one more call, which names its terms again."""
DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
"""Of a short entry id: the entry's arrival number in base 62, as archive_append.lua writes it."""


def arrival_number(short_id: bytes | str) -> int:
    """The arrival number a short entry id stands for: the archive's age order."""
    number = 0
    for digit in short_id.decode() if isinstance(short_id, bytes) else short_id:
        number = number * 62 + DIGITS.index(digit)
    return number


class ArchiveStore:
    """Append-only per-owner archive of turns: idempotent appends, capped, expiring with the owner."""

    def __init__(self, redis: Redis, settings: Settings) -> None:
        self.redis = redis
        self.layout = KeyLayout(settings.topic_prefix)
        self._ttl = settings.owner_ttl_seconds
        self._cap = settings.archive_max_entries
        self._append = load_script(redis, ARCHIVE_APPEND)
        self._evict = load_script(redis, ARCHIVE_EVICT)
        self._embed = load_script(redis, ARCHIVE_EMBED)
        self._keyed: RecentOwners[set[str]] = RecentOwners(KEYED_OWNERS, settings.session_ttl_seconds)
        """Per owner, the terms its appends name the postings keys of. An owner none of whose sessions is live any
        more is forgotten, so this follows the live sessions, as the worker's Table does, instead of filling to its
        cap with owners long gone (the soak's worker grew by 5 MB over half an hour before it did)."""

    def append_call(self, owner: str, entries: Sequence[ArchiveEntry]) -> Call:
        """The append of `entries`, naming the postings keys of the terms this store knows to need them."""
        keys = self.layout.owner(owner)
        named = self._named(owner)
        slots: dict[str, int] = {}
        appended = []
        for entry in entries:
            counts = entry.term_counts()
            length = sum(counts.values())
            postings: list[int] = []
            for term, frequency in counts.items():
                postings += (slots.setdefault(term, len(slots) + 1), frequency)
            appended.append(
                {
                    "id": entry.id,
                    "json": entry.to_json().decode(),
                    "record": f"{length}\t{entry.position_field}\t{' '.join(counts)}",
                    "field": entry.position_field,
                    "length": length,
                    "postings": postings,
                }
            )
        keyed = [(term, slot) for term, slot in slots.items() if term in named]
        return ARCHIVE_APPEND.call(
            **self._fixed(keys),
            postings=[keys.term_prefix + term for term, _ in keyed],
            ttl=self._ttl,
            cap=self._cap,
            evict_chunk=max(1, self._cap // EVICT_SHARE),
            k1=BM25_K1,
            b=BM25_B,
            weight_scale=WEIGHT_SCALE,
            packed_max=PACKED_MAX,
            postings_kept=POSTINGS_KEPT,
            postings_trimmed=POSTINGS_TRIMMED,
            terms=" ".join(slots),
            keyed=" ".join(str(slot) for _, slot in keyed),
            entries=orjson.dumps(appended),
        )

    async def queue_append(self, pipe: Pipeline, owner: str, entries: Sequence[ArchiveEntry]) -> None:
        """Add the append of `entries` to `pipe`; its reply goes to `complete` after execution."""
        await queue_script(self._append, pipe, self.append_call(owner, entries))

    async def append(self, owner: str, entries: Sequence[ArchiveEntry]) -> int:
        """Append `entries` (those already there are skipped) and evict over the cap; returns how many were new."""
        if not entries:
            return 0
        (reply,) = await run_pipeline(self.redis, lambda pipe: self.queue_append(pipe, owner, entries))
        reply = await self._settled(owner, entries, reply)
        await self._evict_overflow(owner, reply)
        return int(reply[0])

    async def missing(self, owner: str, entries: Sequence[ArchiveEntry]) -> list[ArchiveEntry]:
        """Those of `entries` the owner's archive does not hold at their positions, in two reads: what a replay over a
        Redis that kept most of the archive appends, without indexing again what is there."""
        if not entries:
            return []
        keys = self.layout.owner(owner)
        holders = await self.redis.hmget(keys.positions, [entry.position_field for entry in entries])
        held = [holder for holder in holders if holder is not None]
        stored = dict(zip(held, await self.redis.hmget(keys.archive, held))) if held else {}
        return absent(entries, [stored.get(holder) if holder is not None else None for holder in holders])

    async def complete(self, owner: str, entries: Sequence[ArchiveEntry], reply: Sequence[Any]) -> list[str]:
        """Finish the append `queue_append` queued, from its reply: made again if it named too few postings keys,
        then the entries over the cap evicted. Returns the evicted entries' stable ids."""
        return await self._evict_overflow(owner, await self._settled(owner, entries, reply))

    async def _settled(self, owner: str, entries: Sequence[ArchiveEntry], reply: Sequence[Any]) -> Sequence[Any]:
        """The reply of an append that wrote: the terms each reply names are named from then on, and a call that
        wrote nothing is made again. Another worker appending to the same owner (its sessions on other
        partitions) can take a term to its key in between, so a few attempts may be needed."""
        for _ in range(APPEND_ATTEMPTS):
            status, count = int(reply[0]), int(reply[1])
            self._named(owner).update(_text(term) for term in reply[2 : 2 + count])
            if status >= 0:
                return reply
            call = self.append_call(owner, entries)
            reply = await self._append(keys=call.keys, args=call.args)
        raise RuntimeError(f"the archive of {owner} kept taking new terms to their keys; {len(entries)} not appended")

    async def _evict_overflow(self, owner: str, append_reply: Sequence[Any]) -> list[str]:
        """Evict the entries a written append reported over the cap, with their postings; returns their stable
        ids."""
        over = append_reply[2 + int(append_reply[1]) :]
        if not over:
            return []
        call = self.evict_call(owner, list(zip(over[::3], over[1::3])))
        await self._evict(keys=call.keys, args=call.args)
        return [_text(stable) for stable in over[2::3]]

    def _named(self, owner: str) -> set[str]:
        """The terms whose postings keys `owner`'s appends name, as the owner's latest replies told."""
        return self._keyed.touch(owner, set)

    async def evict(self, owner: str, short_ids: Sequence[bytes]) -> None:
        """Evict the entries of these short ids (those still there) with their postings."""
        for start in range(0, len(short_ids), EVICT_CALL_ENTRIES):
            chunk = short_ids[start : start + EVICT_CALL_ENTRIES]
            records = await self.redis.hmget(self.layout.owner(owner).entry_terms, chunk)
            call = self.evict_call(owner, list(zip(chunk, records)))
            await self._evict(keys=call.keys, args=call.args)

    async def evict_entries(self, owner: str, stable_ids: Collection[str]) -> int:
        """Evict the entries of these stable ids (entry_id; those still there) with their postings and vectors;
        how many there were. Reads the owner's whole archive, to find their short ids."""
        if not stable_ids:
            return 0
        stored = await self.redis.hgetall(self.layout.owner(owner).archive)
        short_ids = [
            short.encode() if isinstance(short, str) else short
            for short, raw in stored.items()
            if ArchiveEntry.from_json(raw).id in stable_ids
        ]
        await self.evict(owner, short_ids)
        return len(short_ids)

    def evict_call(self, owner: str, over: Sequence[tuple[Any, Any]]) -> Call:
        """The eviction of `over`, (short id, terms record) pairs as an append reports them."""
        keys = self.layout.owner(owner)
        postings: dict[str, int] = {}
        evicted = []
        for entry_id, record in over:
            # an entry without its record (never expected) still leaves the archive, or the cap would stick
            length, field, terms = record.decode().split("\t", 2) if record else ("0", "", "")
            slots = " ".join(
                str(postings.setdefault(keys.term_prefix + term, len(postings) + 1)) for term in terms.split()
            )
            evicted.append(dict(id=entry_id, field=field, length=length, terms=slots))
        return ARCHIVE_EVICT.call(
            **self._fixed(keys), postings=list(postings), terms=_terms(keys, postings), entries=evicted
        )

    async def embed(self, owner: str, embedded: Sequence[EmbeddedTurn]) -> int:
        """Store the vectors and semantic postings of `embedded` beside their archived entries (an entry no longer
        archived is skipped, one embedded by the same model already left alone); how many were stored."""
        keys = self.layout.owner(owner)
        stored = 0
        by_tag: dict[str, list[EmbeddedTurn]] = {}
        for turn in embedded:
            by_tag.setdefault(turn.tag, []).append(turn)
        for tag, turns in by_tag.items():
            for start in range(0, len(turns), EMBED_CALL_ENTRIES):
                items = [
                    dict(
                        field=turn.position_field,
                        id=turn.id,
                        vector=turn.vector,
                        terms=" ".join(f"{term}:{weight}" for term, weight in turn.terms),
                    )
                    for turn in turns[start : start + EMBED_CALL_ENTRIES]
                ]
                call = ARCHIVE_EMBED.call(
                    archive=keys.archive,
                    positions=keys.positions,
                    vectors=keys.vectors,
                    semantic=keys.semantic,
                    ttl=self._ttl,
                    tag=tag,
                    postings_max=SEMANTIC_POSTINGS,
                    entries=items,
                )
                stored += int(await self._embed(keys=call.keys, args=call.args))
        return stored

    async def entries(self, owner: str) -> list[ArchiveEntry]:
        """Every archived entry of `owner`, oldest first."""
        stored = await self.redis.hgetall(self.layout.owner(owner).archive)
        return [ArchiveEntry.from_json(stored[id_]) for id_ in sorted(stored, key=arrival_number)]

    async def stable_ids(self, owner: str, short_ids: Sequence[bytes] | None = None) -> list[str]:
        """The stable ids (entry_id) of these entries, or of all the owner's: what the memory journal is keyed by."""
        archive = self.layout.owner(owner).archive
        raws = (
            await self.redis.hvals(archive)
            if short_ids is None
            else await self.redis.hmget(archive, short_ids)
            if short_ids
            else []
        )
        return [ArchiveEntry.from_json(raw).id for raw in raws if raw is not None]

    @staticmethod
    def _fixed(keys: OwnerKeys) -> dict[str, str]:
        """The keys both archive scripts start with, by name."""
        return dict(
            archive=keys.archive,
            positions=keys.positions,
            entry_terms=keys.entry_terms,
            stats=keys.stats,
            dictionary=keys.dictionary,
            vectors=keys.vectors,
            semantic=keys.semantic,
        )


def absent(entries: Sequence[ArchiveEntry], stored: Sequence[bytes | str | None]) -> list[ArchiveEntry]:
    """The entries not archived, given what holds each one's position (its entry JSON, None for nothing): a position
    held by another turn (a reused session key) does not hold this one."""
    return [entry for entry, raw in zip(entries, stored) if raw is None or orjson.loads(raw).get("id") != entry.id]


def _terms(keys: OwnerKeys, postings: dict[str, int] | Sequence[str]) -> str:
    """The terms of postings keys, in their order, as the scripts' `terms` argument."""
    return " ".join(key[len(keys.term_prefix) :] for key in postings)


def _text(value: bytes | int | str) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
