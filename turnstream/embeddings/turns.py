"""What the embedding agent computes for a batch of archived turns: per turn its model, int8 vector and
expansion terms (pure, given the embedders; no Kafka, no Redis)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from turnstream.embeddings.base import Embedder, model_tag, passage_text
from turnstream.embeddings.codec import encode_int8
from turnstream.embeddings.expansion import WeightedTerms, nearest_terms
from turnstream.embeddings.factory import Embedders
from turnstream.embeddings.vocabulary import Vocabulary
from turnstream.schemas.archive import ArchiveEntry, EmbeddedTurn
from turnstream.text.terms import is_identifier


@dataclass(frozen=True, slots=True)
class TurnEmbedding:
    """One archived turn's semantic side, as stored beside its entry."""

    model_id: str
    """The model that made `vector`: a gateway scores only vectors of its own model's id."""
    vector: bytes
    """Its unit vector, int8 with a scale (codec.encode_int8)."""
    terms: WeightedTerms
    """Its expansion terms, nearest first, each with its cosine: the postings of the semantic index."""


def embed_turns(
    embedders: Embedders, passages: Sequence[str], terms: int, vocabulary: Callable[[Embedder], Vocabulary | None]
) -> list[TurnEmbedding]:
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


TERM_WEIGHT_SCALE = 1000
"""A semantic posting's weight is its cosine × this, as an integer."""
_PLAIN_TERM = re.compile(r"^[^\s:,]+$")
"""What a semantic term may be: the postings are `id:weight,…`, so no space, colon or comma."""


def embed_entries(embedders: Embedders, entries: Sequence[ArchiveEntry], terms: int) -> list[EmbeddedTurn]:
    """The semantic side of archived `entries`: each embedded as "Speaker: text" by its language's model, tagged,
    and indexed under its identifiers at full weight, then its `terms` nearest terms of that model's vocabulary
    (none for a model without one)."""
    passages = [passage_text(entry.speaker, entry.text) for entry in entries]
    found = embed_turns(embedders, passages, terms, lambda model: embedders.vocabularies.get(model.model_id))
    return [
        EmbeddedTurn(
            entry.id,
            entry.session,
            entry.position,
            model_tag(turn.model_id),
            turn.vector,
            tuple(
                (term, weight)
                for term, weight in [
                    *identifier_terms(entry),
                    *((term, round(cosine * TERM_WEIGHT_SCALE)) for term, cosine in turn.terms),
                ]
                if _PLAIN_TERM.match(term) and weight > 0
            ),
        )
        for entry, turn in zip(entries, found)
    ]


def identifier_terms(entry: ArchiveEntry) -> list[tuple[str, int]]:
    """The identifiers `entry` is indexed under (text/terms.py), each at full weight: no vocabulary holds an id, so
    a query naming "voucher_5518230" meets the turn that holds it on the semantic side as on the lexical one."""
    return [(term, TERM_WEIGHT_SCALE) for term in entry.term_counts() if is_identifier(term)]
