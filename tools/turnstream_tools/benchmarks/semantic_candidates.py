"""Which semantic mechanism brings a question's evidence into the prompt: the measure, printed as tables.

    python -m turnstream_tools.benchmarks.semantic_candidates --locomo DIR [--models .models] [--no-grid]

For every question that lists evidence, the share with all its evidence turns (and with any) among: the
candidates alone; the candidates with the read script's neighbours; and what a memory block of 1,500 or
2,500 tokens holds of them, with the questions won and lost against BM25 alone in the same room. For BM25
(the product's terms and bounds), dense retrieval over every turn, fixed shares of both, expansion terms on
the write path (queried without and with the model) and stored vectors ranking a bounded pool
(semantic_mechanisms.py); then the block's layout, the rescoring pool, a grid over the expansion's
vocabulary and terms per turn, dense retrieval alone per model, and the costs. LoCoMo's development split
only (only LOCOMO_DEV's files are read from DIR; the other conversations are held out) and the generated chats.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from turnstream.embeddings.base import EmbeddingError
from turnstream.embeddings.codec import encoded_bytes
from turnstream.embeddings.expansion import WeightedTerms
from turnstream.embeddings.factory import DEFAULT_MODELS, MODELS_DIR
from turnstream.embeddings.local import OnnxEmbedder
from turnstream.embeddings.vocabulary import Vocabulary
from turnstream.redis.archive import DIGITS, WEIGHT_SCALE
from turnstream.stats import percentile
from turnstream_tools.benchmarks.recall import LOCOMO_DEV, locomo_case
from turnstream_tools.benchmarks.semantic_corpus import Corpus, corpus, embed
from turnstream_tools.benchmarks.semantic_mechanisms import (
    READ,
    VOCABULARIES,
    Knobs,
    Mechanism,
    Setup,
    bm25,
    dense,
    found,
    mechanisms,
    score,
    setup,
)
from turnstream_tools.samples.recall_set import recall_case

ROOMS = (1500, 2500)
"""Tokens of recalled lines a memory block holds: about what a 2,000- and a 4,000-token prompt leave it."""
GRID_TERMS = (4, 8, 16, 32)
"""Terms per turn (m) the grid tries."""
LAYOUTS: tuple[tuple[int | None, int], ...] = ((None, READ.neighbours), (None, 0), (5, 0), (10, 0))
"""(lexical snippets first, or None for one of each in turn; neighbours of a semantic hit) the layout table tries."""
POOLS = (20, 30, 50)
RUNS = (
    ("LoCoMo dev", "en"),
    ("LoCoMo dev", "zh"),
    ("generated en", "en"),
    ("generated zh", "en"),
    ("generated zh", "zh"),
)
"""(corpus, model language) pairs: each corpus under MiniLM ("en"), LoCoMo and the Chinese chat under bge-small-zh
("zh") too, to see whether one model serves both languages."""
DENSE_DEPTHS = (1, 5, 20)


def short_id(number: int) -> str:
    """A short entry id as archive_append.lua writes it (the arrival number in base 62)."""
    digits = ""
    while True:
        number, digit = divmod(number, 62)
        digits = DIGITS[digit] + digits
        if number == 0:
            return digits


def postings_bytes(documents: Sequence[Sequence[tuple[str, float]]]) -> float:
    """Bytes per document of its postings packed as the term dictionary packs them (`id:weight,`) plus its terms
    record (what eviction reads): the index's own bytes, before Redis's per-field overhead."""
    total = 0
    for number, terms in enumerate(documents, start=1):
        sid = short_id(number)
        total += sum(len(f"{sid}:{max(1, round(weight * WEIGHT_SCALE))},") + len(term) + 1 for term, weight in terms)
    return total / max(len(documents), 1)


def lexical_documents(s: Setup) -> list[list[tuple[str, float]]]:
    """Every turn's lexical postings (term, BM25 weight), by the same count as the expansions'."""
    documents = []
    for owner in s.owners:
        weights: list[list[tuple[str, float]]] = [[] for _ in owner.turns]
        for term, posting in owner.lexical.postings.items():
            for doc, weight in posting.items():
                weights[doc].append((term, weight))
        documents += weights
    return documents


def expansions(s: Setup) -> list[WeightedTerms]:
    return [terms for owner in s.owners for terms in owner.expansions]


def table(title: str, header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table under a title line."""
    lines = [f"\n{title}\n", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(f"{v:.1f}" if isinstance(v, float) else str(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def in_block(s: Setup, mechanism: Mechanism, room: int) -> str:
    """'all % (+won −lost)': questions with all evidence in a block of `room` tokens, against BM25 alone there."""
    around = (READ.neighbours, s.knobs.semantic_neighbours)
    mine, theirs = found(s, mechanism, around, room), found(s, bm25(s.knobs.hits), around, room)
    won = sum(a and not b for (a, _, _), (b, _, _) in zip(mine, theirs))
    lost = sum(b and not a for (a, _, _), (b, _, _) in zip(mine, theirs))
    return f"{100 * sum(a for a, _, _ in mine) / max(len(mine), 1):.1f} (+{won} −{lost})"


def mechanism_table(s: Setup) -> str:
    rows = []
    for label, mechanism in mechanisms(s.knobs):
        hits, near = score(s, mechanism), score(s, mechanism, (READ.neighbours, READ.neighbours))
        rows.append(
            [
                label,
                hits.all_found,
                hits.any_found,
                hits.candidates,
                near.all_found,
                near.candidates,
                *(in_block(s, mechanism, room) for room in ROOMS),
            ]
        )
    k = s.knobs
    title = (
        f"{s.data.name} · {s.embedded.model_id} · {len(s.data.questions)} questions with evidence · vocabulary "
        f"{k.vocabulary}, m {k.terms_per_turn}, query terms {k.query_terms}, pool {k.pool}, block: "
        f"{k.lexical_first} lexical snippets first, semantic hits ±{k.semantic_neighbours}"
    )
    header = [
        "mechanism",
        "hits: all %",
        "any %",
        "cands",
        f"±{READ.neighbours}: all %",
        "cands",
        *(f"{room:,}-token block: all % (vs a)" for room in ROOMS),
    ]
    return table(title, header, rows)


def layout_table(s: Setup) -> str:
    """The fixed shares laid out in a block each way LAYOUTS names, for the mixed mechanisms."""
    rows = []
    for first, side in LAYOUTS:
        laid = replace(s, knobs=replace(s.knobs, lexical_first=first, semantic_neighbours=side))
        name = "one of each in turn" if first is None else f"{first} lexical first"
        for label, mechanism in mechanisms(laid.knobs)[4:]:
            if label[0] in "cde" and label[1] != "'":
                rows.append([f"{name}, semantic ±{side}", label, *(in_block(laid, mechanism, room) for room in ROOMS)])
    return table(
        f"{s.data.name} · block layouts", ["layout", "mechanism", *(f"{r:,} tokens: all % (vs a)" for r in ROOMS)], rows
    )


def pool_table(s: Setup) -> str:
    rows = []
    for pool in POOLS:
        pooled = replace(s, knobs=replace(s.knobs, pool=pool))
        for label, mechanism in mechanisms(pooled.knobs)[8:]:
            rows.append(
                [
                    pool,
                    label,
                    score(pooled, mechanism).all_found,
                    *(in_block(pooled, mechanism, room) for room in ROOMS),
                ]
            )
    return table(
        f"{s.data.name} · rescoring pool", ["pool", "mechanism", "hits: all %", *(f"{r:,} tokens" for r in ROOMS)], rows
    )


def grid_table(s: Setup, model: Vocabulary, embedder: OnnxEmbedder) -> str:
    """d1, d2 and e2 over every vocabulary and m: hits and a 2,500-token block, terms and bytes per turn."""
    rows = []
    for kind in VOCABULARIES:
        for m in GRID_TERMS:
            tried = setup(s.data, s.embedded, replace(s.knobs, terms_per_turn=m, vocabulary=kind), model, embedder)
            cells = []
            for _, mechanism in (mechanisms(tried.knobs)[i] for i in (6, 7, 10)):
                got = score(tried, mechanism)
                cells += [f"{got.all_found:.1f} / {got.any_found:.1f}", in_block(tried, mechanism, ROOMS[-1])]
            found_terms = expansions(tried)
            rows.append([kind, m, *cells, float(np.mean([len(t) for t in found_terms])), postings_bytes(found_terms)])
    header = [
        "vocabulary",
        "m",
        "d1 hits all/any %",
        f"d1 {ROOMS[-1]:,} tok",
        "d2 hits",
        f"d2 {ROOMS[-1]:,} tok",
        "e2 hits",
        f"e2 {ROOMS[-1]:,} tok",
        "terms/turn",
        "index B/turn",
    ]
    return table(f"{s.data.name} · {s.embedded.model_id} · expansion vocabulary and terms per turn", header, rows)


def dense_row(s: Setup) -> list[object]:
    """Dense alone at depths 1, 5, 20: the share of questions with all their evidence that deep."""
    return [s.data.name, s.embedded.model_id, *(score(s, dense(k)).all_found for k in DENSE_DEPTHS)]


def cost_row(s: Setup) -> list[object]:
    e, dims = s.embedded, s.embedded.turns.shape[1]
    return [
        s.data.name,
        e.model_id,
        e.turn_cpu_ms,
        percentile(e.query_cpu_ms, 50),
        percentile(e.query_cpu_ms, 99),
        encoded_bytes(dims, "int8"),
        encoded_bytes(dims, "float16"),
        float(np.mean(s.data.json_bytes)),
        float(np.mean([len(t) for t in expansions(s)])),
        postings_bytes(expansions(s)),
        postings_bytes(lexical_documents(s)),
    ]


COST_HEADER = [
    "corpus",
    "model",
    "turn CPU ms (batches of 16 by length)",
    "query CPU ms p50",
    "p99",
    "int8 B/turn",
    "float16 B/turn",
    "entry JSON B/turn",
    "expansion terms/turn",
    "expansion index B/turn",
    "lexical index B/turn",
]


def corpora(locomo: Path | None) -> dict[str, Corpus]:
    found_ = {
        "generated en": corpus("generated en", [recall_case("en")]),
        "generated zh": corpus("generated zh", [recall_case("zh")]),
    }
    if locomo is not None:
        found_["LoCoMo dev"] = corpus("LoCoMo dev", [locomo_case(locomo / name) for name in LOCOMO_DEV])
    return found_


def run(locomo: Path | None, models: Path, grid: bool, knobs: Knobs) -> str:
    """Every table, as the command prints it."""
    data = corpora(locomo)
    out, costs, depths = [], [], []
    for language in ("en", "zh"):
        folder = models / DEFAULT_MODELS[language]
        embedder, vocabulary = OnnxEmbedder(folder), Vocabulary.load(folder)
        for name, model_language in RUNS:
            if model_language != language or name not in data:
                continue
            s = setup(data[name], embed(embedder, data[name]), knobs, vocabulary, embedder)
            out.append(mechanism_table(s))
            if grid and name == "LoCoMo dev" and language == "en":
                out += [layout_table(s), pool_table(s), grid_table(s, vocabulary, embedder)]
            costs.append(cost_row(s))
            depths.append(dense_row(s))
            print(f"measured {name} under {s.embedded.model_id}", file=sys.stderr)
    out.append(
        table(
            "dense alone: % of questions with all evidence in the top k",
            ["corpus", "model", *(f"top {k}" for k in DENSE_DEPTHS)],
            depths,
        )
    )
    out.append(table("cost per turn and per query (one thread)", COST_HEADER, costs))
    return "\n".join(out) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m turnstream_tools.benchmarks.semantic_candidates", description=(__doc__ or "").split("\n")[0]
    )
    parser.add_argument(
        "--locomo", type=Path, help=f"folder holding LoCoMo's development conversations ({', '.join(LOCOMO_DEV)})"
    )
    parser.add_argument("--models", type=Path, default=MODELS_DIR, help="where `make models` unpacked the models")
    parser.add_argument("--no-grid", action="store_true", help="only the mechanisms, dense alone and the costs")
    args = parser.parse_args(argv)
    missing = [name for name in LOCOMO_DEV if args.locomo and not (args.locomo / name).is_file()]
    if missing:
        print(f"semantic_candidates: {args.locomo} holds no {missing[0]}", file=sys.stderr)
        return 2
    try:
        print(run(args.locomo, args.models, not args.no_grid, Knobs()), end="")
    except EmbeddingError as error:
        print(f"semantic_candidates: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
