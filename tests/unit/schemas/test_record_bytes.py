"""The internal records' bytes are what workers of earlier versions wrote and read: each codec's output, fixed."""

from __future__ import annotations

import pytest

from turnstream.schemas.control import ForgetRequest, PopRequest, forget_record, parse_forget, parse_pop, pop_record
from turnstream.schemas.summaries import SummaryRequest, SummaryResult

pytestmark = pytest.mark.unit

FACTS = (("pref", "likes tea", "k1", 4),)


def test_control_records_keep_their_bytes() -> None:
    assert forget_record("acme:s-1", 1700.5) == b'{"forget":{"session_key":"acme:s-1","requested_at":1700.5}}'
    pop = PopRequest("s-1", "acme", "ts-7", 7, 12)
    assert pop_record(pop) == b'{"pop":{"session_id":"s-1","tenant":"acme","control_id":"ts-7","seq":7,"position":12}}'
    assert parse_pop(pop_record(pop)) == pop
    assert parse_forget(forget_record("acme:s-1", 1700.5)) == ForgetRequest("acme:s-1", 1700.5)


def test_summary_records_keep_their_bytes() -> None:
    request = SummaryRequest("acme:s-1", 3, "sum", [{"role": "user", "content": "hi"}], "acme:u", FACTS, 2)
    assert request.to_bytes() == (
        b'{"session_key":"acme:s-1","request_id":3,"summary":"sum","dropped":[{"role":"user","content":"hi"}],'
        b'"owner":"acme:u","facts":[["pref","likes tea","k1",4]],"first_seq":2}'
    )
    failed = SummaryResult("acme:s-1", 3, None, "timeout", None)
    assert (
        failed.to_bytes() == b'{"session_key":"acme:s-1","request_id":3,"summary":null,"error":"timeout","facts":null}'
    )
    answered = SummaryResult("acme:s-1", 3, "new", None, FACTS)
    assert answered.to_bytes() == (
        b'{"session_key":"acme:s-1","request_id":3,"summary":"new","error":null,"facts":[["pref","likes tea","k1",4]]}'
    )
    assert (
        SummaryRequest.from_bytes(request.to_bytes()) == request
        and SummaryResult.from_bytes(answered.to_bytes()) == answered
    )
