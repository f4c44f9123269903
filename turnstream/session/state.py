"""One session's state, pure: the incremental compactor plus what makes replays harmless.

Its Table row is `snapshot()` and `restore()`, whose format (every version written so far) is
session/row_format.py's alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from turnstream.compaction.compactor import CompactionResult
from turnstream.compaction.incremental import SessionCompactor
from turnstream.compaction.strategies import Fact, Strategy
from turnstream.compaction.strategies.keyinfo import KeyInfoExtractor
from turnstream.memory.extract import changed_facts
from turnstream.schemas.ids import session_key
from turnstream.schemas.summaries import SummaryResult
from turnstream.session.config import CoreConfig
from turnstream.session.recent import RecentIds
from turnstream.session.row_format import decode_row, encode_row
from turnstream.session.summaries import SummaryRequests, fold_facts
from turnstream.text.language import Language

if TYPE_CHECKING:
    from turnstream.session.reorder import HeldTurn

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
    recent_turn_ids: RecentIds
    """The last `dedup_window` applied turn ids: a redelivered turn is recognised and skipped."""
    version: int = 0
    """Bumped on every applied turn and every applied summary; Redis writes compare-and-set on it."""
    last_turn_id: str | None = None
    greetings: int = 0
    """Applied turns tagged as greetings or small talk."""
    summaries: SummaryRequests = field(default_factory=SummaryRequests)
    """The asynchronous LLM summary's bookkeeping (idle when no LLM is configured)."""
    user_facts: tuple[Fact, ...] = ()
    """Key facts the user stated in this session, as extracted turn by turn (capped): restatements dedup against them."""
    last_seq: int | None = None
    """The highest gateway `seq` applied: a turn at or below it is a replay, however old."""
    held: list[HeldTurn] = field(default_factory=list)
    """Turns that arrived ahead of a gap in `seq` after a detour through another partition, waiting for
    the turns before them (session/reorder.py)."""
    released_through: int | None = None
    """Held turns given up waiting for their gap were released up to this seq: they apply when back."""

    @classmethod
    def new(cls, session_id: str, tenant: str | None, owner: str, config: CoreConfig) -> SessionState:
        compactor = SessionCompactor(
            config.budget_tokens, budget_messages=config.budget_messages, headroom_tokens=config.headroom_tokens
        )
        return cls(session_id, tenant, owner, compactor, RecentIds(maxlen=config.dedup_window))

    @property
    def key(self) -> str:
        """The session key: Kafka key, Table key and Redis identity."""
        return session_key(self.session_id, self.tenant)

    def seen(self, turn_id: str, seq: int | None = None) -> bool:
        """Already applied: its id is among the recent ones, or the gateway numbered it at or below the last seq."""
        replayed = seq is not None and self.last_seq is not None and seq <= self.last_seq
        return replayed or turn_id in self.recent_turn_ids

    def check_next(self, message: dict[str, Any]) -> None:
        """Raise the compactor's MessageError if `message` cannot follow the session (a tool result with no
        pending call, say); the state is unchanged either way."""
        self.compactor.tracker.check(message, self.compactor.seq, closing=True)

    def language(self) -> Language:
        """The conversation's language, as tallied so far."""
        return self.compactor.tally.language()

    @property
    def last_position(self) -> int:
        """The conversation position of the newest message appended."""
        return self.compactor.seq - 1

    def step_call(self) -> dict[str, Any] | None:
        """The assistant tool call the newest message answers, if it is a tool result (for its archive entry)."""
        return self.compactor.step_call()

    def compaction(self) -> CompactionResult:
        """The compacted context as it stands."""
        return self.compactor.result()

    @property
    def has_dropped(self) -> bool:
        """Anything was compacted out of the window so far."""
        return bool(self.compactor.dropped)

    @property
    def summary(self) -> str:
        """The rolling summary of what was dropped."""
        return self.compactor.digest.summary

    def close_pending_calls(
        self, content: str, strategy: Strategy | None, ts: float | None = None
    ) -> list[dict[str, Any]]:
        """Answer every tool call still waiting for its result with `content` (at `ts`), so the session can go
        on; returns the span that pushed out of the window."""
        dropped: list[dict[str, Any]] = []
        for call_id in list(self.compactor.tracker.pending):
            dropped += self.compactor.append(
                {"role": "tool", "tool_call_id": call_id, "content": content}, strategy, ts
            )
        return dropped

    def apply(
        self,
        turn_id: str,
        message: dict[str, Any],
        strategy: Strategy | None,
        greeting: bool,
        seq: int | None = None,
        ts: float | None = None,
    ) -> list[dict[str, Any]]:
        """Append one turn's message (said at `ts`) and return the span it pushed out of the window.

        Raises the compactor's MessageError for a message that cannot follow the session; the state
        is then unchanged.
        """
        dropped = self.compactor.append(message, strategy, ts)
        self._count_in(turn_id, seq)
        self.greetings += int(greeting)
        return dropped

    def pop(self, control_id: str, position: int, seq: int) -> dict[str, Any]:
        """Remove the newest tail message if it is at `position`, numbered as the turn `control_id`; return it.

        Raises the compactor's PopError when it is not; the state is then unchanged.
        """
        popped = self.compactor.pop_newest(position)
        self._count_in(control_id, seq)
        return popped

    def _count_in(self, turn_id: str, seq: int | None) -> None:
        """Note an applied turn: seen from now on, the newest, and a new version."""
        self.recent_turn_ids.append(turn_id)
        if seq is not None:
            self.last_seq = seq if self.last_seq is None else max(self.last_seq, seq)
        self.version += 1
        self.last_turn_id = turn_id

    def learn(self, message: dict[str, Any], extractor: KeyInfoExtractor) -> list[Fact]:
        """Extract the key facts of one user message; returns those that are new or corrected."""
        before = self.user_facts
        self.user_facts = extractor.extract(before, [message], self.version)
        return changed_facts(before, self.user_facts)

    @property
    def kept_from(self) -> int:
        """The position of the oldest message of the kept tail (of the next message, when the tail is empty):
        every turn dropped so far lies before it, every turn dropped later at or after it."""
        units = self.compactor.units
        return units[0].entries[0].seq if units else self.compactor.seq

    def apply_summary(
        self, result: SummaryResult, fold: Fold, strategy: Strategy | None, max_facts: int
    ) -> list[dict[str, Any]] | None:
        """Fold in the LLM's answer if it answers the request in flight: its summary, and its facts merged over
        the session's by key. Returns the span a bigger block pushed out of the window, None when the answer
        does not apply."""
        until = self.summaries.inflight_until
        if not self.summaries.answer(result):
            return None
        # spans dropped since the request are only in the offline summary: lay them onto the new one
        summary = fold(result.summary or "", self.summaries.pending, self.language())
        facts = self.compactor.digest.facts
        if result.facts:
            facts = fold_facts(facts, result.facts, until, max_facts)
        pushed = self.compactor.replace_digest(summary, facts, strategy)
        self.version += 1
        return pushed

    def snapshot(self) -> bytes:
        """The Table row, in the current format (session/row_format.py)."""
        return encode_row(self)

    @classmethod
    def restore(cls, data: bytes) -> SessionState:
        """A state from a Table row of any format written so far; SnapshotError for any other."""
        return cls(**decode_row(data))
