"""What the one read of a prompt asks Redis for and what it gets back, as plain data.

They lie beneath both sides of the read: the pure composition (prompt/read.py) asks with a RecallAsk and is
given a RecallResult; the read plan (redis/recall.py) turns the ask into the recall script's call and decodes its
reply into the result. Neither side imports the other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from turnstream.schemas.archive import ArchiveEntry
from turnstream.schemas.memory import MemoryType


@dataclass(frozen=True, slots=True)
class Recalled:
    """A memory the recall script picked, with the score it was picked by."""

    id: str
    type: MemoryType
    text: str
    score: float
    access_count: int


@dataclass(frozen=True, slots=True)
class PoolEntry:
    """A candidate of the block's semantic share: an archived turn the lexical or the semantic index ranks high."""

    entry: ArchiveEntry
    lexical: float
    """Its BM25 score for the query (0 when only the semantic index found it)."""
    semantic: float
    """Its semantic terms' summed weights for the query (0 when only BM25 found it)."""
    vector: bytes | None
    """Its int8 vector of the reader's model, when the archive has one (embeddings/codec.py)."""


@dataclass(frozen=True, slots=True)
class RecallResult:
    """Everything the read path needs, as read in one round trip."""

    doc: bytes | None
    profile: str
    recalled: list[Recalled]
    """Best first."""
    archived: list[tuple[ArchiveEntry, float]]
    """Archived turns matching the query: hits best first, each followed by its neighbours (score 0)."""
    pool: list[PoolEntry] = field(default_factory=list)
    """The semantic share's candidates (empty when the archive has no semantic index or the read asks none)."""


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
    pool: int = 0
    """Candidates of the semantic share taken from each side (BM25, the semantic terms); 0 asks none."""
    semantic_terms: Sequence[str] = ()
    """The query's semantic terms: its own terms, and with a model its nearest vocabulary terms."""
    vector_tag: str = ""
    """The reader's model tag: the pool comes with that model's vectors (empty: none)."""


@dataclass(frozen=True, slots=True)
class RecallAsk:
    """What one prompt read asks of the recall script: the owner and the session are the caller's (the plan's)."""

    keywords: Sequence[str]
    """The memories' keywords to look up (none for small talk)."""
    k: int
    """Typed memories to return at most."""
    archive: ArchiveQuery
    record: bool
    """Count the memories given against the session's dedup window (a search and a look do not)."""
