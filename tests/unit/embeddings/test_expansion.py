"""Expansion terms: each vector's nearest vocabulary terms, weighted by their cosine, over a tiny vocabulary."""

from __future__ import annotations

import numpy as np
import pytest

from turnstream.embeddings.base import EmbeddingError
from turnstream.embeddings.expansion import nearest_terms
from turnstream.embeddings.pooling import l2_normalise
from turnstream.embeddings.vocabulary import Vocabulary


def vocabulary() -> Vocabulary:
    # on the unit circle: martial at 0°, sport at 30°, art at 60°, car at 180°
    angles = np.radians([0, 30, 60, 180])
    vectors = np.stack([np.cos(angles), np.sin(angles)], axis=1).astype(np.float32)
    return Vocabulary(("martial", "sport", "art", "car"), ("martial", "sport", "arts", "car"), vectors)


def at(*degrees: float) -> np.ndarray:
    angles = np.radians(degrees)
    return l2_normalise(np.stack([np.cos(angles), np.sin(angles)], axis=1))


def test_each_vector_gets_its_m_nearest_terms_nearest_first_with_their_cosines() -> None:
    (near_martial, near_art) = nearest_terms(at(10, 55), vocabulary(), m=2)
    assert [t for t, _ in near_martial] == ["martial", "sport"]
    assert [t for t, _ in near_art] == ["art", "sport"]
    assert near_martial[0][1] == pytest.approx(np.cos(np.radians(10)), abs=1e-6)


def test_equal_cosines_are_ordered_by_term() -> None:
    (row,) = nearest_terms(at(45), vocabulary(), m=2)  # sport and art both 15° away
    assert [t for t, _ in row] == ["art", "sport"]


def test_terms_at_or_below_the_floor_are_left_out() -> None:
    (row,) = nearest_terms(at(0), vocabulary(), m=4, floor=0.0)
    assert [t for t, _ in row] == ["martial", "sport", "art"]  # car is at -1


def test_m_beyond_the_vocabulary_and_m_zero() -> None:
    assert len(nearest_terms(at(0), vocabulary(), m=10, floor=-2.0)[0]) == 4
    assert nearest_terms(at(0, 90), vocabulary(), m=0) == [[], []]
    assert nearest_terms(np.zeros((0, 2), np.float32), vocabulary(), m=3) == []


def test_a_vocabulary_of_mismatched_parts_is_refused() -> None:
    with pytest.raises(EmbeddingError, match="2 terms, 1 words"):
        Vocabulary(("a", "b"), ("a",), np.zeros((2, 2), np.float32))
