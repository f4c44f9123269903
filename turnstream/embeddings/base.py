"""The Embedder protocol: texts in, L2-normalised float32 rows out, tagged with the model that made them."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from turnstream.errors import TurnstreamError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

PROBE = "martial arts"
"""What `check()` embeds: any short text shows a model that loads, runs and answers in its dimension."""


class EmbeddingError(TurnstreamError):
    """A model that is missing, broken or unreachable; its message is one line, fit for a start-up error."""


@runtime_checkable
class Embedder(Protocol):
    """Embeds texts in batches; every row is float32 and of unit length, so a dot product is the cosine."""

    @property
    def model_id(self) -> str:
        """Tags every vector this embedder makes (name, dims, a hash of the model): vectors of two ids never mix."""
        ...

    @property
    def dims(self) -> int:
        """Length of each vector."""
        ...

    def embed_passages(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """One row per text, in order: what is stored (an archived turn, a vocabulary word)."""
        ...

    def embed_queries(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """One row per text, in order: what is asked (models with a query prefix use it here)."""
        ...

    def check(self) -> None:
        """Embed a probe and check its shape and norm; raises EmbeddingError (one line) when the model fails."""
        ...


def passage_text(speaker: str | None, text: str) -> str:
    """What an archived turn is embedded as: "Speaker: text". The name carries who did what; on LoCoMo it
    is worth ~15 points of all-evidence-found over the bare text."""
    return f"{speaker}: {text}" if speaker else text


def check_rows(vectors: NDArray[np.float32], count: int, dims: int, source: str) -> None:
    """Raise EmbeddingError unless `vectors` is `count` rows of `dims` unit-length float32 values."""
    import numpy as np

    if vectors.shape != (count, dims):
        raise EmbeddingError(f"{source} returned vectors of shape {vectors.shape}, expected ({count}, {dims})")
    norms = np.linalg.norm(vectors, axis=1)
    if not np.all(np.isfinite(norms)) or not np.allclose(norms, 1.0, atol=1e-3):
        raise EmbeddingError(
            f"{source} returned vectors that are not of unit length (norms {norms.min():.3f}…{norms.max():.3f})"
        )


def model_tag(model_id: str) -> str:
    """The short tag a stored vector carries for the model that made it (embeddings.Embedder.model_id): a reader
    scores only the vectors of its own model, and a changed model's vectors are told apart from the old ones."""
    return hashlib.blake2b(model_id.encode(), digest_size=4).hexdigest()
