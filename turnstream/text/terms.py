"""The recall tokenizer: one function shared by the archive's write path and the read path's query.

English (and other spaced scripts) is lower-cased, function words are dropped and words are stemmed
with Snowball (PyStemmer), so "researched" finds "research"; numbers stay tokens. Chinese and
Japanese are cut into overlapping character bigrams, which needs no dictionary and matches words of
any length; a one-character run stays a unigram.

Identifiers are terms whole, as they are written, lower-cased: a token that mixes letters and digits
("KX4Q2P", "CA929") is not stemmed, and one joined by "_" or "-" ("voucher_5518230", "TYO-10477") is a
term of its own besides its parts. A query asks a joined identifier whole, without its parts: an agent that
looks up a dropped tool result by the id it holds finds that result, not every result that shares a part
of the id ("voucher", "10477"). The parts stay index terms, so a query written with them apart ("voucher
5518230") still finds it. Ordinary words are tokenized as they always were.
"""

from __future__ import annotations

import re
from functools import lru_cache

import Stemmer

_CJK_CLASS = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
CJK_RUN = re.compile(f"[{_CJK_CLASS}]+")
"""Han characters, hiragana and katakana: scripts written without spaces between words."""
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_JOINED = re.compile(rf"[^\W_{_CJK_CLASS}]+(?:[-_][^\W_{_CJK_CLASS}]+)+")
"""Letters and digits (not CJK) joined by single underscores or hyphens: an identifier when it also mixes the
two."""
_DIGIT = re.compile(r"\d")
_LETTER = re.compile(r"[^\W\d_]")
MAX_IDENTIFIER_CHARS = 64
"""A longer joined run (a path, a blob) is no id anyone types: its parts are its terms."""
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'"})

FUNCTION_WORDS = frozenset(
    """
    a about above after again against all am an and any are aren't as at be because been before being
    below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down
    during each few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here
    here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself
    let's me more most mustn't my myself no nor not of off on once only or other ought our ours ourselves
    out over own same shan't she she'd she'll she's should shouldn't so some such than that that's the
    their theirs them themselves then there there's these they they'd they'll they're they've this those
    through to too under until up very was wasn't we we'd we'll we're we've were weren't what what's when
    when's where where's which while who who's whom why why's with won't would wouldn't you you'd you'll
    you're you've your yours yourself yourselves
    """.split()
)
"""English function words: they carry no topic, in a stored turn or in a question."""

CJK_FUNCTION_CHARS = frozenset("的了是在我你他她它们吗呢吧啊呀哦嗯和与及或也都就还很把被给让这那个有没不要会能可以")
"""Function characters: a CJK bigram made only of these carries no meaning."""


@lru_cache(maxsize=1)
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A spaced-script word's Snowball stem ("seats" -> "seat"); a word of another script as it is."""
    return _stemmer().stemWord(word) if word.isascii() else word


def is_identifier(token: str) -> bool:
    """Whether a token (a word, a joined run, or an index term) mixes letters and digits: "ca929", "tyo-10477"."""
    return bool(_DIGIT.search(token)) and bool(_LETTER.search(token))


@lru_cache(maxsize=65536)
def word_term(word: str) -> str:
    """A spaced-script word's index term: its stem, or the word itself when it is an identifier (a stem would
    cut "abc12s" to "abc12", another id)."""
    return word if is_identifier(word) else stem(word)


def _joined_identifier(run: str) -> bool:
    return len(run) <= MAX_IDENTIFIER_CHARS and is_identifier(run)


def joined_identifiers(text: str) -> list[str]:
    """The identifiers of `text` joined by "_" or "-", lower-cased, in order: "voucher_5518230", "tyo-10477"
    (not "2023-05-08", no letter; not "e-mail", no digit)."""
    if not _DIGIT.search(text):  # most turns hold no digit: no pass over them
        return []
    return [run.lower() for run in _JOINED.findall(text) if _joined_identifier(run)]


def identifiers_apart(text: str) -> tuple[list[str], str]:
    """The joined identifiers of `text` (joined_identifiers), and `text` with a space in place of each."""
    if not _DIGIT.search(text):
        return [], text
    found: list[str] = []

    def blank(match: re.Match[str]) -> str:
        run = match.group()
        if not _joined_identifier(run):
            return run
        found.append(run.lower())
        return " "

    return found, _JOINED.sub(blank, text)


def cjk_bigrams(text: str) -> list[str]:
    """Overlapping CJK bigrams of `text` (a one-character run stays whole), function-only ones dropped."""
    grams: list[str] = []
    for run in CJK_RUN.findall(text):
        if len(run) == 1:
            if run not in CJK_FUNCTION_CHARS:
                grams.append(run)
            continue
        for i in range(len(run) - 1):
            gram = run[i : i + 2]
            if not (gram[0] in CJK_FUNCTION_CHARS and gram[1] in CJK_FUNCTION_CHARS):
                grams.append(gram)
    return grams


def lower_words(text: str) -> list[str]:
    """Lower-cased words and numbers, curly apostrophes straightened ("that’s" is "that's"), in order."""
    lowered = text.lower()
    if not lowered.isascii():  # a curly apostrophe is not ASCII: most turns need no translation pass
        lowered = lowered.translate(_APOSTROPHES)
    return _WORD.findall(lowered)


def spaced_words(text: str) -> list[str]:
    """Lower-cased words and numbers outside CJK runs, function words dropped, in order."""
    if not text.isascii():  # CJK is never ASCII, nor a thousands separator without a comma: most turns skip both
        text = CJK_RUN.sub(" ", text)
    if "," in text:
        text = _THOUSANDS.sub("", text)
    return [word for word in lower_words(text) if word not in FUNCTION_WORDS]


def recall_terms(text: str) -> list[str]:
    """The index terms of `text`, repeats kept (they are term frequencies): joined identifiers, then stems,
    numbers and unjoined identifiers in order, then CJK bigrams."""
    return joined_identifiers(text) + [word_term(word) for word in spaced_words(text)] + cjk_bigrams(text)


def query_terms(text: str, limit: int) -> list[str]:
    """The distinct terms of a query, identifiers first, then first-seen order, at most `limit` (each costs the
    read script a lookup; an id names what is looked for better than any word). A joined identifier is asked
    whole, without its parts."""
    joined, rest = identifiers_apart(text)
    terms = dict.fromkeys(joined + recall_terms(rest))
    return [*(t for t in terms if is_identifier(t)), *(t for t in terms if not is_identifier(t))][:limit]
