"""A dropped tool result keeps the ids and values an agent acts on, under their paths, within its bound."""

from __future__ import annotations

import re
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from turnstream.compaction.strategies.keyinfo import KeyInfoExtractor
from turnstream.compaction.strategies.tooldata import (
    TOOL_DIGEST_CHARS,
    digest_tool_result,
    parse_result,
    render_arguments,
    values_in,
)

CUSTOMER = {
    "user_id": "mia_li_3668",
    "name": {"first_name": "Mia", "last_name": "Li"},
    "email": "mia.li3818@example.com",
    "payment_methods": {
        "card_9920117": {"source": "credit_card", "brand": "visa", "last_four": "3311", "id": "card_9920117"},
        "voucher_5518230": {"source": "certificate", "amount": 200, "id": "voucher_5518230"},
    },
    "membership": "gold",
    "bookings": ["KX4Q2P", "ZR81LM"],
    "notes": "Long-standing customer who prefers phone contact and once asked about the lounge policy in detail.",
}


def _json(value: Any) -> str:
    return orjson.dumps(value).decode()


def test_a_customer_keeps_every_id_under_its_path_never_a_count() -> None:
    digest = digest_tool_result(_json(CUSTOMER))
    assert "bookings: KX4Q2P, ZR81LM" in digest.text
    assert "payment_methods: (card_9920117 (source=credit_card; brand=visa; last_four=3311)" in digest.text
    assert "voucher_5518230 (source=certificate; amount=200)" in digest.text
    assert "items" not in digest.text
    assert digest.entity == "mia_li_3668"
    assert not digest.failed


def test_a_list_of_like_objects_is_one_table_with_what_they_share_said_once() -> None:
    flights = [
        {
            "flight_number": f"CA9{n:02d}",
            "origin": "PEK",
            "destination": "NRT",
            "depart": f"2026-05-0{n % 9 + 1}",
            "price": 3000 + n,
        }
        for n in range(10)
    ]
    text = digest_tool_result(_json({"flights": flights})).text
    assert text.count("origin=PEK") == 1
    assert "(flight_number, depart, price): CA900, 2026-05-01, 3000; CA901" in text
    assert all(f"CA9{n:02d}" in text for n in range(10))


def test_a_list_too_long_for_the_bound_says_how_many_items_went() -> None:
    hotels = [
        {"hotel_id": f"TYO-{10000 + n}", "name": f"Hotel number {n} in a quiet street", "rating": 4.5}
        for n in range(80)
    ]
    digest = digest_tool_result(_json({"hotels": hotels}))
    assert len(digest.text) <= TOOL_DIGEST_CHARS
    assert "TYO-10000" in digest.text
    more = re.search(r"\+(\d+) more hotels", digest.text)
    assert more is not None
    shown = len(re.findall(r"TYO-\d+", digest.text))
    assert shown + int(more.group(1)) == 80


def test_prose_goes_before_ids_as_detail_drops() -> None:
    order = {
        "order_id": "#W2378156",
        "description": "A very long description of the order that nobody will pass to a tool call, " * 4,
        "items": [{"item_id": f"{4202497723 + n}", "price": 342.81 + n, "color": "blue"} for n in range(6)],
    }
    text = digest_tool_result(_json(order), limit=200).text
    assert "#W2378156" in text and "4202497723" in text and "4202497728" in text
    assert "nobody" not in text


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ('{"error": "Payment method card_1 has insufficient balance"}', "card_1 has insufficient balance"),
        ('{"status": "failed", "detail": "seat 14C taken"}', "seat 14C taken"),
        ("Error: reservation ZZZ999 not found", "ZZZ999 not found"),
        ("调用失败：航班 CA929 已售罄", "CA929 已售罄"),
    ],
)
def test_a_failed_call_keeps_its_reason(content: str, reason: str) -> None:
    digest = digest_tool_result(content)
    assert digest.failed
    assert reason in digest.text


def test_a_later_mention_of_an_error_word_in_prose_data_is_no_failure() -> None:
    log = "Deploy 9f3c2ab finished on prod-eu-1 at 14:02. " * 6 + "The old error budget note was archived."
    assert not digest_tool_result(log).failed


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (
            "order_id: #W2378156\nstatus: delivered\ntotal: $1,234.50",
            {"order_id": "#W2378156", "status": "delivered", "total": "$1,234.50"},
        ),
        (
            "| id | name |\n|---|---|\n| P1 | Lamp |\n| P2 | Desk |",
            [{"id": "P1", "name": "Lamp"}, {"id": "P2", "name": "Desk"}],
        ),
        ("sku\tqty\nA-100\t2\nB-200\t5", [{"sku": "A-100", "qty": "2"}, {"sku": "B-200", "qty": "5"}]),
        ("订单号：DD-8812\n状态：已发货", {"订单号": "DD-8812", "状态": "已发货"}),
        ("Just a sentence about the weather.", None),
    ],
)
def test_text_results_are_read_as_the_structure_they_have(content: str, expected: Any) -> None:
    assert parse_result(content) == expected


