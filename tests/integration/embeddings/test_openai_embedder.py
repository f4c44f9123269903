"""The openai embedder against a real local /v1/embeddings server that serves the in-process MiniLM."""

from __future__ import annotations

import socket
from collections.abc import Callable

import numpy as np
import pytest

from tests.support.embeddings_server import EmbeddingsServer
from turnstream.embeddings.base import EmbeddingError
from turnstream.embeddings.factory import load_embedders
from turnstream.embeddings.local import OnnxEmbedder
from turnstream.embeddings.remote import OpenAIEmbedder
from turnstream.settings import Settings

Start = Callable[..., EmbeddingsServer]
TEXTS = ["martial arts", "I started kickboxing last year", "I bought a new car", "taekwondo", "a red bicycle"]


def embedder(server: EmbeddingsServer, dims: int = 384, **options: float) -> OpenAIEmbedder:
    return OpenAIEmbedder(server.base_url, "test", "minilm", dims, batch_size=2, **options)  # type: ignore[arg-type]


def test_texts_go_in_batches_and_come_back_as_the_model_s_vectors_in_order(
    embeddings_server: Start, minilm: OnnxEmbedder
) -> None:
    server = embeddings_server(minilm)
    vectors = embedder(server).embed_passages(TEXTS)
    assert server.count == 3 and [len(r["input"]) for r in server.requests] == [2, 2, 1]
    assert server.requests[0]["model"] == "minilm" and server.requests[0]["encoding_format"] == "float"
    assert np.min(np.sum(vectors * minilm.embed_passages(TEXTS), axis=1)) > 0.98
    assert embedder(server).model_id == "openai-minilm-384"


def test_vectors_are_normalised_and_put_back_in_order_whatever_the_server_does(
    embeddings_server: Start, minilm: OnnxEmbedder
) -> None:
    server = embeddings_server(minilm, mode="scaled")
    vectors = embedder(server).embed_queries(TEXTS[:2])
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.allclose(vectors, minilm.embed_passages(TEXTS[:2]), atol=1e-5)


def test_a_slow_server_times_out_after_the_retries(embeddings_server: Start, minilm: OnnxEmbedder) -> None:
    server = embeddings_server(minilm, mode="slow", delay=2.0)
    with pytest.raises(EmbeddingError, match="timed out") as raised:
        embedder(server, timeout=0.3, max_retries=1).embed_passages(TEXTS[:1])
    assert server.count == 2 and "\n" not in str(raised.value)


def test_a_failing_server_is_retried_then_one_line(embeddings_server: Start, minilm: OnnxEmbedder) -> None:
    server = embeddings_server(minilm, mode="fail")
    with pytest.raises(EmbeddingError, match="answered HTTP 500"):
        embedder(server, max_retries=2).embed_passages(TEXTS[:1])
    assert server.count == 3
    server.mode = "ok"
    assert embedder(server).embed_passages(TEXTS[:1]).shape == (1, 384)


def test_vectors_of_another_dimension_are_refused(embeddings_server: Start, minilm: OnnxEmbedder) -> None:
    server = embeddings_server(minilm, mode="short")
    with pytest.raises(EmbeddingError, match="returned 383-dimensional vectors; TURNSTREAM_EMBEDDING_DIMS is 384"):
        embedder(server).embed_passages(TEXTS[:1])


def test_a_body_that_is_no_json_is_one_line(embeddings_server: Start, minilm: OnnxEmbedder) -> None:
    server = embeddings_server(minilm, mode="garbage")
    with pytest.raises(EmbeddingError, match="a body that is no JSON") as raised:
        embedder(server, max_retries=0).embed_passages(TEXTS[:1])
    assert "\n" not in str(raised.value)


def test_no_server_is_one_line(minilm: OnnxEmbedder) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(EmbeddingError, match="APIConnectionError"):
        OpenAIEmbedder(f"http://127.0.0.1:{port}/v1", "test", "minilm", 384, max_retries=0).embed_passages(TEXTS[:1])


def test_the_settings_load_and_check_the_endpoint_at_start(embeddings_server: Start, minilm: OnnxEmbedder) -> None:
    server = embeddings_server(minilm)
    settings = Settings(
        embeddings="openai", embedding_base_url=server.base_url, embedding_dims=384, embedding_model="minilm"
    )
    embedders = load_embedders(settings)
    assert embedders is not None and embedders.en is embedders.zh and server.count == 1
    assert embedders.vocabularies == {}  # an endpoint's model has no vocabulary cache
    with pytest.raises(EmbeddingError, match="TURNSTREAM_EMBEDDING_DIMS is 512"):
        load_embedders(settings.model_copy(update={"embedding_dims": 512}))
