"""A record is decoded once where it enters: its kind, item, key, headers and trace context, read by every
later path (stepping, dead letters, forwards, log fields) without a second parse of its value or headers."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from turnstream.agents.envelope import open_envelope
from turnstream.agents.ingest import dead_letter, forward
from turnstream.schemas.control import PopRequest, forget_record, pop_record
from turnstream.schemas.headers import REASON_HEADER
from turnstream.schemas.summaries import SummaryResult
from turnstream.session import Forwarded
from turnstream.testing import SUMMARIES, record, turn_value

pytestmark = pytest.mark.unit

PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


def opened(value: bytes | None, key: bytes | None = b"s1", headers: Any = None, topic: str = "t.turns") -> Any:
    return open_envelope(record(value, key, 7, headers, topic), SUMMARIES, 1024)


@pytest.mark.parametrize(
    ("value", "key", "headers", "topic", "kind"),
    [
        (turn_value("s1", 0, "hi"), b"s1", [], "t.turns", "turn"),
        (turn_value("s1", 0, "hi"), b"s1", [(REASON_HEADER, b"wrong_key")], "t.turns", "forwarded"),
        (turn_value("s1", 0, "hi"), b"other", [], "t.turns", "misrouted"),
        (turn_value("s1", 0, "hi"), None, [], "t.turns", "misrouted"),
        (SummaryResult("s1", 1, "short").to_bytes(), b"s1", [], SUMMARIES, "summary"),
        (pop_record(PopRequest("s1", None, "p1", 3, 2)), b"s1", [], "t.turns", "pop"),
        (forget_record("s1", 5.0), b"s1", [], "t.turns", "forget"),
        (None, b"s1", [], "t.turns", "tombstone"),
        (b"not json", b"s1", [], "t.turns", "refused"),
        (b"x" * 2048, b"s1", [], "t.turns", "refused"),
        (b"{bad", b"s1", [], SUMMARIES, "refused"),
    ],
)
def test_every_record_is_one_kind(
    value: bytes | None, key: bytes | None, headers: list[Any], topic: str, kind: str
) -> None:
    assert opened(value, key, headers, topic).kind == kind


def test_the_item_and_key_are_decoded_with_it() -> None:
    forwarded = opened(
        turn_value("s1", 4, "hi"), headers=[(REASON_HEADER, b"reordered"), ("traceparent", PARENT.encode())]
    )
    assert isinstance(forwarded.item, Forwarded) and forwarded.item.turn.seq == 4 and forwarded.key == "s1"
    assert forwarded.traceparent == PARENT and forwarded.carried == [("traceparent", PARENT.encode())]
    refused = opened(orjson.dumps({"turn_id": "t9", "session_id": "s1", "message": {"role": "nobody"}}))
    assert refused.refusal is not None and refused.refusal[0] == "schema" and refused.turn_id == "t9"
    assert opened(b"{bad", topic=SUMMARIES).refusal[0] == "internal"  # logged, never raised


class OnceHeaders(list):  # type: ignore[type-arg]
    """Headers that fail if they are read a second time."""

    reads = 0

    def __iter__(self) -> Iterator[Any]:
        OnceHeaders.reads += 1
        assert OnceHeaders.reads == 1, "headers scanned twice"
        return super().__iter__()


class Topic:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    async def send(self, **record: Any) -> Any:
        self.sent.append(record)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done


@pytest.mark.parametrize("path", ["dead_letter", "forward"])
def test_refused_and_misrouted_records_are_parsed_and_scanned_once(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    parses = []
    loads = orjson.loads
    monkeypatch.setattr(orjson, "loads", lambda data: parses.append(data) or loads(data))
    OnceHeaders.reads = 0
    headers = OnceHeaders([("traceparent", PARENT.encode())])
    value = turn_value("s1", 0, "hi") if path == "forward" else orjson.dumps({"turn_id": "t1", "session_id": "s 1"})
    envelope = opened(value, key=b"other", headers=headers)
    topic = Topic()
    if path == "forward":
        asyncio.run(forward(topic, envelope))  # type: ignore[arg-type]
    else:
        asyncio.run(dead_letter(topic, envelope, *envelope.refusal))  # type: ignore[arg-type, misc]
    assert len(parses) == 1 and OnceHeaders.reads == 1
    assert ("traceparent", PARENT.encode()) in topic.sent[0]["headers"]
