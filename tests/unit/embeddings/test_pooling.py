"""Pooling: the mean over the tokens the mask keeps, the [CLS] token, unit length."""

from __future__ import annotations

import numpy as np

from turnstream.embeddings.pooling import cls_pool, l2_normalise, mean_pool, pool


def batch() -> tuple[np.ndarray, np.ndarray]:
    # two texts of 3 and 1 tokens, padded to 3; the padding's states are large so that counting them shows
    hidden = np.array([[[1, 0], [3, 0], [2, 6]], [[0, 4], [99, 99], [99, 99]]], dtype=np.float32)
    mask = np.array([[1, 1, 1], [1, 0, 0]])
    return hidden, mask


def test_the_mean_counts_only_the_tokens_the_mask_keeps() -> None:
    hidden, mask = batch()
    assert np.allclose(mean_pool(hidden, mask), [[2, 2], [0, 4]])


def test_cls_pooling_reads_the_first_token() -> None:
    hidden, _ = batch()
    assert np.allclose(cls_pool(hidden), [[1, 0], [0, 4]])


def test_rows_become_unit_length_and_a_zero_row_stays_zero() -> None:
    rows = l2_normalise(np.array([[3, 4], [0, 0]], dtype=np.float64))
    assert rows.dtype == np.float32
    assert np.allclose(rows, [[0.6, 0.8], [0, 0]])


def test_pool_follows_the_manifest() -> None:
    hidden, mask = batch()
    assert np.allclose(pool(hidden, mask, "mean", normalise=True), [[2**-0.5, 2**-0.5], [0, 1]])
    assert np.allclose(pool(hidden, mask, "cls", normalise=False), [[1, 0], [0, 4]])
