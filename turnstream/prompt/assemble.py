"""The read path's assembly: a ready-to-send prompt from what one Redis round trip returned, with no LLM call.

A prompt is the session's compacted context with one memory block laid in after its head: the
owner's profile, the typed memories that match the user's text, and the archived turns that match
it best (recalled.py). The block fills at most `recall_budget_tokens`; when the whole prompt would
pass `prompt_budget_tokens`, the context's oldest tail messages make room (whole tool-call groups,
never the anchors, the marker and summary, or the newest step), and room the block leaves unused
goes back to the tail. An agent's tail makes no room for recall: its steps are in no facts until the worker
cuts them, so a step cut here would take its ids with it. Room the block and the tail both leave unused grows the summary/facts block,
re-cut from the document's summary and facts by the compactor's rule; an agent's facts (its tool
data) first take half the room the tail leaves, before recall, and all of it when that room is under two thirds of
the block's own share of the context (a long policy). Where the anchors leave less room than the newest step
takes, its tool results are cut to fit, as the worker cuts a result no room holds: a prompt over its budget is a
request the model refuses.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from typing_extensions import TypedDict  # pydantic reads typing's own TypedDict only on Python 3.12+

from turnstream.compaction.fitting import tail_start, trim_message, unit_starts
from turnstream.compaction.marker import marker_message, marker_tokens
from turnstream.memory.profile import cut_profile
from turnstream.prompt.block import fill_block, lines_not_in
from turnstream.prompt.context import (
    block_limit,
    fit_summary_block,
    grow_summary_block,
    holds_tool_data,
    split_context,
    summary_block_cost,
)
from turnstream.prompt.provenance import Source, prompt_sources
from turnstream.prompt.query import PromptQuery
from turnstream.prompt.recalled import ArchivedTurn, RecalledTurn
from turnstream.prompt.semantic import Semantic
from turnstream.schemas.archive import ArchiveEntry
from turnstream.schemas.context import ContextDoc
from turnstream.schemas.memory import MemoryType
from turnstream.schemas.prompt_read import Recalled, RecallResult
from turnstream.schemas.turn import MessageField
from turnstream.settings import MemorySettings
from turnstream.text.chat import Message, content_text
from turnstream.text.language import Language
from turnstream.text.locale import LOCALES
from turnstream.text.tokens import count_message, count_messages

AGENT_FACTS_SHARE = 0.5
"""Of the room the tail leaves, the share an agent's summary/facts block takes first, before recall: the facts hold
the ids its next call passes. Measured on the bench's agent traces (figure 14): at a 4,000-token prompt, 74 % of old
values kept with none, 76.5 % with a half, 77 % with all; at the defaults 97 %, 97 % and 96 % (recall then loses room
it used). Where that room is smaller than the block's own share of the context (a long policy), the block takes
more: all of a room under two thirds of that share, down to this share at the whole of it. A 3,500-token policy
leaves a 4,000-token prompt under 300 tokens, and half of them went to recalled lines that held none of the ids
(figure 14's held-out seeds at a 4,000-token prompt: 91.4 -> 94.1 % of old values; the development seed and the
defaults unchanged)."""


class RecalledMemory(TypedDict):
    """A typed memory as a prompt or a search returns it."""

    id: str
    """The memory's id (memory_id of its owner and slot)."""
    type: MemoryType
    """fact, preference, event or summary."""
    text: str
    """The memory itself."""


@dataclass(frozen=True, slots=True)
class Prompt:
    """What build_prompt returns."""

    messages: list[MessageField]
    """Anchors, marker and summary block, the memory block, the rest of the context, the user message."""
    recalled: list[RecalledMemory]
    """The memories in the block, best first: {id, type, text}."""
    archived: list[ArchivedTurn]
    """The archived turns in the block, in time order, with their scores (RecalledTurn.to_dict)."""
    skipped_recall: bool
    """True when the user message was small talk: no recall, nothing recorded."""
    timings: dict[str, float]
    """Milliseconds: redis (the one round trip), assemble, total."""
    sources: list[list[Source]] | None = None
    """With `provenance=True`: per message, what it was drawn from (prompt/provenance.py); None otherwise."""

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        if self.sources is None:
            del out["sources"]  # not asked for: the reply stays as it was
        return out


