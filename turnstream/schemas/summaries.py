"""The LLM summary topics' records: a request for a session's summary merge, and the summarizer's answer."""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from turnstream.text.chat import Message


@dataclass(frozen=True)
class SummaryRequest:
    """What the summarizer agent gets: merge `summary` with `dropped` for session `session_key`."""

    session_key: str
    request_id: int
    summary: str
    dropped: list[Message]
    owner: str
    """Whose long-term profile the summarizer may condense while it is at it."""

    def to_bytes(self) -> bytes:
        return orjson.dumps(
            {
                "session_key": self.session_key,
                "request_id": self.request_id,
                "summary": self.summary,
                "dropped": self.dropped,
                "owner": self.owner,
            }
        )

    @classmethod
    def from_bytes(cls, data: bytes) -> SummaryRequest:
        raw = orjson.loads(data)
        return cls(raw["session_key"], raw["request_id"], raw["summary"], raw["dropped"], raw["owner"])


@dataclass(frozen=True)
class SummaryResult:
    """The summarizer's answer; `summary` is None when the LLM failed (the offline summary stands)."""

    session_key: str
    request_id: int
    summary: str | None
    error: str | None = None

    def to_bytes(self) -> bytes:
        return orjson.dumps(
            {
                "session_key": self.session_key,
                "request_id": self.request_id,
                "summary": self.summary,
                "error": self.error,
            }
        )

    @classmethod
    def from_bytes(cls, data: bytes) -> SummaryResult:
        raw = orjson.loads(data)
        return cls(raw["session_key"], raw["request_id"], raw["summary"], raw.get("error"))
