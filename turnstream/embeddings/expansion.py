"""From vectors to weighted index terms: the vocabulary terms nearest each vector (pure numpy).

A turn indexed under its nearest terms is found by a question that shares no word with it ("martial arts"
for "kickboxing"); the weight is the cosine, so a close term counts more than a far one.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from threadpoolctl import ThreadpoolController

from turnstream.embeddings.vocabulary import Vocabulary

WeightedTerms = list[tuple[str, float]]

_BLAS = ThreadpoolController()
"""numpy's BLAS, held to one thread for the product below: OpenBLAS's extra threads spin for a while after each
call, and between the embedder's small batches or a gateway's single queries that spinning cost several times
the work's own CPU a call (docs/decisions/0034)."""


def nearest_terms(
    vectors: NDArray[np.float32], vocabulary: Vocabulary, m: int, floor: float = 0.0
) -> list[WeightedTerms]:
    """Per row of `vectors`, its `m` nearest vocabulary terms with their cosines, nearest first (ties by term),
    those at or below `floor` left out. Rows and vocabulary vectors are unit length, so the dot is the cosine."""
    if m <= 0 or not len(vocabulary.terms) or not len(vectors):
        return [[] for _ in range(len(vectors))]
    with _BLAS.limit(limits=1, user_api="blas"):
        similarity = vectors @ vocabulary.vectors.T
    take = min(m, similarity.shape[1])
    best = np.argpartition(-similarity, take - 1, axis=1)[:, :take]
    out: list[WeightedTerms] = []
    for row, columns in zip(similarity, best):
        ranked = sorted(((vocabulary.terms[c], float(row[c])) for c in columns), key=lambda tw: (-tw[1], tw[0]))
        out.append([(term, weight) for term, weight in ranked if weight > floor])
    return out
