"""What `turnstream diff` reports, pure: per session and question the prompt diffs, the questions the log gives, and
the summary over them; the stable JSON of it all (docs/operations.md documents its schema, `DIFF_SCHEMA`)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from turnstream.operations.prompt_diff import PromptDiff
from turnstream.schemas.turn import Turn
from turnstream.session.records import record_of
from turnstream.session.reorder import Forwarded
from turnstream.session.replay import LogRecord
from turnstream.stats import percentile
from turnstream.text.chat import content_text

DIFF_SCHEMA = 1
"""The version of the JSON `turnstream diff --json` prints: raised when a field changes meaning or goes."""


@dataclass(frozen=True, slots=True)
class Question:
    """A question asked of both sides: a user turn from the log, or a labelled question."""

    text: str
    turn_id: str | None = None
    """The user turn it replays (None for a labelled question)."""
    answer: str | None = None
    """The gold answer of a labelled question."""


@dataclass(frozen=True, slots=True)
class Answered:
    """Whether each side's prompt holds a labelled question's answer (the recall bench's scoring)."""

    live: bool
    shadow: bool


@dataclass(frozen=True, slots=True)
class QuestionDiff:
    question: Question
    diff: PromptDiff
    answered: Answered | None = None
    """With labels only."""


@dataclass(frozen=True, slots=True)
class SessionDiff:
    session: str
    """The session key."""
    in_shadow: bool
    """Whether the shadow holds a context for the session (else its prompts hold the question alone)."""
    questions: list[QuestionDiff]

    @property
    def identical(self) -> bool:
        return self.in_shadow and all(q.diff.identical for q in self.questions)


@dataclass(frozen=True, slots=True)
class Summary:
    """The figures over every question of every session compared."""

    sessions: int
    questions: int
    sessions_identical: int
    missing_in_shadow: int
    """Sessions the shadow holds no context for."""
    tokens_mean: tuple[float, float]
    """Prompt tokens per question, live and shadow."""
    tokens_p50: tuple[float, float]
    facts_changed: int
    """Facts added, removed or changed, summed over the questions."""
    memories_changed: int
    recalled_gained: int
    recalled_lost: int
    labelled: int
    """Questions with a gold answer (--labels)."""
    answered: tuple[int, int]
    """Of those, how many each side's prompt holds the answer of, live and shadow."""
    answered_gained: int
    """Answered by the shadow's prompt and not the live one's."""
    answered_lost: int


def last_user_turns(records: Iterable[LogRecord], key: str, count: int, max_content_bytes: int) -> list[Question]:
    """The last `count` user turns of session `key` in its records, oldest first, each once (a redelivered turn id
    counts once, where it first came)."""
    seen: dict[str, Question] = {}
    for record in records:
        try:
            decoded = record_of(record.topic, record.key, record.value, record.headers, "", max_content_bytes)
        except Exception:  # noqa: BLE001 - as the worker: a record no rule expects is refused, not asked
            continue
        item = decoded.item.turn if isinstance(decoded.item, Forwarded) else decoded.item
        if decoded.kind not in ("turn", "forwarded") or decoded.key != key or not isinstance(item, Turn):
            continue  # a control record, a refused one, or a turn its worker forwards (its copy comes later)
        if item.message.get("role") != "user" or item.turn_id in seen:
            continue
        if text := content_text(item.message.get("content")).strip():
            seen[item.turn_id] = Question(text, item.turn_id)
    return list(seen.values())[-count:]


def summarize(sessions: Sequence[SessionDiff]) -> Summary:
    asked = [q for session in sessions for q in session.questions]
    live = [float(q.diff.live_tokens) for q in asked]
    shadow = [float(q.diff.shadow_tokens) for q in asked]
    scored = [q.answered for q in asked if q.answered is not None]
    return Summary(
        sessions=len(sessions),
        questions=len(asked),
        sessions_identical=sum(s.identical for s in sessions),
        missing_in_shadow=sum(not s.in_shadow for s in sessions),
        tokens_mean=(_mean(live), _mean(shadow)),
        tokens_p50=(_p50(live), _p50(shadow)),
        facts_changed=sum(q.diff.facts.count for q in asked),
        memories_changed=sum(q.diff.memories.count for q in asked),
        recalled_gained=sum(len(q.diff.recalled.gained) for q in asked),
        recalled_lost=sum(len(q.diff.recalled.lost) for q in asked),
        labelled=len(scored),
        answered=(sum(a.live for a in scored), sum(a.shadow for a in scored)),
        answered_gained=sum(a.shadow and not a.live for a in scored),
        answered_lost=sum(a.live and not a.shadow for a in scored),
    )


def _mean(values: list[float]) -> float:
    return round(statistics.fmean(values), 1) if values else 0.0


def _p50(values: list[float]) -> float:
    middle = percentile(values, 50)
    return 0.0 if math.isnan(middle) else round(middle, 1)


def report_json(live: str, shadow: str, sessions: Sequence[SessionDiff]) -> dict[str, Any]:
    """The report as `turnstream diff --json` prints it (docs/operations.md: its schema)."""
    summary = asdict(summarize(sessions))
    for pair in ("tokens_mean", "tokens_p50", "answered"):
        summary[pair] = dict(zip(("live", "shadow"), summary[pair]))
    return {
        "schema": DIFF_SCHEMA,
        "live": live,
        "shadow": shadow,
        "summary": summary,
        "sessions": [_session_json(session) for session in sessions],
    }


def _session_json(session: SessionDiff) -> dict[str, Any]:
    return {
        "session": session.session,
        "in_shadow": session.in_shadow,
        "identical": session.identical,
        "questions": [_question_json(q) for q in session.questions],
    }


def _question_json(asked: QuestionDiff) -> dict[str, Any]:
    diff = asked.diff
    out: dict[str, Any] = {
        "turn_id": asked.question.turn_id,
        "question": asked.question.text,
        "identical": diff.identical,
        "tokens": {"live": diff.live_tokens, "shadow": diff.shadow_tokens},
        "facts": asdict(diff.facts),
        "memories": asdict(diff.memories),
        "recalled": asdict(diff.recalled),
        "text_diff": diff.text,
    }
    if asked.answered is not None:
        out["answer"] = asked.question.answer
        out["answered"] = asdict(asked.answered)
    return out
