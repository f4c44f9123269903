"""Every key turnstream derives, in one place: session keys (Kafka, Table, Redis), memory owners, Redis names.

**Parts.** Each id (tenant, session id, user id) is escaped on its own: `%`, `:`, `{` and `}` become
`%25`, `%3A`, `%7B`, `%7D`; nothing else changes. An escaped part holds no `:` and no brace, so joining
parts with `:` can be split again, and a part never cuts a Redis hash tag short. Ids without those four
characters (nearly all of them) keep the key they had before.

- session key S: `tenant:session` or `session` (escaped parts). The Kafka key of every turn, the Table
  key, the Redis identity of a context. `("co", "lide")` is `co:lide`, `(None, "co:lide")` is `co%3Alide`.
- memory owner O of a user: `tenant:user` or `user` (escaped parts): never starts with `:`.
- memory owner O of a session without a user: `:` + S, e.g. `:co:lide`, `:s-7`. The leading `:` (an
  empty first part, which no escaped id can produce) keeps anonymous sessions out of the users' space, so
  user `s-7` and an anonymous session `s-7` never share memories.

Why escaping rather than length prefixes or hashing: the Kafka key other-language producers compute
stays `tenant:session_id` for ordinary ids, and users' memories keep their Redis keys (the memory journal
holds only what was written since it exists), so an upgrade moves only ids holding `:` `%` `{` `}` and the
memories of sessions without a user (docs/decisions/0018-key-layout-escaping.md).

**Redis names.** P is settings.topic_prefix. Everything a prompt needs sits under the owner's hash tag
`{O}`, so one script reads it in one slot, on a Redis Cluster too:

- `P:ctx:{O}:S`        HASH  doc (ContextDoc JSON), version, last_turn_id
- `P:applied:{O}:S`    ZSET  turn_id -> version that applied it, newest `dedup_window` kept
- `P:injected:{O}:S`   LIST  per prompt of session S, newest first: the memory ids it injected
- `P:mem:{O}`          HASH  memory id -> memory JSON (without access_count and created_at)
- `P:memcreated:{O}`   HASH  memory id -> created_at (set once: a restatement keeps it)
- `P:memaccess:{O}`    HASH  memory id -> access_count (raised when a prompt injects it)
- `P:memkw:{O}:<kw>`   SET   ids of the memories with that keyword
- `P:profile:{O}`      HASH  text, version (compare-and-set on version)
- `P:arcent:{O}`       HASH  short entry id -> entry JSON (one applied turn). A short id is the entry's arrival
                             number in base 62 (`next` below), so it also says which entries are the oldest
- `P:arcat:{O}`        HASH  `S#<position>` -> short entry id: the turns around a hit, and whether a turn is in
- `P:arcrec:{O}`       HASH  short entry id -> `length<TAB>S#<position><TAB>term term …`: where a hit is, and what
                             eviction removes
- `P:arcmeta:{O}`      HASH  total_length, next, first: what BM25 needs besides the postings, and the id counter
- `P:arcdict:{O}`      HASH  term t -> `id:weight,…`, the packed postings of a rare term, or `<df> <size> <least>`,
                             the document frequency of a term whose postings have a key of their own (below), the
                             size of that key and the lowest weight it kept at its last cut; and a `hash table`
                             field that keeps the hash in Redis's hash table encoding
- `P:arcpost:{O}:<t>`  ZSET  short entry id -> integer BM25 weight of t in that entry: the highest-weighted postings
                             of a term past the packed limit (memory/archive_store.py)

Outside the owner's slot:

- `P:owner:{S}`        STRING the session's current owner, for readers that do not know its user
- `P:forgot:{S}`       STRING when session S was erased; set by the worker that dropped its Table row
- `P:updates:S`        pub/sub channel: the new version, published on every context write
- `P:journal:replayed:<layout>` STRING set when the memory journal has been replayed into this Redis in archive
                      layout ARCHIVE_LAYOUT: a Redis holding an older layout's archive replays it once more
- `P:journal:lock`     STRING the worker replaying the journal (expires)

**Kafka key contract.** A turn's record key must be its session key as UTF-8. `route()` decides, where
the worker first decodes a turn, whether it applies there or is forwarded under its session key to its
session's partition (agents/ingest.py sends it; session/reorder.py puts forwarded turns back in `seq`
order).
"""

