"""Offline hierarchical rolling summary: dropped spans folded into dated periods of salient statements, capped.

The summary's text is its whole state (so an old row, or an LLM's summary, restores as it is): a period
is a header line `[2023-05-08]` (a day), `[2023-05]` (a month) or `[2023]` (a year), followed by its
statements, one a line, each attributed to its speaker (`Caroline: …`, else the role's label). Lines
before any header are undated (spans without times, or an LLM's text).

A span is split by day; each day keeps its most salient statements (extractive: centrality among the
day's statements, named entities and numbers, the speaker's own doings and plans and when they happened
(over key-information cues, which the facts block carries), a statement in the first person over a reaction to
the other's news, every named speaker's best line before anyone's second; a restatement of a
line or a fact the block already shows is left out). When the summary outgrows its cap, the period holding the most lines gives up its
weakest, its words said nowhere else in the summary counting for it (so every period keeps its best line
before any keeps a second; the newest detail is in the kept tail anyway); once every period is down to one line, the oldest day folds into its month, the oldest
month into its year, and the fold gives up the weaker line again. Work per fold is bounded by the cap,
never by the conversation's length.

Pure Python: the summarisation libraries on PyPI (sumy, pytextrank) need NLTK or spaCy models and have
no Chinese tokenizer without jieba; what they would score (degree centrality over shared keywords) is a
few lines over the keywords this package already extracts in both languages.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import lru_cache

import orjson

from turnstream.compaction.strategies.base import Digest
from turnstream.compaction.strategies.keyinfo import classify, tool_result_summary
from turnstream.text.chat import Message, content_text, tool_calls
from turnstream.text.greeting import is_small_talk
from turnstream.text.language import Language
from turnstream.text.locale import LOCALES
from turnstream.text.prose import keywords, sentences, shorten, span_language
from turnstream.text.tokens import count_text, truncate_text

log = logging.getLogger(__name__)

MAX_LINE_CHARS = 160
"""A statement longer than this is cut at its end: one statement, not a paragraph."""
DAY_LINES = 4
"""The most statements a day keeps when it joins the summary."""
RESTATED = 0.6

"""Keyword overlap (Jaccard) at which a statement repeats one already kept and is left out."""

_HEADER = re.compile(r"^\[(\d{4})(?:-(\d{2}))?(?:-(\d{2}))?\]$")
_SALIENT_NUMBER = re.compile(r"\d|[一二两三四五六七八九十百千万]+\s*[元块岁个人天晚年月日点]")
_ENTITY = re.compile(r"(?<=[a-z0-9,'’]\s)[A-Z][a-zA-Z]+|《[^》]+》")
_QUESTION = re.compile(r"[?？]\s*$|[吗呢]\s*[？?]?\s*$")
_FIRST_PERSON_PAST = re.compile(
    r"\b(?:i|we|my|our)\b[^.!?]{0,40}?\b(?:\w+ed|went|got|made|took|began|started|joined|found|met|won|lost|had|saw|bought|ran|gave|did|came)\b"
    r"|我[^，。！？]{0,12}(?:了|过)",
    re.I,
)
_DOING = re.compile(
    r"\b(?:i|we)(?:'ve| have| just| finally| recently| also)*\s+(?:\w+ed|went|got|made|took|began|started|joined|found|met|won"
    r"|lost|had|saw|bought|ran|gave|did|came|tried|signed|am (?:planning|thinking|going)|'m (?:planning|thinking|going))\b"
    r"|我(?:们)?(?:刚|已经|最近)?(?:打算|准备|计划|开始|参加|报名|搬)",
    re.I,
)
"""The speaker's own doing or plan, the verb right after the pronoun: what LoCoMo's gold events and a reader's
"what happened" are made of."""
_WHEN = re.compile(
    r"\b(?:yesterday|recently|just|ago|last (?:week|weekend|month|night|year|fri|sat|sun|mon|tue|wed|thu)\w*"
    r"|(?:this|next) (?:week|weekend|month))\b|昨天|上周|上个月|最近|刚",
    re.I,
)
"""A statement placed in time: something happened, or will."""
_ROLE_LABELS = frozenset(
    label.rstrip(" :：") for locale in LOCALES.values() for label in locale.summary_labels.values()
)
_REACTION = re.compile(
    r"^(?:wow|aw+|oh|ooh|omg|that'?s|that is|sounds|so cool|how|what an?|good (?:to|for)|glad|congrats|thanks?|i'?m so (?:happy|glad|sorry))\b"
    r"|\b(?:sounds? (?:like|great|good|amazing|fun|awesome)|must (?:have|'ve) been|can'?t wait|keep it up|you'?re (?:so|doing))\b"
    r"|^(?:真|太|好)[^，。！？]{0,4}[了啊呀！!]",
    re.I,
)
"""A reaction to what the other said: the listener's doings are told by the listener's own lines."""
_OWN = re.compile(r"\b(?:i|i'm|i've|i'd|we|we're|we've|my|our)\b|我", re.I)
_SIGNAL_CACHE_LINES = 8192
"""Statements whose position-free score parts are remembered: every fold rescores the lines of the periods it
touches, and their regex cues (`classify`) would otherwise cost about as much as the rest of a fold."""


@dataclass(slots=True)
class _Period:
    """A header (`2023-05-08`, `2023-05`, `2023`, or "" for undated lines) and its statements, oldest first."""

    key: str
    lines: list[str]

    @property
    def level(self) -> int:
        """0 for a day, 1 a month, 2 a year, 3 for undated lines (the coarsest: they fold last)."""
        return 3 if not self.key else 2 - self.key.count("-")

    def tokens(self) -> int:
        return sum(_line_tokens(line) for line in self.lines) + (_line_tokens(f"[{self.key}]") if self.key else 0)


@lru_cache(maxsize=_SIGNAL_CACHE_LINES)
def _line_tokens(line: str) -> int:
    return count_text(line) + 1


@lru_cache(maxsize=_SIGNAL_CACHE_LINES)
def _signals(line: str) -> tuple[float, frozenset[str]]:
    """A statement's position-free salience and its keywords: cues, names and numbers, length, a question's doubt."""
    said = line.split(": ", 1)[-1].split("：", 1)[-1]
    keys = frozenset(keywords(said))
    score = min(len(keys), 10) / 5
    # a key-information cue (a need, a preference) counts for little: the facts block carries those; the
    # summary tells what happened
    if classify(said, "user") is not None:
        score += 1.0
    if _FIRST_PERSON_PAST.search(said):
        score += 1.5
    if _DOING.search(said):
        score += 2.0
    if _WHEN.search(said):
        score += 1.0
    if said.startswith("["):  # "[shares a photo of …]": what was shown, not what was said or done
        score -= 1.0
    score += 0.8 * min(len(_ENTITY.findall(said)), 2) + (0.5 if _SALIENT_NUMBER.search(said) else 0.0)
    if _QUESTION.search(said):
        score -= 2.0
    if _REACTION.search(said):
        score -= 2.0
    elif _OWN.search(said):
        score += 0.5
    if len(keys) < 3:
        score -= 1.5
    return score, keys


def _ranked(lines: Sequence[str], background: Mapping[str, int] | None = None) -> list[str]:
    """`lines` best first: salience plus centrality (how many of the others share each keyword), a restatement
    of a better line last, and every named speaker's best line before anyone's second."""
    signals = [_signals(line) for line in lines]
    frequency: dict[str, int] = {}
    for _, keys in signals:
        for key in keys:
            frequency[key] = frequency.get(key, 0) + 1

    # shared with a few other lines: the period's topic; shared with most of them: filler
    topical = {k for k, count in frequency.items() if 1 < count <= max(2, len(lines) // 4)}
    # said nowhere else in the summary: what only this line tells
    rare = {k for k in frequency if background.get(k, 0) <= 1} if background else set()

    def score(index: int) -> float:
        salience, keys = signals[index]
        central = len(keys & topical) / math.sqrt(len(keys) + 1)
        distinct = len(keys & rare) / math.sqrt(len(keys) + 1) if background else 0.0
        return salience + central + distinct

    order = sorted(
        range(len(lines)), key=lambda i: (-score(i), i)
    )  # among equals the older line: said first, it is the one restated
    chosen: list[int] = []
    later: list[int] = []
    chosen_keys = _KeySets()
    for index in order:
        keys = signals[index][1]
        if chosen_keys.restated_by(keys):
            later.append(index)
        else:
            chosen.append(index)
            chosen_keys.add(keys)
    # every speaker's best line before anyone's second: a period says who did what, not what one of them said
    turns: dict[str, int] = {}
    rounds = []
    for index in chosen:
        speaker = _speaker_of(lines[index])
        rounds.append(turns.get(speaker, 0))
        turns[speaker] = rounds[-1] + 1
    chosen = [index for _, index in sorted(zip(rounds, chosen), key=lambda pair: pair[0])]
    return [lines[i] for i in chosen + later]


def _speaker_of(line: str) -> str:
    """The name a statement line opens with ("Caroline"); "" for a role's label or none: a user and an assistant
    are not two people whose doings weigh alike."""
    head, colon, _ = line.partition(": ")
    if not colon or len(head) > 40:
        head, colon, _ = line.partition("：")
    return head if colon and len(head) <= 40 and head not in _ROLE_LABELS else ""


def _novel(lines: Sequence[str], shown: Sequence[str]) -> list[str]:
    """`lines` less those that restate one of `shown`."""
    seen = _KeySets(_signals(line)[1] for line in shown)
    return [line for line in lines if not seen.restated_by(_signals(line)[1])]


class _KeySets:
    """Keyword sets, grouped by size: a set overlaps another by RESTATED only when the smaller size is at least
    RESTATED of the larger, so most of them are passed over a size at a time, not a set at a time (a fold
    checks thousands of pairs)."""

    __slots__ = ("_by_size",)

    def __init__(self, sets: Iterable[frozenset[str]] = ()) -> None:
        self._by_size: dict[int, list[frozenset[str]]] = {}
        for keys in sets:
            self.add(keys)

    def add(self, keys: frozenset[str]) -> None:
        if keys:
            self._by_size.setdefault(len(keys), []).append(keys)

    def restated_by(self, keys: frozenset[str]) -> bool:
        """Whether `keys` overlaps one of the sets by at least RESTATED (shared over either's)."""
        size = len(keys)
        if not size:
            return False
        for size_b, others in self._by_size.items():
            if (size / size_b if size < size_b else size_b / size) < RESTATED:
                continue
            for other in others:
                shared = len(keys & other)
                if shared / (size + size_b - shared) >= RESTATED:
                    return True
        return False


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
        lines.append(shorten(line, MAX_LINE_CHARS + 60))
    return lines


def _speaker(message: Message, labels: Mapping[str, str]) -> str:
    """`Caroline: ` for a named message, else the role's label."""
    name = message.get("name")
    if isinstance(name, str) and name.strip():
        return f"{name.strip()}: "
    return labels.get(str(message.get("role", "")), labels["user"])


def _statements(message: Message, results: dict[str, str], called: set[str], labels: Mapping[str, str]) -> list[str]:
    """A message's candidate summary lines: its tool steps, and its sentences that state something."""
    role = str(message.get("role", ""))
    if role == "tool":
        # Results of calls in this span are folded into their step line.
        if str(message.get("tool_call_id")) in called:
            return []
        return [shorten(labels["tool"] + tool_result_summary(content_text(message.get("content")))[0], MAX_LINE_CHARS)]
    lines = _step_lines(message, results, labels)
    speaker = _speaker(message, labels)
    for sentence in sentences(content_text(message.get("content"))):
        if not is_small_talk(sentence):
            lines.append(shorten(speaker + sentence, MAX_LINE_CHARS))
    return lines


def _day(ts: float | None) -> str:
    return "" if ts is None else datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d")


def _span_periods(dropped: Sequence[Message], times: Sequence[float | None], lang: Language) -> list[_Period]:
    """The span's statements, by day (undated when its times are unknown), in conversation order."""
    labels = LOCALES[lang].summary_labels
    messages = [(m, times[i] if i < len(times) else None) for i, m in enumerate(dropped) if isinstance(m, dict)]
    results = {
        str(m.get("tool_call_id")): content_text(m.get("content")) for m, _ in messages if m.get("role") == "tool"
    }
    called = {call_id for m, _ in messages for call_id, _, _ in tool_calls(m)}
    periods: list[_Period] = []
    for message, ts in messages:
        lines = _statements(message, results, called, labels)
        key = _day(ts)
        if not periods or periods[-1].key != key:
            periods.append(_Period(key, []))
        periods[-1].lines.extend(lines)
    return [p for p in periods if p.lines]


def parse(summary: str) -> list[_Period]:
    """The periods of a summary's text; lines before any header form an undated period."""
    periods: list[_Period] = []
    for line in summary.splitlines():
        if not line.strip():
            continue
        match = _HEADER.match(line.strip())
        if match:
            periods.append(_Period(line.strip()[1:-1], []))
        elif periods:
            periods[-1].lines.append(line)
        else:
            periods.append(_Period("", [line]))
    return [p for p in periods if p.lines]


def render(periods: Sequence[_Period]) -> str:
    return "\n".join(line for p in periods for line in ([f"[{p.key}]"] if p.key else []) + p.lines)


def _join(periods: list[_Period], fresh: _Period, facts: Sequence[str] = ()) -> None:
    """Add a day's best statements (restatements of kept lines aside): to the newest period when it is the same
    day, else as a new period."""
    kept = [line for p in periods for line in p.lines]
    candidates = _novel([line for line in dict.fromkeys(fresh.lines) if line not in kept], [*kept, *facts])
    best = set(_ranked(candidates)[:DAY_LINES])
    lines = [line for line in dict.fromkeys(fresh.lines) if line in best]
    if periods and periods[-1].key == fresh.key:
        periods[-1].lines += lines
    elif lines:
        periods.append(_Period(fresh.key, lines))


def _coarser(key: str) -> str:
    """The period one level up: a day's month, a month's year."""
    return key.rsplit("-", 1)[0] if "-" in key else key


def _fit(periods: list[_Period], cap: int) -> None:
    """Give up lines, then fold old periods upwards, until the periods fit `cap` tokens."""
    total = sum(p.tokens() for p in periods)
    counts: dict[str, int] | None = None  # the summary's keyword counts, kept up to date as lines go
    while total > cap and periods:
        fullest = max(enumerate(periods), key=lambda pair: (len(pair[1].lines), -pair[0]))[1]
        if len(fullest.lines) > 1:
            counts = _key_counts(periods) if counts is None else counts
            worst = _ranked(fullest.lines, counts)[-1]
            fullest.lines.remove(worst)
            for key in _signals(worst)[1]:
                counts[key] -= 1
            total -= _line_tokens(worst)  # the period keeps its heading
            continue
        if (index := _oldest_foldable(periods)) is not None:
            period = periods[index]
            period.key = _coarser(period.key)
            # a neighbour already at that month (or year) takes its lines
            for other in (index + 1, index - 1):
                if 0 <= other < len(periods) and periods[other].key == period.key:
                    first, second = sorted((index, other))
                    periods[first].lines += periods.pop(second).lines
                    index = first
        else:
            # one line a period and nothing left to fold: the oldest line goes
            oldest = periods[0].lines.pop(0)
            if counts is not None:
                for key in _signals(oldest)[1]:
                    counts[key] -= 1
            if not periods[0].lines:
                periods.pop(0)
        total = sum(p.tokens() for p in periods)


def _key_counts(periods: Sequence[_Period]) -> dict[str, int]:
    """In how many of the summary's lines each keyword stands."""
    counts: dict[str, int] = {}
    for period in periods:
        for line in period.lines:
            for key in _signals(line)[1]:
                counts[key] = counts.get(key, 0) + 1
    return counts


def _oldest_foldable(periods: list[_Period]) -> int | None:
    """The oldest period that can still fold a level up (a day or a month), at the finest level first."""
    for level in (0, 1):
        for index, period in enumerate(periods[:-1]):
            if period.level == level:
                return index
    return None


class RollingSummarizer:
    """Folds each dropped span into a capped summary of dated periods (module docstring)."""

    name = "summary"

    def __init__(self, max_tokens: int = 400) -> None:
        self.max_tokens = max_tokens

    def apply(self, digest: Digest, dropped: Sequence[Message], first_seq: int) -> Digest:
        try:
            summary = self.fold(
                digest.summary, dropped, digest.language, digest.times, [fact.text for fact in digest.facts]
            )
        except Exception:  # a strategy must never stop compaction; keep the old summary, capped
            log.exception("rolling summary failed; summary unchanged")
            summary = truncate_text(digest.summary, self.max_tokens)
        return replace(digest, summary=summary)

    def fold(
        self,
        old_summary: str,
        dropped: Sequence[Message],
        language: Language | None = None,
        times: Sequence[float | None] = (),
        facts: Sequence[str] = (),
    ) -> str:
        """The new summary of `old_summary` followed by `dropped` (said at `times`, when known), at most
        `max_tokens` tokens, labelled in `language` (the conversation's), else in the language of the span;
        statements that restate one of `facts` (the block shows them already) are left out."""
        lang = language or span_language(dropped, old_summary)
        periods = parse(old_summary)
        for fresh in _span_periods(dropped, times, lang):
            _join(periods, fresh, facts)
        _fit(periods, self.max_tokens)
        return truncate_text(render(periods), self.max_tokens)
