"""The identities every part of turnstream keys by: session keys (Kafka, Table, Redis) and memory owners.

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

**Kafka key contract.** A turn's record key must be its session key as UTF-8. `route()` decides, where
the worker first decodes a turn, whether it applies there or is forwarded under its session key to its
session's partition (agents/ingest.py sends it; session/reorder.py puts forwarded turns back in `seq`
order).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

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


@dataclass(frozen=True, slots=True)
class Forward:
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


def owner_key(user_id: str | None, tenant: str | None, session_id: str) -> str:
    """Who owns the memories of a turn: the user (`tenant:user_id`) when the turn names one, else its session
    (`:` + session key), each in its own namespace (schemas/ids.py).

    Memories of a turn without a user stay with its session, so two anonymous sessions never share them,
    and a user whose id equals an anonymous session's never sees that session's memories.
    """
    return user_owner(user_id, tenant) if user_id else session_owner(session_key(session_id, tenant))