from __future__ import annotations

from typing import Literal, NamedTuple

ARCHIVE_LAYOUT = 2
"""The archive's key layout (1: `P:arc:{O}` and per-term sorted sets of long ids, before short ids and the term
dictionary). A worker of a new layout replays the memory journal once to rebuild the archive in it."""
_ESCAPES = str.maketrans({"%": "%25", ":": "%3A", "{": "%7B", "}": "%7D"})
SESSION_OWNER_MARK = ":"
"""What starts the owner of a session without a user (no escaped id starts with it)."""


def escape(part: str) -> str:
    """One id as a key part: `%`, `:` and the hash-tag braces percent-escaped, everything else as it is."""
    return part.translate(_ESCAPES)


def partition_of(key: str, partitions: int) -> int:
    """The partition of a record keyed `key`: murmur2 of its UTF-8 bytes, as TurnProducer, the Java client and Faust
    place it (a session's turns and Table row; an owner's memory journal records)."""
    from aiokafka.partitioner import murmur2  # here, so the pure layers that name keys load no Kafka client

    return int(murmur2(key.encode()) & 0x7FFFFFFF) % partitions


def session_key(session_id: str, tenant: str | None = None) -> str:
    """The one identity of a session across Kafka, the Table and Redis: `tenant:session` (escaped parts)."""
    return f"{escape(tenant)}:{escape(session_id)}" if tenant else escape(session_id)


def user_owner(user_id: str, tenant: str | None = None) -> str:
    """The memory owner of a user: `tenant:user` (escaped parts), never starting with `:`."""
    return f"{escape(tenant)}:{escape(user_id)}" if tenant else escape(user_id)


def session_owner(session_key: str) -> str:
    """The memory owner of a session without a user, from its session key: `:S`, apart from every user."""
    return SESSION_OWNER_MARK + session_key


class Forward(NamedTuple):
    """A turn the worker does not apply where it found it: re-produced with `key`, the session key."""

    key: bytes
    reason: Literal["null_key", "wrong_key"]


def route(record_key: bytes | None, session_key: str) -> Forward | None:
    """None when a turn's Kafka key is its session key (apply it here), else where it must go.

    A turn keyed otherwise may sit on another partition than its session's Table row: it is forwarded
    to the turns topic under its session key, whatever partition it came from (one rule, and every
    mis-keyed turn shows in the counter).
    """
    key = session_key.encode()
    if record_key == key:
        return None
    return Forward(key, "null_key" if record_key is None else "wrong_key")


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
    stats: str
    dictionary: str
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
            f"{p}:arcent:{tag}", f"{p}:arcat:{tag}", f"{p}:arcrec:{tag}", f"{p}:arcmeta:{tag}", f"{p}:arcdict:{tag}",
            f"{p}:arcpost:{tag}:",
        )

    def updates_channel(self, session_key: str) -> str:
        """Channels are not keys: a cluster delivers them everywhere, so no tag is needed."""
        return f"{self.prefix}:updates:{session_key}"

    def owner_pointer(self, session_key: str) -> str:
        return f"{self.prefix}:owner:{_tag(session_key)}"

    def forgotten(self, session_key: str) -> str:
        return f"{self.prefix}:forgot:{_tag(session_key)}"

    def journal_replayed(self) -> str:
        """Set once the memory journal has been replayed into this Redis in the current archive layout: its absence
        means Redis lost its data, or holds the archive in an older layout (the replay rebuilds it)."""
        return f"{self.prefix}:journal:replayed:{ARCHIVE_LAYOUT}"

    def journal_lock(self) -> str:
        """Held by the one worker replaying the journal."""
        return f"{self.prefix}:journal:lock"


def _tag(name: str) -> str:
    return "{" + name + "}"
