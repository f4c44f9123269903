from turnstream.schemas.summaries import SummaryRequest, SummaryResult
from turnstream.session.summaries import SummaryRequests


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
    request = SummaryRequest("t:s", 3, "old", span("x"), "t:maya")
    assert SummaryRequest.from_bytes(request.to_bytes()) == request
    result = SummaryResult("t:s", 3, None, "boom")
    assert SummaryResult.from_bytes(result.to_bytes()) == result
    chain = SummaryRequests()
    chain.queue(span("a"), "s", "u", now=0, stale_after=60)
    assert SummaryRequests.from_json(chain.to_json()) == chain
