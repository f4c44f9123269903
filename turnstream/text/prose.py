"""Text helpers shared by the strategies: a span's language, sentences, clauses, keywords."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from turnstream.text.language import HAN, Language, LanguageTally
from turnstream.text.terms import FUNCTION_WORDS, cjk_bigrams

_WORD = re.compile(r"[a-z0-9][a-z0-9_'\-]*[a-z0-9]|[a-z0-9]")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
# A full stop ends a sentence only when followed by space or the end, so "3.5" and "e.g" survive.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")
# Commas split clauses, except inside numbers such as "2,000".
# "and" splits only when a new first-person statement follows: "my name is X and I live in Y".
_CLAUSE_SPLIT = re.compile(
    r"(?<!\d),|,(?!\d)|[，、；;]|\s+but\s+|\s+and\s+(?=(?:i|i'm|my|we|we're|our)\b)|但是|不过", re.I
)

STOPWORDS = FUNCTION_WORDS | frozenset(
    """
    also just really please thanks thank ok okay yes yeah sure well like would could will shall may might must
    need get got go going want one two let
    """.split()
)
"""Function words and chat fillers; lower-cased keywords never include them."""

_REMEMBERED_TEXTS = 8192
"""Texts whose sentences, clauses and keywords are remembered: a user message is read when it arrives
(the user's facts) and again, by both offline strategies, when it leaves the window; each reading splits
it and looks for keywords anew. Tuples, since every caller shares the remembered value."""


@lru_cache(maxsize=_REMEMBERED_TEXTS)
def sentences(text: str) -> tuple[str, ...]:
    """Sentences of `text`, stripped, empty ones dropped."""
    return tuple(s.strip() for s in _SENTENCE_END.split(text) if s and s.strip())


@lru_cache(maxsize=_REMEMBERED_TEXTS)
def clauses(sentence: str) -> tuple[str, ...]:
    """Comma- and contrast-separated parts of one sentence."""
    return tuple(c.strip(" \t-–—:：") for c in _CLAUSE_SPLIT.split(sentence) if c and c.strip(" \t-–—:："))


def words(text: str) -> list[str]:
    """Lower-cased Latin words and numbers, stopwords removed, in order."""
    # "2,000" and "2000" must be the same key, so thousands separators go first.
    plain = _THOUSANDS.sub("", text.lower())
    return [w for w in _WORD.findall(plain) if w not in STOPWORDS]


@lru_cache(maxsize=_REMEMBERED_TEXTS)
def keywords(text: str, limit: int | None = None) -> tuple[str, ...]:
    """Distinct search keys of `text`: lower-cased words minus stopwords, then CJK bigrams, first-seen order."""
    seen: dict[str, None] = {}
    for key in words(text) + cjk_bigrams(text):
        if len(key) > 1 or HAN.match(key) or key.isdigit():
            seen.setdefault(key, None)
    keys = tuple(seen)
    return keys if limit is None else keys[:limit]


def span_language(messages: Iterable[Any], earlier: str = "") -> Language:
    """Language of a dropped span by the conversation's rule (text/language.py): its user text when it has
    any, else the rest of its prose together with `earlier` text (the summary so far)."""
    tally = LanguageTally()
    for message in messages:
        tally.add(message)
    tally.add_text(earlier, user=False)
    return tally.language()


def shorten(text: str, max_chars: int) -> str:
    """`text` on one line, cut to `max_chars` with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= max_chars else flat[: max_chars - 1].rstrip() + "…"
