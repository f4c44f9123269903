"""One session's stream state, pure: the incremental compactor plus what makes replays harmless."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

import orjson

from turnstream.compaction import SessionCompactor
from turnstream.compaction.strategies import Strategy

@dataclass
class SessionState:
    """What a session's single writer keeps in its Table row; every part is bounded in size."""

    compactor: SessionCompactor
    recent_turn_ids: deque[str]
    """The last `dedup_window` applied turn ids: a redelivered turn is recognised and skipped."""
    version: int = 0
    """Bumped on every applied turn; Redis writes compare-and-set on it."""
    last_turn_id: str | None = None
    greetings: int = 0
    """Applied turns tagged as greetings or small talk."""

    @classmethod
    def new(cls, budget_tokens: int, budget_messages: int | None, dedup_window: int) -> SessionState:
        return cls(SessionCompactor(budget_tokens, budget_messages=budget_messages), deque(maxlen=dedup_window))

    def seen(self, turn_id: str) -> bool:
        return turn_id in self.recent_turn_ids

    def apply(self, turn_id: str, message: dict[str, Any], strategy: Strategy | None, greeting: bool) -> None:
        """Append one turn's message; raises the compactor's MessageError for a message that cannot follow."""
        self.compactor.append(message, strategy)
        self.recent_turn_ids.append(turn_id)
        self.version += 1
        self.last_turn_id = turn_id
        self.greetings += int(greeting)

    def to_bytes(self) -> bytes:
        return orjson.dumps(
            {
                "compactor": orjson.Fragment(self.compactor.to_bytes()),
                "recent": list(self.recent_turn_ids),
                "window": self.recent_turn_ids.maxlen,
                "version": self.version,
                "last": self.last_turn_id,
                "greetings": self.greetings,
            }
        )

    @classmethod
    def from_bytes(cls, data: bytes) -> SessionState:
        raw = orjson.loads(data)
        return cls(
            compactor=SessionCompactor.from_bytes(orjson.dumps(raw["compactor"])),
            recent_turn_ids=deque(raw["recent"], maxlen=raw["window"]),
            version=raw["version"],
            last_turn_id=raw["last"],
            greetings=raw["greetings"],
        )
