"""An in-memory Embedder for the pure parts' tests: each text's vector is looked up, or made from its hash."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from turnstream.embeddings.pooling import l2_normalise


class TableEmbedder:
    """Vectors from `table` (normalised), else a deterministic unit vector from the text's hash."""

    def __init__(
        self, table: Mapping[str, Sequence[float]] | None = None, dims: int = 4, model_id: str = "table-4"
    ) -> None:
        self.table = dict(table or {})
        self._dims, self._model_id = dims, model_id
        self.calls: list[list[str]] = []

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dims(self) -> int:
        return self._dims

    def embed_passages(self, texts: Sequence[str]) -> NDArray[np.float32]:
        self.calls.append(list(texts))
        return l2_normalise(
            np.array([self._vector(text) for text in texts], dtype=np.float32).reshape(len(texts), self._dims)
        )

    embed_queries = embed_passages

    def check(self) -> None:
        pass

    def _vector(self, text: str) -> Sequence[float]:
        if text in self.table:
            return self.table[text]
        digest = hashlib.sha256(text.encode()).digest()
        return [byte - 127.5 for byte in digest[: self._dims]]
