"""Greeting, small-talk and filler detection: such turns need no memory recall, such sentences no room in a
recalled line. The words are each Locale's."""

from __future__ import annotations

import re
from functools import lru_cache

from turnstream.text.locale import LOCALES
from turnstream.text.terms import CJK_RUN, FUNCTION_WORDS, lower_words

MAX_SMALL_TALK_CHARS = 40
"""Longer messages carry content even when they open with a greeting."""
MAX_SMALL_TALK_WORDS = 8
"""In a language with spaces, more words than this carry content."""

_WORDS = re.compile(r"[a-z']+")
_PUNCTUATION_AND_EMOJI = re.compile(r"[\s\W_]+", re.UNICODE)
_SPACED_SMALL_TALK = frozenset(word for locale in LOCALES.values() if locale.spaced for word in locale.small_talk)
"""Small-talk words of the languages with spaces: a message made only of them asks nothing."""


def _phrases_only(phrases: set[str]) -> re.Pattern[str]:
    """Text made of these phrases and nothing else, in a language written without spaces."""
    return re.compile("^(?:" + "|".join(re.escape(p) for p in sorted(phrases)) + ")+$")


_UNSPACED_SMALL_TALK = _phrases_only({w for locale in LOCALES.values() if not locale.spaced for w in locale.small_talk})
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
_SPACED_FILLER = _SPACED_SMALL_TALK | frozenset(
    word for locale in LOCALES.values() if locale.spaced for word in locale.praise
)
_UNSPACED_FILLER = _phrases_only(
    {w for locale in LOCALES.values() if not locale.spaced for w in (*locale.small_talk, *locale.praise)}
)
NAME_PREFIX_CHARS = 3
"""A word of at least this many letters that begins a speaker's name is the name ("Mel" for Melanie)."""
MAX_FILLER_CHARS = 60
"""A longer sentence always says something (on LoCoMo's chats every filler sentence is shorter)."""


@lru_cache(maxsize=256)
def _allowed(names: frozenset[str]) -> frozenset[str]:
    """The words a filler sentence is made of: function words, small talk, praise, `names` and their beginnings."""
    return (
        FUNCTION_WORDS | _SPACED_FILLER | {name[:n] for name in names for n in range(NAME_PREFIX_CHARS, len(name) + 1)}
    )


def is_filler(sentence: str, names: frozenset[str] = frozenset()) -> bool:
    """True for a sentence made only of small talk, praise and the lower-cased `names`: "Thanks, Mel!",
    "Wow, that's so inspiring!", "太好了！". A number, or any other word, makes it say something."""
    if len(sentence) > MAX_FILLER_CHARS:
        return False
    if CJK_RUN.search(sentence):
        return _UNSPACED_FILLER.fullmatch(_PUNCTUATION_AND_EMOJI.sub("", sentence)) is not None
    words = set(lower_words(sentence))
    # set operations, not a loop: the read path checks every sentence of every recalled turn
    return words <= _allowed(names) and not words <= FUNCTION_WORDS


@lru_cache(maxsize=8192)
def without_filler(text: str, names: frozenset[str] = frozenset()) -> str:
    """`text` less its filler sentences (is_filler); `text` itself when nothing else is left. Remembered: the
    same turns come back in one owner's prompts."""
    spans = _SENTENCE_SPAN.findall(text)
    kept = [span for span in spans if not is_filler(span, names)]
    return text if len(kept) == len(spans) else "".join(kept).strip() or text
