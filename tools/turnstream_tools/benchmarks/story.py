"""Story: how much of what happened in the sessions a context has dropped the compacted context still tells.

Gold events are LoCoMo's `events_session_N` (one to three sentences per speaker per session) for the
development conversations, and the planted details of the shipped generated chats (each stated once in an
early session: the only events those chats have). Each conversation goes turn by turn through the pure
SessionCore, offline (no broker, no Redis, no LLM), at a 3,000-token context budget: the figure is about
the compacted context alone (summary, facts, kept tail; no recall), which the pure core builds exactly as
the worker does, in a fraction of the time. A session counts as dropped when none of its turns is in the
kept tail; its events are the ones scored.

An event is told by a text when at least half of its content words (stop words and the speakers' names
aside, each cut by a crude suffix stem; CJK as character bigrams) stand within three consecutive lines of
it. Yardsticks from the same turns: the newest dated lines that fit the compacted context's size, and the
whole history as dated lines (`[8 May 2023] Caroline: …`), the ceiling of this measure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from turnstream.schemas.turn import Turn
from turnstream.session import CoreConfig, SessionCore
from turnstream.settings import Settings
from turnstream.text.chat import content_text
from turnstream.text.language import Language
from turnstream.text.terms import CJK_RUN, FUNCTION_WORDS
from turnstream.text.tokens import count_messages
from turnstream_tools.benchmarks.figures import Figure, Row, Target
from turnstream_tools.benchmarks.recall import LOCOMO_DEV, dated_history, locomo_case
from turnstream_tools.samples.recall_set import DETAILS, RecallCase, recall_case

BUDGET_TOKENS = 3000
TARGET = 30.0
WINDOW_LINES = 3
"""An event's words must stand this close together: one statement, not words scattered over the text."""
_WORD = re.compile(r"[^\W_]+")
_SUFFIXES = ("ing", "ed", "es", "s")
_GENERATED_SESSIONS = 30
"""Turns per session of the generated chats (recall_set.recall_case's default)."""


@dataclass(frozen=True)
class StoryCase:
    """One conversation and its gold events, each with the session it happened in."""

    name: str
    case: RecallCase
    sessions: tuple[int, ...]
    """The session of each turn, by turn index."""
    events: tuple[tuple[int, str], ...]
    """(session, event sentence)."""
    names: frozenset[str]
    """The speakers' names, lower-cased: not content words."""


def _stem(word: str) -> str:
    """A crude suffix cut ("registers" and "registered" to "register"; "class" stays)."""
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 2 and word.endswith(suffix) and not word.endswith("ss"):
            return word[: -len(suffix)]
    return word


def content_words(text: str, names: Iterable[str] = ()) -> frozenset[str]:
    """Stemmed content words of `text` (stop words and `names` aside) and the bigrams of its CJK runs."""
    skip = FUNCTION_WORDS | {name.lower() for name in names}
    latin = CJK_RUN.sub(" ", text.lower().replace("'s", " ").replace("\u2019s", " "))
    words = {_stem(w) for w in _WORD.findall(latin) if w not in skip and len(w) > 1}
    for run in CJK_RUN.findall(text):
        words.update(run[i : i + 2] for i in range(max(len(run) - 1, 1)))
    return frozenset(words)


def told(event: str, lines: Sequence[frozenset[str]], names: Iterable[str] = ()) -> bool:
    """Whether half of `event`'s content words stand within `WINDOW_LINES` consecutive `lines` (their content words)."""
    wanted = content_words(event, names)
    if not wanted:
        return False
    need = len(wanted) / 2
    for start in range(max(len(lines) - WINDOW_LINES + 1, 1)):
        near = frozenset().union(*lines[start : start + WINDOW_LINES])
        if len(wanted & near) >= need:
            return True
    return False


def text_lines(messages: Iterable[dict[str, Any]], names: Iterable[str] = ()) -> list[frozenset[str]]:
    """The content words of every non-empty line of `messages`."""
    names = tuple(names)
    return [
        content_words(line, names)
        for m in messages
        for line in content_text(m.get("content")).splitlines()
        if line.strip()
    ]


def share_told(events: Sequence[str], messages: Sequence[dict[str, Any]], names: Iterable[str] = ()) -> float:
    """Percent of `events` told by `messages`."""
    names = tuple(names)
    lines = text_lines(messages, names)
    return 100.0 * sum(told(event, lines, names) for event in events) / max(len(events), 1)


