"""The per-session logic as a pure state machine: `on_turn` and `on_summary` change a SessionState and
return a Step, the effects an executor must carry out; nothing here does I/O or reads a clock.

Effects: the session's context document (built once per batch from the final state, not per turn),
memory and archive writes, a summary request, a dead letter with its reason.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

from turnstream.compaction import MessageError
from turnstream.compaction.incremental import PopError
from turnstream.compaction.strategies.keyinfo import KeyInfoExtractor
from turnstream.compaction.strategies.offline import offline_strategy
from turnstream.compaction.strategies.summary import RollingSummarizer
from turnstream.memory.archive import archive_entry
from turnstream.memory.corrections import outdated, reconcile, restating
from turnstream.memory.extract import memories_from_facts, summary_memory
from turnstream.memory.profile import profile_additions
from turnstream.schemas.archive import ArchiveEntry
from turnstream.schemas.context import ContextDoc, EncodedContext, encode_context
from turnstream.schemas.control import PopRequest
from turnstream.schemas.ids import owner_key
from turnstream.schemas.memory import Memory
from turnstream.schemas.summaries import SummaryRequest, SummaryResult
from turnstream.schemas.turn import Turn
from turnstream.session.config import CoreConfig
from turnstream.session.reorder import Forwarded, due, hold, is_held, must_wait
from turnstream.session.state import SessionState
from turnstream.text.greeting import is_small_talk
from turnstream.text.language import Language
from turnstream.text.locale import LOCALES
from turnstream.text.tokens import count_text

SUMMARY_MEMORY_EVERY = 16
"""Applied turns between refreshes of a session's summary memory: a write per turn would buy little."""
MIN_OFFLINE_TAIL_TOKENS = 32
"""Below this, a line of offline digest says too little to be worth its tokens."""

Outcome = Literal["applied", "duplicate", "held", "dead_letter", "summary", "stale_summary"]
Input = Turn | Forwarded | SummaryResult | PopRequest
"""What the core steps a session's state with."""


@dataclass(frozen=True)
class Step:
    """What one event asks of the executor; nothing of it has happened yet."""

    session_key: str
    owner: str
    outcome: Outcome
    context_changed: bool = False
    """The session's context document must be written (for a duplicate: re-synced, a no-op when current)."""
    applied_turn_id: str | None = None
    memories: tuple[Memory, ...] = ()
    profile_additions: tuple[str, ...] = ()
    archive: tuple[ArchiveEntry, ...] = ()
    summary_request: SummaryRequest | None = None
    dead_letter: tuple[str, str] | None = None
    """(reason, detail) of a refused turn."""
    release: tuple[Turn, ...] = ()
    """Held turns to send round again through the session's partition, in seq order (session/reorder.py)."""


