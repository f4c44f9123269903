"""The archive's record: one applied turn of an owner, condensed to one searchable entry; kept in Redis and in
the memory journal (memory/archive.py builds it from a turn)."""

from __future__ import annotations

import base64
import hashlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import orjson

from turnstream.text.dates import Notes
from turnstream.text.terms import is_identifier, recall_terms

MAX_DISTINCT_TERMS = 96
"""Index terms per entry besides its identifiers: bounds the write of one long turn (its most frequent terms are
kept)."""
MAX_IDENTIFIER_TERMS = 96
"""Identifier terms per entry, kept apart from the others: a tool result listing many records is found by any
of their ids, not only by those frequent enough to beat its words."""


@dataclass(frozen=True, slots=True)
class ArchiveEntry:
    """One applied turn in its owner's archive."""

    id: str
    """entry_id(session, turn_id): a redelivered or replayed turn is the same entry."""
    session: str
    """Session key of the conversation the turn belongs to."""
    position: int
    """The turn's message position in its session (0-based), as the context's `positions` count."""
    role: str
    speaker: str | None
    """The message's `name`, when it has one."""
    ts: float
    """When the turn happened (the turn's `ts`, else when it was applied), epoch seconds."""
    text: str
    """The turn condensed to searchable text (tool calls and results included)."""
    dates: Notes | None = None
    """Its relative dates pinned to the day it was said, as notes to insert into `text` (text/dates.py),
    found once when it was archived; None for an entry archived before dates were pinned then, whose read
    finds them (in the reading prompt's language)."""
    counts: Counter[str] | None = field(default=None, compare=False, repr=False)
    """Its index terms with their frequencies, when counted already: the worker counts them as it applies the
    turn (memory/archive.archive_entry), so its Redis write only packs them. None: counted when asked."""

    @property
    def position_field(self) -> str:
        """Field of the positions hash: how the read script finds the turns around a hit."""
        return f"{self.session}#{self.position}"

    def term_counts(self) -> Counter[str]:
        """Index terms with their frequencies (index_terms)."""
        return self.counts if self.counts is not None else index_terms(self.speaker, self.text)

    def to_json(self) -> bytes:
        """As stored and as the read script returns it."""
        data = {
            "id": self.id,
            "session": self.session,
            "position": self.position,
            "role": self.role,
            "speaker": self.speaker,
            "ts": self.ts,
            "text": self.text,
        }
        return orjson.dumps(data if self.dates is None else {**data, "dates": self.dates})

    @classmethod
    def from_json(cls, raw: bytes | str) -> ArchiveEntry:
        return cls.from_dict(orjson.loads(raw))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ArchiveEntry:
        """An entry as decoded from its JSON, with or without pinned dates."""
        dates = data.get("dates")
        return cls(
            data["id"],
            data["session"],
            data["position"],
            data["role"],
            data["speaker"],
            data["ts"],
            data["text"],
            None if dates is None else tuple(map(tuple, dates)),
        )


def index_terms(speaker: str | None, text: str) -> Counter[str]:
    """An entry's index terms with their frequencies: its MAX_IDENTIFIER_TERMS most frequent identifiers and
    MAX_DISTINCT_TERMS most frequent other terms (ties: the first written). The speaker's name counts, so "what
    did Caroline say" finds her."""
    counts = Counter(recall_terms(f"{speaker or ''} {text}"))
    if len(counts) <= MAX_DISTINCT_TERMS:
        return counts
    ids = Counter({term: n for term, n in counts.items() if is_identifier(term)})
    words = counts - ids
    return Counter(dict(ids.most_common(MAX_IDENTIFIER_TERMS) + words.most_common(MAX_DISTINCT_TERMS)))


def entry_id(session: str, turn_id: str) -> str:
    """Stable id of a turn's archive entry."""
    return hashlib.blake2b(f"{session}\0{turn_id}".encode(), digest_size=10).hexdigest()


@dataclass(frozen=True, slots=True)
class EmbeddedTurn:
    """An archived turn's semantic side, as the embedding agent computes it: kept in Redis beside its entry
    (redis/semantic.py) and in the memory journal, so a Redis that lost it gets it back without the model."""

    id: str
    """The entry's stable id (entry_id)."""
    session: str
    """Session key of the turn's conversation."""
    position: int
    """The turn's position in its session: with `session`, where the archive holds the entry."""
    tag: str
    """The tag of the model that made `vector` (embeddings.base.model_tag): a reader scores only its own model's."""
    vector: bytes
    """The turn's unit vector, int8 with a scale (embeddings/codec.py)."""
    terms: tuple[tuple[str, int], ...]
    """Its semantic terms, nearest first, each with its weight (cosine × 1000)."""

    @property
    def position_field(self) -> str:
        return f"{self.session}#{self.position}"

    def to_json(self) -> bytes:
        return orjson.dumps(
            {
                "id": self.id,
                "session": self.session,
                "position": self.position,
                "tag": self.tag,
                "vector": base64.b64encode(self.vector).decode(),
                "terms": self.terms,
            }
        )

    @classmethod
    def from_json(cls, raw: bytes | str) -> EmbeddedTurn:
        data = orjson.loads(raw)
        return cls(
            data["id"],
            data["session"],
            data["position"],
            data["tag"],
            base64.b64decode(data["vector"]),
            tuple((term, int(weight)) for term, weight in data["terms"]),
        )
