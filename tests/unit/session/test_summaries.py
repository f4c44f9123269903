import orjson

from turnstream.compaction.strategies import Fact
from turnstream.schemas.summaries import SummaryRequest, SummaryResult
from turnstream.session.row_format import summaries_from_row, summaries_row
from turnstream.session.summaries import SummaryRequests, fold_facts


def span(*texts: str) -> list[dict]:
    return [{"role": "user", "content": text} for text in texts]


def test_one_request_in_flight_and_spans_wait_for_the_next() -> None:
    chain = SummaryRequests()
    first = chain.queue(span("a"), "s", "u", now=0, stale_after=60)
    assert first is not None and first.dropped == span("a") and first.summary == ""
    assert chain.queue(span("b"), "s", "u", now=1, stale_after=60) is None
    assert chain.queue(span("c"), "s", "u", now=2, stale_after=60) is None
    assert chain.answer(SummaryResult("s", first.request_id, "S1"))
    second = chain.follow_up("s", "u", now=3)
    assert second is not None and second.summary == "S1" and second.dropped == span("b", "c")


def test_an_old_or_repeated_answer_is_ignored() -> None:
    chain = SummaryRequests()
    first = chain.queue(span("a"), "s", "u", now=0, stale_after=60)
    assert chain.answer(SummaryResult("s", first.request_id, "S1"))
    assert not chain.answer(SummaryResult("s", first.request_id, "S1 again"))
    assert chain.base == "S1"


def test_a_failed_answer_gives_its_spans_back_and_waits_for_the_next_drop() -> None:
    chain = SummaryRequests()
    first = chain.queue(span("a"), "s", "u", now=0, stale_after=60)
    chain.queue(span("b"), "s", "u", now=1, stale_after=60)
    assert not chain.answer(SummaryResult("s", first.request_id, None, "timeout"))
    assert chain.inflight is None and chain.pending == span("a", "b")
    retry = chain.queue(span("c"), "s", "u", now=3, stale_after=60)
    assert retry is not None and retry.dropped == span("a", "b", "c") and retry.summary == ""


def test_a_lost_request_is_resent_once_stale() -> None:
    chain = SummaryRequests()
    first = chain.queue(span("a"), "s", "u", now=0, stale_after=10)
    assert chain.queue(span("b"), "s", "u", now=5, stale_after=10) is None
    resent = chain.queue(span("c"), "s", "u", now=11, stale_after=10)
    assert resent is not None and resent.request_id != first.request_id
    assert resent.dropped == span("a", "b", "c")
    assert not chain.answer(SummaryResult("s", first.request_id, "late"))


def test_records_round_trip_through_bytes() -> None:
    request = SummaryRequest("t:s", 3, "old", span("x"), "t:maya", (("constraint", "Budget 3000.", "budget", 4),), 7)
    assert SummaryRequest.from_bytes(request.to_bytes()) == request
    for result in (
        SummaryResult("t:s", 3, None, "boom"),
        SummaryResult("t:s", 3, "S", None, (("fact", "Chose CA929.", "flight", 7),)),
        SummaryResult("t:s", 3, "S", None, ()),
    ):
        assert SummaryResult.from_bytes(result.to_bytes()) == result
    chain = SummaryRequests()
    chain.queue(span("a"), "s", "u", now=0, stale_after=60, until=9)
    assert summaries_from_row(summaries_row(chain)) == chain


def test_records_and_rows_from_before_key_info_still_read() -> None:
    old_request = orjson.dumps({"session_key": "s", "request_id": 1, "summary": "", "dropped": [], "owner": "u"})
    assert SummaryRequest.from_bytes(old_request) == SummaryRequest("s", 1, "", [], "u", (), 0)
    old_result = orjson.dumps({"session_key": "s", "request_id": 1, "summary": "S", "error": None})
    assert SummaryResult.from_bytes(old_result).facts is None
    row = summaries_row(SummaryRequests())
    del row["until"]
    assert summaries_from_row(row).inflight_until == 0


def test_a_request_carries_the_facts_and_the_position_its_spans_start_at() -> None:
    chain = SummaryRequests()
    facts = (Fact("constraint", "Budget 3000.", "budget", 2),)
    first = chain.queue(span("a", "b"), "s", "u", now=0, stale_after=60, until=12, facts=facts)
    assert first is not None and (first.first_seq, first.facts) == (10, (("constraint", "Budget 3000.", "budget", 2),))
    assert chain.queue(span("c"), "s", "u", now=1, stale_after=60, until=13) is None
    assert chain.answer(SummaryResult("s", first.request_id, "S1"))
    second = chain.follow_up("s", "u", now=2, until=15)
    assert second is not None and (second.first_seq, second.dropped) == (14, span("c"))
    assert chain.inflight_until == 15


def test_the_models_facts_replace_by_key_except_facts_from_turns_dropped_after_it_was_asked_and_new_keys_rank_last() -> (
    None
):
    current = (
        Fact("constraint", "Budget 3000.", "budget", 3),
        Fact("fact", "flights: 3 items", "data:search_flights", 4),
        Fact("constraint", "Budget 4000 now.", "budget-new", 20),
    )
    found = (
        ("fact", "Flights CA929, CA930, MU512.", "data:search_flights", 2),
        ("preference", "Aisle seat.", "seat", 2),
        ("constraint", "Budget 3500.", "budget-new", 2),  # the session's fact of this key came later
    )
    merged = fold_facts(current, found, until=10, max_facts=10)
    assert {fact.key: fact.text for fact in merged} == {
        "budget": "Budget 3000.",
        "data:search_flights": "Flights CA929, CA930, MU512.",
        "model:seat": "Aisle seat.",
        "budget-new": "Budget 4000 now.",
    }
    # a slot of the model's own is the first the cap gives up, before the session's tool data
    capped = fold_facts(current, found, until=10, max_facts=3)
    assert [fact.key for fact in capped] == ["budget", "budget-new", "data:search_flights"]
