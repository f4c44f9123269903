"""Bookkeeping of one session's asynchronous LLM summaries, pure: one request in flight, spans waiting.

Only one request per session is in flight at a time. Spans dropped meanwhile wait, and go out together
with the next request; a result is folded in only when it answers the request in flight, so summaries
of one session apply in order and an old answer never overwrites a newer summary.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

Message = dict[str, Any]

MAX_PENDING_MESSAGES = 64
"""Spans waiting beyond this lose their oldest messages: the offline summary already holds them."""


@dataclass(frozen=True)
class SummaryRequest:
    """What the summarizer agent gets: merge `summary` with `dropped` for session `session_key`."""

    session_key: str
    request_id: int
    summary: str
    dropped: list[Message]

    def to_bytes(self) -> bytes:
        return orjson.dumps({"session_key": self.session_key, "request_id": self.request_id, "summary": self.summary, "dropped": self.dropped})

    @classmethod
    def from_bytes(cls, data: bytes) -> SummaryRequest:
        raw = orjson.loads(data)
        return cls(raw["session_key"], raw["request_id"], raw["summary"], raw["dropped"])


@dataclass(frozen=True)
class SummaryResult:
    """The summarizer's answer; `summary` is None when the LLM failed (the offline summary stands)."""

    session_key: str
    request_id: int
    summary: str | None
    error: str | None = None

    def to_bytes(self) -> bytes:
        return orjson.dumps({"session_key": self.session_key, "request_id": self.request_id, "summary": self.summary, "error": self.error})

    @classmethod
    def from_bytes(cls, data: bytes) -> SummaryResult:
        raw = orjson.loads(data)
        return cls(raw["session_key"], raw["request_id"], raw["summary"], raw.get("error"))


@dataclass
class SummaryRequests:
    """The in-flight request id, when it was sent, and the spans waiting for the next request."""

    next_id: int = 1
    inflight: int | None = None
    inflight_since: float = 0.0
    pending: list[Message] = field(default_factory=list)

    def queue(self, span: list[Message], session_key: str, summary: str, now: float, stale_after: float) -> SummaryRequest | None:
        """Add a dropped span; returns a request to send when none is in flight (or the last one was lost)."""
        self.pending = (self.pending + span)[-MAX_PENDING_MESSAGES:]
        if self.inflight is not None and now - self.inflight_since < stale_after:
            return None
        return self._send(session_key, summary, now)

    def answer(self, result: SummaryResult) -> bool:
        """True when `result` answers the request in flight (then nothing is in flight any more)."""
        if result.request_id != self.inflight:
            return False
        self.inflight = None
        return True

    def follow_up(self, session_key: str, summary: str, now: float) -> SummaryRequest | None:
        """After an answer: the request for spans that waited meanwhile, if any."""
        return self._send(session_key, summary, now) if self.inflight is None and self.pending else None

    def _send(self, session_key: str, summary: str, now: float) -> SummaryRequest:
        request = SummaryRequest(session_key, self.next_id, summary, self.pending)
        self.inflight, self.inflight_since = self.next_id, now
        self.next_id += 1
        self.pending = []
        return request

    def to_json(self) -> dict[str, Any]:
        return {"next": self.next_id, "inflight": self.inflight, "since": self.inflight_since, "pending": self.pending}

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> SummaryRequests:
        return cls(raw["next"], raw["inflight"], raw["since"], raw["pending"])
