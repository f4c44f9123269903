"""The model folder's manifest: parsed with one-line errors, its files checked at load, the model id."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from turnstream.embeddings.base import EmbeddingError
from turnstream.embeddings.manifest import ModelManifest, parse_manifest, read_manifest, write_manifest

MANIFEST = ModelManifest(
    name="mini",
    onnx="mini.onnx",
    tokenizer="tokenizer.json",
    dims=384,
    pooling="mean",
    max_length=128,
    onnx_sha256="afdb6f1a0e45b715d0bb9b11772f",
    onnx_bytes=5,
)


def folder_with(tmp_path: Path, manifest: ModelManifest = MANIFEST, onnx: bytes = b"12345") -> Path:
    (tmp_path / "mini.onnx").write_bytes(onnx)
    (tmp_path / "tokenizer.json").write_text("{}")
    write_manifest(tmp_path, manifest)
    return tmp_path


def vars_of(manifest: ModelManifest) -> dict[str, Any]:
    return {name: getattr(manifest, name) for name in manifest.__dataclass_fields__}


def test_the_model_id_is_name_dims_and_the_head_of_the_model_hash() -> None:
    assert MANIFEST.model_id == "mini-384-afdb6f1a0e45"


def test_a_written_manifest_reads_back(tmp_path: Path) -> None:
    assert read_manifest(folder_with(tmp_path)) == MANIFEST


@pytest.mark.parametrize(
    "change, message",
    [
        ({"dims": True}, "manifest field 'dims' must be int, not True"),
        ({"dims": "384"}, "manifest field 'dims' must be int"),
        ({"pooling": "max"}, "manifest pooling 'max': use one of mean, cls"),
        ({"max_length": 0}, "dims and max_length must be positive"),
        ({"vocabulary": 3}, "manifest field 'vocabulary' must be str | None"),
        ({"colour": "red"}, "unknown manifest field 'colour'"),
    ],
)
def test_a_wrong_field_is_one_line_naming_it(change: dict[str, Any], message: str) -> None:
    data = dict(vars_of(MANIFEST), **change)
    with pytest.raises(EmbeddingError, match=message) as raised:
        parse_manifest(data, "m.json")
    assert "\n" not in str(raised.value) and str(raised.value).startswith("m.json: ")


def test_a_missing_field_and_a_non_object_are_refused() -> None:
    data = vars_of(MANIFEST)
    del data["onnx"]
    with pytest.raises(EmbeddingError, match="manifest field 'onnx' missing"):
        parse_manifest(data, "m.json")
    with pytest.raises(EmbeddingError, match="a manifest is a JSON object"):
        parse_manifest([1], "m.json")


def test_a_folder_without_a_manifest_says_to_fetch_the_models(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError, match="run `make models`"):
        read_manifest(tmp_path)


def test_a_model_file_of_another_size_or_a_missing_tokenizer_is_refused(tmp_path: Path) -> None:
    folder = folder_with(tmp_path, onnx=b"1234")
    with pytest.raises(EmbeddingError, match="not the 5 bytes the manifest names"):
        read_manifest(folder)
    folder_with(tmp_path, replace(MANIFEST, tokenizer="other.json"))
    with pytest.raises(EmbeddingError, match="tokenizer other.json missing"):
        read_manifest(folder)


def test_an_unreadable_manifest_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text("{not json")
    with pytest.raises(EmbeddingError, match="unreadable manifest") as raised:
        read_manifest(tmp_path)
    assert "\n" not in str(raised.value)