@dataclass(frozen=True, slots=True)
class Assembled:
    messages: list[Message]
    recalled: list[Recalled]
    turns: list[RecalledTurn]
    sources: list[list[Source]] | None = None


def assemble(
    doc: ContextDoc | None,
    profile: str,
    recalled: list[Recalled],
    archived: list[tuple[ArchiveEntry, float]],
    user_text: str,
    settings: MemorySettings,
    semantic: Sequence[tuple[ArchiveEntry, float]] = (),
    provenance: bool = False,
) -> Assembled:
    """The prompt's messages and the memories and turns kept in it, within prompt_budget_tokens when the
    anchors and the newest step's calls allow (its results are cut to fit: `results_fitted`); with `provenance`, each
    message's sources too."""
    context = split_context(doc, user_text)
    user = {"role": "user", "content": user_text}
    language = context.language
    context_room = settings.prompt_budget_tokens - settings.recall_budget_tokens
    head, head_cost = fit_summary_block(doc, context, context_room, user_text)
    costs = context.rest_costs
    starts = unit_starts(context.rest)
    user_cost = count_messages([user])
    room = settings.prompt_budget_tokens - head_cost - user_cost
    marker = None if context.compacted else marker_message(language)
    marker_cost = marker_tokens(language) if marker else 0
    # the tail gives way to a full block (a chat's; an agent's keeps its steps, whose ids no facts hold yet), the block
    # takes what it needs, the tail takes back what is left
    agent = holds_tool_data(doc)
    start = tail_start(costs, starts, room - (0 if agent else settings.recall_budget_tokens), marker_cost)
    session = doc.session_key if doc else ""
    shown = context.shown | {(session, p) for p in context.positions[start:] if p is not None}
    rest_tokens = sum(costs[start:]) + (marker_cost if start else 0)
    if agent:
        # An agent's next call passes ids from its tool results: the facts that hold them come before recall (see
        # AGENT_FACTS_SHARE for how much).
        free = room - rest_tokens
        half = int(free * AGENT_FACTS_SHARE)
        entitled = min(free, block_limit(context_room) - summary_block_cost(doc, head) - half)
        grown, grown_cost = grow_summary_block(doc, head, head_cost, max(half, entitled), language, user_text)
        room -= grown_cost - head_cost
        head, head_cost = grown, grown_cost
    # The user's message ends the prompt: a profile line, memory or archived turn that only repeats it (the gateway
    # reads after its turn was applied and remembered) would say it twice.
    asked = {user_text.strip()}
    profile = lines_not_in(cut_profile(profile, settings.profile_read_chars), asked).strip()
    texts = frozenset(
        content_text(m.get("content")) for m in [*head, *context.rest[start:], user] if m.get("role") != "system"
    )
    block, kept, turns = fill_block(
        profile,
        [memory for memory in recalled if memory.text.strip() not in asked],
        archived,
        shown,
        texts,
        min(settings.recall_budget_tokens, room - rest_tokens),
        language,
        semantic,
    )
    # taking back stops short of a recalled turn, which the block already shows
    recalled_turns = {(t.entry.session, t.entry.position) for t in turns}
    recalled_texts = {t.entry.text for t in turns}
    floor = max(
        (
            i + 1
            for i, (p, m) in enumerate(zip(context.positions[:start], context.rest))
            if (session, p) in recalled_turns or content_text(m.get("content")) in recalled_texts
        ),
        default=0,
    )
    block_cost = count_message(block) if block else 0
    free = room - block_cost
    start = tail_start(costs, starts, free, marker_cost, start, floor)
    spare = free - sum(costs[start:]) - (marker_cost if start else 0)
    head, head_cost = grow_summary_block(doc, head, head_cost, spare, language, user_text)
    cut = [marker] if start and marker else []
    tail_room = settings.prompt_budget_tokens - head_cost - (marker_cost if cut else 0) - block_cost - user_cost
    tail = results_fitted(context.rest[start:], costs[start:], tail_room, language)
    messages = [*head, *cut, *([block] if block else []), *tail, user]
    if not provenance:
        return Assembled(messages, kept, turns)
    shows_profile = block is not None and LOCALES[language].profile_heading in content_text(block.get("content"))
    sources = prompt_sources(
        doc, head, cut[0] if cut else None, block, shows_profile, kept, turns, context.positions[start:]
    )
    return Assembled(messages, kept, turns, sources)


