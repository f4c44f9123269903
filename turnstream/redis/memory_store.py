"""MemoryStore: long-term memories, profiles and the read path's one-round-trip recall (the prompt read composed
over it is prompt/read.py's).

The key layout is in redis/keys.py; everything of one owner shares the owner's hash tag, and every
script declares every key it touches, so they run unchanged on a Redis Cluster. The keyword sets an
upsert touches depend on what is stored: `remember` names those it can know (the memories it writes,
old and new), and the script, when it needs more (it evicts, restarts the expiry, or another writer
got in between), writes nothing and names them; the call is repeated with them.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Self

import orjson
from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.asyncio.cluster import ClusterPipeline

from turnstream.memory.profile import append_profile, keep_tail
from turnstream.redis.aio import execute, load_script, queue_script, run_pipeline
from turnstream.redis.connect import redis_client
from turnstream.redis.keys import KeyLayout, OwnerKeys
from turnstream.redis.reads import reply_text
from turnstream.redis.recall import recall_read
from turnstream.redis.scripts import REMEMBER, REPLACE_PROFILE, Call
from turnstream.schemas.memory import Memory
from turnstream.schemas.prompt_read import ArchiveQuery, RecallResult
from turnstream.settings import Settings

_CAS_ATTEMPTS = 8
EVICT_SHARE = 20
"""An owner past its memory cap loses a twentieth of the cap more than the excess: an eviction reads every
memory's access count and age, so the next writes, needing none, stay cheap."""
"""Writers of one owner race only on the profile and the keyword sets; each retry re-reads the profile and names
the sets the script asked for, so a few always suffice."""


@dataclass
class _Upsert:
    """One owner's memory write in the making: what it writes, and the base it is computed from."""

    owner: str
    memories: list[Memory]
    additions: list[str]
    asked: set[str] = field(default_factory=set)
    """Keyword sets an earlier attempt was told it touches."""
    profile: str = ""
    version: int = 0
    replaced: list[str] = field(default_factory=list)
    """Old texts of the memories about to change: they leave the profile."""
    keywords: set[str] = field(default_factory=set)
    """Keywords of those memories, old and new: the keyword sets the call touches."""
    created: dict[str, float] = field(default_factory=dict)
    """Each memory's created_at as Redis keeps it once written: set once, so a rewritten memory keeps the stored one,
    a new one that of its first write in the call (remember.lua)."""

    def read_base(self, replies: Iterator[Any]) -> None:
        """Take this upsert's replies from `replies` (the base reads, in the order they were queued)."""
        text, version = next(replies)
        stored, created = (next(replies), next(replies)) if self.memories else ([], [])
        old = [orjson.loads(raw) for raw in stored if raw is not None]
        new_texts = {m.text for m in self.memories}
        self.created = {}
        for memory, at in zip(self.memories, created):
            self.created.setdefault(memory.id, memory.created_at if at is None else float(at))
        self.profile, self.version = (text or b"").decode(), int(version or 0)
        self.replaced = [m["text"] for m in old if m["text"] not in new_texts]
        self.keywords = {k for memory in old for k in memory["keywords"]} | {
            k for m in self.memories for k in m.keywords
        }


@dataclass
class Remembered:
    """What `remember_many` wrote."""

    evicted: dict[str, list[str]] = field(default_factory=dict)
    """Per owner whose cap evicted any, the evicted memories' ids."""
    created: dict[str, dict[str, float]] = field(default_factory=dict)
    """Per owner, memory id -> created_at as Redis keeps it: the first write's, which the memory journal must carry
    too, or a rebuild from it dates a corrected memory by its latest correction."""


