"""The candidate mechanisms the semantic-candidates measure compares, over one corpus under one model (pure).

Each owner's archive gets the product's lexical index (BM25 over the archive's own terms, recall.lua's
bounds), a semantic index of expansion terms (each turn under its nearest vocabulary terms, weighted by the
cosine, scored separately with the same bounds) and its vectors as stored (int8). A mechanism maps a
question to a set of candidate turns; `score` counts the questions whose evidence is among them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from turnstream.embeddings.base import Embedder
from turnstream.embeddings.codec import decode_int8, encode_int8
from turnstream.embeddings.expansion import WeightedTerms, nearest_terms
from turnstream.embeddings.vocabulary import Vocabulary, build_vocabulary, term_words
from turnstream.prompt.query import MAX_QUERY_TERMS
from turnstream.prompt.read import ArchiveQuery
from turnstream.text.terms import cjk_bigrams, query_terms, spaced_words
from turnstream_tools.benchmarks.postings import PostingIndex, bm25_index, weighted_index
from turnstream_tools.benchmarks.semantic_corpus import Corpus, Embedded

VocabularyKind = Literal["model", "shared", "archive"]
VOCABULARIES: tuple[VocabularyKind, ...] = ("model", "shared", "archive")
READ = ArchiveQuery(terms=())
"""The read script's bounds, the product's own: hits, postings read per term, terms scored."""


@dataclass(frozen=True)
class Knobs:
    """What the mechanisms are tuned by (on LoCoMo dev only)."""

    hits: int = READ.hits
    """Candidates each side gives; the lexical side's are the read script's hits."""
    terms_per_turn: int = 16
    """m: expansion terms a turn is indexed under."""
    query_terms: int = 8
    """Nearest vocabulary terms a gateway with the model adds to the query's own words."""
    vocabulary: VocabularyKind = "shared"
    """Where expansion terms come from: "model" the model tokenizer's whole words; "shared" those of them the
    owner has used so far (their vectors from the model folder's cache: nothing to embed at run time);
    "archive" every word the owner has used so far, each embedded when first seen."""
    pool: int = 30
    """Candidates each of BM25 and the expansion side hands to the stored-vector rescoring."""
    lexical_first: int | None = 5
    """How a block lays out the shares: this many lexical snippets first, then the semantic hits, then the other
    lexical ones; None takes one of each in turn."""
    semantic_neighbours: int = 0
    """Neighbours a side of a semantic hit in a block (a lexical hit keeps the read script's)."""


@dataclass
class Owner:
    """One owner's archive: the turns' numbers in the corpus, both indexes, the vectors as stored."""

    turns: list[int]
    lexical: PostingIndex
    semantic: PostingIndex
    vectors: NDArray[np.float32]
    """Decoded from their int8 form: what a gateway would rescore with."""
    expansions: list[WeightedTerms]
    vocabulary: Vocabulary
    """What the owner's expansions (and a gateway's query expansion) draw on, as it is once all is written."""


@dataclass
class Setup:
    """A corpus under one model and one set of knobs, every owner indexed; results memoised per question."""

    data: Corpus
    embedded: Embedded
    knobs: Knobs
    owners: list[Owner]
    memo: dict[tuple[str, int], list[Hit]] = field(default_factory=dict)


Hit = tuple[int, bool]
"""A candidate: its turn's number in the corpus, and whether the lexical share found it (else a semantic one)."""
Mechanism = Callable[[Setup, int], list[Hit]]
"""Question number -> candidates, best first, each turn once."""


def owner_vocabulary(
    data: Corpus, turns: Sequence[int], model: Vocabulary, embedder: Embedder, kind: VocabularyKind
) -> tuple[Vocabulary, list[int]]:
    """The vocabulary an owner's expansions draw on, and per turn how much of it existed when the turn was
    written: the owner's words in the order of first use, so no turn is expanded to a word said only later."""
    if kind == "model":
        return model, [len(model.terms)] * len(turns)
    in_model = set(model.terms)
    pairs: dict[str, str] = {}
    known = []
    for n in turns:
        text = data.passages[n]
        for term, word in term_words(spaced_words(text) + cjk_bigrams(text)):
            if kind == "archive" or term in in_model:
                pairs.setdefault(term, word)
        known.append(len(pairs))
    if kind == "archive":
        return build_vocabulary(list(pairs.items()), embedder), known
    return model.subset(pairs), known


def causal_expansions(
    vectors: NDArray[np.float32], vocabulary: Vocabulary, known: Sequence[int], m: int
) -> list[WeightedTerms]:
    """Each turn's `m` nearest terms among the first `known[i]` of the vocabulary."""
    out: list[WeightedTerms] = []
    for vector, size in zip(vectors, known):
        part = Vocabulary(vocabulary.terms[:size], vocabulary.words[:size], vocabulary.vectors[:size])
        out += nearest_terms(vector[None, :], part, m)
    return out


