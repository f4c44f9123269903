"""An in-memory posting index scored the way recall.lua scores the archive, for offline recall measurements.

Weights are fixed when a document is written (BM25's length norm against the archive's average length at
that moment, as archive_append.lua does); a query reads only its `scored_terms` most telling terms (idf times
the query's own weight for the term), each term's `per_term` best postings, and adds idf × weight. The same
index holds the lexical postings (BM25) and the semantic ones (expansion terms weighted by their cosine),
so both sides are bounded alike.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from turnstream.redis.archive import BM25_B, BM25_K1


@dataclass
class PostingIndex:
    """term -> {document: weight}; documents are numbered by arrival."""

    postings: dict[str, dict[int, float]] = field(default_factory=dict)
    documents: int = 0
    _ranked: dict[str, list[int]] = field(default_factory=dict, repr=False)
    """Per term, its documents by weight, highest first (the order a postings key keeps), made when first read."""

    def add(self, weights: Mapping[str, float]) -> int:
        """Index one document under `weights`; returns its number."""
        number = self.documents
        self.documents += 1
        for term, weight in weights.items():
            self.postings.setdefault(term, {})[number] = weight
            self._ranked.pop(term, None)
        return number

    def best(self, term: str, count: int) -> list[int]:
        """The `count` highest-weighted documents of `term` (ties: the newest first, as the read script takes them)."""
        if term not in self._ranked:
            posting = self.postings[term]
            self._ranked[term] = sorted(posting, key=lambda d: (-posting[d], -d))
        return self._ranked[term][:count]

    def idf(self, term: str) -> float:
        df = len(self.postings.get(term, ()))
        return math.log(1 + (self.documents - df + 0.5) / (df + 0.5))

    def search(self, query: Mapping[str, float], hits: int, scored_terms: int = 8, per_term: int = 64) -> list[int]:
        """The best `hits` documents for `query` (term -> its weight in the query), best first, ties by number."""
        known = [(self.idf(term) * weight, term) for term, weight in query.items() if term in self.postings]
        scores: dict[int, float] = {}
        for scale, term in sorted(known, reverse=True)[:scored_terms]:
            posting = self.postings[term]
            for doc in self.best(term, per_term):
                scores[doc] = scores.get(doc, 0.0) + scale * posting[doc]
        return [doc for doc, _ in sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:hits]]


def bm25_index(documents: Sequence[Counter[str]], k1: float = BM25_K1, b: float = BM25_B) -> PostingIndex:
    """Documents' term counts indexed in order, each weighted against the average length at its arrival."""
    index, total = PostingIndex(), 0
    for counts in documents:
        length = sum(counts.values())
        total += length
        norm = k1 * (1 - b + b * length * (index.documents + 1) / max(total, 1))
        index.add({term: tf * (k1 + 1) / (tf + norm) for term, tf in counts.items()})
    return index


def weighted_index(documents: Sequence[Sequence[tuple[str, float]]]) -> PostingIndex:
    """Documents' weighted terms (expansion terms and their cosines) indexed in order, as they are."""
    index = PostingIndex()
    for terms in documents:
        index.add(dict(terms))
    return index
