"""A real local HTTP server speaking the OpenAI embeddings API (`POST /v1/embeddings`), for the openai embedder.

    def test_x(embeddings_server, minilm):
        server = embeddings_server(minilm)             # serves the in-process model, on 127.0.0.1, random port
        embedder = OpenAIEmbedder(server.base_url, "test", "minilm", 384)
        server.mode = "fail"                          # switch behaviour mid-test
        assert server.count == 1 and server.requests[0]["input"]

Modes: "ok" (the model's vectors), "slow" (sleep `delay` seconds, then answer), "fail" (HTTP 500),
"garbage" (200 with a non-JSON body), "short" (vectors one dimension short), "scaled" (vectors times 3, in
reverse order with their indexes: a server that neither normalises nor keeps the order).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Literal

import pytest

from turnstream.embeddings.base import Embedder
from turnstream_tools.openai_server import OpenAIServer

Mode = Literal["ok", "slow", "fail", "garbage", "short", "scaled"]


class EmbeddingsServer(OpenAIServer):
    """Serves `embedder`'s vectors at /v1/embeddings."""

    path = "embeddings"

    def __init__(self, embedder: Embedder, mode: Mode = "ok", delay: float = 2.0) -> None:
        self.embedder = embedder
        super().__init__(mode, delay)

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        """An embeddings response body in OpenAI's shape, for this mode."""
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        vectors = self.embedder.embed_passages(texts).tolist()
        rows = [{"object": "embedding", "index": n, "embedding": vector} for n, vector in enumerate(vectors)]
        if self.mode == "short":
            rows = [{**row, "embedding": row["embedding"][:-1]} for row in rows]
        elif self.mode == "scaled":
            rows = [{**row, "embedding": [3 * x for x in row["embedding"]]} for row in reversed(rows)]
        return {
            "object": "list",
            "data": rows,
            "model": body.get("model"),
            "usage": {"prompt_tokens": 0, "total_tokens": 0},
        }


@pytest.fixture
def embeddings_server() -> Iterator[Callable[..., EmbeddingsServer]]:
    """Factory fixture: `embeddings_server(embedder, mode=..., delay=...)` starts a server; all stop on teardown."""
    started: list[EmbeddingsServer] = []

    def start(embedder: Embedder, mode: Mode = "ok", delay: float = 2.0) -> EmbeddingsServer:
        started.append(EmbeddingsServer(embedder, mode, delay))
        return started[-1]

    yield start
    for server in started:
        server.stop()