def is_greeting(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return message.get("role") == "user" and isinstance(content, str) and is_small_talk(content)


class SessionCore:
    """The rules every session follows, with the offline strategies (no LLM on the hot path; the worker keeps
    raw turns in the turns topic and the archive, so no archiver either)."""

    def __init__(self, config: CoreConfig) -> None:
        self.config = config
        self.strategy = offline_strategy(config.max_facts, config.summary_max_tokens, archive=False)
        self.extractor = KeyInfoExtractor(config.max_facts)

    def new_state(self, item: Turn | Forwarded) -> SessionState:
        turn = item.turn if isinstance(item, Forwarded) else item
        return SessionState.new(turn.session_id, turn.tenant, self.owner_of(turn), self.config)

    def on_input(self, state: SessionState, item: Input, now: float) -> Step:
        """The step of whatever `item` is: a summary, a pop, or a turn (forwarded or not)."""
        if isinstance(item, SummaryResult):
            return self.on_summary(state, item, now)
        if isinstance(item, PopRequest):
            return self.on_pop(state, item)
        return self.on_turn(state, item, now)

    @staticmethod
    def owner_of(turn: Turn) -> str:
        return owner_key(turn.user_id, turn.tenant, turn.session_id)

    def on_turn(self, state: SessionState, item: Turn | Forwarded, now: float) -> Step:
        """Apply one decoded turn to its session's `state` (changed in place), or hold it back when it came
        forwarded ahead of the turns before it; the step names the held turns now due to go round again."""
        turn, forwarded = (item.turn, True) if isinstance(item, Forwarded) else (item, False)
        step = self._on_turn(state, turn, forwarded, now)
        release = tuple(due(state, now))
        return replace(step, release=release) if release else step  # a copy per turn only when turns are due

    def _on_turn(self, state: SessionState, turn: Turn, forwarded: bool, now: float) -> Step:
        state.owner = self.owner_of(turn)  # a session may learn its user later
        if state.seen(turn.turn_id, turn.seq) or is_held(state, turn):
            # a crash may have come between the Redis write and the Table update: re-sync (a CAS no-op otherwise)
            return Step(state.key, state.owner, "duplicate", context_changed=True)
        if must_wait(state, turn, forwarded):
            hold(state, turn, now)
            return Step(state.key, state.owner, "held")
        greeting = is_greeting(turn.message)
        try:
            state.check_next(turn.message)
        except MessageError as error:
            return Step(state.key, state.owner, "dead_letter", dead_letter=("message", str(error)))
        # a call whose result was refused or lost must not wedge the session: it is answered as failed
        unavailable = LOCALES[state.language()].result_unavailable
        said = turn.ts if turn.ts is not None else now
        dropped = state.close_pending_calls(unavailable, self.strategy, said) if turn.message["role"] != "tool" else []
        dropped += state.apply(turn.turn_id, turn.message, self.strategy, greeting=greeting, seq=turn.seq, ts=said)
        memories = self._memories(state, turn, greeting, now)
        # dates pinned in the conversation's language with this turn counted: what its context document says
        entry = archive_entry(
            state.key, turn.turn_id, state.last_position, turn.message, said, state.step_call(), state.language()
        )
        request = self._ask_summary(state, dropped, now) if dropped and self.config.llm_enabled else None
        return Step(
            state.key,
            state.owner,
            "applied",
            context_changed=True,
            applied_turn_id=turn.turn_id,
            memories=tuple(memories),
            profile_additions=tuple(profile_additions(memories)),
            archive=(entry,) if entry else (),
            summary_request=request,
        )

    def on_pop(self, state: SessionState, pop: PopRequest) -> Step:
        """Take back the session's newest message if the pop names it; a replayed pop is a duplicate turn."""
        if state.seen(pop.control_id, pop.seq):
            return Step(state.key, state.owner, "duplicate", context_changed=True)
        try:
            state.pop(pop.control_id, pop.position, pop.seq)
        except PopError as error:
            return Step(state.key, state.owner, "dead_letter", dead_letter=("pop", str(error)))
        return Step(state.key, state.owner, "applied", context_changed=True, applied_turn_id=pop.control_id)

    def on_summary(self, state: SessionState, result: SummaryResult, now: float) -> Step:
        """Fold an LLM answer (summary and key facts) into `state` if it answers the request in flight; a
        follow-up request if spans waited."""
        pushed = state.apply_summary(result, self._lay_on, self.strategy, self.config.max_facts)
        if pushed is None:
            return Step(state.key, state.owner, "stale_summary")
        # a bigger block may push the tail's oldest turns out: they go to the model like any dropped span
        follow_up = self._ask_summary(state, pushed, now)
        return Step(state.key, state.owner, "summary", context_changed=True, summary_request=follow_up)

    def _ask_summary(self, state: SessionState, dropped: list[dict[str, Any]], now: float) -> SummaryRequest | None:
        """Queue a dropped span (none: only what waited) for the LLM; the request to send now, if one is due."""
        chain, until, facts = state.summaries, state.kept_from, state.compactor.digest.facts
        if dropped:
            return chain.queue(dropped, state.key, state.owner, now, self.config.stale_after, until=until, facts=facts)
        return chain.follow_up(state.key, state.owner, now, until=until, facts=facts)

    def context_doc(self, state: SessionState, now: float, timings: dict[str, float]) -> ContextDoc:
        """The versioned document of `state`; `timings` are the latest change's stages, in milliseconds."""
        return ContextDoc(**self._context_fields(state, now, timings))

    def encoded_context(self, state: SessionState, now: float, timings: dict[str, float]) -> EncodedContext:
        """`context_doc`'s bytes, as the worker writes them, without building the validated model."""
        return encode_context(self._context_fields(state, now, timings))

    @staticmethod
    def _context_fields(state: SessionState, now: float, timings: dict[str, float]) -> dict[str, Any]:
        return {
            **state.compaction().to_dict(),
            "session_id": state.session_id,
            "tenant": state.tenant,
            "version": state.version,
            "last_turn_id": state.last_turn_id or "",
            "updated_at": now,
            "timings": timings,
        }

    def _memories(self, state: SessionState, turn: Turn, greeting: bool, now: float) -> list[Memory]:
        """Long-term memory from a user turn (facts, preferences, and earlier facts' memories that state a value a
        fact learned now replaces) and the session's summary: now and then, and at once when a fact learned now
        replaces a value the summary states (the summary memory written before says it as current, and the session
        may end before the next refresh)."""
        learned, restated = [], []
        if turn.message.get("role") == "user" and not greeting:
            before = state.user_facts
            learned = state.learn(turn.message, self.extractor)
            restated = restating(before, learned)
        memories = memories_from_facts(state.owner, [*learned, *restated], state.key, now)
        if state.has_dropped and (
            state.version % SUMMARY_MEMORY_EVERY == 0 or (learned and outdated(state.summary, learned))
        ):
            # the summary keeps what was said: each old value it states gets the fact that replaced it beside it
            summary = reconcile(state.summary, state.user_facts)
            memories += filter(None, [summary_memory(state.owner, state.key, summary, now)])
        return memories

    def _lay_on(self, summary: str, waiting: list[dict[str, Any]], language: Language) -> str:
        """The LLM summary kept whole, with the offline digest of the spans that waited in the room left."""
        room = self.config.summary_max_tokens - count_text(summary)
        if not waiting or room < MIN_OFFLINE_TAIL_TOKENS:
            return summary
        return f"{summary}\n{RollingSummarizer(room).fold('', waiting, language)}"
