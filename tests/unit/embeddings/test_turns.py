"""A batch of archived turns: each embedded by the model of its language, once per model, stored as int8 with
its expansion terms over the caller's share of that model's vocabulary."""

from __future__ import annotations

import numpy as np

from tests.unit.embeddings.fakes import TableEmbedder
from turnstream.embeddings.codec import decode_int8
from turnstream.embeddings.factory import Embedders
from turnstream.embeddings.turns import TERM_WEIGHT_SCALE, embed_entries, embed_turns
from turnstream.embeddings.vocabulary import Vocabulary
from turnstream.schemas.archive import ArchiveEntry


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


def test_an_entry_is_indexed_under_its_identifiers_at_full_weight_before_its_nearest_terms() -> None:
    """No vocabulary holds an id: the semantic index gets the turn's own, so a query naming one meets it there too."""
    text = 'get_customer({"id": "cust_88213"}) → {"payment_methods": ["voucher_5518230"], "bookings": ["KX4Q2P"]}'
    tool = ArchiveEntry("e1", "s1", 3, "tool", None, 0.0, text)
    chat = ArchiveEntry("e2", "s1", 4, "user", "John", 0.0, "I did taekwondo")
    en = TableEmbedder({f"John: {chat.text}": [1, 0, 0, 0]}, model_id="en-4")
    embedders = Embedders(en, en, {"en-4": vocabulary()})
    found, plain = embed_entries(embedders, [tool, chat], terms=1)
    ids = [("cust_88213", TERM_WEIGHT_SCALE), ("voucher_5518230", TERM_WEIGHT_SCALE), ("kx4q2p", TERM_WEIGHT_SCALE)]
    assert found.terms[: len(ids)] == tuple(ids) and len(found.terms) == len(ids) + 1
    assert plain.terms == (("martial", TERM_WEIGHT_SCALE),)  # a turn without an id: its nearest terms alone