def results_fitted(tail: list[Message], costs: Sequence[int], room: int, language: Language) -> list[Message]:
    """`tail` (its messages costing `costs`) within `room` tokens where its newest step alone is over it (a policy
    that fills the prompt): its tool results cut, the largest first, each to its digest or a trimmed text with a note
    (the worker's rule for a result no room holds), so the prompt stays within its budget. Unchanged when it fits,
    and as near as the cuts get when the call itself is over."""
    over = sum(costs) - room
    if over <= 0:
        return tail
    fitted = list(tail)
    results = sorted((i for i, message in enumerate(tail) if message.get("role") == "tool"), key=lambda i: -costs[i])
    for index in results:
        cut = trim_message(tail[index], max(costs[index] - over, 0), language)
        if cut is not None:
            fitted[index] = cut[0]
            over -= costs[index] - cut[1]
        if over <= 0:
            break
    return fitted


def finish_prompt(
    query: PromptQuery, result: RecallResult, settings: MemorySettings, semantic: Semantic | None = None
) -> Prompt:
    """The prompt from what the recall script returned for `query`; call it right after the round trip. The
    semantic share, when the read asked one, is ranked by `semantic` (the side `query` was prepared with).

    Timings: redis (the one round trip), assemble, total; with a semantic share also semantic_hits (what it
    offered the block) and, when the gateway has the model, embed (the question's embedding)."""
    fetched = time.perf_counter()
    doc = ContextDoc.from_json(result.doc) if result.doc else None
    ranked, embed_ms = (
        semantic.rank(query.semantic, result.pool) if semantic is not None and query.semantic else ([], None)
    )
    assembled = assemble(
        doc, result.profile, result.recalled, result.archived, query.user_text, settings, ranked, query.provenance
    )
    done = time.perf_counter()
    timings = {
        "redis": round((fetched - query.asked) * 1000, 3),
        "assemble": round((done - fetched) * 1000, 3),
        "total": round((done - query.started) * 1000, 3),
    }
    if query.semantic is not None:
        timings["semantic_hits"] = len(ranked)
        if embed_ms is not None:
            timings["embed"] = embed_ms
    recalled = [RecalledMemory(id=m.id, type=m.type, text=m.text) for m in assembled.recalled]
    return Prompt(
        assembled.messages, recalled, [t.to_dict() for t in assembled.turns], query.skipped, timings, assembled.sources
    )


def budgeted(settings: MemorySettings, budget_tokens: int | None) -> MemorySettings:
    """`settings` with prompt_budget_tokens set to `budget_tokens` for one call (unchanged when None)."""
    if budget_tokens is None:
        return settings
    return settings.model_copy(update={"prompt_budget_tokens": budget_tokens})


def search_settings(settings: MemorySettings, text: str, budget_tokens: int | None) -> MemorySettings:
    """The settings of a search (no session, so no context to leave out): the memory block gets the whole recall
    budget, or `budget_tokens`."""
    if budget_tokens is None:
        return settings
    room = budget_tokens + count_messages([{"role": "user", "content": text}])
    return settings.model_copy(
        update={"recall_budget_tokens": budget_tokens, "prompt_budget_tokens": max(settings.prompt_budget_tokens, room)}
    )
