"""A broken model folder is one line when the ONNX embedder loads, before any text is embedded."""

from __future__ import annotations

from pathlib import Path

import pytest

from turnstream.embeddings.base import EmbeddingError
from turnstream.embeddings.local import OnnxEmbedder
from turnstream.embeddings.manifest import ModelManifest, write_manifest

TOKENIZER = '{"version": "1.0", "model": {"type": "WordLevel", "vocab": {"[UNK]": 0, "a": 1}, "unk_token": "[UNK]"}}'


def folder(tmp_path: Path, onnx: bytes, tokenizer: str = TOKENIZER) -> Path:
    (tmp_path / "m.onnx").write_bytes(onnx)
    (tmp_path / "tokenizer.json").write_text(tokenizer)
    write_manifest(
        tmp_path,
        ModelManifest(
            name="m",
            onnx="m.onnx",
            tokenizer="tokenizer.json",
            dims=4,
            pooling="mean",
            max_length=8,
            onnx_sha256="00",
            onnx_bytes=len(onnx),
        ),
    )
    return tmp_path


def test_a_model_file_onnx_runtime_cannot_read_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError, match="ONNX Runtime cannot load it") as raised:
        OnnxEmbedder(folder(tmp_path, b"not a model"))
    assert "\n" not in str(raised.value)


def test_an_unreadable_tokenizer_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError, match="unreadable tokenizer") as raised:
        OnnxEmbedder(folder(tmp_path, b"not a model", tokenizer="{broken"))
    assert "\n" not in str(raised.value)


def test_threads_and_batch_size_are_at_least_one(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError, match="at least 1"):
        OnnxEmbedder(folder(tmp_path, b"x"), threads=0)
