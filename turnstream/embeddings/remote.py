"""An OpenAI-compatible embeddings endpoint (`POST /v1/embeddings`) through the openai client.

For the worker's embedding agent only: the read path never calls the network, so a gateway that embeds a
query does it in-process (local.py). The client's own retries (exponential backoff on timeouts, connection
errors, 429 and 5xx) and timeout apply to each batch; a failure is one EmbeddingError line.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from turnstream.embeddings.base import PROBE, EmbeddingError, check_rows
from turnstream.embeddings.pooling import l2_normalise

DEFAULT_BATCH = 64
"""Texts per request: OpenAI takes up to 2,048; local servers often fewer."""


class OpenAIEmbedder:
    """Embeds through an endpoint, in batches, and checks every vector's dimension against `dims`."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        model: str,
        dims: int,
        batch_size: int = DEFAULT_BATCH,
        timeout: float = 10.0,
        max_retries: int = 2,
    ) -> None:
        try:
            import openai
        except ImportError:
            raise EmbeddingError(
                "TURNSTREAM_EMBEDDINGS=openai needs the openai client: pip install 'turnstream[worker]'"
            ) from None
        if dims < 1 or batch_size < 1:
            raise EmbeddingError(f"dims and batch size must be at least 1, not {dims} and {batch_size}")
        self._openai = openai
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key, timeout=timeout, max_retries=max_retries)
        self._model, self._dims, self.batch_size = model, dims, batch_size

    @property
    def model_id(self) -> str:
        # the endpoint names its model, nothing more: a model changed under the same name is not told apart
        return f"openai-{self._model}-{self._dims}"

    @property
    def dims(self) -> int:
        return self._dims

    def embed_passages(self, texts: Sequence[str]) -> NDArray[np.float32]:
        return self._embed(texts)

    def embed_queries(self, texts: Sequence[str]) -> NDArray[np.float32]:
        return self._embed(texts)

    def check(self) -> None:
        check_rows(self.embed_queries([PROBE]), 1, self.dims, f"embedding model {self._model!r}")

    def _embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        out = np.zeros((len(texts), self._dims), dtype=np.float32)
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            out[start : start + len(batch)] = self._request(batch)
        return out

    def _request(self, batch: list[str]) -> NDArray[np.float32]:
        try:
            reply = self._client.embeddings.create(model=self._model, input=batch, encoding_format="float")
        except self._openai.APIStatusError as error:
            raise EmbeddingError(
                f"embeddings endpoint answered HTTP {error.status_code} for model {self._model!r}"
            ) from None
        except self._openai.APITimeoutError:
            raise EmbeddingError(f"embeddings endpoint timed out (model {self._model!r}, after retries)") from None
        except self._openai.APIError as error:  # connection refused, a reply of the wrong shape, ...
            raise EmbeddingError(
                f"embeddings endpoint failed: {type(error).__name__}: {str(error).splitlines()[0][:200]}"
            ) from None
        except ValueError:  # the client decodes a JSON content type itself
            raise EmbeddingError(
                f"embeddings endpoint answered with a body that is no JSON (model {self._model!r})"
            ) from None
        if not isinstance(getattr(reply, "data", None), list):
            raise EmbeddingError(f"embeddings endpoint answered without a list of vectors (model {self._model!r})")
        rows = sorted(reply.data, key=lambda item: item.index)
        if len(rows) != len(batch):
            raise EmbeddingError(f"embeddings endpoint returned {len(rows)} vectors for {len(batch)} texts")
        wrong = next((len(row.embedding) for row in rows if len(row.embedding) != self._dims), None)
        if wrong is not None:
            raise EmbeddingError(
                f"embeddings endpoint returned {wrong}-dimensional vectors; TURNSTREAM_EMBEDDING_DIMS is {self._dims}"
            )
        # some servers return raw vectors: the dot product must be the cosine
        return l2_normalise(np.asarray([row.embedding for row in rows], dtype=np.float32))
