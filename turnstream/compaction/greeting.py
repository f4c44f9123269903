"""Greeting and small-talk detection: such turns need no memory recall. The words are each Locale's."""

from __future__ import annotations

import re

from turnstream.text.locale import LOCALES

MAX_SMALL_TALK_CHARS = 40
"""Longer messages carry content even when they open with a greeting."""
MAX_SMALL_TALK_WORDS = 8
"""In a language with spaces, more words than this carry content."""

_WORDS = re.compile(r"[a-z']+")
_PUNCTUATION_AND_EMOJI = re.compile(r"[\s\W_]+", re.UNICODE)
_SPACED_SMALL_TALK = frozenset(word for locale in LOCALES.values() if locale.spaced for word in locale.small_talk)
"""Small-talk words of the languages with spaces: a message made only of them asks nothing."""
_UNSPACED_SMALL_TALK = re.compile(
    "^(?:" + "|".join(re.escape(w) for locale in LOCALES.values() if not locale.spaced for w in locale.small_talk) + ")+$"
)
"""Small-talk phrases of the languages without spaces: a message whose letters are only these asks nothing."""
_REQUEST_CUES = [re.compile(locale.request_cue) for locale in LOCALES.values() if locale.request_cue]


def _is_spaced_small_talk(text: str) -> bool:
    words = _WORDS.findall(text.lower())
    if not words or len(words) > MAX_SMALL_TALK_WORDS:
        return False
    return all(word in _SPACED_SMALL_TALK for word in words)


def _is_unspaced_small_talk(text: str) -> bool:
    letters = _PUNCTUATION_AND_EMOJI.sub("", text)
    return bool(letters) and _UNSPACED_SMALL_TALK.match(letters) is not None


def is_small_talk(text: str | None) -> bool:
    """True for a short greeting, thanks, farewell or acknowledgement with no request in it."""
    if not text:
        return True
    stripped = text.strip()
    if len(stripped) > MAX_SMALL_TALK_CHARS or any(cue.search(stripped.lower()) for cue in _REQUEST_CUES):
        return False
    if not _PUNCTUATION_AND_EMOJI.sub("", stripped):
        return True  # only emoji or punctuation
    return _is_spaced_small_talk(stripped) or _is_unspaced_small_talk(stripped)
