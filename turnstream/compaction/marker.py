"""The texts the compactor adds (marker, summary/facts block, trim note), in the conversation's language."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from turnstream.compaction.strategies.base import Digest
from turnstream.text.language import Language
from turnstream.text.locale import LOCALES
from turnstream.text.tokens import count_message

MARKERS: dict[Language, str] = {language: locale.marker for language, locale in LOCALES.items()}
"""The marker text of each language (from its Locale)."""
MARKER_ROLE = "system"
"""The marker is the harness speaking, not the user: a user-role marker would put words in the user's mouth."""


def marker_message(language: Language) -> dict[str, Any]:
    """A fresh marker message (a new dict each time, so callers may not alias each other's output)."""
    return {"role": MARKER_ROLE, "content": LOCALES[language].marker}


@lru_cache(maxsize=4)
def marker_tokens(language: Language) -> int:
    return count_message(marker_message(language))


def block_text(digest: Digest, language: Language) -> str:
    """The summary and facts as one text; empty when the digest holds neither."""
    locale = LOCALES[language]
    parts = []
    if digest.summary:
        parts.append(f"{locale.summary_heading}\n{digest.summary}")
    if digest.facts:
        labels = locale.fact_labels
        lines = "\n".join(f"- ({labels.get(fact.type, fact.type)}) {fact.text}" for fact in digest.facts)
        parts.append(f"{locale.facts_heading}\n{lines}")
    return "\n\n".join(parts)


def block_message(text: str) -> dict[str, Any]:
    return {"role": MARKER_ROLE, "content": text}


def trim_note(removed_tokens: int, language: Language) -> str:
    return LOCALES[language].trim_note.format(tokens=removed_tokens)
