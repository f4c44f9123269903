"""A batch of archived turns: each embedded by the model of its language, once per model, stored as int8 with
its expansion terms over the caller's share of that model's vocabulary."""

from __future__ import annotations

import numpy as np

from tests.unit.embeddings.fakes import TableEmbedder
from turnstream.embeddings.codec import decode_int8
from turnstream.embeddings.factory import Embedders
from turnstream.embeddings.turns import embed_turns
from turnstream.embeddings.vocabulary import Vocabulary


def vocabulary() -> Vocabulary:
    vectors = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]], dtype=np.float32)
    return Vocabulary(("martial", "tea", "猫"), ("martial", "tea", "猫"), vectors)


def test_each_turn_goes_to_its_language_s_model_once_per_batch_and_keeps_its_place() -> None:
    en = TableEmbedder({"John: I did taekwondo": [0.9, 0.1, 0, 0], "Ann: green tea": [0, 1, 0, 0]}, model_id="en-4")
    zh = TableEmbedder({"林: 我的猫叫开心果": [0, 0, 1, 0]}, model_id="zh-4")
    passages = ["John: I did taekwondo", "林: 我的猫叫开心果", "Ann: green tea"]
    turns = embed_turns(Embedders(en, zh), passages, terms=1, vocabulary=lambda model: vocabulary())
    assert en.calls == [["John: I did taekwondo", "Ann: green tea"]] and zh.calls == [["林: 我的猫叫开心果"]]
    assert [t.model_id for t in turns] == ["en-4", "zh-4", "en-4"]
    assert [[term for term, _ in t.terms] for t in turns] == [["martial"], ["猫"], ["tea"]]
    assert np.allclose(decode_int8(turns[2].vector, 4), [0, 1, 0, 0], atol=1e-2)


def test_a_model_without_a_vocabulary_gives_no_terms_and_a_subset_restricts_them() -> None:
    en = TableEmbedder({"John: I did taekwondo": [0.9, 0.1, 0, 0]})
    (turn,) = embed_turns(Embedders(en, en), ["John: I did taekwondo"], terms=4, vocabulary=lambda model: None)
    assert turn.terms == [] and len(turn.vector) == 8
    (turn,) = embed_turns(
        Embedders(en, en),
        ["John: I did taekwondo"],
        terms=4,
        vocabulary=lambda model: vocabulary().subset(["tea", "unknown"]),
    )
    assert [term for term, _ in turn.terms] == ["tea"]


def test_a_subset_keeps_the_order_given_and_the_vectors_of_its_terms() -> None:
    part = vocabulary().subset(["猫", "martial", "猫", "nope"])
    assert part.terms == ("猫", "martial")
    assert np.array_equal(part.vectors, [[0, 0, 1, 0], [1, 0, 0, 0]])
    assert vocabulary().subset([]).vectors.shape == (0, 4)
