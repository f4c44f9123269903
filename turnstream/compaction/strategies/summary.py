"""Offline hierarchical rolling summary: old summary + dropped span -> new extractive summary, capped."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Mapping, Sequence

import orjson

from turnstream.compaction.strategies.base import Digest, Message
from turnstream.compaction.strategies.keyinfo import classify, tool_result_summary
from turnstream.compaction.strategies.text import keywords, sentences, shorten, span_language
from turnstream.compaction.tokens import count_text, truncate_text
from turnstream.text.chat import content_text, tool_calls
from turnstream.text.language import Language
from turnstream.text.locale import LOCALES

log = logging.getLogger(__name__)

MAX_LINE_CHARS = 220

_USER_LINE = tuple(locale.summary_labels["user"].rstrip() for locale in LOCALES.values())
_STEP_LINE = tuple(locale.summary_labels["step"].rstrip() for locale in LOCALES.values())
"""How an earlier summary's user and step lines start, in any language."""
_ROLE_WEIGHT = {"user": 3.0, "step": 2.0, "assistant": 1.0, "tool": 1.0, "system": 2.0}
_SALIENT = re.compile(r"\d|\b[A-Z][a-z]+\b|[\u4e00-\u9fff]")
_SIGNAL_CACHE_LINES = 8192
"""Lines whose position-free score parts are remembered: about 30 summary lines for each of a few hundred
sessions folding at once. Every fold rescores all of the old summary's lines, and their regex cues
(`classify`) would otherwise cost about as much as everything else in a fold together."""


@dataclass(frozen=True, slots=True)
class _Line:
    text: str
    score: float


def _score(text: str, role: str, position: float) -> float:
    """Salience: who said it, key-information cues, numbers and names, keyword density, recency."""
    weight, cued, salient = _signals(text, role)
    # Summed in this order so that scores, and hence ties between lines, are the same to the last bit.
    score = weight + position
    if cued:
        score += 3.0
    if salient:
        score += 1.0
    return score


@lru_cache(maxsize=_SIGNAL_CACHE_LINES)
def _signals(text: str, role: str) -> tuple[float, bool, bool]:
    """The parts of a line's score that do not depend on its position: weight, key-information cue, salience."""
    weight = _ROLE_WEIGHT.get(role, 1.0) + min(len(keywords(text)), 8) / 4
    cued = classify(text, "user" if role in ("user", "system") else role) is not None
    return weight, cued, bool(_SALIENT.search(text))


def _args(arguments: str) -> str:
    """Tool-call arguments as `k=v, …` when they are a JSON object."""
    try:
        data = orjson.loads(arguments)
    except orjson.JSONDecodeError:
        return shorten(arguments, 60)
    if isinstance(data, dict):
        return shorten(", ".join(f"{k}={v}" for k, v in data.items()), 80)
    return shorten(arguments, 60)


def _step_lines(message: Message, results: dict[str, str], labels: Mapping[str, str]) -> list[str]:
    """One line per ReAct step: "called search_flights(from=RTM) -> 3 results"."""
    lines = []
    for call_id, name, arguments in tool_calls(message):
        line = f"{labels['step']}{labels['called']} {name}({_args(arguments)})"
        if call_id in results:
            rendered, failed = tool_result_summary(results[call_id])
            line += f" -> {labels['failed']}: {rendered}" if failed else f" -> {rendered}"
        lines.append(shorten(line, MAX_LINE_CHARS))
    return lines


def _span_lines(dropped: Sequence[Message], lang: Language) -> list[_Line]:
    """Scored candidate lines of a dropped span, in conversation order."""
    labels = LOCALES[lang].summary_labels
    results = {str(m.get("tool_call_id")): content_text(m.get("content")) for m in dropped if isinstance(m, dict) and m.get("role") == "tool"}
    called = {call_id for m in dropped if isinstance(m, dict) for call_id, _, _ in tool_calls(m)}
    lines: list[_Line] = []
    for index, message in enumerate(dropped):
        if not isinstance(message, dict):
            continue
        role = str(message.get("role", ""))
        position = index / max(len(dropped), 1)
        if role == "tool":
            # Results of calls in this span are folded into their step line.
            if str(message.get("tool_call_id")) not in called:
                rendered, _ = tool_result_summary(content_text(message.get("content")))
                lines.append(_Line(shorten(labels["tool"] + rendered, MAX_LINE_CHARS), _score(rendered, "tool", position)))
            continue
        for step in _step_lines(message, results, labels):
            lines.append(_Line(step, _score(step, "step", position)))
        label = labels.get(role, labels["user"])
        for sentence in sentences(content_text(message.get("content"))):
            lines.append(_Line(shorten(label + sentence, MAX_LINE_CHARS), _score(sentence, role, position)))
    return lines


def _old_lines(summary: str) -> list[_Line]:
    """Lines of an earlier summary, rescored; older (higher) lines score lower, so they are condensed first."""
    raw = [line for line in summary.splitlines() if line.strip()]
    lines = []
    for index, line in enumerate(raw):
        role = "user" if line.startswith(_USER_LINE) else "step" if line.startswith(_STEP_LINE) else "assistant"
        lines.append(_Line(line, _score(line, role, index / max(len(raw), 1))))
    return lines


def _select(lines: Sequence[_Line], budget: int) -> list[str]:
    """The best-scoring lines that fit `budget` tokens together, kept in their original order."""
    chosen: set[int] = set()
    used = 0
    seen: set[str] = set()
    for index in sorted(range(len(lines)), key=lambda i: (-lines[i].score, -i)):
        text = lines[index].text
        cost = count_text(text) + 1
        if text in seen or used + cost > budget:
            continue
        seen.add(text)
        chosen.add(index)
        used += cost
    return [lines[i].text for i in sorted(chosen)]


class RollingSummarizer:
    """Folds each dropped span into a capped summary: newest span in detail, older lines condensed by salience."""

    name = "summary"

    def __init__(self, max_tokens: int = 400) -> None:
        self.max_tokens = max_tokens

    def apply(self, digest: Digest, dropped: Sequence[Message], first_seq: int) -> Digest:
        try:
            summary = self.fold(digest.summary, dropped, digest.language)
        except Exception:  # a strategy must never stop compaction; keep the old summary, capped
            log.exception("rolling summary failed; summary unchanged")
            summary = truncate_text(digest.summary, self.max_tokens)
        return replace(digest, summary=summary)

    def fold(self, old_summary: str, dropped: Sequence[Message], language: Language | None = None) -> str:
        """The new summary of `old_summary` followed by `dropped`, at most `max_tokens` tokens, labelled in
        `language` (the conversation's), else in the language of the span."""
        lang = language or span_language(dropped, old_summary)
        old = _old_lines(old_summary)
        old_texts = {line.text for line in old}
        fresh = [line for line in _span_lines(dropped, lang) if line.text not in old_texts]
        # The newest span gets at least half the cap; whatever it leaves goes to the condensed past.
        new = _select(fresh, max(self.max_tokens // 2, self.max_tokens - count_text(old_summary)))
        past = _select(old, self.max_tokens - sum(count_text(t) + 1 for t in new))
        return truncate_text("\n".join(past + new), self.max_tokens)
