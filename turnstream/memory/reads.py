"""The read script (lua/recall.lua) without I/O: the keys and arguments of one call, and its reply decoded.

MemoryStore (asyncio) and the synchronous client send the same call through their own Redis client;
building the call and reading the reply here keeps the two byte-for-byte the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import orjson

from turnstream.memory.archive import ArchiveEntry
from turnstream.memory.archive_store import WEIGHT_SCALE
from turnstream.memory.model import MemoryType
from turnstream.schemas.keys import KeyLayout
from turnstream.schemas.scripts import RECALL, Call
from turnstream.settings import Settings


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
    archived: list[tuple[ArchiveEntry, float]]
    """Archived turns matching the query: hits best first, each followed by its neighbours (score 0)."""


@dataclass(frozen=True, slots=True)
class ArchiveQuery:
    """Bounds of the archive part of one read: Redis runs the script alone, so its work is capped."""

    terms: Sequence[str]
    """Distinct query terms (text.terms.query_terms); each costs one ZCARD."""
    hits: int = 20
    """Best-scoring entries returned, each with its neighbours (what a 3,000-token block holds, with room to spare)."""
    postings_per_term: int = 64
    """Highest-weighted postings read per scored term."""
    scored_terms: int = 8
    """Rarest query terms scored; the others are too common to tell turns apart."""
    neighbours: int = 2
    """Turns of the same session returned on each side of a hit, so a question keeps its answer and an answer
    the exchange it belongs to: on LoCoMo two a side find more evidence than one (80 % to 84 % of questions
    at 4,000 tokens) or more hits (32 hits with one a side fill the same room)."""


def recall_request(
    layout: KeyLayout, settings: Settings, owner: str, session_key: str, keywords: Sequence[str], k: int,
    archive: ArchiveQuery, record: bool, now: float,
) -> Call:
    """KEYS and ARGV of recall.lua for one read (schemas/scripts.py says what each one is)."""
    keys = layout.owner(owner)
    session = layout.session(owner, session_key)
    return RECALL.call(
        context=session.context, profile=keys.profile, memories=keys.memories, access=keys.access, injected=session.injected,
        archive=keys.archive, positions=keys.positions, entry_terms=keys.entry_terms, dictionary=keys.dictionary,
        keyword_sets=[keys.keyword_prefix + word for word in keywords], postings=[keys.term_prefix + term for term in archive.terms],
        terms=" ".join(archive.terms), weight_scale=WEIGHT_SCALE,
        k=k, window=settings.recall_dedup_window, ttl=settings.session_ttl_seconds, now=now, record=int(record),
        hits=archive.hits, postings_per_term=archive.postings_per_term, scored_terms=archive.scored_terms,
        neighbours=archive.neighbours,
    )


def decode_recall(reply: Sequence[Any]) -> RecallResult:
    """recall.lua's reply: {doc, profile text, profile version, flat memory triples, archive JSON}."""
    doc, profile, _version, memories, archived = reply
    recalled = []
    for raw, access, score in zip(memories[0::3], memories[1::3], memories[2::3]):
        memory = orjson.loads(raw)
        recalled.append(Recalled(memory["id"], memory["type"], memory["text"], float(score), int(access)))
    entries = [(ArchiveEntry.from_dict(entry), float(score)) for score, entry in orjson.loads(archived)]
    return RecallResult(doc, (profile or b"").decode(), recalled, entries)
