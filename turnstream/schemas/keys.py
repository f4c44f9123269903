"""The Redis key layout, in one place: what the worker writes and what gateways read.

P is settings.topic_prefix, O a memory owner (memory.owner_key(): `tenant:user_id`, or the session
key when a session has no user), S a session key (`tenant:session_id`). Everything a prompt needs
sits under the owner's hash tag `{O}`, so one script reads it in one slot, on a Redis Cluster too:

- `P:ctx:{O}:S`        HASH  doc (ContextDoc JSON), version, last_turn_id
- `P:applied:{O}:S`    ZSET  turn_id -> version that applied it, newest `dedup_window` kept
- `P:injected:{O}:S`   LIST  per prompt of session S, newest first: the memory ids it injected
- `P:mem:{O}`          HASH  memory id -> memory JSON (without access_count and created_at)
- `P:memcreated:{O}`   HASH  memory id -> created_at (set once: a restatement keeps it)
- `P:memaccess:{O}`    HASH  memory id -> access_count (raised when a prompt injects it)
- `P:memkw:{O}:<kw>`   SET   ids of the memories with that keyword
- `P:profile:{O}`      HASH  text, version (compare-and-set on version)
- `P:arc:{O}`          HASH  archive entry id -> entry JSON (one applied turn)
- `P:arcpos:{O}`       HASH  `S#<position>` -> entry id, and entry id -> `S#<position>`: the turns around a hit
- `P:arcterms:{O}`     HASH  entry id -> `length<TAB>S#<position><TAB>term term …`: what eviction removes
- `P:arcage:{O}`       ZSET  entry id -> arrival number: the oldest go first when the archive is full
- `P:arcstat:{O}`      HASH  total_length, next: what BM25 needs besides the postings
- `P:arcterm:{O}:<t>`  ZSET  entry id -> BM25 term weight of term t in that entry (the postings)

Outside the owner's slot:

- `P:owner:{S}`        STRING the session's current owner, for readers that do not know its user
- `P:forgot:{S}`       STRING when session S was erased; set by the worker that dropped its Table row
- `P:updates:S`        pub/sub channel: the new version, published on every context write
"""

from __future__ import annotations

from typing import NamedTuple


class SessionKeys(NamedTuple):
    """Redis names of one session's context, under its owner's tag."""

    context: str
    applied: str
    injected: str
    updates: str


class OwnerKeys(NamedTuple):
    """Redis names of one owner's memories, profile and archive."""

    memories: str
    created: str
    access: str
    profile: str
    keyword_prefix: str
    archive: str
    positions: str
    entry_terms: str
    ages: str
    stats: str
    term_prefix: str


class KeyLayout:
    """Key names under one topic prefix."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def session(self, owner: str, session_key: str) -> SessionKeys:
        p, tag = self.prefix, _tag(owner)
        return SessionKeys(f"{p}:ctx:{tag}:{session_key}", f"{p}:applied:{tag}:{session_key}",
                           f"{p}:injected:{tag}:{session_key}", self.updates_channel(session_key))

    def owner(self, owner: str) -> OwnerKeys:
        p, tag = self.prefix, _tag(owner)
        return OwnerKeys(
            f"{p}:mem:{tag}", f"{p}:memcreated:{tag}", f"{p}:memaccess:{tag}", f"{p}:profile:{tag}", f"{p}:memkw:{tag}:",
            f"{p}:arc:{tag}", f"{p}:arcpos:{tag}", f"{p}:arcterms:{tag}", f"{p}:arcage:{tag}", f"{p}:arcstat:{tag}", f"{p}:arcterm:{tag}:",
        )

    def updates_channel(self, session_key: str) -> str:
        """Channels are not keys: a cluster delivers them everywhere, so no tag is needed."""
        return f"{self.prefix}:updates:{session_key}"

    def owner_pointer(self, session_key: str) -> str:
        return f"{self.prefix}:owner:{_tag(session_key)}"

    def forgotten(self, session_key: str) -> str:
        return f"{self.prefix}:forgot:{_tag(session_key)}"


def _tag(name: str) -> str:
    return "{" + name + "}"
