"""From a transformer's token states to one unit vector per text (pure numpy)."""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import NDArray

Pooling = Literal["mean", "cls"]


def mean_pool(hidden: NDArray[np.floating], mask: NDArray[np.integer]) -> NDArray[np.float32]:
    """Mean of the token states the attention mask keeps (padding never counts), (batch, tokens, dims) -> (batch, dims)."""
    weights = mask[..., None].astype(np.float32)
    summed = (hidden.astype(np.float32) * weights).sum(axis=1)
    mean: NDArray[np.float32] = (summed / np.maximum(weights.sum(axis=1), 1.0)).astype(np.float32)
    return mean


def cls_pool(hidden: NDArray[np.floating]) -> NDArray[np.float32]:
    """The first token's state ([CLS]), as BGE models are trained to be read."""
    return hidden[:, 0, :].astype(np.float32)


def l2_normalise(vectors: NDArray[np.floating]) -> NDArray[np.float32]:
    """Rows scaled to unit length (a zero row stays zero rather than becoming NaN)."""
    rows = vectors.astype(np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    unit: NDArray[np.float32] = (rows / np.maximum(norms, np.float32(1e-12))).astype(np.float32)
    return unit


def pool(hidden: NDArray[np.floating], mask: NDArray[np.integer], how: Pooling, normalise: bool) -> NDArray[np.float32]:
    """The manifest's pooling over one batch, then (when the model asks for it) unit length."""
    pooled = mean_pool(hidden, mask) if how == "mean" else cls_pool(hidden)
    return l2_normalise(pooled) if normalise else pooled
