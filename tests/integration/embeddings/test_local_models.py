"""The shipped models under ONNX Runtime: loaded as MODELS.md measured them, batched without changing the answer."""

from __future__ import annotations

import numpy as np
import pytest

from turnstream.embeddings.expansion import nearest_terms
from turnstream.embeddings.factory import load_embedders, model_folder
from turnstream.embeddings.local import OnnxEmbedder
from turnstream.embeddings.turns import embed_turns
from turnstream.embeddings.vocabulary import Vocabulary
from turnstream.settings import Settings

MARTIAL, KICKBOXING, CAR = "martial arts", "I started kickboxing last year", "I bought a new car"
TOLERANCE = 0.02
"""Of a cosine: the quantized MiniLM's vectors move a little with the padding around a text (MODELS.md)."""


def cosine(embedder: OnnxEmbedder, query: str, passage: str) -> float:
    return float(embedder.embed_queries([query])[0] @ embedder.embed_passages([passage])[0])


def test_minilm_gives_the_cosines_models_md_measured(minilm: OnnxEmbedder) -> None:
    assert cosine(minilm, MARTIAL, KICKBOXING) == pytest.approx(0.347, abs=TOLERANCE)
    assert cosine(minilm, MARTIAL, CAR) == pytest.approx(0.011, abs=TOLERANCE)
    assert minilm.model_id.startswith("all-minilm-l6-v2-q-384-") and minilm.dims == 384


def test_bge_zh_reads_english_lower_cased_and_separates_chinese(bge_zh: OnnxEmbedder) -> None:
    assert cosine(bge_zh, MARTIAL, KICKBOXING) == pytest.approx(0.471, abs=TOLERANCE)
    assert cosine(bge_zh, MARTIAL, CAR) == pytest.approx(0.416, abs=TOLERANCE)
    assert cosine(bge_zh, "武术", "我去年开始练跆拳道") > cosine(bge_zh, "武术", "我买了一辆新车") + 0.1
    assert bge_zh.dims == 512


def test_batches_sorted_by_length_keep_each_text_s_vector_and_order(minilm: OnnxEmbedder) -> None:
    texts = [f"{'very ' * (n % 7)}short text number {n}" for n in range(40)] + [
        "word " * 400
    ]  # the last is cut at 128 tokens
    batched = minilm.embed_passages(texts)
    alone = np.vstack([minilm.embed_passages([text]) for text in texts])
    assert batched.shape == (41, 384) and batched.dtype == np.float32
    assert np.allclose(np.linalg.norm(batched, axis=1), 1.0, atol=1e-5)
    # dynamic int8 quantization scales activations over the whole batch, padding and batch mates included: a
    # coordinate moves by a few hundredths (0.029 seen here), the direction hardly (cosine 0.985 at worst seen)
    assert np.min(np.sum(batched * alone, axis=1)) > 0.98
    assert np.array_equal(np.argmax(batched @ alone.T, axis=1), np.arange(41))


def test_nothing_to_embed_is_an_empty_array(minilm: OnnxEmbedder) -> None:
    assert minilm.embed_passages([]).shape == (0, 384)


def test_the_check_passes_and_threads_are_a_setting(minilm: OnnxEmbedder) -> None:
    minilm.check()
    two = OnnxEmbedder(model_folder(None, "en"), threads=2)
    assert np.allclose(two.embed_queries([MARTIAL]), minilm.embed_queries([MARTIAL]), atol=1e-5)


def test_the_vocabulary_cache_holds_the_category_of_a_turn(minilm: OnnxEmbedder) -> None:
    vocabulary = Vocabulary.load(model_folder(None, "en"))
    assert vocabulary.vectors.shape == (len(vocabulary.terms), 384) and len(vocabulary.terms) > 10_000
    (terms,) = nearest_terms(minilm.embed_passages(["John: I started taekwondo last year"]), vocabulary, m=16)
    assert {"taekwondo", "martial"} <= {term for term, _ in terms}


def test_the_settings_load_a_model_per_language_with_its_vocabulary() -> None:
    embedders = load_embedders(Settings(embeddings="local"))
    assert embedders is not None
    assert (
        embedders.for_text("我妹妹的猫叫什么？").dims == 512
        and embedders.for_text("What is my cat called?").dims == 384
    )
    assert set(embedders.vocabularies) == set(embedders.ids().distinct)
    (turn,) = embed_turns(
        embedders, ["John: I started taekwondo last year"], 16, lambda model: embedders.vocabularies[model.model_id]
    )
    assert turn.model_id == embedders.en.model_id and len(turn.vector) == 388
    assert "martial" in {term for term, _ in turn.terms}
