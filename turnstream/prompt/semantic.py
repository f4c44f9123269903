"""The semantic share of a prompt's memory block (pure): what a read asks of the semantic index, and how the
candidates it returns are ranked.

A read asks a pool (the best POOL of each side, BM25 and the semantic terms' postings) when the deployment keeps a
semantic index. A gateway with the embedding model ranks the pool by its stored vectors against the query's
(client/semantic.py); a gateway without it ranks the pool by its semantic terms' weights (TermsOnly): the words
of the question looked up among the terms nearest each archived turn. The best SEMANTIC_HITS take their fixed
place in the block (recalled.choose_turns). Measured on LoCoMo dev: docs/decisions/0034.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from turnstream.schemas.archive import ArchiveEntry
from turnstream.schemas.prompt_read import PoolEntry

POOL = 30
"""Candidates a read takes from each side for the semantic share (20 and 50 did no better)."""
SEMANTIC_HITS = 20
"""The semantic share's hits offered to the block, best first."""
Ranked = list[tuple[ArchiveEntry, float]]


@dataclass(frozen=True, slots=True)
class SemanticAsk:
    """What one read asks of the semantic index."""

    terms: tuple[str, ...]
    """Its semantic terms: the question's own index terms, and with a model its nearest vocabulary terms."""
    tag: str = ""
    """The reader's model tag: the pool comes with that model's vectors (empty: no model)."""
    vector: Any = None
    """What `rank` scores the pool against: the model's question vector, opaque here (it may still be on its way
    while the round trip is)."""


class Semantic(Protocol):
    """A gateway's side of the semantic share."""

    def ask(self, user_text: str, terms: Sequence[str]) -> SemanticAsk:
        """What the read asks of the semantic index, before the round trip."""
        ...

    def rank(self, ask: SemanticAsk, pool: Sequence[PoolEntry]) -> tuple[Ranked, float | None]:
        """The pool's best, best first, and the ms spent embedding the question (None without a model)."""
        ...


def by_terms(pool: Sequence[PoolEntry]) -> Ranked:
    """The pool's turns the semantic terms found, by their summed weights, best first."""
    found = sorted((p for p in pool if p.semantic > 0), key=lambda p: (-p.semantic, p.entry.ts, p.entry.id))
    return [(p.entry, p.semantic) for p in found[:SEMANTIC_HITS]]


class TermsOnly:
    """The semantic share of a gateway without the model: the question's own terms among the turns' semantic
    terms; no vector, no network, no model."""

    def ask(self, user_text: str, terms: Sequence[str]) -> SemanticAsk:
        return SemanticAsk(tuple(terms))

    def rank(self, ask: SemanticAsk, pool: Sequence[PoolEntry]) -> tuple[Ranked, float | None]:
        return by_terms(pool), None
