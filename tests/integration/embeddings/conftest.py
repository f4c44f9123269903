"""The real models from `make models` (the integration tier's target fetches them), loaded once per session."""

from __future__ import annotations

import pytest

from turnstream.embeddings.base import EmbeddingError
from turnstream.embeddings.factory import model_folder
from turnstream.embeddings.local import OnnxEmbedder
from turnstream.text.language import Language


def _load(language: Language) -> OnnxEmbedder:
    try:
        return OnnxEmbedder(model_folder(None, language))
    except EmbeddingError as error:
        pytest.fail(str(error), pytrace=False)


@pytest.fixture(scope="session")
def minilm() -> OnnxEmbedder:
    return _load("en")


@pytest.fixture(scope="session")
def bge_zh() -> OnnxEmbedder:
    return _load("zh")
