"""The inspector's diff page on plain diffs: the summary, each session's figures and text diff, everything escaped."""

from __future__ import annotations

import pytest

from turnstream.inspector.diff_page import diff_page
from turnstream.operations.diff_report import Question, QuestionDiff, SessionDiff
from turnstream.operations.prompt_diff import PromptSide, diff_prompts

pytestmark = pytest.mark.unit

SCRIPT = "<script>alert('x')</script>"


def side(text: str, tokens: int) -> PromptSide:
    return PromptSide([{"role": "user", "content": text}], tokens, {}, {}, {})


def test_the_page_shows_the_summary_and_each_sessions_diff_escaped() -> None:
    sessions = [
        SessionDiff("s1", True, [QuestionDiff(Question(SCRIPT, "t1"), diff_prompts(side("a", 9), side(SCRIPT, 7)))]),
        SessionDiff("s2", True, [QuestionDiff(Question("same?", "t2"), diff_prompts(side("b", 5), side("b", 5)))]),
        SessionDiff("s3", False, []),
    ]
    page = diff_page("live", "shadow", sessions)
    assert "<h1>live against shadow</h1>" in page
    assert '<tr><td>sessions compared</td><td class="num">3</td>' in page
    assert '<tr><td>prompt tokens, mean</td><td class="num">7.0</td><td class="num">6.0</td></tr>' in page
    assert "tokens 9 → 7" in page and page.count("<details><summary>text diff</summary>") == 1
    assert "The two prompts are the same." in page and "No user turn in the log." in page
    assert '<a href="/sessions/s3">s3</a> <span class="meta">not in the shadow</span>' in page
    assert SCRIPT not in page and "&lt;script&gt;" in page


def test_a_page_with_nothing_to_compare_says_so() -> None:
    assert "No session to compare." in diff_page("live", "shadow", [])
