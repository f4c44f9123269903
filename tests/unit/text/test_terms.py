import pytest
from hypothesis import given
from hypothesis import strategies as st

from turnstream.text.terms import cjk_bigrams, query_terms, recall_terms


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("Caroline researched adoption agencies", ["carolin", "research", "adopt", "agenc"]),
        ("What did Caroline's group research?", ["carolin", "group", "research"]),  # function words and 's go
        (
            "It costs 2,000 EUR, or 2000 euros on 8 May 2023",
            ["cost", "2000", "eur", "2000", "euro", "8", "may", "2023"],
        ),
        ("I’m running; she runs", ["run", "run"]),  # curly apostrophes are apostrophes
        ("Café Müller", ["café", "müller"]),  # other scripts: lower-cased, not stemmed
        ("我想订京都的酒店", ["我想", "想订", "订京", "京都", "的酒", "酒店"]),
        ("東京でラーメン", ["東京", "京で", "でラ", "ラー", "ーメ", "メン"]),
        ("猫 hiking 了", ["hike", "猫"]),  # a lone CJK character stays whole; 了 is a function character
    ],
)
def test_recall_terms(text: str, terms: list[str]) -> None:
    assert recall_terms(text) == terms


def test_a_bigram_of_function_characters_is_dropped() -> None:
    assert cjk_bigrams("我的你好") == ["你好"]  # 我的 and 的你 are function-only; 你好 is a word


def test_query_terms_are_distinct_and_capped() -> None:
    assert query_terms("run running runs ran marathon marathons", 10) == ["run", "ran", "marathon"]
    assert query_terms("alpha beta gamma delta", 2) == ["alpha", "beta"]


@given(st.text())
def test_write_and_read_tokenise_alike(text: str) -> None:
    """A text's own query finds every term it was indexed under (what makes BM25 work at all)."""
    indexed = set(recall_terms(text))
    assert set(query_terms(text, 10_000)) == indexed
