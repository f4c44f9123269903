"""One session's stream state, pure: the incremental compactor plus what makes replays harmless."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

import orjson

from turnstream.agents.summary_requests import SummaryRequests, SummaryResult
from turnstream.compaction import SessionCompactor
from turnstream.compaction.strategies import Fact, KeyInfoExtractor, Strategy
from turnstream.memory import changed_facts
from turnstream.schemas import session_key
from turnstream.settings import Settings
from turnstream.text.language import Language

Fold = Callable[[str, list[dict[str, Any]], Language], str]
"""(summary, dropped span, the conversation's language) -> summary: how spans that waited are laid onto an LLM summary."""

@dataclass
class SessionState:
    """What a session's single writer keeps in its Table row; every part is bounded in size."""

    session_id: str
    tenant: str | None
    owner: str
    """Whose long-term memory this session's turns feed (the latest turn's user, else the session)."""
    compactor: SessionCompactor
    recent_turn_ids: deque[str]
    """The last `dedup_window` applied turn ids: a redelivered turn is recognised and skipped."""
    version: int = 0
    """Bumped on every applied turn; Redis writes compare-and-set on it."""
    last_turn_id: str | None = None
    greetings: int = 0
    """Applied turns tagged as greetings or small talk."""
    summaries: SummaryRequests = field(default_factory=SummaryRequests)
    """The asynchronous LLM summary's bookkeeping (idle when no LLM is configured)."""
    user_facts: tuple[Fact, ...] = ()
    """Key facts the user stated in this session, as extracted turn by turn (capped): restatements dedup against them."""

    @classmethod
    def new(cls, session_id: str, tenant: str | None, owner: str, settings: Settings) -> SessionState:
        compactor = SessionCompactor(settings.budget_tokens, budget_messages=settings.budget_messages)
        return cls(session_id, tenant, owner, compactor, deque(maxlen=settings.dedup_window))

    @property
    def key(self) -> str:
        """The session key: Kafka key, Table key and Redis identity."""
        return session_key(self.session_id, self.tenant)

    def seen(self, turn_id: str) -> bool:
        return turn_id in self.recent_turn_ids

    def apply(self, turn_id: str, message: dict[str, Any], strategy: Strategy | None, greeting: bool) -> list[dict[str, Any]]:
        """Append one turn's message and return the span it pushed out of the window.

        Raises the compactor's MessageError for a message that cannot follow the session.
        """
        dropped = self.compactor.append(message, strategy)
        self.recent_turn_ids.append(turn_id)
        self.version += 1
        self.last_turn_id = turn_id
        self.greetings += int(greeting)
        return dropped

    def learn(self, message: dict[str, Any], extractor: KeyInfoExtractor) -> list[Fact]:
        """Extract the key facts of one user message; returns those that are new or corrected."""
        before = self.user_facts
        self.user_facts = extractor.extract(before, [message], self.version)
        return changed_facts(before, self.user_facts)

    def apply_summary(self, result: SummaryResult, fold: Fold, strategy: Strategy | None) -> bool:
        """Fold in the LLM summary if it answers the request in flight; True when the context changed."""
        if not self.summaries.answer(result):
            return False
        # spans dropped since the request are only in the offline summary: lay them onto the new one
        self.compactor.replace_summary(fold(result.summary, self.summaries.pending, self.compactor.tally.language()), strategy)
        self.version += 1
        return True

    def to_bytes(self) -> bytes:
        return orjson.dumps(
            {
                "session_id": self.session_id,
                "tenant": self.tenant,
                "owner": self.owner,
                "compactor": orjson.Fragment(self.compactor.to_bytes()),
                "recent": list(self.recent_turn_ids),
                "window": self.recent_turn_ids.maxlen,
                "version": self.version,
                "last": self.last_turn_id,
                "greetings": self.greetings,
                "summaries": self.summaries.to_json(),
                "user_facts": [[f.type, f.text, f.key, f.source_seq] for f in self.user_facts],
            }
        )

    @classmethod
    def from_bytes(cls, data: bytes) -> SessionState:
        raw = orjson.loads(data)
        return cls(
            session_id=raw["session_id"],
            tenant=raw["tenant"],
            owner=raw["owner"],
            compactor=SessionCompactor.from_bytes(orjson.dumps(raw["compactor"])),
            recent_turn_ids=deque(raw["recent"], maxlen=raw["window"]),
            version=raw["version"],
            last_turn_id=raw["last"],
            greetings=raw["greetings"],
            summaries=SummaryRequests.from_json(raw["summaries"]),
            user_facts=tuple(Fact(*fact) for fact in raw["user_facts"]),
        )
