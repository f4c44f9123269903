"""Key-info facts and rolling summaries to memories (pure)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence

from turnstream.compaction.strategies.base import Fact
from turnstream.schemas.memory import Memory, MemoryType, memory_id
from turnstream.text.prose import keywords

MAX_KEYWORDS = 32
"""Index size of one memory; a summary has many words, most of them noise for recall."""

_TYPES: dict[str, MemoryType] = {
    "fact": "fact",
    "preference": "preference",
    "event": "event",
    "constraint": "fact",
    "failure": "event",
}
_IMPORTANCE: dict[str, float] = {"constraint": 0.8, "preference": 0.7, "fact": 0.6, "event": 0.4, "failure": 0.2}
"""A user's constraint (budget, allergy) costs most when forgotten; a failed attempt is mostly session-local."""
SUMMARY_IMPORTANCE = 0.3
_EMPHASIS = re.compile(r"\b(?:important|always|never|must|remember)\b|重要|一定|务必|千万|永远|记住", re.I)


def importance(fact: Fact) -> float:
    """0..1 from the fact's type, +0.1 for a named slot (name, budget, …), +0.1 for an emphasis cue."""
    score = (
        _IMPORTANCE[fact.type] + (0.1 if ":" not in fact.key else 0.0) + (0.1 if _EMPHASIS.search(fact.text) else 0.0)
    )
    return round(min(score, 1.0), 2)


def _memory_keywords(text: str, slot: str) -> list[str]:
    # A named slot's words ("home city") find the memory even when its text phrases it otherwise.
    named = keywords(slot) if ":" not in slot else ()
    return list(dict.fromkeys([*named, *keywords(text)]))[:MAX_KEYWORDS]


def memories_from_facts(owner: str, facts: Iterable[Fact], session_key: str, now: float) -> list[Memory]:
    """One memory per fact; tool data (`data:` keys) is left out: it is session output, not something the user told us."""
    return [
        Memory(
            id=memory_id(owner, fact.key),
            owner=owner,
            type=_TYPES[fact.type],
            text=fact.text,
            key=fact.key,
            keywords=_memory_keywords(fact.text, fact.key),
            importance=importance(fact),
            created_at=now,
            updated_at=now,
            source_session=session_key,
        )
        for fact in facts
        if not fact.key.startswith("data:")
    ]


def summary_memory(owner: str, session_key: str, summary: str, now: float) -> Memory | None:
    """The session's rolling summary as its one `summary` memory (same id on every update); None when empty."""
    if not summary.strip():
        return None
    key = f"summary:{session_key}"
    return Memory(
        id=memory_id(owner, key),
        owner=owner,
        type="summary",
        text=summary,
        key=key,
        keywords=list(keywords(summary, MAX_KEYWORDS)),
        importance=SUMMARY_IMPORTANCE,
        created_at=now,
        updated_at=now,
        source_session=session_key,
    )


def changed_facts(before: Sequence[Fact], after: Sequence[Fact]) -> list[Fact]:
    """Facts of `after` that are new or whose text changed: what the write path passes on, so unchanged ones cost nothing."""
    old = {fact.key: fact.text for fact in before}
    return [fact for fact in after if old.get(fact.key) != fact.text]


NOTE_IMPORTANCE: dict[MemoryType, float] = {"fact": 0.6, "preference": 0.7, "event": 0.4, "summary": SUMMARY_IMPORTANCE}
"""An agent's note weighs as a key fact of its type would."""


def note_memory(owner: str, text: str, type_: MemoryType, session_key: str, now: float) -> Memory:
    """A note an agent writes as a typed memory of `owner`; the same note (whitespace and case aside) is the same
    memory, so a note written twice is one memory, restated."""
    normalized = " ".join(text.split())
    key = "note:" + hashlib.blake2b(normalized.lower().encode(), digest_size=8).hexdigest()
    score = NOTE_IMPORTANCE[type_] + (0.1 if _EMPHASIS.search(normalized) else 0.0)
    return Memory(
        id=memory_id(owner, key),
        owner=owner,
        type=type_,
        text=normalized,
        key=key,
        keywords=list(keywords(normalized, MAX_KEYWORDS)),
        importance=round(min(score, 1.0), 2),
        created_at=now,
        updated_at=now,
        source_session=session_key,
    )
