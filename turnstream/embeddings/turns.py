"""What the embedding agent computes for a batch of archived turns: per turn its model, int8 vector and
expansion terms (pure, given the embedders; no Kafka, no Redis)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from turnstream.embeddings.base import Embedder
from turnstream.embeddings.codec import encode_int8
from turnstream.embeddings.expansion import WeightedTerms, nearest_terms
from turnstream.embeddings.factory import Embedders
from turnstream.embeddings.vocabulary import Vocabulary


@dataclass(frozen=True, slots=True)
class TurnEmbedding:
    """One archived turn's semantic side, as stored beside its entry."""

    model_id: str
    """The model that made `vector`: a gateway scores only vectors of its own model's id."""
    vector: bytes
    """Its unit vector, int8 with a scale (codec.encode_int8)."""
    terms: WeightedTerms
    """Its expansion terms, nearest first, each with its cosine: the postings of the semantic index."""


def embed_turns(embedders: Embedders, passages: Sequence[str], terms: int,
                vocabulary: Callable[[Embedder], Vocabulary | None]) -> list[TurnEmbedding]:
    """Embed `passages` (passage_text of each turn) with the model of each one's language, one batch call per
    model, and expand each over `vocabulary(model)`: the caller's share of that model's vocabulary (for an
    owner, `Embedders.vocabularies[model.model_id].subset(...)` of the terms it has used, this batch's turns
    included: LoCoMo's measure, docs/decisions/0034), or None for no expansion terms."""
    out: list[TurnEmbedding | None] = [None] * len(passages)
    groups: dict[int, tuple[Embedder, list[int]]] = {}
    for n, passage in enumerate(passages):
        model = embedders.for_text(passage)
        groups.setdefault(id(model), (model, []))[1].append(n)
    for model, rows in groups.values():
        vectors = model.embed_passages([passages[n] for n in rows])
        known = vocabulary(model)
        expanded = nearest_terms(vectors, known, terms) if known is not None else [[] for _ in rows]
        for n, vector, found in zip(rows, vectors, expanded):
            out[n] = TurnEmbedding(model.model_id, encode_int8(vector), found)
    return [turn for turn in out if turn is not None]
