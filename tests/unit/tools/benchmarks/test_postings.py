"""The offline posting index scores as recall.lua does: write-time length norms, rare terms first, bounded reads."""

from __future__ import annotations

from collections import Counter

import pytest

from turnstream_tools.benchmarks.postings import PostingIndex, bm25_index, weighted_index


def test_a_rare_term_outweighs_a_common_one() -> None:
    index = bm25_index([Counter(["cat", "dog"]), Counter(["dog"]), Counter(["dog", "bird"]), Counter(["dog"])])
    assert index.search({"cat": 1.0, "dog": 1.0}, hits=4)[0] == 0
    assert index.idf("cat") > index.idf("dog") > 0


def test_the_length_norm_is_the_average_at_write_time() -> None:
    # the same term once in a short and in a long entry: the short one weighs more, as it was written
    index = bm25_index([Counter({"tea": 1}), Counter({"tea": 1, **{f"w{n}": 1 for n in range(9)}})])
    weights = index.postings["tea"]
    assert weights[0] == pytest.approx(2.2 / (1 + 1.2))  # alone in the archive: its length is the average
    assert weights[0] > weights[1]


def test_only_the_most_telling_terms_and_the_best_postings_are_read() -> None:
    index = weighted_index([[("a", 0.9)], [("a", 0.5), ("b", 0.8)], [("a", 0.7)], [("c", 0.1)]])
    assert index.search({"a": 1.0}, hits=5, per_term=2) == [0, 2]
    assert index.search({"a": 1.0, "b": 1.0, "c": 1.0}, hits=5, scored_terms=1) in ([1], [3])  # b and c: df 1 each
    assert index.search({"a": 1.0, "b": 1.0}, hits=1) == [1]


def test_unknown_terms_and_an_empty_index_find_nothing() -> None:
    assert PostingIndex().search({"x": 1.0}, hits=3) == []
    assert weighted_index([[("a", 1.0)]]).search({"zzz": 1.0}, hits=3) == []


def test_ties_go_to_the_earlier_document() -> None:
    assert weighted_index([[("a", 0.5)], [("a", 0.5)]]).search({"a": 1.0}, hits=2) == [0, 1]
