"""What `turnstream diff` reports, pure: the questions a session's log gives, the sample, the summary, the JSON."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from turnstream.operations.diff import DiffRefused, check_names, sample
from turnstream.operations.diff_report import (
    DIFF_SCHEMA,
    Answered,
    Question,
    QuestionDiff,
    SessionDiff,
    last_user_turns,
    report_json,
    summarize,
)
from turnstream.operations.prompt_diff import PromptSide, RecalledRef, diff_prompts
from turnstream.schemas.control import forget_record
from turnstream.session.replay import LogRecord

pytestmark = pytest.mark.unit


def turn(session: str, turn_id: str, role: str, text: str) -> dict[str, Any]:
    return {"turn_id": turn_id, "session_id": session, "seq": 0, "ts": 1.0, "message": {"role": role, "content": text}}


def logged(value: bytes, key: str = "s1") -> LogRecord:
    return LogRecord("p.turns", key.encode(), value, [], 1.0)


def test_the_questions_are_the_last_user_turns_each_once_in_log_order() -> None:
    records = [
        logged(orjson.dumps(turn("s1", "t1", "user", "first?"))),
        logged(orjson.dumps(turn("s1", "t2", "assistant", "an answer"))),
        logged(orjson.dumps(turn("s1", "t3", "user", "second?"))),
        logged(b"{not json"),  # refused by the worker: not asked
        logged(forget_record("s1", 2.0)),  # a control record
        logged(orjson.dumps(turn("s1", "t3", "user", "second?"))),  # redelivered
        logged(orjson.dumps(turn("s2", "u1", "user", "another session's")), key="s2"),
        logged(orjson.dumps(turn("s2", "u2", "user", "keyed otherwise"))),  # its worker forwards it under s2
        logged(orjson.dumps(turn("s1", "t4", "user", "   "))),  # nothing to ask
        logged(orjson.dumps(turn("s1", "t5", "user", "third?"))),
    ]
    assert last_user_turns(records, "s1", 2, 10_000) == [Question("second?", "t3"), Question("third?", "t5")]
    assert [q.turn_id for q in last_user_turns(records, "s1", 10, 10_000)] == ["t1", "t3", "t5"]
    assert last_user_turns(records, "s9", 1, 10_000) == []


@given(st.lists(st.text(alphabet="abcdef:", min_size=1, max_size=4), unique=True), st.integers(1, 8))
def test_a_sample_is_the_same_every_time_in_key_order_and_all_when_asked_for_more(keys: list[str], count: int) -> None:
    chosen = sample(keys, count)
    assert chosen == sample(list(reversed(keys)), count) == sorted(chosen)
    assert set(chosen) <= set(keys) and len(chosen) == min(count, len(keys))
    assert sample(keys, None) == sorted(keys)


def test_the_live_prefix_itself_is_no_shadow() -> None:
    with pytest.raises(DiffRefused, match="'live' is the live prefix"):
        check_names("live", "live")
    check_names("live", "live-shadow")


def side(tokens: int, memories: dict[str, str], recalled: tuple[str, ...] = ()) -> PromptSide:
    messages = [{"role": "user", "content": " ".join(memories.values()) or "q"}]
    return PromptSide(messages, tokens, {}, memories, {r: RecalledRef(r, "s", 1) for r in recalled})


def sessions() -> list[SessionDiff]:
    same = diff_prompts(side(100, {"m": "x"}), side(100, {"m": "x"}))
    other = diff_prompts(side(200, {"m": "x"}, ("e1",)), side(120, {"m": "y"}, ("e2", "e3")))
    return [
        SessionDiff("a", True, [QuestionDiff(Question("q1", "t1", "x"), same, Answered(True, True))]),
        SessionDiff("b", True, [QuestionDiff(Question("q2", "t2", "y"), other, Answered(False, True))]),
        SessionDiff("c", False, [QuestionDiff(Question("q3", "t3"), same)]),
    ]


def test_the_summary_counts_over_every_question() -> None:
    summary = summarize(sessions())
    assert (summary.sessions, summary.questions, summary.sessions_identical, summary.missing_in_shadow) == (3, 3, 1, 1)
    assert summary.tokens_mean == (133.3, 106.7)
    assert summary.tokens_p50 == (100.0, 100.0)
    assert (summary.facts_changed, summary.memories_changed) == (0, 1)
    assert (summary.recalled_gained, summary.recalled_lost) == (2, 1)
    assert (summary.labelled, summary.answered, summary.answered_gained, summary.answered_lost) == (2, (1, 2), 1, 0)


def test_an_empty_comparison_summarizes_to_zeros() -> None:
    summary = summarize([])
    assert (summary.sessions, summary.tokens_mean, summary.tokens_p50) == (0, (0.0, 0.0), (0.0, 0.0))


def test_the_json_report_has_its_schema_fields() -> None:
    report = orjson.loads(orjson.dumps(report_json("live", "shadow", sessions())))
    assert (report["schema"], report["live"], report["shadow"]) == (DIFF_SCHEMA, "live", "shadow")
    assert report["summary"]["tokens_mean"] == {"live": 133.3, "shadow": 106.7}
    assert report["summary"]["answered"] == {"live": 1, "shadow": 2}
    b = report["sessions"][1]
    assert (b["session"], b["in_shadow"], b["identical"]) == ("b", True, False)
    asked = b["questions"][0]
    assert asked["tokens"] == {"live": 200, "shadow": 120}
    assert asked["memories"] == {"added": {}, "removed": {}, "changed": [{"id": "m", "live": "x", "shadow": "y"}]}
    assert [r["id"] for r in asked["recalled"]["gained"]] == ["e2", "e3"]
    assert [r["id"] for r in asked["recalled"]["lost"]] == ["e1"]
    assert asked["text_diff"][:2] == ["--- live", "+++ shadow"]
    assert asked["answered"] == {"live": False, "shadow": True} and asked["answer"] == "y"
    assert "answered" not in report["sessions"][2]["questions"][0]  # no label, no score
