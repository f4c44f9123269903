"""The LLM summary topics' records: a request for a session's summary merge, and the summarizer's answer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from turnstream.text.chat import Message

FactRow = tuple[str, str, str, int]
"""A key fact on the wire: (type, text, key, source_seq), the row a session's snapshot keeps its facts as."""


def _rows(raw: Any) -> tuple[FactRow, ...]:
    return tuple((str(kind), str(text), str(key), int(seq)) for kind, text, key, seq in raw)


@dataclass(frozen=True, slots=True)
class SummaryRequest:
    """What the summarizer agent gets: merge `summary` with `dropped` for session `session_key`."""

    session_key: str
    request_id: int
    summary: str
    dropped: list[Message]
    owner: str
    """Whose long-term profile the summarizer may condense while it is at it."""
    facts: tuple[FactRow, ...] = ()
    """The session's key facts when the request was sent, so an extraction reuses their keys to correct them."""
    first_seq: int = 0
    """The conversation position of `dropped[0]`."""

    def to_bytes(self) -> bytes:
        return orjson.dumps(self)  # its fields in order, as a JSON object

    @classmethod
    def from_bytes(cls, data: bytes) -> SummaryRequest:
        raw = orjson.loads(data)
        # a request from a worker before key info had neither field
        facts, first_seq = _rows(raw.get("facts", ())), raw.get("first_seq", 0)
        return cls(
            raw["session_key"], raw["request_id"], raw["summary"], raw["dropped"], raw["owner"], facts, first_seq
        )


@dataclass(frozen=True, slots=True)
class SummaryResult:
    """The summarizer's answer; `summary` is None when the LLM failed (the offline summary stands)."""

    session_key: str
    request_id: int
    summary: str | None
    error: str | None = None
    facts: tuple[FactRow, ...] | None = None
    """The key facts the LLM extracted from the request's span, all grounded in it; None when none were asked
    for or the extraction failed (the offline facts stand)."""

    def to_bytes(self) -> bytes:
        return orjson.dumps(self)  # its fields in order, as a JSON object

    @classmethod
    def from_bytes(cls, data: bytes) -> SummaryResult:
        raw = orjson.loads(data)
        facts = raw.get("facts")
        return cls(
            raw["session_key"],
            raw["request_id"],
            raw["summary"],
            raw.get("error"),
            None if facts is None else _rows(facts),
        )
