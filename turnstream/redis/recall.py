"""The read script (lua/recall.lua) without I/O: the keys and arguments of one call, and its reply decoded.

This is the prompt read's plan: the composition (prompt/read.py) asks with a RecallAsk, `recall_plan` turns the
ask into `recall_read`'s call for one owner and session, and an executor (redis/aio.py, redis/blocking.py) sends
it, so the asyncio and the blocking clients send the same call byte for byte.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import orjson

from turnstream.redis.archive import WEIGHT_SCALE
from turnstream.redis.keys import KeyLayout
from turnstream.redis.reads import Read, script_read
from turnstream.redis.scripts import RECALL, Call
from turnstream.schemas.archive import ArchiveEntry
from turnstream.schemas.prompt_read import ArchiveQuery, PoolEntry, RecallAsk, Recalled, RecallResult
from turnstream.settings import Settings


def recall_request(
    layout: KeyLayout,
    settings: Settings,
    owner: str,
    session_key: str,
    keywords: Sequence[str],
    k: int,
    archive: ArchiveQuery,
    record: bool,
    now: float,
) -> Call:
    """KEYS and ARGV of recall.lua for one read (redis/scripts.py says what each one is)."""
    keys = layout.owner(owner)
    session = layout.session(owner, session_key)
    return RECALL.call(
        context=session.context,
        profile=keys.profile,
        memories=keys.memories,
        access=keys.access,
        injected=session.injected,
        archive=keys.archive,
        positions=keys.positions,
        entry_terms=keys.entry_terms,
        dictionary=keys.dictionary,
        vectors=keys.vectors,
        semantic=keys.semantic,
        keyword_sets=[keys.keyword_prefix + word for word in keywords],
        postings=[keys.term_prefix + term for term in archive.terms],
        terms=" ".join(archive.terms),
        weight_scale=WEIGHT_SCALE,
        k=k,
        window=settings.recall_dedup_window,
        ttl=settings.session_ttl_seconds,
        now=now,
        record=int(record),
        hits=archive.hits,
        postings_per_term=archive.postings_per_term,
        scored_terms=archive.scored_terms,
        neighbours=archive.neighbours,
        pool=archive.pool,
        semantic_terms=" ".join(archive.semantic_terms),
        vector_tag=archive.vector_tag,
    )


def decode_recall(reply: Sequence[Any]) -> RecallResult:
    """recall.lua's reply: {doc, profile text, profile version, flat memory triples, archive JSON, pool JSON,
    pool vectors}."""
    doc, profile, _version, memories, archived, pooled, vectors = reply
    recalled = []
    for raw, access, score in zip(memories[0::3], memories[1::3], memories[2::3]):
        memory = orjson.loads(raw)
        recalled.append(Recalled(memory["id"], memory["type"], memory["text"], float(score), int(access)))
    entries = [(ArchiveEntry.from_dict(entry), float(score)) for score, entry in orjson.loads(archived)]
    # a pooled entry the archive part holds already comes as its place there
    pool = [
        PoolEntry(
            entries[entry][0] if isinstance(entry, int) else ArchiveEntry.from_dict(entry),
            float(lexical),
            float(semantic),
            vector or None,
        )
        for (lexical, semantic, entry), vector in zip(orjson.loads(pooled), list(vectors) + [None] * len(pooled))
    ]
    return RecallResult(doc, (profile or b"").decode(), recalled, entries, pool)


def recall_read(
    layout: KeyLayout,
    settings: Settings,
    owner: str,
    session_key: str,
    keywords: Sequence[str],
    k: int,
    archive: ArchiveQuery,
    record: bool,
    now: float,
) -> Read[RecallResult]:
    """The read path's one round trip: recall.lua for one prompt, its reply decoded."""
    return script_read(
        RECALL, recall_request(layout, settings, owner, session_key, keywords, k, archive, record, now), decode_recall
    )


def recall_plan(
    layout: KeyLayout, settings: Settings, owner: str, session_key: str
) -> Callable[[RecallAsk], Read[RecallResult]]:
    """The plan of a prompt read (prompt/read.py) of `owner`, in `session_key` (empty: a search, no session): each
    ask becomes recall_read's call, dated when it is made."""

    def plan(ask: RecallAsk) -> Read[RecallResult]:
        return recall_read(
            layout, settings, owner, session_key, ask.keywords, ask.k, ask.archive, ask.record, time.time()
        )

    return plan
