"""The read path: a ready-to-send prompt from one Redis round trip and no LLM call.

A prompt is the session's compacted context with one memory block laid in after its head: the
owner's profile, the typed memories that match the user's text, and the archived turns that match
it best (recall.py). The block fills at most `recall_budget_tokens`; when the whole prompt would
pass `prompt_budget_tokens`, the context's oldest tail messages make room (whole tool-call groups,
never the anchors, the marker and summary, or the newest step), and room the block leaves unused
goes back to the tail.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, replace
from typing import Any, get_args

from typing_extensions import TypedDict  # pydantic reads typing's own TypedDict only on Python 3.12+

from turnstream.compaction.greeting import is_small_talk
from turnstream.compaction.compactor import BLOCK_BUDGET_SHARE, cut_block
from turnstream.compaction.marker import marker_message, marker_tokens
from turnstream.compaction.strategies.base import Digest, Fact
from turnstream.compaction.strategies.text import keywords
from turnstream.compaction.tokens import count_message, count_messages, count_text
from turnstream.memory.archive import ArchiveEntry
from turnstream.memory.profile import cut_profile
from turnstream.memory.model import MemoryType
from turnstream.memory.recall import LINE_SEPARATOR_TOKENS, ArchivedTurn, RecalledTurn, choose_turns, dated_lines
from turnstream.memory.reads import ArchiveQuery, RecallResult, Recalled
from turnstream.memory.store import MemoryStore
from turnstream.schemas.context import ContextDoc
from turnstream.schemas.turn import MessageField
from turnstream.settings import Settings
from turnstream.text.chat import Message, content_text
from turnstream.text.language import Language, detect_language
from turnstream.text.locale import LOCALES
from turnstream.text.terms import query_terms

MAX_QUERY_KEYWORDS = 16
"""Each query keyword costs one set read in the recall script."""
MAX_QUERY_TERMS = 32
"""Each archive query term costs one ZCARD; the rarest of them are scored."""

_LANGUAGES: tuple[Language, ...] = get_args(Language)


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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Context:
    """A stored context cut where the memory block goes."""

    head: list[Message]
    """Anchors, then the marker and summary block when the history was compacted."""
    head_costs: list[int]
    rest: list[Message]
    rest_costs: list[int]
    """Token cost of each message of `rest` (from the document, else counted)."""
    positions: list[int | None]
    """The conversation position of each message of `rest`."""
    shown: set[tuple[str, int]]
    """(session, position) of every turn the head shows."""
    compacted: bool
    language: Language


def split_context(doc: ContextDoc | None, user_text: str) -> Context:
    """The context split where the memory block goes.

    The head is the anchors, then the marker and summary block when the history was compacted;
    without a marker, the leading system messages and the first user message (and what came
    before it, as the compactor pins it). A last message equal to the new user message is dropped:
    the gateway may read after its turn was applied, and the user message comes last anyway.
    """
    user = {"role": "user", "content": user_text}
    if doc is None:
        return Context([], [], [], [], [], set(), False, detect_language([user]))
    messages = list(doc.messages)
    # documents written before these fields carry none: count and detect here instead
    positions = list(doc.positions) if len(doc.positions) == len(messages) else [None] * len(messages)
    costs = list(doc.message_tokens) if len(doc.message_tokens) == len(messages) else [count_message(m) for m in messages]
    language: Language = doc.language if doc.language in _LANGUAGES else detect_language([*messages, user])  # type: ignore[assignment]
    if messages and messages[-1].get("role") == "user" and messages[-1].get("content") == user_text:
        messages.pop()
        positions.pop()
        costs.pop()
    if doc.marker_index is not None:
        end = doc.marker_index + 1
        if (doc.summary or doc.facts) and end < len(messages) and messages[end].get("role") == "system":
            end += 1
    else:
        end = next((i + 1 for i, m in enumerate(messages) if m.get("role") == "user"), None)
        if end is None:
            end = next((i for i, m in enumerate(messages) if m.get("role") != "system"), len(messages))
    shown = {(doc.session_key, p) for p in positions[:end] if p is not None}
    return Context(messages[:end], costs[:end], messages[end:], costs[end:], positions[end:], shown,
                   doc.marker_index is not None, language)


def fit_summary_block(doc: ContextDoc | None, context: Context, context_room: int) -> tuple[list[Message], int]:
    """The head, and its cost, with its summary/facts block cut by the compactor's own rule to its share of
    `context_room`.

    A prompt budget tighter than the worker's context budget gets the block the compactor would have
    made for that budget (the summary's oldest text first, then the least valuable facts), re-cut from
    the document's summary and facts with no LLM.
    """
    head, cost = context.head, sum(context.head_costs)
    if doc is None or doc.marker_index is None or len(head) <= doc.marker_index + 1:
        return head, cost
    limit = int(max(context_room, 0) * BLOCK_BUDGET_SHARE)
    if context.head_costs[-1] <= limit:
        return head, cost
    facts = tuple(Fact(f.type, f.text, (f.model_extra or {}).get("key", f.text), (f.model_extra or {}).get("source_seq", -1))
                  for f in doc.facts)  # type: ignore[arg-type]
    block = cut_block(Digest(doc.summary, facts), context.language, limit)
    cost -= context.head_costs[-1]
    return ([*head[:-1], {**block[0]}], cost + block[1]) if block else (head[:-1], cost)


def _unit_starts(messages: list[Message]) -> list[int]:
    """Where the tail may be cut: not before a tool result, which must follow its call."""
    return [i for i, m in enumerate(messages) if m.get("role") != "tool"]


def tail_start(costs: list[int], starts: list[int], room: int, marker_cost: int, start: int | None = None, floor: int = 0) -> int:
    """Move the tail's start back from `start` (default: the newest unit, always kept) over whole units while
    the tail, with the marker a cut needs, fits in `room`; never before `floor`."""
    if floor == 0 and sum(costs) <= room:
        return 0  # no cut, so no marker either
    start = (starts[-1] if starts else 0) if start is None else start
    suffix = sum(costs[start:])
    for earlier in reversed([s for s in starts if floor <= s < start]):
        suffix += sum(costs[earlier:start])
        if suffix + (marker_cost if earlier else 0) > room:
            break
        start = earlier
    return start


def memory_block(profile: str, recalled: list[Recalled], turns: list[RecalledTurn], language: Language) -> Message | None:
    """The one system message holding the profile, the recalled memories and turns; None when all are empty."""
    if not profile and not recalled and not turns:
        return None
    locale = LOCALES[language]
    parts = [locale.memory_title]
    if profile:
        parts.append(f"{locale.profile_heading}\n{profile}")
    if recalled:
        lines = "\n".join(f"- {locale.memory_label.format(label=locale.memory_labels[m.type])}{m.text}" for m in recalled)
        parts.append(f"{locale.memories_heading}\n{lines}")
    if turns:
        parts.append("\n".join([locale.turns_heading, *dated_lines((turn.day, turn.line) for turn in turns)]))
    return {"role": "system", "content": "\n".join(parts)}


def without_lines(recalled: list[Recalled], lines: set[str]) -> list[Recalled]:
    """`recalled` less the lines of their texts that are among `lines`: a summary memory's statement that a
    recalled turn shows, dated to its day, is said once, by the turn."""
    if not lines:
        return recalled
    kept = []
    for memory in recalled:
        text = lines_not_in(memory.text, lines)
        if text.strip():
            kept.append(memory if text == memory.text else replace(memory, text=text))
    return kept


def lines_not_in(text: str, lines: set[str]) -> str:
    """`text` less its lines that are among `lines` (a profile's or a memory's statement a recalled turn shows)."""
    return "\n".join(line for line in text.splitlines() if line.strip() not in lines) if lines else text


def _fill_block(
    profile: str, recalled: list[Recalled], archived: list[tuple[ArchiveEntry, float]], shown: set[tuple[str, int]],
    shown_texts: frozenset[str], room: int, language: Language,
) -> tuple[Message | None, list[Recalled], list[RecalledTurn]]:
    """The block within `room` tokens: profile and memories first (distilled, few), archived turns in what is left.

    Too little room: the lowest-scored memories go first, then the profile from its oldest end.
    """
    while True:
        block = memory_block(profile, recalled, [], language)
        base = count_message(block) if block else 0
        if block is None or base <= room:
            break  # an empty block fits any room, even the negative room of a context over the budget
        if recalled:
            recalled = recalled[:-1]
        else:
            shorter = cut_profile(profile, len(profile) * 3 // 4)
            profile = shorter if len(shorter) < len(profile) else ""  # a cut that cannot shorten it drops it
    locale = LOCALES[language]
    # the turns' heading, and the block's own title message when profile and memories left none
    title = 0 if block else count_message({"role": "system", "content": locale.memory_title}) + LINE_SEPARATOR_TOKENS
    overhead = count_text(locale.turns_heading) + LINE_SEPARATOR_TOKENS + title
    turns = choose_turns(archived, shown, room - base - overhead, language, shown_texts)
    while turns:  # the line counts are estimates: check the real block, dropping the weakest line if needed
        # a statement the profile or a memory repeats from a recalled turn is said once, by the dated turn
        lines = {turn.line for turn in turns}
        said = without_lines(recalled, lines)
        block = memory_block(lines_not_in(profile, lines).strip(), said, turns, language)
        if block is not None and count_message(block) <= room:
            return block, said, turns
        turns.remove(min(turns, key=lambda t: (t.score, t.hit)))
    return memory_block(profile, recalled, [], language), recalled, []


@dataclass(frozen=True, slots=True)
class Assembled:
    messages: list[Message]
    recalled: list[Recalled]
    turns: list[RecalledTurn]


def assemble(
    doc: ContextDoc | None, profile: str, recalled: list[Recalled], archived: list[tuple[ArchiveEntry, float]],
    user_text: str, settings: Settings,
) -> Assembled:
    """The prompt's messages and the memories and turns kept in it, within prompt_budget_tokens when the
    anchors and the newest step allow."""
    context = split_context(doc, user_text)
    user = {"role": "user", "content": user_text}
    language = context.language
    head, head_cost = fit_summary_block(doc, context, settings.prompt_budget_tokens - settings.recall_budget_tokens)
    costs = context.rest_costs
    starts = _unit_starts(context.rest)
    room = settings.prompt_budget_tokens - head_cost - count_messages([user])
    marker = None if context.compacted else marker_message(language)
    marker_cost = marker_tokens(language) if marker else 0
    # the tail gives way to a full block, the block takes what it needs, the tail takes back what is left
    start = tail_start(costs, starts, room - settings.recall_budget_tokens, marker_cost)
    session = doc.session_key if doc else ""
    shown = context.shown | {(session, p) for p in context.positions[start:] if p is not None}
    rest_tokens = sum(costs[start:]) + (marker_cost if start else 0)
    profile = cut_profile(profile, settings.profile_read_chars)
    texts = frozenset(content_text(m.get("content")) for m in [*head, *context.rest[start:]] if m.get("role") != "system")
    block, kept, turns = _fill_block(profile, recalled, archived, shown, texts,
                                     min(settings.recall_budget_tokens, room - rest_tokens), language)
    # taking back stops short of a recalled turn, which the block already shows
    recalled_turns = {(t.entry.session, t.entry.position) for t in turns}
    recalled_texts = {t.entry.text for t in turns}
    floor = max((i + 1 for i, (p, m) in enumerate(zip(context.positions[:start], context.rest))
                 if (session, p) in recalled_turns or content_text(m.get("content")) in recalled_texts), default=0)
    free = room - (count_message(block) if block else 0)
    start = tail_start(costs, starts, free, marker_cost, start, floor)
    cut = [marker] if start and marker else []
    messages = [*head, *cut, *([block] if block else []), *context.rest[start:], user]
    return Assembled(messages, kept, turns)


@dataclass(frozen=True, slots=True)
class PromptQuery:
    """What one read asks the recall script for, prepared from the user's text before the round trip."""

    user_text: str
    skipped: bool
    """Small talk: nothing is recalled."""
    keywords: tuple[str, ...]
    k: int
    archive: ArchiveQuery
    started: float
    """perf_counter() when preparing began, and when it ended: the prompt's timings start here."""
    asked: float


def prompt_query(user_text: str, k: int | None, settings: Settings) -> PromptQuery:
    """The keywords and archive terms of `user_text` (none for small talk); `k` defaults to settings.recall_k."""
    started = time.perf_counter()
    skipped = is_small_talk(user_text)
    words = () if skipped else keywords(user_text, MAX_QUERY_KEYWORDS)
    terms = [] if skipped else query_terms(user_text, MAX_QUERY_TERMS)
    return PromptQuery(user_text, skipped, words, settings.recall_k if k is None else k, ArchiveQuery(terms),
                       started, time.perf_counter())


def finish_prompt(query: PromptQuery, result: RecallResult, settings: Settings) -> Prompt:
    """The prompt from what the recall script returned for `query`; call it right after the round trip."""
    fetched = time.perf_counter()
    doc = ContextDoc.from_json(result.doc) if result.doc else None
    assembled = assemble(doc, result.profile, result.recalled, result.archived, query.user_text, settings)
    done = time.perf_counter()
    timings = {
        "redis": round((fetched - query.asked) * 1000, 3),
        "assemble": round((done - fetched) * 1000, 3),
        "total": round((done - query.started) * 1000, 3),
    }
    recalled = [RecalledMemory(id=m.id, type=m.type, text=m.text) for m in assembled.recalled]
    return Prompt(assembled.messages, recalled, [t.to_dict() for t in assembled.turns], query.skipped, timings)


def budgeted(settings: Settings, budget_tokens: int | None) -> Settings:
    """`settings` with prompt_budget_tokens set to `budget_tokens` for one call (unchanged when None)."""
    if budget_tokens is None:
        return settings
    return settings.model_copy(update={"prompt_budget_tokens": budget_tokens})


async def build_prompt(
    memory: MemoryStore, session_key: str, owner: str, user_text: str, k: int | None = None, record: bool = True,
    budget_tokens: int | None = None,
) -> Prompt:
    """Read the session's context, the owner's profile, memories and archive (one round trip), and assemble the prompt.

    With `record`, the memories given are counted against the session's dedup window; memories then
    dropped for the budget stay counted: that only happens when the context nearly fills the prompt
    budget, and undoing it would cost a second round trip. Archived turns have no dedup window:
    the context itself says what the model has seen, and a question asked twice needs its answer twice.
    `budget_tokens` replaces settings.prompt_budget_tokens for this prompt.
    """
    settings = budgeted(memory.settings, budget_tokens)
    query = prompt_query(user_text, k, settings)
    result = await memory.recall(owner, session_key, query.keywords, query.k, query.archive, record=record)
    return finish_prompt(query, result, settings)


async def search_memory(memory: MemoryStore, owner: str, text: str, k: int | None = None,
                        budget_tokens: int | None = None) -> Prompt:
    """What recall finds for `text` among `owner`'s memories and archived turns (`turnstream memory search`, the
    HTTP API's and the MCP server's search): no session, so no context to leave out and the memory block gets
    the whole recall budget, or `budget_tokens`; nothing is recorded against any dedup window."""
    settings = memory.settings
    if budget_tokens is not None:
        room = budget_tokens + count_messages([{"role": "user", "content": text}])
        settings = settings.model_copy(update={"recall_budget_tokens": budget_tokens,
                                               "prompt_budget_tokens": max(settings.prompt_budget_tokens, room)})
    query = prompt_query(text, k, settings)
    result = await memory.recall(owner, "", query.keywords, query.k, query.archive, record=False)
    return finish_prompt(query, result, settings)
