"""Where each message of a prompt came from: the turns, facts, summary span, memories and archived turns behind it.

Asked for with `build_prompt(..., provenance=True)`; computed from what the assembly already holds (the document's
positions and facts, the memories and turns the memory block kept), with no extra read. One list of sources per
prompt message, in the prompt's order:

- an anchor or a tail message: `{"kind": "turn", "session", "position"}`, its position in the conversation;
- the marker: `{"kind": "marker", "positions": [first, last]}`, the span the cut left out;
- the summary/facts block: `{"kind": "summary", "positions": [first, last]}` when it shows summary text (the rolling
  summary is drawn from the span left out), and `{"kind": "fact", "session", "position", "key"}` per fact it shows,
  the position of the turn the fact was drawn from;
- the memory block: `{"kind": "profile"}` when it shows the profile, `{"kind": "memory", "id", "score"}` per memory,
  `{"kind": "archive", "id", "session", "position", "score"}` per archived turn (the recall score that chose it);
- the user's message: `{"kind": "question"}`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from typing_extensions import TypedDict  # pydantic reads typing's own TypedDict only on Python 3.12+

from turnstream.compaction.strategies.tooldata import RESULT_ARROW
from turnstream.prompt.recalled import RecalledTurn
from turnstream.schemas.context import ContextDoc, ContextFact
from turnstream.schemas.prompt_read import Recalled
from turnstream.text.chat import Message, content_text
from turnstream.text.locale import LOCALES

SourceKind = Literal["turn", "marker", "summary", "fact", "profile", "memory", "archive", "question"]

_FACTS_HEADINGS = tuple(locale.facts_heading for locale in LOCALES.values())
"""How a block that opens with its facts (no summary text shown) begins, in each language."""
_FACT_MARK_CHARS = 48
"""How much of a fact's text (its call, for a tool result) finds its line in a block: a cut block may shorten a
result to its ids, never its call or the start of a statement."""


class Source(TypedDict, total=False):
    """One thing a prompt message was drawn from (the module's docstring lists the kinds and their fields)."""

    kind: SourceKind
    session: str
    position: int
    """The turn's position in the session's conversation (0-based), as the context document counts it."""
    positions: list[int]
    """First and last position of a span left out of the context."""
    key: str
    """A fact's key."""
    id: str
    """A memory's id, or an archived turn's entry id."""
    score: float
    """The recall score that chose a memory or an archived turn."""


def prompt_sources(
    doc: ContextDoc | None,
    head: Sequence[Message],
    marker: Message | None,
    memory_block: Message | None,
    shows_profile: bool,
    memories: Sequence[Recalled],
    turns: Sequence[RecalledTurn],
    tail_positions: Sequence[int | None],
) -> list[list[Source]]:
    """The sources of a prompt laid out as [*head, marker?, memory_block?, *tail, user] (prompt/assemble.py)."""
    session = doc.session_key if doc is not None else ""
    summarized = _left_out(doc, doc.positions[doc.marker_index :] if doc and doc.marker_index is not None else [])
    left_out = _left_out(doc, tail_positions)
    sources = [_head_source(doc, index, message, session, left_out, summarized) for index, message in enumerate(head)]
    if marker is not None:
        sources.append(_marker_sources(left_out))
    if memory_block is not None:
        sources.append(_memory_sources(shows_profile, memories, turns))
    sources += [[Source(kind="turn", session=session, position=p)] if p is not None else [] for p in tail_positions]
    sources.append([Source(kind="question")])
    return sources


def _head_source(
    doc: ContextDoc | None, index: int, message: Message, session: str, left_out: list[int], summarized: list[int]
) -> list[Source]:
    """An anchor's turn, the marker's span (what the prompt leaves out), or the block's summary span (what the
    worker's context left out) and facts."""
    if doc is None:
        return []
    if doc.marker_index is not None and index == doc.marker_index:
        return _marker_sources(left_out)
    if doc.marker_index is None or index < doc.marker_index:
        position = doc.positions[index] if index < len(doc.positions) else None
        return [Source(kind="turn", session=session, position=position)] if position is not None else []
    return _block_sources(doc, content_text(message.get("content")), session, summarized)


def _block_sources(doc: ContextDoc, text: str, session: str, left_out: list[int]) -> list[Source]:
    """The summary span when the block shows summary text, and each fact whose line the block shows."""
    found: list[Source] = []
    if doc.summary and left_out and not text.lstrip().startswith(_FACTS_HEADINGS):
        found.append(_span("summary", left_out))
    found += [
        Source(kind="fact", session=session, position=fact.source_seq, key=fact.key or fact.text)
        for fact in doc.facts
        if fact.source_seq is not None and _shows(text, fact)
    ]
    return found


def _shows(text: str, fact: ContextFact) -> bool:
    """Whether a block's text holds `fact`'s line (its call, or the start of its statement)."""
    mark = fact.text.partition(RESULT_ARROW)[0][:_FACT_MARK_CHARS].strip()
    return bool(mark) and mark in text


def _marker_sources(left_out: list[int]) -> list[Source]:
    """The marker's source: the span the prompt leaves out, when its positions are known."""
    return [_span("marker", left_out)] if left_out else [Source(kind="marker")]


def _memory_sources(shows_profile: bool, memories: Sequence[Recalled], turns: Sequence[RecalledTurn]) -> list[Source]:
    found = [Source(kind="profile")] if shows_profile else []
    found += [Source(kind="memory", id=memory.id, score=round(memory.score, 4)) for memory in memories]
    found += [
        Source(
            kind="archive",
            id=turn.entry.id,
            session=turn.entry.session,
            position=turn.entry.position,
            score=round(turn.score, 4),
        )
        for turn in turns
    ]
    return found


def _left_out(doc: ContextDoc | None, tail: Sequence[int | None]) -> list[int]:
    """First and last position of the span between the anchors and `tail` (the positions kept after them); [] when
    nothing is left out."""
    if doc is None or len(doc.positions) != len(doc.messages):
        return []
    end = doc.marker_index if doc.marker_index is not None else _anchor_end(doc)
    anchors = [p for p in doc.positions[:end] if p is not None]
    kept = [p for p in tail if p is not None]
    known = [p for p in doc.positions if p is not None]
    first = (max(anchors) + 1) if anchors else 0
    last = (min(kept) - 1) if kept else (max(known) if known else -1)
    return [first, last] if last >= first else []


def _anchor_end(doc: ContextDoc) -> int:
    """Where an uncut context's anchors end: after its first user message."""
    return next((i + 1 for i, m in enumerate(doc.messages) if m.get("role") == "user"), 0)


def _span(kind: SourceKind, left_out: list[int]) -> Source:
    return Source(kind=kind, positions=list(left_out))
