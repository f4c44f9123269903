"""A model folder's manifest: which files, and how the model is read (written by `make models`, read at load)."""

from __future__ import annotations

import json
from dataclasses import MISSING, asdict, dataclass, fields
from pathlib import Path
from typing import Any, get_type_hints

from turnstream.embeddings.base import EmbeddingError

MANIFEST = "manifest.json"
POOLINGS = ("mean", "cls")
"""How a model's token states become one vector (pooling.py)."""


@dataclass(frozen=True, slots=True)
class ModelManifest:
    """What a model folder holds and how to run it; one JSON object in the folder's manifest.json."""

    name: str
    """Short model name, the head of its model id: all-minilm-l6-v2-q."""
    onnx: str
    """The .onnx file, relative to the folder."""
    tokenizer: str
    """The tokenizers-library tokenizer.json, relative to the folder."""
    dims: int
    """Length of the model's vectors."""
    pooling: str
    """"mean" (over the attention mask: sentence-transformers models) or "cls" (the first token: BGE)."""
    max_length: int
    """Tokens a text is cut to: 128 for MiniLM (what it was trained on), 512 for BGE."""
    onnx_sha256: str
    """SHA-256 of the .onnx file: part of the model id, so vectors of a changed model are told apart."""
    onnx_bytes: int
    """Size of the .onnx file, checked at load (cheaper than hashing 95 MB at every start)."""
    normalise: bool = True
    """Scale pooled vectors to unit length (both shipped models are trained for cosine similarity)."""
    lowercase: bool = False
    """Lower-case texts first: bge-small-zh's tokenizer does not, and turns English capitals into [UNK]."""
    query_prefix: str = ""
    """Put before a query (e5's "query: ", BGE's retrieval instruction); empty for models trained without one."""
    passage_prefix: str = ""
    """Put before a stored text (e5's "passage: ")."""
    source: str = ""
    """Where the files came from (the Maven coordinates of the jar)."""
    vocabulary: str | None = None
    """Stem of the vocabulary cache (vocabulary.tsv and vocabulary.npy), when `make models` built one."""

    @property
    def model_id(self) -> str:
        """The tag of this model's vectors: name, dims and the first 12 hex digits of the .onnx hash."""
        return f"{self.name}-{self.dims}-{self.onnx_sha256[:12]}"

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, ensure_ascii=False) + "\n"


def parse_manifest(data: Any, where: str) -> ModelManifest:
    """A manifest from its decoded JSON; one-line EmbeddingError naming `where` and the field that is wrong."""
    if not isinstance(data, dict):
        raise EmbeddingError(f"{where}: a manifest is a JSON object")
    types = get_type_hints(ModelManifest)
    for name in data:
        if name not in types:
            raise EmbeddingError(f"{where}: unknown manifest field {name!r}")
    for field in fields(ModelManifest):
        if field.name not in data and field.default is MISSING:
            raise EmbeddingError(f"{where}: manifest field {field.name!r} missing")
        value = data.get(field.name, field.default)
        # bool is an int to isinstance: a dims of true is no dims
        if not isinstance(value, types[field.name]) or (isinstance(value, bool) and types[field.name] is int):
            kind = getattr(types[field.name], "__name__", str(types[field.name]))
            raise EmbeddingError(f"{where}: manifest field {field.name!r} must be {kind}, not {value!r}")
    manifest = ModelManifest(**data)
    if manifest.pooling not in POOLINGS:
        raise EmbeddingError(f"{where}: manifest pooling {manifest.pooling!r}: use one of {', '.join(POOLINGS)}")
    if manifest.dims < 1 or manifest.max_length < 2:
        raise EmbeddingError(f"{where}: manifest dims and max_length must be positive")
    return manifest


def read_manifest(folder: Path) -> ModelManifest:
    """The manifest of a model folder, its files checked to be there; one-line EmbeddingError otherwise."""
    path = folder / MANIFEST
    if not path.is_file():
        raise EmbeddingError(
            f"no embedding model in {folder} ({MANIFEST} missing): run `make models`, or point TURNSTREAM_EMBEDDING_MODEL_DIR (or _ZH) at a model folder"
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise EmbeddingError(f"{path}: unreadable manifest ({error})") from None
    manifest = parse_manifest(data, str(path))
    onnx = folder / manifest.onnx
    if not (folder / manifest.tokenizer).is_file():
        raise EmbeddingError(f"{folder}: tokenizer {manifest.tokenizer} missing: run `make models` again")
    if not onnx.is_file() or onnx.stat().st_size != manifest.onnx_bytes:
        raise EmbeddingError(
            f"{folder}: {manifest.onnx} missing or not the {manifest.onnx_bytes:,} bytes the manifest names: run `make models` again"
        )
    return manifest


def write_manifest(folder: Path, manifest: ModelManifest) -> Path:
    """Write `manifest` into `folder`, returning its path."""
    path = folder / MANIFEST
    path.write_text(manifest.to_json(), encoding="utf-8")
    return path