class MemoryStore:
    """Long-term memories and profiles in Redis: atomic upserts, one-round-trip recall."""

    def __init__(self, redis: Redis, settings: Settings) -> None:
        self.redis = redis
        self.settings = settings
        self.layout = KeyLayout(settings.topic_prefix)
        self._remember = load_script(redis, REMEMBER)
        self._replace_profile = load_script(redis, REPLACE_PROFILE)

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        if not settings.redis_url:
            raise ValueError("no Redis configured (TURNSTREAM_REDIS_URL)")
        return cls(redis_client(settings), settings)

    def keys(self, owner: str) -> OwnerKeys:
        return self.layout.owner(owner)

    async def remember(
        self, owner: str, memories: Iterable[Memory], profile_additions: Iterable[str] = ()
    ) -> list[str]:
        """Upsert `memories` (same id: new text, keywords, updated_at; created_at and access_count kept) and append
        `profile_additions` to the profile within `profile_write_chars`, atomically.

        The same script holds the owner to `memory_max_per_owner` memories (eviction order in remember.lua:
        fewest accesses, then oldest, never one this call wrote while another can go; past the cap, a twentieth
        of it more than the excess goes, EVICT_SHARE) and keeps every memory
        key of the owner on one expiry, `owner_ttl_seconds` after the owner's latest write.

        The profile merge runs here, not in Lua (Lua counts bytes, the window is in characters): the
        script applies it only if the profile is still at the version it was computed from, else
        this re-reads and retries. A corrected memory's old text leaves the profile. Returns the ids of the
        memories the cap evicted.
        """
        return (await self.remember_many({owner: (list(memories), list(profile_additions))})).evicted.get(owner, [])

    async def remember_many(self, writes: Mapping[str, tuple[Sequence[Memory], Sequence[str]]]) -> Remembered:
        """`remember` for several owners ({owner: (memories, profile additions)}): per attempt one round trip reads
        what every upsert is computed from and one pipeline writes them all; only the owners whose write must be
        tried again (another writer got in between, keyword sets to name) take part in the next attempt.
        Returns the ids of the memories the caps evicted and each written memory's created_at as kept."""
        pending = {
            owner: _Upsert(owner, list(memories), list(additions))
            for owner, (memories, additions) in writes.items()
            if memories or additions
        }
        done = Remembered()
        for _ in range(_CAS_ATTEMPTS):
            if not pending:
                return done
            async with self.redis.pipeline(transaction=False) as pipe:
                for upsert in pending.values():
                    self._queue_base(pipe, upsert)
                bases = iter(await pipe.execute())
            for upsert in pending.values():
                upsert.read_base(bases)
            replies = await self._run_remember([self._call(upsert) for upsert in pending.values()])
            for owner, reply in zip(list(pending), replies):
                if isinstance(reply, list) and reply[:1] == [1]:  # applied, with the ids it evicted
                    done.created[owner] = pending.pop(owner).created
                    if reply[1:]:
                        done.evicted[owner] = [memory_id.decode() for memory_id in reply[1:]]
                elif isinstance(reply, list):  # keyword sets it must be able to touch: named in the next call
                    pending[owner].asked.update(name.decode() for name in reply)
        upsert = next(iter(pending.values()))
        raise RuntimeError(
            f"profile or memories of {upsert.owner} kept changing; {len(upsert.memories)} memories not written"
        )

    async def _run_remember(self, calls: list[Call]) -> list[Any]:
        """The script's replies to `calls`, in one round trip."""

        async def queue(pipe: Pipeline | ClusterPipeline) -> None:
            for call in calls:
                await queue_script(self._remember, pipe, call)

        return await run_pipeline(self.redis, queue)

    def _queue_base(self, pipe: Pipeline | ClusterPipeline, upsert: _Upsert) -> None:
        """Queue the reads an upsert is computed from: the profile and its version, the memories about to change and
        their created_at."""
        keys = self.keys(upsert.owner)
        pipe.hmget(keys.profile, "text", "version")
        if upsert.memories:
            pipe.hmget(keys.memories, [m.id for m in upsert.memories])
            pipe.hmget(keys.created, [m.id for m in upsert.memories])

    def _call(self, upsert: _Upsert) -> Call:
        """The script's keys and arguments for `upsert`, on the base it read."""
        keys = self.keys(upsert.owner)
        merged = append_profile(upsert.profile, upsert.additions, self.settings.profile_write_chars, upsert.replaced)
        written = [
            dict(id=m.id, json=m.stored_json(), created_at=repr(m.created_at), keywords="\n".join(m.keywords))
            for m in upsert.memories
        ]
        keyword_sets = {keys.keyword_prefix + k for k in upsert.keywords} | upsert.asked
        return REMEMBER.call(
            memories=keys.memories,
            created=keys.created,
            profile=keys.profile,
            access=keys.access,
            keyword_sets=sorted(keyword_sets),
            keyword_prefix=keys.keyword_prefix,
            expected_version="" if merged == upsert.profile else str(upsert.version),
            profile_text=merged,
            ttl=self.settings.owner_ttl_seconds,
            cap=self.settings.memory_max_per_owner,
            evict_chunk=self.settings.memory_max_per_owner // EVICT_SHARE,
            memories_written=written,
        )

    async def list(self, owner: str) -> list[Memory]:
        """All memories of `owner`, oldest first."""
        keys = self.keys(owner)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hgetall(keys.memories)
            pipe.hgetall(keys.created)
            pipe.hgetall(keys.access)
            stored, created, access = await pipe.execute()
        memories = [
            Memory.model_validate(
                {**orjson.loads(raw), "created_at": float(created[id_]), "access_count": int(access.get(id_, 0))}
            )
            for id_, raw in stored.items()
        ]
        return sorted(memories, key=lambda m: (m.created_at, m.id))

    async def forget(self, owner: str, ids: Iterable[str]) -> int:
        """Delete these memories of `owner` (those still there) with their keyword-set members, in one transaction;
        how many there were. The profile stays: it is one merged text."""
        keys = self.keys(owner)
        wanted = sorted(ids)
        if not wanted:
            return 0
        stored = await self.redis.hmget(keys.memories, wanted)
        present = {id_: orjson.loads(raw) for id_, raw in zip(wanted, stored) if raw is not None}
        if not present:
            return 0
        async with self.redis.pipeline(transaction=True) as pipe:
            for id_, memory in present.items():
                for keyword in memory["keywords"]:
                    pipe.srem(keys.keyword_prefix + keyword, id_)
            for name in (keys.memories, keys.created, keys.access):
                pipe.hdel(name, *present)
            await pipe.execute()
        return len(present)

    async def profile(self, owner: str) -> tuple[str, int]:
        """The owner's profile text and version (("", 0) when none)."""
        text, version = await self.redis.hmget(self.keys(owner).profile, "text", "version")
        return reply_text(text or b""), int(version or 0)

    async def replace_profile(self, owner: str, text: str, expected_version: int) -> bool:
        """Set the profile (e.g. the async LLM merge) if still at `expected_version`; True when written.

        The write window applies here too: a runaway merge output must not outgrow the cheap path's bound.
        """
        keys = self.keys(owner)
        call = REPLACE_PROFILE.call(
            profile=keys.profile,
            memories=keys.memories,
            expected_version=expected_version,
            text=keep_tail(text.strip(), self.settings.profile_write_chars),
        )
        return bool(await self._replace_profile(keys=call.keys, args=call.args))

    async def recall(
        self, owner: str, session_key: str, keywords: Sequence[str], k: int, archive: ArchiveQuery, record: bool = True
    ) -> RecallResult:
        """The session's context doc, the owner's profile, the top-k memories for `keywords` and the archived
        turns for `archive`, in ONE round trip (one script, one slot).

        With `record`, the memories are counted as injected into the session and their access counts
        raised (with no keywords or k = 0, or in a session without a context, nothing is recorded: a read never
        creates a session's state); without it, this only looks.
        """
        return await execute(
            self.redis,
            recall_read(self.layout, self.settings, owner, session_key, keywords, k, archive, record, time.time()),
        )

    async def aclose(self) -> None:
        await self.redis.aclose()