def setup(data: Corpus, embedded: Embedded, knobs: Knobs, model: Vocabulary, embedder: Embedder) -> Setup:
    """Index every owner of `data`: BM25 on the archive's terms, expansion terms, int8 vectors."""
    owners = []
    for turns in data.owners:
        vocabulary, known = owner_vocabulary(data, turns, model, embedder, knobs.vocabulary)
        vectors = embedded.turns[turns]
        expansions = causal_expansions(vectors, vocabulary, known, knobs.terms_per_turn)
        stored = np.vstack([decode_int8(encode_int8(v), v.shape[0]) for v in vectors])
        lexical = bm25_index([data.counts[n] for n in turns])
        owners.append(Owner(list(turns), lexical, weighted_index(expansions), stored, expansions, vocabulary))
    return Setup(data, embedded, knobs, owners)


def _owner(s: Setup, n: int) -> Owner:
    return s.owners[s.data.questions[n][0]]


def _words(s: Setup, n: int) -> dict[str, float]:
    """The question's own terms, as the read path takes them."""
    return dict.fromkeys(query_terms(s.data.questions[n][1], MAX_QUERY_TERMS), 1.0)


def _memoised(key: str, run: Mechanism) -> Mechanism:
    def cached(s: Setup, n: int) -> list[Hit]:
        if (key, n) not in s.memo:
            s.memo[key, n] = run(s, n)
        return s.memo[key, n]

    return cached


def bm25(k: int) -> Mechanism:
    """The product's lexical hits: the best `k` of the owner's archive for the question's words."""

    def run(s: Setup, n: int) -> list[Hit]:
        owner = _owner(s, n)
        return [
            (owner.turns[d], True)
            for d in owner.lexical.search(_words(s, n), k, READ.scored_terms, READ.postings_per_term)
        ]

    return _memoised(f"bm25 {k}", run)


def dense(k: int, stored: bool = False) -> Mechanism:
    """The `k` turns nearest the question over the owner's whole archive (float32, or as stored in int8)."""

    def run(s: Setup, n: int) -> list[Hit]:
        owner = _owner(s, n)
        vectors = owner.vectors if stored else s.embedded.turns[owner.turns]
        return [(owner.turns[d], False) for d in np.argsort(-(vectors @ s.embedded.queries[n]), kind="stable")[:k]]

    return _memoised(f"dense {k} {stored}", run)


def expansion(k: int, with_model: bool) -> Mechanism:
    """The best `k` on the semantic postings for the question's words (and, with the model, its nearest terms)."""

    def run(s: Setup, n: int) -> list[Hit]:
        owner, query = _owner(s, n), _words(s, n)
        if with_model:
            for term, weight in nearest_terms(s.embedded.queries[n : n + 1], owner.vocabulary, s.knobs.query_terms)[0]:
                query[term] = max(query.get(term, 0.0), weight)
        return [
            (owner.turns[d], False) for d in owner.semantic.search(query, k, READ.scored_terms, READ.postings_per_term)
        ]

    return _memoised(f"expansion {k} {with_model}", run)


def merged(*lists: list[Hit]) -> list[Hit]:
    """The lists one after another, each turn once, where (and as) it first comes."""
    out: dict[int, bool] = {}
    for hits in lists:
        for turn, lexical in hits:
            out.setdefault(turn, lexical)
    return list(out.items())


def interleave(*lists: list[Hit]) -> list[Hit]:
    """The lists' first hits, then their second ones, ...; each turn once."""
    return merged(
        *([hits[rank]] for rank in range(max(map(len, lists), default=0)) for hits in lists if rank < len(hits))
    )


def shares(lexical: Mechanism, semantic: Mechanism) -> Mechanism:
    """Fixed shares of both, laid out as the knobs say: the lexical head first, then the semantic hits, then the
    rest (or one of each in turn), so a bounded block gives each its part."""

    def run(s: Setup, n: int) -> list[Hit]:
        words, meaning, first = lexical(s, n), semantic(s, n), s.knobs.lexical_first
        return interleave(words, meaning) if first is None else merged(words[:first], meaning, words[first:])

    return run


def by_vector(pool: Mechanism, k: int) -> Mechanism:
    """The `k` of `pool` nearest the question by their stored vectors: what a gateway with the model can do
    with the candidates (and their vectors) one round trip returned."""

    def run(s: Setup, n: int) -> list[Hit]:
        pooled = sorted(turn for turn, _ in pool(s, n))
        scores = _owner(s, n).vectors[[s.data.rows[t] for t in pooled]] @ s.embedded.queries[n]
        return [(pooled[i], False) for i in np.argsort(-scores, kind="stable")[:k]]

    return run


