"""The semantic-candidates measure's pure parts: shares and their layout, the block's room, the causal vocabulary,
the counts, and the byte counts of an index."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from tests.unit.embeddings.fakes import TableEmbedder
from turnstream.embeddings.vocabulary import build_vocabulary
from turnstream.redis.archive import arrival_number
from turnstream_tools.benchmarks.semantic_candidates import postings_bytes, short_id
from turnstream_tools.benchmarks.semantic_corpus import corpus, embed
from turnstream_tools.benchmarks.semantic_mechanisms import (
    Knobs,
    Setup,
    bm25,
    by_vector,
    dense,
    in_room,
    interleave,
    merged,
    owner_vocabulary,
    score,
    setup,
    shares,
)
from turnstream_tools.samples.recall_set import RecallCase

SAID = [
    "I love green tea in the morning.",
    "We went hiking in the mountains.",
    "My karate class starts today.",
    "The weather is grey.",
    "Tea with lemon is the best.",
]


def case() -> RecallCase:
    turns = [
        {
            "turn_id": f"t{n}",
            "session_id": "s",
            "user_id": "u",
            "seq": n,
            "ts": 1_700_000_000.0 + n,
            "message": {"role": "user", "name": "Ann", "content": text},
        }
        for n, text in enumerate(SAID)
    ]
    return RecallCase(
        "s",
        "u",
        turns,
        [("Which martial art is practised?", "karate"), ("What tea?", "green")],
        [("t2",), ("t0", "t4")],
    )


def ready(knobs: Knobs | None = None) -> Setup:
    embedder = TableEmbedder(
        {"Which martial art is practised?": [1, 0, 0, 0], "Ann: My karate class starts today.": [1, 0.1, 0, 0]}
    )
    data = corpus("tiny", [case()])
    model = build_vocabulary([("karat", "karate"), ("tea", "tea"), ("martial", "martial")], embedder)
    return setup(data, embed(embedder, data), knobs or Knobs(), model, embedder)


def test_the_corpus_holds_each_turn_as_spoken_and_only_questions_with_evidence() -> None:
    data = corpus("tiny", [case()])
    assert data.passages[2] == "Ann: My karate class starts today."
    assert data.ids == ["t0", "t1", "t2", "t3", "t4"] and data.rows == [0, 1, 2, 3, 4]
    assert [q for _, q, _ in data.questions] == ["Which martial art is practised?", "What tea?"]
    assert all(tokens > 5 for tokens in data.tokens)


def test_merged_and_interleaved_lists_keep_each_turn_once_as_it_first_came() -> None:
    assert merged([(1, True), (2, True)], [(2, False), (3, False)]) == [(1, True), (2, True), (3, False)]
    assert interleave([(1, True), (2, True), (4, True)], [(3, False), (1, False)]) == [
        (1, True),
        (3, False),
        (2, True),
        (4, True),
    ]
    assert interleave() == []


def test_shares_put_the_lexical_head_first_then_the_semantic_hits() -> None:
    s = ready(Knobs(lexical_first=1))
    lexical = lambda s_, n: [(10, True), (11, True), (12, True)]  # noqa: E731
    semantic = lambda s_, n: [(20, False), (11, False)]  # noqa: E731
    assert shares(lexical, semantic)(s, 0) == [(10, True), (20, False), (11, False), (12, True)]
    s = replace(s, knobs=replace(s.knobs, lexical_first=None))
    assert shares(lexical, semantic)(s, 0) == [(10, True), (20, False), (11, True), (12, True)]


def test_a_block_takes_whole_snippets_then_a_hit_alone_and_never_passes_its_room() -> None:
    s = ready()
    s.data.tokens[:] = [10, 10, 10, 10, 10]
    assert in_room(s, 0, [(2, True)], (1, 0), room=30) == [2, 1, 3]
    assert in_room(s, 0, [(2, True), (4, True)], (1, 0), room=40) == [2, 1, 3, 4]  # 4's snippet (3, 4) is 4 alone
    assert in_room(s, 0, [(2, True), (0, False)], (1, 0), room=25) == [2, 0]  # 2's snippet does not fit, 2 does
    assert in_room(s, 0, [(2, True)], (2, 2), room=5) == []


def test_the_vocabulary_of_an_owner_grows_as_its_words_are_first_said() -> None:
    s, data = ready(), corpus("tiny", [case()])
    model = build_vocabulary([("karat", "karate"), ("tea", "tea"), ("martial", "martial")], TableEmbedder())
    shared, known = owner_vocabulary(data, data.owners[0], model, TableEmbedder(), "shared")
    assert shared.terms == ("tea", "karat") and known == [1, 1, 2, 2, 2]  # "martial" is never said: not the owner's
    archive, known = owner_vocabulary(data, data.owners[0], model, TableEmbedder(), "archive")
    assert archive.terms[:4] == ("ann", "love", "green", "tea") and known[0] == 5 and len(set(known)) == 5
    assert owner_vocabulary(data, data.owners[0], model, TableEmbedder(), "model")[1] == [3] * 5
    # m is 16, but before the third turn the owner has said only one of the model's words
    assert {term for terms in s.owners[0].expansions[:2] for term, _ in terms} <= {"tea"}
    assert "martial" not in {term for terms in s.owners[0].expansions for term, _ in terms}


def test_scores_count_questions_with_all_and_with_any_evidence() -> None:
    s = ready()
    assert (
        score(s, dense(1)).all_found == 50.0
    )  # the martial-arts question finds karate by its vector; tea needs two turns
    got = score(s, dense(5))
    assert (got.all_found, got.any_found, got.candidates) == (100.0, 100.0, 5.0)
    assert score(s, bm25(20)).any_found == 50.0  # "tea" is a word of t0 and t4; "martial art" of no turn


def test_ranking_a_pool_by_vector_keeps_its_best_k() -> None:
    s = ready()
    everything = lambda s_, n: [(t, True) for t in range(5)]  # noqa: E731
    assert by_vector(everything, 1)(s, 0) == [(2, False)]


@given(st.integers(0, 62**3))
def test_short_ids_are_the_archive_s_arrival_numbers(number: int) -> None:
    assert arrival_number(short_id(number)) == number


def test_postings_bytes_count_the_packed_postings_and_the_terms_record() -> None:
    # entry 1: "1:5000," (7) + "tea " (4); "1:10000," (8) + "art " (4)
    assert postings_bytes([[("tea", 0.5), ("art", 1.0)]]) == 23
    assert postings_bytes([]) == 0
    assert np.isclose(postings_bytes([[("a", 0.1)], []]), (len("1:1000,") + 2) / 2)
