"""The texts the compactor adds (marker, summary/facts block, trim note), in the conversation's language."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Literal, Sequence

from turnstream.compaction.messages import text_of
from turnstream.compaction.strategies.base import Digest
from turnstream.compaction.tokens import count_message

Language = Literal["zh", "en"]

MARKERS: dict[Language, str] = {
    # Solon's SummarizationInterceptor text, verbatim.
    "zh": "--- [系统提示：中间部分历史对话已优化压缩，请根据当前计划和剩余历史继续任务...] ---",
    "en": (
        "--- [System note: the middle of this conversation was compressed; continue the task "
        "from the current plan and the remaining history.] ---"
    ),
}
MARKER_ROLE = "system"
"""The marker is the harness speaking, not the user: a user-role marker would put words in the user's mouth."""

_HEADINGS: dict[Language, tuple[str, str]] = {
    "zh": ("[已压缩历史摘要]", "[关键信息]"),
    "en": ("[Summary of the compressed history]", "[Key facts]"),
}
_FACT_LABELS: dict[Language, dict[str, str]] = {
    "zh": {"fact": "事实", "preference": "偏好", "event": "事件", "constraint": "约束", "failure": "失败尝试"},
    "en": {"fact": "fact", "preference": "preference", "event": "event", "constraint": "constraint", "failure": "failed attempt"},
}

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]")


class LanguageTally:
    """Running counts of Han characters and Latin letters; O(message) per update, O(1) to read.

    User text decides when there is any, since system prompts and tool output are often English
    even when the user speaks Chinese.
    """

    __slots__ = ("counts",)

    def __init__(self, counts: Sequence[int] = (0, 0, 0, 0)) -> None:
        self.counts = list(counts)
        """[user Han, user Latin, other Han, other Latin]."""

    def add(self, message: dict[str, Any]) -> None:
        if message["role"] == "tool":
            return
        text = text_of(message.get("content"))
        offset = 0 if message["role"] == "user" else 2
        self.counts[offset] += len(_HAN.findall(text))
        self.counts[offset + 1] += len(_LATIN.findall(text))

    def language(self) -> Language:
        han, latin = self.counts[0:2] if any(self.counts[0:2]) else self.counts[2:4]
        # A Han character carries about a word; an English word is about four letters.
        return "zh" if han and han * 4 >= latin else "en"


def detect_language(messages: list[dict[str, Any]]) -> Language:
    """The language of a conversation: Chinese ("zh") or English ("en")."""
    tally = LanguageTally()
    for message in messages:
        tally.add(message)
    return tally.language()


def marker_message(language: Language) -> dict[str, Any]:
    """A fresh marker message (a new dict each time, so callers may not alias each other's output)."""
    return {"role": MARKER_ROLE, "content": MARKERS[language]}


@lru_cache(maxsize=4)
def marker_tokens(language: Language) -> int:
    return count_message(marker_message(language))


def block_text(digest: Digest, language: Language) -> str:
    """The summary and facts as one text; empty when the digest holds neither."""
    summary_heading, facts_heading = _HEADINGS[language]
    parts = []
    if digest.summary:
        parts.append(f"{summary_heading}\n{digest.summary}")
    if digest.facts:
        labels = _FACT_LABELS[language]
        lines = "\n".join(f"- ({labels.get(fact.type, fact.type)}) {fact.text}" for fact in digest.facts)
        parts.append(f"{facts_heading}\n{lines}")
    return "\n\n".join(parts)


def block_message(text: str) -> dict[str, Any]:
    return {"role": MARKER_ROLE, "content": text}


def trim_note(removed_tokens: int, language: Language) -> str:
    if language == "zh":
        return f"[… 已截断 {removed_tokens} 个 token …]"
    return f"[… trimmed {removed_tokens} tokens …]"
