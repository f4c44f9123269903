"""A session's context as it was at an earlier version, rebuilt from its log records with the worker's own rules
(pure: the records are given, nothing is read or written here).

The worker steps each record of the session's partition through `record_of` and the session core; so does a
replay, one record at a time, with the record's timestamp standing for the worker's clock. What the log alone
decides comes out the same: duplicates and replays skipped, forwarded turns held until their gap fills (the worker
sends them round again, so their second pass is in the log too), refused records skipped (the worker
dead-letters them), a forget ending the session, pops, summaries (when their topic's records are given, merged in
time order). What the worker's clock decides is approximated by the record timestamps: a session idle past
TURNSTREAM_SESSION_TTL_SECONDS starts afresh, as the expiry sweep would have made it (within the sweep's period,
a tenth of the TTL at most a minute), a held turn gives up waiting after MAX_WAIT_SECONDS, and a turn without `ts`
is dated by its record.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from turnstream.schemas.context import ContextDoc
from turnstream.schemas.control import ForgetRequest, PopRequest
from turnstream.schemas.summaries import SummaryResult
from turnstream.session.core import Input, SessionCore, Step
from turnstream.session.expiry import is_idle
from turnstream.session.records import record_of
from turnstream.session.rules import ERASED, Skip, opening
from turnstream.session.state import SessionState

if TYPE_CHECKING:
    from turnstream.settings import Settings

IGNORED_FIELDS = frozenset({"updated_at", "timings"})
"""Fields of a context document that say when and how fast it was computed, not what it holds."""


@dataclass(frozen=True, slots=True)
class LogRecord:
    """One record of the session agent's input topics, as much of one as a replay reads."""

    topic: str
    key: bytes | None
    value: bytes | None
    """None for a tombstone."""
    headers: list[tuple[str, bytes]]
    timestamp: float
    """When it was produced, epoch seconds: the replay's clock."""


@dataclass(frozen=True)
class ReplayRules:
    """The worker's settings a replay needs beyond the core's (each the TURNSTREAM_* setting of the same name)."""

    summaries_topic: str
    max_content_bytes: int
    session_ttl_seconds: float
    forget_marker_seconds: float

    @classmethod
    def from_settings(cls, settings: Settings) -> ReplayRules:
        return cls(
            settings.summaries_topic,
            settings.max_content_bytes,
            settings.session_ttl_seconds,
            settings.forget_marker_seconds,
        )


@dataclass(frozen=True)
class Target:
    """Where a replay stops: at a version, or after the turn that applied `turn_id` (one of the two)."""

    version: int | None = None
    turn_id: str | None = None

    def __post_init__(self) -> None:
        if (self.version is None) == (self.turn_id is None):
            raise ValueError("a target is a version or a turn id, not both and not neither")

    def reached(self, state: SessionState, step: Step) -> bool:
        if self.version is not None:
            return state.version == self.version
        return step.applied_turn_id == self.turn_id


@dataclass(frozen=True)
class Rebuilt:
    """What a replay of one session's log found."""

    key: str
    doc: ContextDoc | None
    """The document at the target, in the session's latest life; None when the log does not reach it."""
    latest: int
    """The newest version the log reaches (0: no turn applied)."""
    turns: int
    """Turns applied in the session's latest life."""
    refused: int
    """Records of the session the worker dead-letters (not decodable, or refused by the core)."""
    erased: bool
    """The log ends with the session erased (`turnstream forget`): nothing is rebuilt."""


