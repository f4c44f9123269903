"""Greeting and small-talk detection: such turns need no memory recall. The words are each Locale's."""

from __future__ import annotations

import re

from turnstream.text.locale import LOCALES
from turnstream.text.terms import CJK_RUN, spaced_words

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



_SENTENCE_SPAN = re.compile(r"[^.!?。！？\n]+(?:[.!?。！？]+|$)\s*|\s+")
"""A sentence with its end marks and the space after it, or a run of space: joined again they give the text."""
_SPACED_FILLER = _SPACED_SMALL_TALK | frozenset(word for locale in LOCALES.values() if locale.spaced for word in locale.praise)
_UNSPACED_FILLER = re.compile("^(?:" + "|".join(re.escape(w) for w in sorted(
    {w for locale in LOCALES.values() if not locale.spaced for w in (*locale.small_talk, *locale.praise)},
    key=len, reverse=True)) + ")+$")
NAME_PREFIX_CHARS = 3
"""A word of at least this many letters that begins a speaker's name is the name ("Mel" for Melanie)."""


def is_filler(sentence: str, names: frozenset[str] = frozenset()) -> bool:
    """True for a sentence made only of small talk, praise and the lower-cased `names`: "Thanks, Mel!",
    "Wow, that's so inspiring!", "太好了！". A number, or any other word, makes it say something."""
    if CJK_RUN.search(sentence):
        return _UNSPACED_FILLER.match(_PUNCTUATION_AND_EMOJI.sub("", sentence)) is not None
    words = spaced_words(sentence)
    return bool(words) and all(
        word in _SPACED_FILLER or (len(word) >= NAME_PREFIX_CHARS and any(name.startswith(word) for name in names))
        for word in words
    )


def without_filler(text: str, names: frozenset[str] = frozenset()) -> str:
    """`text` less its filler sentences (is_filler); `text` itself when nothing else is left."""
    spans = _SENTENCE_SPAN.findall(text)
    kept = [span for span in spans if not is_filler(span, names)]
    return text if len(kept) == len(spans) else "".join(kept).strip() or text
