"""Text helpers shared by the strategies: language, sentences, clauses, keywords, message text."""

from __future__ import annotations

import re
from typing import Any, Literal

import orjson

from turnstream.text.terms import FUNCTION_WORDS, cjk_bigrams

Language = Literal["zh", "en"]

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[a-z0-9][a-z0-9_'\-]*[a-z0-9]|[a-z0-9]")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
# A full stop ends a sentence only when followed by space or the end, so "3.5" and "e.g" survive.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")
# Commas split clauses, except inside numbers such as "2,000".
# "and" splits only when a new first-person statement follows: "my name is X and I live in Y".
_CLAUSE_SPLIT = re.compile(r"(?<!\d),|,(?!\d)|[，、；;]|\s+but\s+|\s+and\s+(?=(?:i|i'm|my|we|we're|our)\b)|但是|不过", re.I)

STOPWORDS = FUNCTION_WORDS | frozenset(
    """
    also just really please thanks thank ok okay yes yeah sure well like would could will shall may might must
    need get got go going want one two let
    """.split()
)
"""Function words and chat fillers; lower-cased keywords never include them."""


def detect_language(text: str) -> Language:
    """"zh" when CJK carries the text (a CJK character stands for about a word), else "en"."""
    cjk = len(_CJK.findall(text))
    words = len(re.findall(r"[A-Za-z]+", text))
    return "zh" if cjk > words else "en"


def sentences(text: str) -> list[str]:
    """Sentences of `text`, stripped, empty ones dropped."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def clauses(sentence: str) -> list[str]:
    """Comma- and contrast-separated parts of one sentence."""
    return [c.strip(" \t-–—:：") for c in _CLAUSE_SPLIT.split(sentence) if c and c.strip(" \t-–—:：")]


def words(text: str) -> list[str]:
    """Lower-cased Latin words and numbers, stopwords removed, in order."""
    # "2,000" and "2000" must be the same key, so thousands separators go first.
    plain = _THOUSANDS.sub("", text.lower())
    return [w for w in _WORD.findall(plain) if w not in STOPWORDS]


def keywords(text: str, limit: int | None = None) -> tuple[str, ...]:
    """Distinct search keys of `text`: lower-cased words minus stopwords, then CJK bigrams, first-seen order."""
    seen: dict[str, None] = {}
    for key in words(text) + cjk_bigrams(text):
        if len(key) > 1 or _CJK.match(key) or key.isdigit():
            seen.setdefault(key, None)
    keys = tuple(seen)
    return keys if limit is None else keys[:limit]


def content_text(content: Any) -> str:
    """The text of a message `content`: a string, a list of parts, or anything JSON-able."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") if isinstance(p, dict) else str(p) for p in content]
        return "\n".join(p for p in parts if p)
    try:
        return orjson.dumps(content).decode()
    except TypeError:
        return str(content)


def tool_calls(message: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(id, function name, arguments) of every tool call in an assistant message, tolerating bad shapes."""
    calls: list[tuple[str, str, str]] = []
    raw = message.get("tool_calls")
    if not isinstance(raw, list):
        return calls
    for call in raw:
        if not isinstance(call, dict):
            continue
        function = call.get("function") if isinstance(call.get("function"), dict) else {}
        calls.append((str(call.get("id", "")), str(function.get("name", "tool")), content_text(function.get("arguments", ""))))
    return calls


def message_text(message: Any) -> str:
    """Everything searchable in one message: its content and its tool calls."""
    if not isinstance(message, dict):
        return content_text(message)
    parts = [content_text(message.get("content"))]
    parts += [f"{name}({args})" for _, name, args in tool_calls(message)]
    return "\n".join(p for p in parts if p)


def span_language(messages: Any, fallback: str = "") -> Language:
    """Language of a span, judged on its user and assistant prose (tool JSON would skew it)."""
    prose = [content_text(m.get("content")) for m in messages if isinstance(m, dict) and m.get("role") in ("user", "assistant")]
    return detect_language(" ".join(prose) + " " + fallback)


def shorten(text: str, max_chars: int) -> str:
    """`text` on one line, cut to `max_chars` with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= max_chars else flat[: max_chars - 1].rstrip() + "…"
