"""A gateway's semantic share with the embedding model in-process: the question embedded (what it takes of a
read: figure 8's `embed` rows, docs/performance.md), its nearest vocabulary terms added to the read, and the pool ranked by the stored
int8 vectors of the same model. No network: the model runs here, the vectors come with the one round trip
(prompt/semantic.py).

The embedding comes before the round trip, not beside it: the question's nearest terms are what bring a turn that
shares no word with it into the pool ("What martial arts has John done?" and "I started kickboxing": the
question's terms taekwondo, karate, judo meet the turn's), and they need the vector first. A read without them,
which could embed beside the round trip, answered 1–2 points fewer LoCoMo dev questions (tools/turnstream_tools/benchmarks/HISTORY.md,
2026-12-05 evening).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

from turnstream.embeddings.base import EmbeddingError, model_tag
from turnstream.embeddings.codec import decode_int8_rows
from turnstream.embeddings.expansion import nearest_terms
from turnstream.embeddings.factory import Embedders, load_embedders
from turnstream.prompt.semantic import SEMANTIC_HITS, Ranked, Semantic, SemanticAsk, TermsOnly, by_terms
from turnstream.schemas.prompt_read import PoolEntry
from turnstream.settings import Settings

log = logging.getLogger(__name__)

QUERY_TERMS = 8
"""The question's nearest vocabulary terms added to its own (4, 8 and 16 came out alike on LoCoMo dev)."""


class ModelSemantic:
    """The semantic share ranked by the model's vectors."""

    def __init__(self, embedders: Embedders) -> None:
        self.embedders = embedders

    def ask(self, user_text: str, terms: Sequence[str]) -> SemanticAsk:
        started = time.perf_counter()
        model = self.embedders.for_text(user_text)
        vector = model.embed_queries([user_text])
        vocabulary = self.embedders.vocabularies.get(model.model_id)
        nearest = [term for term, _ in nearest_terms(vector, vocabulary, QUERY_TERMS)[0]] if vocabulary else []
        spent = round((time.perf_counter() - started) * 1000, 3)
        return SemanticAsk(
            tuple(dict.fromkeys([*terms, *nearest])), model_tag(model.model_id), (model.dims, vector[0], spent)
        )

    def rank(self, ask: SemanticAsk, pool: Sequence[PoolEntry]) -> tuple[Ranked, float | None]:
        dims, query, spent = ask.vector
        held = [p for p in pool if p.vector]
        if not held:  # the archive holds no vector of this model yet (just switched on, or another model's)
            return by_terms(pool), spent
        cosines = decode_int8_rows([p.vector for p in held if p.vector], dims) @ query
        scored = sorted(
            zip((p.entry for p in held), map(float, cosines)), key=lambda hit: (-hit[1], hit[0].ts, hit[0].id)
        )
        return scored[:SEMANTIC_HITS], spent


def semantic_side(settings: Settings) -> Semantic | None:
    """What a gateway adds for the semantic share: None with embeddings off (lexical recall, as before); the model's
    ranking with local models that load; the question's own terms otherwise (an endpoint model is never called
    on the read path; a local model that does not load is logged once)."""
    if settings.embeddings == "off":
        return None
    if settings.embeddings == "local":
        try:
            embedders = load_embedders(settings)
        except EmbeddingError as error:
            log.warning("semantic recall without the model (the question's own terms only): %s", error)
            return TermsOnly()
        if embedders is not None:
            return ModelSemantic(embedders)
    return TermsOnly()
