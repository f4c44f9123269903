"""A stored context cut where the memory block goes, and its summary block refitted to a prompt's room."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast, get_args

from turnstream.compaction.fitting import BLOCK_BUDGET_SHARE, DATA_KEY, cut_block, focus_of
from turnstream.compaction.strategies.base import Digest, Fact, FactType
from turnstream.schemas.context import ContextDoc
from turnstream.text.chat import Message
from turnstream.text.language import Language, detect_language
from turnstream.text.tokens import count_message

_LANGUAGES: tuple[Language, ...] = get_args(Language)


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
    positions: list[int | None] = list(doc.positions) if len(doc.positions) == len(messages) else [None] * len(messages)
    costs = (
        list(doc.message_tokens) if len(doc.message_tokens) == len(messages) else [count_message(m) for m in messages]
    )
    language: Language = doc.language if doc.language in _LANGUAGES else detect_language([*messages, user])  # type: ignore[assignment]  # a str checked to be a Language
    if messages and messages[-1].get("role") == "user" and messages[-1].get("content") == user_text:
        messages.pop()
        positions.pop()
        costs.pop()
    end: int | None
    if doc.marker_index is not None:
        end = doc.marker_index + 1
        if (doc.summary or doc.facts) and end < len(messages) and messages[end].get("role") == "system":
            end += 1
    else:
        end = next((i + 1 for i, m in enumerate(messages) if m.get("role") == "user"), None)
        if end is None:
            end = next((i for i, m in enumerate(messages) if m.get("role") != "system"), len(messages))
    shown = {(doc.session_key, p) for p in positions[:end] if p is not None}
    return Context(
        messages[:end],
        costs[:end],
        messages[end:],
        costs[end:],
        positions[end:],
        shown,
        doc.marker_index is not None,
        language,
    )


def fit_summary_block(
    doc: ContextDoc | None, context: Context, context_room: int, request: str
) -> tuple[list[Message], int]:
    """The head, and its cost, with its summary/facts block cut by the compactor's own rule to its share of
    `context_room`, favouring the tool results `request` (the user's message) refers to.

    A prompt budget tighter than the worker's context budget gets the block the compactor would have
    made for that budget (the summary's oldest text first, then the least valuable facts), re-cut from
    the document's summary and facts with no LLM.
    """
    head, cost = context.head, sum(context.head_costs)
    if not _has_block(doc, head):
        return head, cost
    limit = block_limit(context_room)
    if context.head_costs[-1] <= limit:
        return head, cost
    digest = _digest(doc)  # type: ignore[arg-type]  # _has_block: not None
    block = cut_block(digest, context.language, limit, focus_of(digest, request))
    cost -= context.head_costs[-1]
    return ([*head[:-1], {**block[0]}], cost + block[1]) if block else (head[:-1], cost)


def grow_summary_block(
    doc: ContextDoc | None, head: list[Message], cost: int, spare: int, language: Language, request: str
) -> tuple[list[Message], int]:
    """The head, and its cost, with its summary/facts block re-cut to `spare` more tokens: room the memory block
    and the tail leave unused shows more of the document's facts and summary (what the worker's own budget cut),
    by the same rule that cut them. A context whose anchors left the worker no room for a block at all gets one
    here, after its marker, when the prompt has the room."""
    if spare <= 0 or not _has_digest(doc):
        return head, cost
    shown = summary_block_cost(doc, head)
    digest = _digest(doc)  # type: ignore[arg-type]  # _has_digest: not None
    block = cut_block(digest, language, shown + spare, focus_of(digest, request))
    if block is None or block[1] <= shown:
        return head, cost
    return [*(head[:-1] if shown else head), {**block[0]}], cost - shown + block[1]


def block_limit(context_room: int) -> int:
    """The most a prompt's summary/facts block takes of the `context_room` its budget gives the context: the
    compactor's share."""
    return int(max(context_room, 0) * BLOCK_BUDGET_SHARE)


def summary_block_cost(doc: ContextDoc | None, head: list[Message]) -> int:
    """What the summary/facts block at the end of `head` costs; 0 when the head has none."""
    return count_message(head[-1]) if _has_block(doc, head) else 0


def holds_tool_data(doc: ContextDoc | None) -> bool:
    """Whether the document's facts hold an agent's tool results."""
    return doc is not None and any((f.key or "").startswith(DATA_KEY) for f in doc.facts)


def _has_digest(doc: ContextDoc | None) -> bool:
    """Whether the document is compacted and has a summary or facts to show, whether or not its context held them."""
    return doc is not None and doc.marker_index is not None and bool(doc.summary or doc.facts)


def _has_block(doc: ContextDoc | None, head: list[Message]) -> bool:
    """Whether the head ends with the summary/facts block of a compacted context."""
    return doc is not None and doc.marker_index is not None and len(head) > doc.marker_index + 1


def _digest(doc: ContextDoc) -> Digest:
    """The document's summary and facts, as the compactor's block rule takes them."""
    facts = tuple(
        Fact(cast(FactType, f.type), f.text, f.key or f.text, -1 if f.source_seq is None else f.source_seq)
        for f in doc.facts
    )
    return Digest(doc.summary, facts)
