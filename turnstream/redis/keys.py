"""Every Redis name turnstream writes or reads, in one place (identities: schemas/ids.py).

P is settings.topic_prefix, O an owner and S a session key (each escaped: schemas/ids.py). Everything a prompt
needs sits under the owner's hash tag `{O}`, so one script reads it in one slot, on a Redis Cluster too. NAMES
lists every name with what it holds; docs/protocol.md's key table is rendered from it (redis/render.py), and
tests/unit/redis/test_keys.py holds every name KeyLayout makes to it.
"""

from __future__ import annotations

from typing import NamedTuple


class RedisName(NamedTuple):
    """One Redis name of the layout, as docs/protocol.md shows it."""

    pattern: str
    """`P:ctx:{O}:S`: P, O and S as above; `<…>` a part that varies (a keyword, a term)."""
    type: str
    """The Redis type: HASH, ZSET, LIST, SET, STRING, or a pub/sub channel."""
    holds: str
    """What it holds."""


NAMES: tuple[RedisName, ...] = (
    RedisName("P:ctx:{O}:S", "HASH", "doc (the context document's JSON), version, last_turn_id"),
    RedisName("P:applied:{O}:S", "ZSET", "turn_id -> the version that applied it; the newest `dedup_window` kept"),
    RedisName("P:injected:{O}:S", "LIST", "per prompt of session S, newest first: the memory ids it injected"),
    RedisName("P:mem:{O}", "HASH", "memory id -> memory JSON (without access_count and created_at)"),
    RedisName("P:memcreated:{O}", "HASH", "memory id -> created_at (set once: a restatement keeps it)"),
    RedisName("P:memaccess:{O}", "HASH", "memory id -> access_count (raised when a prompt injects it)"),
    RedisName("P:memkw:{O}:<keyword>", "SET", "ids of the memories with that keyword"),
    RedisName("P:profile:{O}", "HASH", "text, version (compare-and-set on version)"),
    RedisName(
        "P:arcent:{O}",
        "HASH",
        "short entry id -> entry JSON (one applied turn). A short id is the entry's arrival number in base 62 "
        "(`next` in `P:arcmeta`), so it also says which entries are the oldest",
    ),
    RedisName(
        "P:arcat:{O}", "HASH", "`S#<position>` -> short entry id: the turns around a hit, and whether a turn is in"
    ),
    RedisName(
        "P:arcrec:{O}",
        "HASH",
        "short entry id -> `length<TAB>S#<position><TAB>term term …`: where a hit is, and what eviction removes",
    ),
    RedisName(
        "P:arcmeta:{O}", "HASH", "total_length, next, first: what BM25 needs besides the postings, and the id counter"
    ),
    RedisName(
        "P:arcdict:{O}",
        "HASH",
        "term -> `id:weight,…`, the packed postings of a rare term, or `<df> <size> <least>`, the document frequency "
        "of a term whose postings have a key of their own, the size of that key and the lowest weight it kept at its "
        "last cut; and a `hash table` field that keeps the hash in Redis's hash table encoding",
    ),
    RedisName(
        "P:arcpost:{O}:<term>",
        "ZSET",
        "short entry id -> integer BM25 weight of the term in that entry: the highest-weighted postings of a term past "
        "the packed limit (redis/archive.py)",
    ),
    RedisName(
        "P:arcvec:{O}",
        "HASH",
        "short entry id -> `<model tag><TAB><term term …><TAB><int8 vector>`: the entry's sentence vector, tagged "
        "with the model that made it, and the semantic terms it is indexed under",
    ),
    RedisName(
        "P:arcsem:{O}",
        "HASH",
        "semantic term -> `id:weight,…`, its best postings by weight (cosine × 1000), highest first: the terms "
        "nearest each entry in the model's space",
    ),
    RedisName("P:owner:{S}", "STRING", "the session's current owner, for readers that do not know its user"),
    RedisName("P:forgot:{S}", "STRING", "when session S was erased; set by the worker that dropped its Table row"),
    RedisName("P:updates:S", "channel", "pub/sub: the new version, published on every context write"),
    RedisName(
        "P:journal:replayed:<layout>",
        "STRING",
        "set when the memory journal has been replayed into this Redis in archive layout `<layout>`: a Redis holding "
        "an older layout's archive replays it once more. Its value is the primary's replication id the replay "
        "started under: another id (a failover, a restart) replays the journal again",
    ),
    RedisName(
        "P:resync:contexts",
        "HASH",
        "turns partition -> the primary's replication id under which the worker holding the partition last found its "
        "contexts whole: another id makes it compare every context's version with its Table",
    ),
    RedisName("P:journal:lock", "STRING", "the worker replaying the journal (expires)"),
    RedisName("P:embedding:models", "STRING", "the model tags the whole archive was embedded for"),
    RedisName("P:embedding:lock", "STRING", "the worker re-embedding the archive for new models (expires)"),
    RedisName(
        "P:shadow:running",
        "STRING",
        "under a shadow's prefix, while `turnstream shadow run` runs: its process and host (expires); "
        "`turnstream shadow drop` refuses while it is there",
    ),
)
"""Every Redis name, in the order docs/protocol.md lists them: the owner's slot first, then the rest."""


