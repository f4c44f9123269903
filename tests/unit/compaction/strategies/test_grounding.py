"""An LLM's fact is kept only when every identifier and number in it occurs in the turns it came from."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from turnstream.compaction.strategies.base import Fact
from turnstream.compaction.strategies.grounding import (
    identifiers,
    is_grounded,
    normalized,
    source_terms,
    split_grounded,
)

TRIP = (
    "选CA929吧，便宜一点。就住浅草那家 TYO-10477。预算两人 20,000 元。 "
    '{"bookings": ["KX4Q2P", "ZR81LM"], "payment_methods": [{"id": "voucher_5518230", "amount": 200}, '
    '{"id": "card_9920117", "brand": "visa", "last4": "3311"}], "date": "2024-05-01", "depart": "14:30", '
    '"rating": 4.5, "locator": "QXJKLM", "price": "$1,299.00"}'
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The user chose flight CA929.", ["CA929"]),
        (
            "Hotel TYO-10477, booking KX4Q2P; pay with voucher_5518230 ($200).",
            ["TYO-10477", "KX4Q2P", "voucher_5518230", "200"],
        ),
        ("Budget 20,000 yuan for 2 people.", ["20000", "2"]),
        ("Leaves 2024-05-01 at 14:30.", ["2024-05-01", "14:30"]),
        ("Record locator QXJKLM, paid in USD via API.", ["QXJKLM"]),  # short acronyms are words
        ("预算两万，两个人，对海鲜过敏。", []),  # numbers in words are wording
        ("航班ＣＡ９２９", ["CA929"]),  # full-width digits are digits
        ("The user prefers a window seat.", []),
    ],
)
def test_identifiers_are_runs_with_digits_underscores_or_capital_codes(text: str, expected: list[str]) -> None:
    assert identifiers(text) == expected


@pytest.mark.parametrize(
    ("fact", "grounded"),
    [
        ("The user chose CA929 and the Asakusa hotel TYO-10477.", True),
        ("Bookings KX4Q2P and ZR81LM; voucher_5518230 covers $200.", True),
        ("Card card_9920117 (visa 3311) pays the rest.", True),
        ("Budget 20000 yuan for two.", True),  # the thousands' comma is not part of the number
        ("Budget ¥20,000.", True),
        ("Flight on 2024-05-01, departing 14:30.", True),
        ("Hotel id 10477.", True),  # a part of TYO-10477 cut at its joiner
        ("Travel 05-01.", True),  # parts of a date
        ("Total $1299.00.", True),
        ("Locator QXJKLM.", True),
        ("The user is allergic to seafood.", True),  # nothing to check
        ("The user chose CA930.", False),  # an invented flight
        ("Booking reference ZZ9999X is confirmed.", False),  # an invented code
        ("Flight 929.", False),  # a piece of CA929, not a part of it
        ("Rated 4 stars.", False),  # 4 is not a part of 4.5
        ("Voucher_5518230 applied.", False),  # not verbatim: case differs
        ("Booking kx4q2p.", False),
        ("Leaves May 1.", False),  # reformatted dates are not copies
        ("Locator QXJKLN.", False),
        ("Budget 25000 yuan.", False),
    ],
)
def test_a_fact_is_grounded_when_its_identifiers_occur_in_the_source(fact: str, grounded: bool) -> None:
    assert is_grounded(fact, source_terms([TRIP])) is grounded


def test_split_grounded_reads_contents_tool_names_and_arguments() -> None:
    turns = [
        {"role": "user", "content": "Book CA929 for me."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "book_v2", "arguments": '{"hotel": "TYO-10477"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "confirmation KX4Q2P"}]},
    ]
    facts = [
        Fact("fact", "Flight CA929 chosen.", "flight"),
        Fact("fact", "Booked TYO-10477 with book_v2, confirmation KX4Q2P.", "hotel"),
        Fact("fact", "Confirmation ZR81LM.", "confirmation"),
        Fact("fact", "Call id c1.", "call"),  # a tool call's id is no identifier the turns say
    ]
    kept, discarded = split_grounded(facts, turns)
    assert [f.key for f in kept] == ["flight", "hotel"]
    assert [f.key for f in discarded] == ["confirmation", "call"]


def test_a_source_run_of_many_parts_is_still_found_whole() -> None:
    path = "/".join(f"p{n}" for n in range(40))
    terms = source_terms([f"file at {path} read"])
    assert is_grounded(f"Read {path}.", terms)
    assert is_grounded("Read p3/p4.", terms)
    assert not is_grounded("Read p40.", terms)


# Source text: words, codes, numbers, CJK and punctuation, in any mix, with any whitespace between.
_CHUNK = st.text(alphabet=st.sampled_from("abcXYZ019_-./:,$¥元选吧 、。（）Ｃ９²"), min_size=1, max_size=12).filter(
    lambda chunk: not chunk.isspace()
)
_SOURCE = st.lists(_CHUNK, min_size=1, max_size=20).map(" ".join)
_ID = st.from_regex(r"[A-Z]{2}[0-9]{3,6}|[a-z]{3,8}_[0-9]{4,8}|[A-Z]{3}-[0-9]{4,6}", fullmatch=True)


@given(source=_SOURCE, data=st.data())
def test_a_fact_made_only_of_source_chunks_always_passes(source: str, data: st.DataObject) -> None:
    chunks = source.split()
    picked = data.draw(st.lists(st.sampled_from(chunks), min_size=1, max_size=8))
    fact = data.draw(st.sampled_from(["{}", "The user said {}.", "用户选了{}。"])).format(" ".join(picked))
    assert is_grounded(fact, source_terms([source])), (fact, identifiers(fact))


@given(
    source=st.one_of(_SOURCE, st.just(TRIP)), identifier=_ID, wording=st.sampled_from(["Booked {}.", "{}", "选{}吧"])
)
def test_a_fact_naming_an_id_absent_from_the_source_never_passes(source: str, identifier: str, wording: str) -> None:
    # absent: not in the source even as a piece of a longer run
    present = re.search(rf"(?<![A-Za-z0-9]){re.escape(identifier)}(?![A-Za-z0-9])", normalized(source))
    fact = wording.format(identifier)
    assert present or not is_grounded(fact, source_terms([source]))
