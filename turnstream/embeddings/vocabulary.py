"""The vocabulary a turn's expansion terms are drawn from: index terms with a word to embed, and their vectors.

Each entry is an index term in the recall tokenizer's own form (a Snowball stem, a CJK character or bigram),
so a term added to a turn is found by the same query words that find the turn's own terms, and one word that
shows the term to the model ("martial" for the stem "martial", "arts" for "art"). The model tokenizer's own
whole words make the fixed vocabulary; `make models` embeds it once into the model folder.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from turnstream.embeddings.base import Embedder, EmbeddingError
from turnstream.text.terms import CJK_RUN, recall_terms

TERMS_FILE = "vocabulary.tsv"
VECTORS_FILE = "vocabulary.npy"
MIN_WORD_CHARS = 3
"""Shorter spaced words ("ok", "uh", a letter) name no topic a question could ask about."""


@dataclass(frozen=True)
class Vocabulary:
    """Index terms, the word each was embedded as, and one unit vector per term (float16 on disk, float32 here)."""

    terms: tuple[str, ...]
    words: tuple[str, ...]
    vectors: NDArray[np.float32]

    def __post_init__(self) -> None:
        if not len(self.terms) == len(self.words) == len(self.vectors):
            raise EmbeddingError(
                f"vocabulary of {len(self.terms)} terms, {len(self.words)} words, {len(self.vectors)} vectors"
            )

    def subset(self, terms: Iterable[str]) -> Vocabulary:
        """The entries of `terms` that are in this vocabulary, in the order given: an owner's own share of it
        (the terms it has used), whose vectors need no embedding."""
        rows = {term: n for n, term in enumerate(self.terms)}
        kept = [rows[term] for term in dict.fromkeys(terms) if term in rows]
        return Vocabulary(tuple(self.terms[r] for r in kept), tuple(self.words[r] for r in kept), self.vectors[kept])

    def save(self, folder: Path) -> None:
        """Write the terms (term TAB word, a line each) and the vectors as float16 into `folder`."""
        (folder / TERMS_FILE).write_text(
            "".join(f"{t}\t{w}\n" for t, w in zip(self.terms, self.words)), encoding="utf-8"
        )
        np.save(folder / VECTORS_FILE, self.vectors.astype(np.float16))

    @classmethod
    def load(cls, folder: Path) -> Vocabulary:
        """The vocabulary cache `make models` wrote into a model folder; one-line EmbeddingError when it is not there."""
        try:
            lines = (folder / TERMS_FILE).read_text(encoding="utf-8").splitlines()
            # column-major: a question's product with every vector then reads them in memory order, faster at
            # one BLAS thread than across rows (tools/turnstream_tools/benchmarks/HISTORY.md, 2026-12-05 evening); a subset's
            # rows come out row-major, as before
            vectors = np.asfortranarray(np.load(folder / VECTORS_FILE), dtype=np.float32)
        except (OSError, ValueError) as error:
            raise EmbeddingError(
                f"{folder}: no readable vocabulary cache ({error.__class__.__name__}): run `make models` again"
            ) from None
        pairs = [line.split("\t", 1) for line in lines]
        return cls(tuple(p[0] for p in pairs), tuple(p[-1] for p in pairs), vectors)


def index_term(word: str) -> str | None:
    """The one recall term `word` stands for, or None: a function word, a short or mixed token, or one that
    the recall tokenizer cuts into several terms (a CJK run longer than a bigram)."""
    if not CJK_RUN.fullmatch(word) and (len(word) < MIN_WORD_CHARS or not word.isalpha()):
        return None
    terms = recall_terms(word)
    return terms[0] if len(terms) == 1 else None


def term_words(words: Iterable[str]) -> list[tuple[str, str]]:
    """(term, word) for each distinct term of `words`, first word kept: "arts" and "art" are one term."""
    seen: dict[str, str] = {}
    for word in words:
        term = index_term(word)
        if term is not None and term not in seen:
            seen[term] = word
    return list(seen.items())


def tokenizer_words(tokenizer_json: Path) -> list[str]:
    """A WordPiece tokenizer's whole-word entries, in vocabulary order: no "##" pieces, no [SPECIAL] tokens."""
    model = json.loads(tokenizer_json.read_text(encoding="utf-8")).get("model", {})
    vocab = model.get("vocab")
    if not isinstance(vocab, dict):
        raise EmbeddingError(f"{tokenizer_json}: no WordPiece vocabulary in its model")
    ordered = sorted(vocab.items(), key=lambda item: item[1])
    return [word for word, _ in ordered if not word.startswith(("##", "[")) and word.isalpha()]


def build_vocabulary(pairs: Sequence[tuple[str, str]], embedder: Embedder) -> Vocabulary:
    """Embed each pair's word (as a stored text: a turn's vector is compared with it) into a Vocabulary."""
    vectors = (
        embedder.embed_passages([word for _, word in pairs]) if pairs else np.zeros((0, embedder.dims), np.float32)
    )
    return Vocabulary(tuple(t for t, _ in pairs), tuple(w for _, w in pairs), vectors)