def pool_of(*parts: Mechanism) -> Mechanism:
    """Every part's candidates, for `by_vector` to rank."""

    def run(s: Setup, n: int) -> list[Hit]:
        return merged(*(part(s, n) for part in parts))

    return run


def mechanisms(knobs: Knobs) -> list[tuple[str, Mechanism]]:
    """Every mechanism measured, labelled as the table prints it."""
    k, half, pool = knobs.hits, knobs.hits // 2, knobs.pool
    words, with_terms = pool_of(bm25(pool), expansion(pool, False)), pool_of(bm25(pool), expansion(pool, True))
    return [
        (f"a  BM25 top {k}", bm25(k)),
        (f"a' BM25 top {2 * k}", bm25(2 * k)),
        (f"b  dense top {k} (every vector scored)", dense(k)),
        (f"b' dense top {k}, int8 vectors", dense(k, stored=True)),
        (f"c  BM25 {k} + dense {k} (every vector scored)", shares(bm25(k), dense(k))),
        (f"c' BM25 {half} + dense {half}", shares(bm25(half), dense(half))),
        (f"d1 BM25 {k} + expansion {k}, query words", shares(bm25(k), expansion(k, False))),
        (
            f"d2 BM25 {k} + expansion {k}, words + {knobs.query_terms} nearest terms",
            shares(bm25(k), expansion(k, True)),
        ),
        (f"e0 BM25 {k} + {k} of BM25 {pool} by vector", shares(bm25(k), by_vector(bm25(pool), k))),
        (f"e1 BM25 {k} + {k} of BM25 {pool} ∪ d1's {pool} by vector", shares(bm25(k), by_vector(words, k))),
        (f"e2 BM25 {k} + {k} of BM25 {pool} ∪ d2's {pool} by vector", shares(bm25(k), by_vector(with_terms, k))),
    ]


@dataclass(frozen=True)
class Score:
    """Percent of questions with all, and with any, evidence turn among the candidates; candidates per question."""

    all_found: float
    any_found: float
    candidates: float


Around = tuple[int, int]
"""Neighbours a side the read returns around a lexical hit, and around a semantic one."""


def snippet(s: Setup, n: int, hit: Hit, around: Around) -> list[int]:
    """A hit's turn and the turns on each side of it in its owner's archive, as the read script returns them."""
    turns, (turn, lexical) = _owner(s, n).turns, hit
    at, side = s.data.rows[turn], around[0] if lexical else around[1]
    return [turn] + [turns[at + d] for d in range(-side, side + 1) if d and 0 <= at + d < len(turns)]


def in_room(s: Setup, n: int, hits: list[Hit], around: Around, room: int) -> list[int]:
    """What a block of `room` tokens holds of the hits' snippets, best first, as choose_turns in prompt/recalled.py
    fills it: a snippet's fresh lines when they fit, else its hit alone when that fits (day headings not counted)."""
    chosen: dict[int, None] = {}
    for hit in hits:
        fresh = [t for t in snippet(s, n, hit, around) if t not in chosen]
        for lines in (fresh, fresh[:1] if fresh and fresh[0] == hit[0] else []):
            cost = sum(s.data.tokens[t] for t in lines)
            if lines and cost <= room:
                chosen.update(dict.fromkeys(lines))
                room -= cost
                break
    return list(chosen)


def found(
    s: Setup, mechanism: Mechanism, around: Around = (0, 0), room: int | None = None
) -> list[tuple[bool, bool, int]]:
    """Per question: all its evidence among the turns, any of it, and how many turns, each hit with its neighbours,
    within `room` tokens if given."""
    out = []
    for n, (_, _, evidence) in enumerate(s.data.questions):
        hits = mechanism(s, n)
        turns = (
            set(in_room(s, n, hits, around, room))
            if room is not None
            else {t for hit in hits for t in snippet(s, n, hit, around)}
        )
        ids = {s.data.ids[t] for t in turns}
        out.append((set(evidence) <= ids, bool(set(evidence) & ids), len(turns)))
    return out


def score(s: Setup, mechanism: Mechanism, around: Around = (0, 0), room: int | None = None) -> Score:
    """The mechanism over every question of the corpus (see `found`), as shares."""
    per_question = found(s, mechanism, around, room)
    count = max(len(per_question), 1)
    return Score(
        100 * sum(w for w, _, _ in per_question) / count,
        100 * sum(a for _, a, _ in per_question) / count,
        sum(c for _, _, c in per_question) / count,
    )
