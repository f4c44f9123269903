"""What one prompt read asks for, prepared from the user's text before the round trip."""

from __future__ import annotations

import time
from dataclasses import dataclass

from turnstream.prompt.semantic import POOL, Semantic, SemanticAsk
from turnstream.schemas.prompt_read import ArchiveQuery
from turnstream.settings import MemorySettings
from turnstream.text.greeting import is_small_talk
from turnstream.text.prose import keywords
from turnstream.text.terms import query_terms

MAX_QUERY_KEYWORDS = 16
"""Each query keyword costs one set read in the recall script."""
MAX_QUERY_TERMS = 32
"""Each archive query term costs one ZCARD; the rarest of them are scored."""


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
    semantic: SemanticAsk | None = None
    """What the read asks of the semantic index (None: lexical recall only)."""
    provenance: bool = False
    """Whether the prompt says where each of its messages came from (prompt/provenance.py)."""


def prompt_query(
    user_text: str,
    k: int | None,
    settings: MemorySettings,
    semantic: Semantic | None = None,
    provenance: bool = False,
) -> PromptQuery:
    """The keywords and archive terms of `user_text` (none for small talk); `k` defaults to settings.recall_k.
    With `semantic`, the read also asks a pool for the block's semantic share (prompt/semantic.py)."""
    started = time.perf_counter()
    skipped = is_small_talk(user_text)
    words = () if skipped else keywords(user_text, MAX_QUERY_KEYWORDS)
    terms = [] if skipped else query_terms(user_text, MAX_QUERY_TERMS)
    ask = semantic.ask(user_text, terms) if semantic is not None and terms else None
    archive = (
        ArchiveQuery(terms)
        if ask is None
        else ArchiveQuery(terms, pool=POOL, semantic_terms=ask.terms, vector_tag=ask.tag)
    )
    return PromptQuery(
        user_text,
        skipped,
        words,
        settings.recall_k if k is None else k,
        archive,
        started,
        time.perf_counter(),
        ask,
        provenance,
    )
