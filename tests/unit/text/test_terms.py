import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from turnstream.text.terms import (
    MAX_IDENTIFIER_CHARS,
    cjk_bigrams,
    is_identifier,
    joined_identifiers,
    query_terms,
    recall_terms,
    spaced_words,
    stem,
)


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


@given(
    st.text()
    | st.lists(st.sampled_from(["voucher_5518230", "TYO-10477", "2-b", "x", " ", "-", "_", "酒店"])).map("".join)
)
def test_write_and_read_tokenise_alike(text: str) -> None:
    """A text's own query asks only terms it was indexed under, and all of them but a joined id's parts (what
    makes BM25 work at all)."""
    indexed, asked = set(recall_terms(text)), set(query_terms(text, 10_000))
    assert asked <= indexed
    assert asked == indexed if not joined_identifiers(text) else set(joined_identifiers(text)) <= asked


@pytest.mark.parametrize(
    ("text", "identifiers"),
    [
        ("Pay with voucher_5518230 please", ["voucher_5518230"]),
        ("bookings: KX4Q2P, ZR81LM", ["kx4q2p", "zr81lm"]),
        ("Hotel TYO-10477 in Asakusa", ["tyo-10477"]),
        ("Flight CA929 leaves at 9", ["ca929"]),
        ("order #W2378156 for mia_garcia_4516", ["mia_garcia_4516", "w2378156"]),
        (  # its mixed parts are ids too, as written alone
            "trace 123e4567-e89b-12d3-a456-426614174000",
            ["123e4567-e89b-12d3-a456-426614174000", "123e4567", "e89b", "12d3", "a456"],
        ),
        ("card_9920117 (visa 3311), card ABC12S", ["card_9920117", "abc12s"]),  # not stemmed to abc12, another id
        ("选CA929吧，便宜一点。", ["ca929"]),
        ("就住浅草那家TYO-10477，订单号ORD-2024-0001", ["tyo-10477", "ord-2024-0001"]),
        ("航班KX4Q2P已确认", ["kx4q2p"]),
    ],
)
def test_identifiers_are_whole_terms(text: str, identifiers: list[str]) -> None:
    terms = recall_terms(text)
    assert [t for t in terms if is_identifier(t)] == identifiers
    asked = query_terms(text, 100)
    # each is asked: itself, or the joined id it is a part of, whole
    assert all(i in asked or any(i in re.split("[-_]", a) for a in asked) for i in identifiers)


def test_a_joined_identifier_is_asked_whole_and_indexed_with_its_parts_too() -> None:
    # asked whole: the result that holds the id, not every one holding "voucher" or "5518230"
    assert query_terms("TYO-10477 and voucher_5518230", 10) == ["tyo-10477", "voucher_5518230"]
    # "10477" alone, or "voucher 5518230" as a user says it, still finds the turn
    assert recall_terms("TYO-10477 and voucher_5518230") == [
        "tyo-10477",
        "voucher_5518230",
        "tyo",
        "10477",
        "voucher",
        "5518230",
    ]
    assert query_terms("voucher 5518230", 10) == ["voucher", "5518230"]


def test_a_run_too_long_for_an_id_is_its_parts() -> None:
    run = "-".join(["ab12"] * 20)
    assert len(run) > MAX_IDENTIFIER_CHARS and recall_terms(run) == ["ab12"] * 20


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        (
            "We met on 2023-05-08 at the café, then e-mailed Anna.",
            ["met", "2023", "05", "08", "café", "e", "mail", "anna"],
        ),
        (
            "A well-known, state-of-the-art place; call 555-0134 before 10.30",
            ["well", "known", "state", "art", "place", "call", "555", "0134", "10", "30"],
        ),
        ("Her kids' school costs 12,500 dollars a year", ["kid", "school", "cost", "12500", "dollar", "year"]),
        ("I'd love the seaside hotels near Porto", ["love", "seasid", "hotel", "near", "porto"]),
        ("我们五月去东京，预算两万元", ["们五", "五月", "月去", "去东", "东京", "预算", "算两", "两万", "万元"]),
        (
            "就住浅草那家吧，另外我对海鲜过敏。",
            ["就住", "住浅", "浅草", "草那", "那家", "家吧", "另外", "外我", "我对", "对海", "海鲜", "鲜过", "过敏"],
        ),
        ("下周三下午三点开会", ["下周", "周三", "三下", "下午", "午三", "三点", "点开", "开会"]),
    ],
)
def test_plain_words_and_numbers_are_tokenized_as_before(text: str, terms: list[str]) -> None:
    """Dates, phone numbers, hyphenated words and Chinese: no identifier among them, the terms chat recall has
    always had (what the shipped sets' figures rest on)."""
    assert recall_terms(text) == terms


@given(st.text())
def test_terms_other_than_identifiers_are_the_stems_and_bigrams_they_always_were(text: str) -> None:
    words = [stem(word) for word in spaced_words(text) if not is_identifier(word)]
    assert [t for t in recall_terms(text) if not is_identifier(t)] == words + cjk_bigrams(text)


def test_a_query_asks_its_identifiers_first() -> None:
    # the read scores the query's first terms only: an id is what names the result looked for
    words = "please find the booking made for the customer with the saved payment method of"
    assert query_terms(f"{words} KX4Q2P voucher_5518230", 2) == ["voucher_5518230", "kx4q2p"]
