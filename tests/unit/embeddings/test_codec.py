"""Compact vectors: int8 with a scale and float16 round trip within their precision, at the sizes they claim."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from turnstream.embeddings.base import EmbeddingError
from turnstream.embeddings.codec import (
    decode,
    decode_float16,
    decode_int8,
    decode_int8_rows,
    encode,
    encode_int8,
    encoded_bytes,
)
from turnstream.embeddings.pooling import l2_normalise


def unit(seed: int, dims: int = 384) -> np.ndarray:
    return l2_normalise(np.random.default_rng(seed).normal(size=(1, dims)))[0]


@given(st.integers(0, 10_000))
def test_int8_keeps_every_coordinate_within_half_a_step_and_the_cosine(seed: int) -> None:
    vector = unit(seed)
    raw = encode_int8(vector)
    back = decode_int8(raw, 384)
    step = np.abs(vector).max() / 127
    assert len(raw) == encoded_bytes(384, "int8") == 388
    assert np.abs(back - vector).max() <= step / 2 + 1e-7
    assert float(back @ vector) / np.linalg.norm(back) > 0.999


@given(st.integers(0, 10_000))
def test_float16_round_trips_to_its_precision(seed: int) -> None:
    vector = unit(seed)
    back = decode(encode(vector, "float16"), 384, "float16")
    assert len(encode(vector, "float16")) == encoded_bytes(384, "float16") == 768
    assert np.allclose(back, vector, atol=1e-3)


def test_a_zero_vector_survives_int8() -> None:
    assert np.array_equal(decode_int8(encode_int8(np.zeros(8, np.float32)), 8), np.zeros(8))


@pytest.mark.parametrize("decoder, size", [(decode_int8, 11), (decode_float16, 15)])
def test_bytes_of_another_length_are_refused(decoder, size: int) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(EmbeddingError, match="not"):
        decoder(b"\0" * size, 8)


def test_many_int8_vectors_decode_at_once_as_each_alone() -> None:
    raws = [encode_int8(unit(seed)) for seed in range(6)]
    assert np.array_equal(decode_int8_rows(raws, 384), np.stack([decode_int8(raw, 384) for raw in raws]))
    with pytest.raises(EmbeddingError):
        decode_int8_rows([raws[0][:-1]], 384)
