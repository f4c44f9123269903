"""The long-term memory record: typed, keyed, searchable, owned by a user (or a session); kept in Redis and
in the memory journal."""

from __future__ import annotations

import hashlib
from typing import Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field

MemoryType = Literal["fact", "preference", "event", "summary"]


def memory_id(owner: str, key: str) -> str:
    """Stable id of the memory in `owner`'s slot `key`: restating or correcting a fact updates the same memory."""
    return hashlib.blake2b(f"{owner}\0{key}".encode(), digest_size=10).hexdigest()


class Memory(BaseModel):
    """One long-term memory."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True, title="Memory")

    id: str
    """memory_id(owner, key)."""
    owner: str
    """owner_key(): `tenant:user_id`, or `:` + the session key when the turn had no user."""
    type: MemoryType
    """fact, preference, event or summary."""
    text: str
    """The memory itself, a short standalone sentence (or the session's summary)."""
    key: str
    """The slot it fills: the key-info fact key, or `summary:<session key>`."""
    keywords: list[str]
    """Search keys (text.prose.keywords of the text and the slot name)."""
    importance: float = Field(ge=0.0, le=1.0)
    """How much it matters when recalled, from its type and cues."""
    access_count: int = Field(0, ge=0)
    """How many prompts it was injected into."""
    created_at: float
    """When the slot was first filled, epoch seconds."""
    updated_at: float
    """When its text was last written, epoch seconds."""
    source_session: str
    """Session key of the conversation it was last taken from."""

    def stored_json(self) -> bytes:
        """JSON as kept in Redis: access_count and created_at live in their own hashes (counted and set-once there)."""
        return orjson.dumps(self.model_dump(exclude={"access_count", "created_at"}))
