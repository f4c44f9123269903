"""What a consumed record is, from its topic, key, value and headers alone: no event, no broker."""

from __future__ import annotations

import pytest

from turnstream.schemas.control import forget_record
from turnstream.schemas.headers import REASON_HEADER
from turnstream.schemas.summaries import SummaryResult
from turnstream.schemas.turn import Turn
from turnstream.session import Forwarded
from turnstream.session.records import record_of
from turnstream.testing import SUMMARIES, turn_value


def of(
    value: bytes | None,
    key: bytes | None = b"s1",
    headers: list[tuple[str, bytes]] | None = None,
    topic: str = "t.turns",
) -> object:
    return record_of(topic, key, value, headers or [], SUMMARIES, 1024)


def test_a_turn_keyed_by_its_session_applies_here_and_one_a_worker_forwarded_may_wait() -> None:
    here = of(turn_value("s1", 0, "hi"))
    assert here.kind == "turn" and isinstance(here.item, Turn) and here.key == "s1" and here.turn_id
    forwarded = of(turn_value("s1", 0, "hi"), headers=[(REASON_HEADER, b"wrong_key")])
    assert forwarded.kind == "forwarded" and isinstance(forwarded.item, Forwarded)


@pytest.mark.parametrize("key", [b"other", None])
def test_a_turn_keyed_otherwise_goes_to_its_session_key(key: bytes | None) -> None:
    misrouted = of(turn_value("s1", 0, "hi"), key=key)
    assert misrouted.kind == "misrouted" and misrouted.forward is not None and misrouted.forward.key == b"s1"


def test_control_records_summaries_tombstones_and_refusals() -> None:
    assert of(SummaryResult("s1", 1, "short").to_bytes(), topic=SUMMARIES).kind == "summary"
    assert of(forget_record("s1", 5.0)).kind == "forget"
    assert of(None).kind == "tombstone"
    refused = of(b"not json")
    assert refused.kind == "refused" and refused.refusal is not None and refused.item is None
