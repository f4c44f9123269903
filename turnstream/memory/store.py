"""MemoryStore: long-term memories, profiles and the read path's one-round-trip recall.

The key layout is in schemas/keys.py; everything of one owner shares the owner's hash tag, and every
script declares every key it touches, so they run unchanged on a Redis Cluster. The keyword sets an
upsert touches depend on what is stored: `remember` names those it can know (the memories it writes,
old and new), and the script, when it needs more (it evicts, restarts the expiry, or another writer
got in between), writes nothing and names them; the call is repeated with them.
"""

from __future__ import annotations

import time
from typing import Iterable, Sequence

import orjson
from redis.asyncio import Redis

from turnstream.connections import redis_client
from turnstream.memory.model import Memory
from turnstream.memory.profile import append_profile, keep_tail
from turnstream.memory.reads import ArchiveQuery, RecallResult, decode_recall, recall_request
from turnstream.memory.scripts import load_script
from turnstream.schemas.keys import KeyLayout, OwnerKeys
from turnstream.settings import Settings

_CAS_ATTEMPTS = 8
"""Writers of one owner race only on the profile and the keyword sets; each retry re-reads the profile and names
the sets the script asked for, so a few always suffice."""


class MemoryStore:
    """Long-term memories and profiles in Redis: atomic upserts, one-round-trip recall."""

    def __init__(self, redis: Redis, settings: Settings) -> None:
        self.redis = redis
        self.settings = settings
        self.layout = KeyLayout(settings.topic_prefix)
        self._remember = load_script(redis, "remember.lua")
        self._replace_profile = load_script(redis, "replace_profile.lua")
        self._recall = load_script(redis, "recall.lua")

    @classmethod
    def from_settings(cls, settings: Settings) -> MemoryStore:
        if not settings.redis_url:
            raise ValueError("no Redis configured (TURNSTREAM_REDIS_URL)")
        return cls(redis_client(settings), settings)

    def keys(self, owner: str) -> OwnerKeys:
        return self.layout.owner(owner)

    async def remember(self, owner: str, memories: Iterable[Memory], profile_additions: Iterable[str] = ()) -> None:
        """Upsert `memories` (same id: new text, keywords, updated_at; created_at and access_count kept) and append
        `profile_additions` to the profile within `profile_write_chars`, atomically.

        The same script holds the owner to `memory_max_per_owner` memories (eviction order in remember.lua:
        fewest accesses, then oldest, never one this call wrote while another can go) and keeps every memory
        key of the owner on one expiry, `owner_ttl_seconds` after the owner's latest write.

        The profile merge runs here, not in Lua (Lua counts bytes, the window is in characters): the
        script applies it only if the profile is still at the version it was computed from, else
        this re-reads and retries. A corrected memory's old text leaves the profile.
        """
        memories, additions = list(memories), list(profile_additions)
        if not memories and not additions:
            return
        keys = self.keys(owner)
        packed = [
            arg
            for m in memories
            for arg in (m.id, m.stored_json(), repr(m.created_at), "\n".join(m.keywords))
        ]
        asked: set[str] = set()
        for _ in range(_CAS_ATTEMPTS):
            profile, version, replaced, keyword_sets = await self._write_base(keys, memories)
            merged = append_profile(profile, additions, self.settings.profile_write_chars, replaced)
            expected = "" if merged == profile else str(version)
            args = [keys.keyword_prefix, expected, merged, self.settings.owner_ttl_seconds,
                    self.settings.memory_max_per_owner, *packed]
            names = [keys.memories, keys.created, keys.profile, keys.access, *sorted(keyword_sets | asked)]
            reply = await self._remember(keys=names, args=args)
            if reply == 1:
                return
            if isinstance(reply, list):  # keyword sets it must be able to touch: named in the next call
                asked.update(name.decode() for name in reply)
        raise RuntimeError(f"profile or memories of {owner} kept changing; {len(memories)} memories not written")

    async def _write_base(self, keys: OwnerKeys, memories: list[Memory]) -> tuple[str, int, list[str], set[str]]:
        """(profile, version, old texts of the memories about to change, their keyword sets old and new) in one
        round trip."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hmget(keys.profile, "text", "version")
            if memories:
                pipe.hmget(keys.memories, [m.id for m in memories])
            (text, version), *olds = await pipe.execute()
        old = [orjson.loads(raw) for raw in (olds[0] if olds else []) if raw is not None]
        new_texts = {m.text for m in memories}
        keywords = {k for memory in old for k in memory["keywords"]} | {k for m in memories for k in m.keywords}
        return ((text or b"").decode(), int(version or 0), [m["text"] for m in old if m["text"] not in new_texts],
                {keys.keyword_prefix + k for k in keywords})

    async def list(self, owner: str) -> list[Memory]:
        """All memories of `owner`, oldest first."""
        keys = self.keys(owner)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hgetall(keys.memories).hgetall(keys.created).hgetall(keys.access)
            stored, created, access = await pipe.execute()
        memories = [
            Memory.model_validate({**orjson.loads(raw), "created_at": float(created[id_]), "access_count": int(access.get(id_, 0))})
            for id_, raw in stored.items()
        ]
        return sorted(memories, key=lambda m: (m.created_at, m.id))

    async def profile(self, owner: str) -> tuple[str, int]:
        """The owner's profile text and version (("", 0) when none)."""
        text, version = await self.redis.hmget(self.keys(owner).profile, "text", "version")
        return (text or b"").decode(), int(version or 0)

    async def replace_profile(self, owner: str, text: str, expected_version: int) -> bool:
        """Set the profile (e.g. the async LLM merge) if still at `expected_version`; True when written.

        The write window applies here too: a runaway merge output must not outgrow the cheap path's bound.
        """
        keys = self.keys(owner)
        args = [expected_version, keep_tail(text.strip(), self.settings.profile_write_chars)]
        return bool(await self._replace_profile(keys=[keys.profile, keys.memories], args=args))

    async def recall(
        self, owner: str, session_key: str, keywords: Sequence[str], k: int, archive: ArchiveQuery, record: bool = True
    ) -> RecallResult:
        """The session's context doc, the owner's profile, the top-k memories for `keywords` and the archived
        turns for `archive`, in ONE round trip (one script, one slot).

        With `record`, the memories are counted as injected into the session and their access counts
        raised (with no keywords or k = 0 nothing is recorded); without it, this only looks.
        """
        keys, args = recall_request(self.layout, self.settings, owner, session_key, keywords, k, archive, record, time.time())
        return decode_recall(await self._recall(keys=keys, args=args))

    async def aclose(self) -> None:
        await self.redis.aclose()
