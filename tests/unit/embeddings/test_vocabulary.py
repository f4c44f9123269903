"""The vocabulary: index terms in the recall tokenizer's form, the words that show them, the cache on disk."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.unit.embeddings.fakes import TableEmbedder
from turnstream.embeddings.base import EmbeddingError
from turnstream.embeddings.vocabulary import Vocabulary, build_vocabulary, index_term, term_words, tokenizer_words


@pytest.mark.parametrize(
    "word, term",
    [
        ("arts", "art"),
        ("kickboxing", "kickbox"),
        ("Taekwondo", "taekwondo"),
        ("the", None),
        ("ok", None),
        ("x2", None),
        ("ß", None),
        ("2023", None),
        ("猫", "猫"),
        ("妹妹", "妹妹"),
        ("的", None),
        ("开心果", None),
    ],
)
def test_a_word_stands_for_one_recall_term_or_none(word: str, term: str | None) -> None:
    assert index_term(word) == term


def test_term_words_keep_the_first_word_of_each_term() -> None:
    assert term_words(["arts", "the", "art", "martial", "arts"]) == [("art", "arts"), ("martial", "martial")]


def test_the_tokenizer_vocabulary_is_its_whole_words_in_id_order(tmp_path: Path) -> None:
    vocab = {"[PAD]": 0, "[unused1]": 1, "martial": 5, "##ing": 3, "arts": 4, "42": 6, "猫": 2}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps({"model": {"type": "WordPiece", "vocab": vocab}}), encoding="utf-8")
    assert tokenizer_words(path) == ["猫", "arts", "martial"]
    path.write_text(json.dumps({"model": {"type": "BPE"}}))
    with pytest.raises(EmbeddingError, match="no WordPiece vocabulary"):
        tokenizer_words(path)


def test_a_built_vocabulary_saves_as_float16_and_loads_back(tmp_path: Path) -> None:
    embedder = TableEmbedder({"arts": [1, 0, 0, 0], "martial": [0, 3, 4, 0]})
    vocabulary = build_vocabulary([("art", "arts"), ("martial", "martial")], embedder)
    assert embedder.calls == [["arts", "martial"]]
    vocabulary.save(tmp_path)
    loaded = Vocabulary.load(tmp_path)
    assert loaded.terms == ("art", "martial") and loaded.words == ("arts", "martial")
    assert loaded.vectors.dtype == np.float32
    assert np.allclose(loaded.vectors, [[1, 0, 0, 0], [0, 0.6, 0.8, 0]], atol=1e-3)
    # held column-major, so a question's product with the whole vocabulary reads it in memory order
    assert loaded.vectors.T.flags["C_CONTIGUOUS"]


def test_a_folder_without_a_vocabulary_cache_says_to_fetch_again(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError, match="no readable vocabulary cache"):
        Vocabulary.load(tmp_path)


def test_an_empty_vocabulary_embeds_nothing() -> None:
    embedder = TableEmbedder()
    assert build_vocabulary([], embedder).vectors.shape == (0, 4) and embedder.calls == []