ARCHIVE_LAYOUT = 2
"""The archive's key layout (1: `P:arc:{O}` and per-term sorted sets of long ids, before short ids and the term
dictionary). A worker of a new layout replays the memory journal once to rebuild the archive in it."""


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
    vectors: str
    semantic: str


class KeyLayout:
    """Key names under one topic prefix."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def session(self, owner: str, session_key: str) -> SessionKeys:
        p, tag = self.prefix, _tag(owner)
        return SessionKeys(
            f"{p}:ctx:{tag}:{session_key}",
            f"{p}:applied:{tag}:{session_key}",
            f"{p}:injected:{tag}:{session_key}",
            self.updates_channel(session_key),
        )

    def owner(self, owner: str) -> OwnerKeys:
        p, tag = self.prefix, _tag(owner)
        return OwnerKeys(
            f"{p}:mem:{tag}",
            f"{p}:memcreated:{tag}",
            f"{p}:memaccess:{tag}",
            f"{p}:profile:{tag}",
            f"{p}:memkw:{tag}:",
            f"{p}:arcent:{tag}",
            f"{p}:arcat:{tag}",
            f"{p}:arcrec:{tag}",
            f"{p}:arcmeta:{tag}",
            f"{p}:arcdict:{tag}",
            f"{p}:arcpost:{tag}:",
            f"{p}:arcvec:{tag}",
            f"{p}:arcsem:{tag}",
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

    def embedding_models(self) -> str:
        """The model tags the archive was last embedded for in full: other tags re-embed it (agents/reembed.py)."""
        return f"{self.prefix}:embedding:models"

    def embedding_lock(self) -> str:
        """Held by the one worker re-embedding the archive."""
        return f"{self.prefix}:embedding:lock"

    def contexts_verified(self) -> str:
        """Per turns partition, the replication id its contexts were last found whole under (agents/resync.py)."""
        return f"{self.prefix}:resync:contexts"

    def shadow_running(self) -> str:
        """Set while a shadow under this prefix runs (`turnstream shadow run`)."""
        return f"{self.prefix}:shadow:running"

    def journal_lock(self) -> str:
        """Held by the one worker replaying the journal."""
        return f"{self.prefix}:journal:lock"


def _tag(name: str) -> str:
    return "{" + name + "}"


def parse_context_key(prefix: str, key: str) -> tuple[str, str] | None:
    """(owner, session key) of a `P:ctx:{O}:S` key; None for anything else.

    A user id may hold any character, braces too, but a session key none (SAFE_ID): so the owner
    ends at the LAST `}:`.
    """
    head = f"{prefix}:ctx:{{"
    if not key.startswith(head) or "}:" not in key:
        return None
    owner, _, session = key[len(head) :].rpartition("}:")
    return (owner, session) if owner and session else None


def scan_pattern(prefix: str, query: str) -> str:
    """The SCAN MATCH pattern of context keys holding `query` anywhere in their owner or session, any case.

    Glob characters in the query are escaped; letters become `[aA]` classes, as Redis globs have no
    case-insensitive flag. The pure `matches` then keeps only rows whose id, user or tenant hold it.
    """

    def one(char: str) -> str:
        if char.isascii() and char.isalpha():  # a class is one byte: other letters match as typed
            return f"[{char.lower()}{char.upper()}]"
        return "\\" + char if char in "*?[]\\^" else char

    return f"{prefix}:ctx:{{*{''.join(map(one, query))}*" if query else f"{prefix}:ctx:{{*"
