"""An ONNX sentence-embedding model run in-process by ONNX Runtime, on a folder that `make models` unpacked."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnxruntime
from numpy.typing import NDArray
from tokenizers import Tokenizer

from turnstream.embeddings.base import PROBE, EmbeddingError, check_rows
from turnstream.embeddings.manifest import ModelManifest, read_manifest
from turnstream.embeddings.pooling import Pooling, pool

DEFAULT_BATCH = 16
"""Texts per model call: on LoCoMo turns, 16 sorted by length costs less a turn than 1."""


class OnnxEmbedder:
    """A model folder's .onnx under ONNX Runtime with its tokenizer.json; loading it checks every file."""

    def __init__(self, folder: Path, threads: int = 1, batch_size: int = DEFAULT_BATCH) -> None:
        if threads < 1 or batch_size < 1:
            raise EmbeddingError(f"threads and batch size must be at least 1, not {threads} and {batch_size}")
        self.folder = folder
        self.manifest: ModelManifest = read_manifest(folder)
        self.batch_size = batch_size
        self._tokenizer = _tokenizer(folder / self.manifest.tokenizer, self.manifest.max_length)
        self._session = _session(folder / self.manifest.onnx, threads)
        self._inputs = {arg.name for arg in self._session.get_inputs()}

    @property
    def model_id(self) -> str:
        return self.manifest.model_id

    @property
    def dims(self) -> int:
        return self.manifest.dims

    def embed_passages(self, texts: Sequence[str]) -> NDArray[np.float32]:
        return self._embed([self.manifest.passage_prefix + text for text in texts])

    def embed_queries(self, texts: Sequence[str]) -> NDArray[np.float32]:
        return self._embed([self.manifest.query_prefix + text for text in texts])

    def check(self) -> None:
        check_rows(self.embed_queries([PROBE]), 1, self.dims, f"model {self.model_id}")

    def _embed(self, texts: list[str]) -> NDArray[np.float32]:
        if self.manifest.lowercase:
            texts = [text.lower() for text in texts]
        encodings = self._tokenizer.encode_batch(texts)
        # sorted by length, each batch padded only to its own longest: padding is paid for in full
        order = sorted(range(len(texts)), key=lambda n: len(encodings[n].ids))
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            out[chunk] = self._run([encodings[n].ids for n in chunk])
        return out

    def _run(self, ids: list[list[int]]) -> NDArray[np.float32]:
        width = max(len(row) for row in ids)
        input_ids = np.zeros((len(ids), width), dtype=np.int64)
        mask = np.zeros((len(ids), width), dtype=np.int64)
        for n, row in enumerate(ids):
            input_ids[n, : len(row)] = row
            mask[n, : len(row)] = 1
        feed = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(input_ids)}
        (hidden,) = self._session.run(["last_hidden_state"], {name: feed[name] for name in self._inputs})
        return pool(hidden, mask, _pooling(self.manifest), self.manifest.normalise)


def _pooling(manifest: ModelManifest) -> Pooling:
    """The manifest's pooling as pool() reads it (parse_manifest takes no other than these two)."""
    return "mean" if manifest.pooling == "mean" else "cls"


def _tokenizer(path: Path, max_length: int) -> Tokenizer:
    """The tokenizer with its own padding off (MiniLM's pads every text to 128) and truncation at `max_length`."""
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as error:  # the library raises its own exception type for a malformed file
        raise EmbeddingError(f"{path}: unreadable tokenizer ({_first_line(error)})") from None
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length)
    return tokenizer


def _session(path: Path, threads: int) -> onnxruntime.InferenceSession:
    """An inference session on the CPU with explicit thread counts: ONNX Runtime's default takes every core."""
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1  # operators run one after another (the default sequential mode)
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    options.log_severity_level = 3  # its warnings about unused initialisers are no news to an operator
    try:
        session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as error:  # ONNX Runtime raises its own exception types for a broken model
        raise EmbeddingError(f"{path}: ONNX Runtime cannot load it ({_first_line(error)})") from None
    outputs = {arg.name for arg in session.get_outputs()}
    if "last_hidden_state" not in outputs:
        raise EmbeddingError(f"{path}: no last_hidden_state output (has {', '.join(sorted(outputs))})")
    return session


def _first_line(error: Exception) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0][:200]