@dataclass
class SessionReplay:
    """One session's records stepped in log order as its worker steps them; the latest life only (an erasure or an
    expiry ends a life: the next turn starts the session afresh)."""

    core: SessionCore
    key: str
    rules: ReplayRules
    target: Target | None = None
    state: SessionState | None = None
    erased_at: float | None = None
    """When a forget erased the session, by its record's clock."""
    touched: float | None = None
    """When the session's state last changed, by its record's clock (the Table row's write time)."""
    inputs: list[tuple[Input, float]] = field(default_factory=list)
    """What the latest life was stepped with, and when: enough to step it again after an item that broke it."""
    doc: ContextDoc | None = None
    turns: int = 0
    refused: int = 0

    def feed(self, record: LogRecord) -> Step | Skip | None:
        """Step the session with `record`, if it is one of the session's; the step (or skip) it made."""
        decoded = record_of(
            record.topic,
            record.key,
            record.value,
            record.headers,
            self.rules.summaries_topic,
            self.rules.max_content_bytes,
        )
        if decoded.kind == "refused" and record.key == self.key.encode():
            self.refused += 1
            return None
        if decoded.key != self.key or decoded.item is None or decoded.kind == "misrouted":
            return None  # another session's, a tombstone, or a turn its worker forwards (its copy comes later)
        self._expire(record.timestamp)
        if isinstance(decoded.item, ForgetRequest):
            self._new_life(erased_at=record.timestamp)
            self.touched = record.timestamp
            return None
        return self._step(decoded.item, record.timestamp)

    def _expire(self, now: float) -> None:
        """A session idle past its TTL left the Table (an erased one's marker lasts longer): start afresh."""
        if self.touched is None or not is_idle(self.touched, now, self.rules.session_ttl_seconds):
            return
        if self.erased_at is not None and now - self.erased_at <= self.rules.forget_marker_seconds:
            return
        self._new_life()

    def _new_life(self, erased_at: float | None = None) -> None:
        self.state, self.erased_at, self.touched, self.doc = None, erased_at, None, None
        self.inputs, self.turns = [], 0

    def _step(self, item: Input, now: float) -> Step | Skip:
        try:
            result = self._apply(item, now)
        except Exception:  # noqa: BLE001 - as the worker: the item is dead-lettered, the state rebuilt without it
            self.refused += 1
            self._rebuild()
            return Skip("no_state")
        if isinstance(result, Step):
            self.inputs.append((item, now))
            self.touched = now
            self._note(item, result, now)
        return result

    def _apply(self, item: Input, now: float) -> Step | Skip:
        if self.state is None:
            opened = opening(self.key, item, ERASED if self.erased_at is not None else None, self.core)
            if isinstance(opened, Skip):
                return opened
            self.state = opened
        return self.core.on_input(self.state, item, now)

    def _rebuild(self) -> None:
        """The state as the inputs before the broken item made it (the core is deterministic)."""
        self.state = None
        for item, now in self.inputs:
            self._apply(item, now)

    def _note(self, item: Input, step: Step, now: float) -> None:
        if step.dead_letter is not None:
            self.refused += 1
        if step.outcome == "applied" and not isinstance(item, (SummaryResult, PopRequest)):
            self.turns += 1
        state = self.state
        if state is not None and self.target is not None and self.target.reached(state, step):
            self.doc = self.core.context_doc(state, now, {})

    def result(self) -> Rebuilt:
        latest = self.state.version if self.state is not None else 0
        return Rebuilt(self.key, self.doc, latest, self.turns, self.refused, self.erased_at is not None)


def rebuild(
    core: SessionCore, key: str, records: Iterable[LogRecord], target: Target | None, rules: ReplayRules
) -> Rebuilt:
    """Session `key`'s context at `target` (None: its latest), rebuilt from `records` in log order."""
    replay = SessionReplay(core, key, rules, target)
    for record in records:
        replay.feed(record)
    if target is None and replay.state is not None:
        replay.doc = core.context_doc(replay.state, replay.touched or 0.0, {})
    return replay.result()


def differences(rebuilt: ContextDoc, stored: ContextDoc) -> list[str]:
    """The fields in which two documents of a session differ, when and how fast each was computed aside."""
    ours, theirs = rebuilt.model_dump(), stored.model_dump()
    return [name for name in ContextDoc.model_fields if name not in IGNORED_FIELDS and ours[name] != theirs[name]]
