"""Bookkeeping of one session's asynchronous LLM summaries, pure: one request in flight, spans waiting.

Only one request per session is in flight at a time. Spans dropped meanwhile wait, and go out together
with the next request; a result is folded in only when it answers the request in flight, so summaries
of one session apply in order and an old answer never overwrites a newer summary.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import astuple, dataclass, field
from typing import Any, cast

from turnstream.compaction.strategies import Fact
from turnstream.compaction.strategies.keyinfo import merge_model_facts
from turnstream.schemas.summaries import FactRow, SummaryRequest, SummaryResult
from turnstream.text.chat import Message

MAX_PENDING_MESSAGES = 64
"""Spans waiting beyond this lose their oldest messages: the offline summary already holds them."""


@dataclass
class SummaryRequests:
    """The LLM summary chain of one session: its latest summary, the request in flight, the spans waiting.

    Every dropped span is in exactly one place: folded into `base` by an answered request, in the
    request in flight, or waiting in `pending`; a failed or lost request puts its spans back.
    """

    next_id: int = 1
    base: str = ""
    """The latest summary the LLM produced: each request asks to merge the next spans into it."""
    inflight: int | None = None
    inflight_since: float = 0.0
    inflight_spans: list[Message] = field(default_factory=list)
    pending: list[Message] = field(default_factory=list)
    inflight_until: int = 0
    """The position the window's kept tail started at when the request in flight was sent: its spans lie
    before it, every span dropped since at or after it."""

    def queue(
        self,
        span: list[Message],
        session_key: str,
        owner: str,
        now: float,
        stale_after: float,
        *,
        until: int = 0,
        facts: Sequence[Fact] = (),
    ) -> SummaryRequest | None:
        """Add a dropped span; returns a request to send when none is in flight (or the last one was lost).

        A request carries the session's key `facts` and ends before `until`, the kept tail's first position.
        """
        self.pending = (self.pending + span)[-MAX_PENDING_MESSAGES:]
        if self.inflight is not None:
            if now - self.inflight_since < stale_after:
                return None
            self._give_back()
        return self._send(session_key, owner, now, until, facts)

    def answer(self, result: SummaryResult) -> bool:
        """Take the answer to the request in flight; True when it brought a new summary."""
        if result.request_id != self.inflight:
            return False
        if result.summary is None:
            self._give_back()
            return False
        self.base, self.inflight, self.inflight_spans = result.summary, None, []
        return True

    def follow_up(
        self, session_key: str, owner: str, now: float, *, until: int = 0, facts: Sequence[Fact] = ()
    ) -> SummaryRequest | None:
        """After an answer: the request for the spans that waited meanwhile, if any (`queue`'s `until`, `facts`)."""
        if self.inflight is None and self.pending:
            return self._send(session_key, owner, now, until, facts)
        return None

    def _give_back(self) -> None:
        self.pending = (self.inflight_spans + self.pending)[-MAX_PENDING_MESSAGES:]
        self.inflight, self.inflight_spans = None, []

    def _send(self, session_key: str, owner: str, now: float, until: int, facts: Sequence[Fact]) -> SummaryRequest:
        # Spans are dropped from the tail's front, so the pending ones end where the tail starts (a popped
        # message's position, never given out again, can make the first position a little late).
        first_seq = max(until - len(self.pending), 0)
        rows = tuple(cast(FactRow, astuple(fact)) for fact in facts)
        request = SummaryRequest(session_key, self.next_id, self.base, self.pending, owner, rows, first_seq)
        self.inflight, self.inflight_since, self.inflight_spans = self.next_id, now, self.pending
        self.inflight_until = until
        self.next_id += 1
        self.pending = []
        return request


def fold_facts(current: Sequence[Fact], found: Sequence[FactRow], until: int, max_facts: int) -> tuple[Fact, ...]:
    """The session's facts with the LLM's `found` merged over them by key (`merge_model_facts`).

    A fact of the session taken from a turn at or after `until` was dropped while the model read older turns:
    it is newer than anything the model found, so its key keeps it.
    """
    newer = {fact.key for fact in current if fact.source_seq >= until}
    facts = (Fact(*row) for row in cast(Sequence[tuple[Any, str, str, int]], found))
    return merge_model_facts(current, [fact for fact in facts if fact.key not in newer], max_facts)