def compacted(case: RecallCase, budget: int = BUDGET_TOKENS) -> tuple[list[dict[str, Any]], set[int]]:
    """The compacted context after every turn went through the pure core, and the turn indexes in its kept tail."""
    core = SessionCore(CoreConfig.from_settings(Settings(budget_tokens=budget)))
    turns = [Turn(**turn) for turn in case.turns]
    state = core.new_state(turns[0])
    for turn in turns:
        core.on_turn(state, turn, turn.ts or 0.0)
    result = state.compactor.result()
    anchors = {entry.seq for entry in state.compactor.anchors}
    return list(result.messages), {p for p in result.positions if p is not None and p not in anchors}


def tail_of(history: list[dict[str, Any]], tokens: int) -> list[dict[str, Any]]:
    """The newest lines of `history` that fit `tokens`."""
    kept: list[dict[str, Any]] = []
    for message in reversed(history):
        if count_messages([message, *kept]) > tokens:
            break
        kept.insert(0, message)
    return kept


def story_shares(story: StoryCase, budget: int = BUDGET_TOKENS) -> dict[str, Any]:
    """The events of the dropped sessions, and the share told by the compacted context, the tail and the history."""
    messages, kept = compacted(story.case, budget)
    live = {story.sessions[i] for i in kept}
    events = [event for session, event in story.events if session not in live]
    history, _ = dated_history(story.case)
    size = count_messages(messages)
    return {
        "events": len(events),
        "turnstream": share_told(events, messages, story.names),
        "newest tail": share_told(events, tail_of(history, size), story.names),
        "full history": share_told(events, history, story.names),
    }


def locomo_story(path: Path) -> StoryCase:
    """A LoCoMo conversation with its gold events per session."""
    data = orjson.loads(path.read_bytes())
    case = locomo_case(path)
    sessions = tuple(int(turn["turn_id"][1:].split(":")[0]) for turn in case.turns)
    events = []
    for key in sorted((k for k in data if k.startswith("events_session_")), key=lambda k: int(k.rsplit("_", 1)[1])):
        number = int(key.rsplit("_", 1)[1])
        events += [(number, text) for speaker, said in data[key].items() if speaker != "date" for text in said]
    names = frozenset(n.lower() for n in (data["speaker_a"], data["speaker_b"]))
    return StoryCase(f"LoCoMo {path.stem}", case, sessions, tuple(events), names)


def generated_story(language: Language) -> StoryCase:
    """A shipped generated chat; its events are the planted details (the only things that happen in it)."""
    case = recall_case(language)
    sessions = tuple(i // _GENERATED_SESSIONS for i in range(len(case.turns)))
    planted = {detail for detail, _, _ in DETAILS[language]}
    events = tuple(
        (sessions[i], turn["message"]["content"])
        for i, turn in enumerate(case.turns)
        if turn["message"]["content"] in planted
    )
    names = frozenset(str(turn["message"].get("name", "")).lower() for turn in case.turns[:2])
    return StoryCase(f"generated {language}", case, sessions, events, names)


def story_cases(locomo: Path | None) -> dict[str, list[StoryCase]]:
    """The generated English and Chinese chats, and LoCoMo's development split when a directory is given."""
    cases = {"generated en": [generated_story("en")], "generated zh": [generated_story("zh")]}
    if locomo is not None:
        cases["LoCoMo dev"] = [locomo_story(locomo / name) for name in LOCOMO_DEV]
    return cases


def story_figure(cases: dict[str, list[StoryCase]], budget: int = BUDGET_TOKENS) -> Figure:
    """Events of dropped sessions told, per group of conversations (pooled over events)."""
    rows: list[Row] = []
    data: dict[str, Any] = {}
    for name, group in cases.items():
        measured = [story_shares(story, budget) for story in group]
        events = sum(m["events"] for m in measured)
        pooled = {
            side: sum(m[side] * m["events"] for m in measured) / max(events, 1)
            for side in ("turnstream", "newest tail", "full history")
        }
        data[name] = {"events": events, **pooled, "conversations": {s.name: m for s, m in zip(group, measured)}}
        rows.append(Row.of(f"{name} vs newest tail", "% of events", pooled["turnstream"], pooled["newest tail"]))
        rows.append(Row.of(f"{name} vs full history", "% of events", pooled["turnstream"], pooled["full history"]))
    measured_dev = data.get("LoCoMo dev", {}).get("turnstream")
    target = (
        Target(f"LoCoMo dev ≥ {TARGET:.0f} % at {budget:,} tokens", measured_dev >= TARGET)
        if measured_dev is not None
        else None
    )
    return Figure(
        "story",
        f"10 Story of dropped sessions at {budget:,} tokens",
        "compacted context",
        "yardstick",
        rows,
        target,
        {"budget_tokens": budget, **data},
    )
