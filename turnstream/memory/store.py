"""MemoryStore: the one place that knows how long-term memories and profiles are laid out in Redis.

Per owner O (owner_key(): `tenant:user_id`, or the session key), P = settings.topic_prefix, all
under the owner's hash tag:

- `P:mem:{O}`              HASH  id -> memory JSON (without access_count and created_at)
- `P:memcreated:{O}`       HASH  id -> created_at (set once: a restatement keeps it)
- `P:memaccess:{O}`        HASH  id -> access_count (HINCRBY when a prompt injects it)
- `P:memkw:{O}:<keyword>`  SET   ids of the memories with that keyword (the recall index)
- `P:profile:{O}`          HASH  text, version (CAS on version)
- `P:injected:{O}:<S>`     LIST  per prompt of session S, newest first: the injected ids, comma-joined;
                                 `recall_dedup_window` kept, expires with the session

Keyword sets are built inside the scripts from a prefix rather than declared in KEYS; they carry
the owner's tag, so they live in the owner's slot. Redis Cluster caveat: the recall script also
reads the session's context (tag `{S}`), which is another slot unless the owner is the session
itself; on a cluster, route owners and sessions to one node or split the read in two.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from importlib.resources import files
from typing import Iterable, NamedTuple

import orjson
from redis.asyncio import Redis

from turnstream.memory.model import Memory, MemoryType
from turnstream.memory.profile import append_profile, keep_tail
from turnstream.connections import redis_client
from turnstream.settings import Settings

_LUA = files("turnstream.memory").joinpath("lua")
_CAS_ATTEMPTS = 8
"""Writers of one owner race only on the profile; each retry re-reads it, so a few always suffice."""


class OwnerKeys(NamedTuple):
    """Redis names of one owner's memories."""

    memories: str
    created: str
    access: str
    profile: str
    keyword_prefix: str


@dataclass(frozen=True, slots=True)
class Recalled:
    """A memory the recall script picked, with the score it was picked by."""

    id: str
    type: MemoryType
    text: str
    score: float
    access_count: int


@dataclass(frozen=True, slots=True)
class RecallResult:
    """Everything the read path needs, as read in one round trip."""

    doc: bytes | None
    profile: str
    recalled: list[Recalled]
    """Best first."""


class MemoryStore:
    """Long-term memories and profiles in Redis: atomic upserts, one-round-trip recall."""

    def __init__(self, redis: Redis, settings: Settings) -> None:
        self.redis = redis
        self.settings = settings
        self._prefix = settings.topic_prefix
        self._remember = redis.register_script(_LUA.joinpath("remember.lua").read_text())
        self._replace_profile = redis.register_script(_LUA.joinpath("replace_profile.lua").read_text())
        self._recall = redis.register_script(_LUA.joinpath("recall.lua").read_text())

    @classmethod
    def from_settings(cls, settings: Settings) -> MemoryStore:
        if not settings.redis_url:
            raise ValueError("no Redis configured (TURNSTREAM_REDIS_URL)")
        return cls(redis_client(settings), settings)

    def keys(self, owner: str) -> OwnerKeys:
        tag = "{" + owner + "}"
        p = self._prefix
        return OwnerKeys(f"{p}:mem:{tag}", f"{p}:memcreated:{tag}", f"{p}:memaccess:{tag}", f"{p}:profile:{tag}", f"{p}:memkw:{tag}:")

    def injected_key(self, owner: str, session_key: str) -> str:
        return f"{self._prefix}:injected:{{{owner}}}:{session_key}"

    async def remember(self, owner: str, memories: Iterable[Memory], profile_additions: Iterable[str] = ()) -> None:
        """Upsert `memories` (same id: new text, keywords, updated_at; created_at and access_count kept) and append
        `profile_additions` to the profile within `profile_write_chars`, atomically.

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
        for _ in range(_CAS_ATTEMPTS):
            profile, version, replaced = await self._write_base(keys, memories)
            merged = append_profile(profile, additions, self.settings.profile_write_chars, replaced)
            expected = "" if merged == profile else str(version)
            args = [keys.keyword_prefix, expected, merged, *packed]
            if await self._remember(keys=[keys.memories, keys.created, keys.profile], args=args):
                return
        raise RuntimeError(f"profile of {owner} kept changing; {len(memories)} memories not written")

    async def _write_base(self, keys: OwnerKeys, memories: list[Memory]) -> tuple[str, int, list[str]]:
        """(profile, version, old texts of the memories about to change) in one round trip."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hmget(keys.profile, "text", "version")
            if memories:
                pipe.hmget(keys.memories, [m.id for m in memories])
            (text, version), *olds = await pipe.execute()
        new_texts = {m.text for m in memories}
        old_texts = [orjson.loads(raw)["text"] for raw in (olds[0] if olds else []) if raw is not None]
        return (text or b"").decode(), int(version or 0), [t for t in old_texts if t not in new_texts]

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
        args = [expected_version, keep_tail(text.strip(), self.settings.profile_write_chars)]
        return bool(await self._replace_profile(keys=[self.keys(owner).profile], args=args))

    async def recall(self, owner: str, session_key: str, context_key: str, query: Iterable[str], k: int) -> RecallResult:
        """The session's context doc, the owner's profile and the top-k memories for the `query` keywords, in ONE round trip.

        Recalled memories are recorded as injected into the session and their access counts raised;
        with no keywords or k = 0 nothing is recorded.
        """
        keys = self.keys(owner)
        settings = self.settings
        args = [keys.keyword_prefix, k, settings.recall_dedup_window, settings.session_ttl_seconds, time.time(), *query]
        reply = await self._recall(
            keys=[context_key, keys.profile, keys.memories, keys.access, self.injected_key(owner, session_key)], args=args
        )
        doc, profile, _version, *rest = reply
        recalled = []
        for raw, access, score in zip(rest[0::3], rest[1::3], rest[2::3]):
            memory = orjson.loads(raw)
            recalled.append(Recalled(memory["id"], memory["type"], memory["text"], float(score), int(access)))
        return RecallResult(doc, (profile or b"").decode(), recalled)

    async def aclose(self) -> None:
        await self.redis.aclose()
