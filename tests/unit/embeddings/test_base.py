"""What a turn is embedded as, and the check every embedder's output passes."""

from __future__ import annotations

import numpy as np
import pytest

from tests.unit.embeddings.fakes import TableEmbedder
from turnstream.embeddings.base import Embedder, EmbeddingError, check_rows, passage_text


def test_a_turn_is_embedded_with_its_speaker() -> None:
    assert passage_text("John", "I started kickboxing") == "John: I started kickboxing"
    assert passage_text(None, "I started kickboxing") == "I started kickboxing"


def test_rows_of_the_wrong_shape_or_length_are_refused() -> None:
    check_rows(np.array([[0.6, 0.8]], np.float32), 1, 2, "m")
    with pytest.raises(EmbeddingError, match=r"m returned vectors of shape \(1, 3\), expected \(1, 2\)"):
        check_rows(np.ones((1, 3), np.float32), 1, 2, "m")
    with pytest.raises(EmbeddingError, match="not of unit length"):
        check_rows(np.array([[1.0, 1.0]], np.float32), 1, 2, "m")
    with pytest.raises(EmbeddingError, match="not of unit length"):
        check_rows(np.array([[np.nan, 0.0]], np.float32), 1, 2, "m")


def test_the_fake_is_an_embedder() -> None:
    assert isinstance(TableEmbedder(), Embedder)
