"""Compact stored vectors: int8 with a scale (dims + 4 bytes) or float16 (2 × dims bytes), little-endian.

An archived turn's vector rides with the archive for a gateway to rank candidates by; at 384 dims int8 takes
388 bytes, a quarter of float32's (a LoCoMo turn's archive entry is ~275 bytes of JSON), and ranks LoCoMo's
turns as float32 does. A read returns candidates' vectors as they are stored, so decoding is the gateway's,
not the Redis script's.
"""

from __future__ import annotations

import struct
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from turnstream.embeddings.base import EmbeddingError

Encoding = Literal["int8", "float16"]
_SCALE = struct.Struct("<f")


def encode_int8(vector: NDArray[np.float32]) -> bytes:
    """A float32 scale (the largest magnitude / 127), then each coordinate / scale rounded to int8."""
    largest = float(np.max(np.abs(vector))) if vector.size else 0.0
    scale = largest / 127.0 if largest > 0 else 1.0
    return _SCALE.pack(scale) + np.round(vector / scale).astype(np.int8).tobytes()


def decode_int8(raw: bytes, dims: int) -> NDArray[np.float32]:
    """The vector `encode_int8` wrote; EmbeddingError when `raw` is not dims + 4 bytes."""
    if len(raw) != dims + _SCALE.size:
        raise EmbeddingError(f"an int8 vector of {dims} dims is {dims + _SCALE.size} bytes, not {len(raw)}")
    (scale,) = _SCALE.unpack_from(raw)
    return np.frombuffer(raw, dtype=np.int8, offset=_SCALE.size).astype(np.float32) * np.float32(scale)


def decode_int8_rows(raws: list[bytes], dims: int) -> NDArray[np.float32]:
    """`decode_int8` of many vectors at once, one row each: what a gateway ranks a read's pool with."""
    if any(len(raw) != dims + _SCALE.size for raw in raws):
        raise EmbeddingError(f"an int8 vector of {dims} dims is {dims + _SCALE.size} bytes")
    packed = np.frombuffer(b"".join(raws), dtype=np.uint8).reshape(len(raws), dims + _SCALE.size)
    scales = packed[:, : _SCALE.size].copy().view("<f4")
    rows: NDArray[np.float32] = packed[:, _SCALE.size :].view(np.int8).astype(np.float32) * scales
    return rows


def encode_float16(vector: NDArray[np.float32]) -> bytes:
    return vector.astype("<f2").tobytes()


def decode_float16(raw: bytes, dims: int) -> NDArray[np.float32]:
    """The vector `encode_float16` wrote; EmbeddingError when `raw` is not 2 × dims bytes."""
    if len(raw) != 2 * dims:
        raise EmbeddingError(f"a float16 vector of {dims} dims is {2 * dims} bytes, not {len(raw)}")
    return np.frombuffer(raw, dtype="<f2").astype(np.float32)


def encode(vector: NDArray[np.float32], encoding: Encoding) -> bytes:
    return encode_int8(vector) if encoding == "int8" else encode_float16(vector)


def decode(raw: bytes, dims: int, encoding: Encoding) -> NDArray[np.float32]:
    return decode_int8(raw, dims) if encoding == "int8" else decode_float16(raw, dims)


def encoded_bytes(dims: int, encoding: Encoding) -> int:
    """Bytes one vector takes stored (before the store's own per-field overhead)."""
    return dims + _SCALE.size if encoding == "int8" else 2 * dims