def test_prose_cut_to_the_bound_still_lists_the_ids_it_cut_away() -> None:
    prose = "The incident was mitigated by rolling back. " * 20 + "Follow-up ticket INC-20931 owns commit 9f3c2ab."
    text = digest_tool_result(prose, limit=200).text
    assert len(text) <= 200
    assert "INC-20931" in text and "9f3c2ab" in text


def test_values_in_prose() -> None:
    assert values_in("Book CA929 for ¥3,200 on 2026-05-01 with voucher_5518230 at JFK.") == [
        "CA929",
        "¥3,200",
        "2026-05-01",
        "voucher_5518230",
        "JFK",
    ]


def test_arguments_render_as_key_values() -> None:
    assert (
        render_arguments('{"origin": "PEK", "date": "2026-05-01", "passengers": 2}')
        == "origin=PEK; date=2026-05-01; passengers=2"
    )
    assert render_arguments("not json") == "not json"


def _call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": _json(args)}}],
    }


def test_a_later_result_about_the_same_entity_replaces_the_earlier_fact() -> None:
    booked = {"reservation_id": "KX4Q2P", "status": "confirmed", "flight": "CA929"}
    cancelled = {"reservation_id": "KX4Q2P", "status": "cancelled", "refund": 3200}
    span = [
        _call("c1", "get_reservation", {"reservation_id": "KX4Q2P"}),
        {"role": "tool", "tool_call_id": "c1", "content": _json(booked)},
        _call("c1", "cancel_reservation", {"reservation_id": "KX4Q2P"}),  # a log reusing the call id
        {"role": "tool", "tool_call_id": "c1", "content": _json(cancelled)},
    ]
    facts = KeyInfoExtractor().extract((), span, 10)
    about = [fact for fact in facts if "KX4Q2P" in fact.text]
    assert len(about) == 1
    assert about[0].key == "data:#KX4Q2P"
    assert "status=cancelled" in about[0].text and "refund=3200" in about[0].text
    assert about[0].text.startswith("cancel_reservation(")


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40),
    lambda children: st.lists(children, max_size=6) | st.dictionaries(st.text(max_size=12), children, max_size=6),
    max_leaves=60,
)


@given(json_values, st.integers(min_value=40, max_value=900))
def test_any_json_digests_within_its_bound(value: Any, limit: int) -> None:
    digest = digest_tool_result(_json(value), limit)
    assert len(digest.text) <= limit


ids = st.from_regex(r"[A-Z]{2}[0-9]{3,6}", fullmatch=True)


@given(st.lists(ids, min_size=1, max_size=12, unique=True))
def test_ids_of_a_result_that_fits_are_all_kept(codes: list[str]) -> None:
    result = {"results": [{"code": code, "status": "open", "note": "x" * 30} for code in codes]}
    text = digest_tool_result(_json(result)).text
    assert all(code in text for code in codes)


def test_a_files_path_is_a_value_an_agent_passes_on() -> None:
    text = "list_files(path=reports) -> reports/weekly.py, 17570; tests/test_weekly.py::test_sydney, and/or src/app/main.ts."
    assert values_in(text) == ["reports/weekly.py", "17570", "tests/test_weekly.py::test_sydney", "src/app/main.ts"]


def test_a_rendered_results_keys_are_not_values() -> None:
    assert values_in("address: (address1=771 Lakeview Avenue; address2=Suite 109; zip=80202)") == [
        "771",
        "109",
        "80202",
    ]


def test_a_code_of_capitals_joined_by_hyphens_is_one_value_and_an_error_name_is_none() -> None:
    text = "rooms: (room_id, type): KIN-YSVN, king; DOU-DABN, double; error_code=UPSTREAM_TIMEOUT; to ORD"
    assert values_in(text) == ["KIN-YSVN", "DOU-DABN", "ORD"]


def test_an_email_address_is_one_value_whole() -> None:
    text = "email=mia.li3818@example.com; backup: jane.doe+bills@mail.example.co.uk; dob=1990-04-05; user @handle5"
    assert values_in(text) == ["mia.li3818@example.com", "jane.doe+bills@mail.example.co.uk", "1990-04-05", "@handle5"]
