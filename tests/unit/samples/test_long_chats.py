import re
import statistics

import pytest

from turnstream.compaction import validate_messages
from turnstream.samples.long_chats import MAX_ANSWER_CHARS, MIN_ANSWER_CHARS, long_chat, long_chats
from turnstream.text.language import detect_language
from turnstream.text.terms import CJK_RUN


def test_a_chat_is_the_same_for_the_same_seed_and_another_for_another() -> None:
    assert long_chat("en", 40, seed=3) == long_chat("en", 40, seed=3)
    assert long_chat("en", 40, seed=3).turns != long_chat("en", 40, seed=4).turns
    assert long_chat("zh", 40, seed=3) == long_chat("zh", 40, seed=3)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_answers_are_long_markdown_within_bounds_and_questions_short(language: str) -> None:
    chat = long_chat(language, 120, seed=1)  # type: ignore[arg-type]
    messages = [turn["message"] for turn in chat.turns]
    validate_messages(messages)
    answers = [m["content"] for m in messages if m["role"] == "assistant"]
    asked = [m["content"] for m in messages if m["role"] == "user"]
    assert len(answers) == len(asked) == 60 and [m["role"] for m in messages[:2]] == ["user", "assistant"]
    assert all(MIN_ANSWER_CHARS <= len(a) <= MAX_ANSWER_CHARS for a in answers)
    assert all(len(q) < 120 for q in [*asked, *chat.questions]) and len(chat.questions) == 8
    assert all("## " in a for a in answers)
    assert sum("```" in a for a in answers) > 40 and sum("\n- " in a or "\n1. " in a for a in answers) > 40
    assert detect_language(messages) == language
    assert [t["seq"] for t in chat.turns] == list(range(120)) and sorted(t["ts"] for t in chat.turns) == [
        t["ts"] for t in chat.turns
    ]


def test_the_set_is_each_language_in_turn_each_chat_a_session_of_its_own() -> None:
    chats = long_chats(2, 20)
    assert [c.language for c in chats] == ["en", "en", "zh", "zh"]
    assert len({c.session_id for c in chats}) == 4


@pytest.mark.parametrize("language", ["en", "zh"])
def test_answers_hold_what_project_chats_hold_code_traces_tables_and_plans(language: str) -> None:
    answers = [
        turn["message"]["content"]
        for turn in long_chat(language, 120, seed=2).turns  # type: ignore[arg-type]
        if turn["message"]["role"] == "assistant"
    ]
    text = "\n".join(answers)
    fenced = re.findall(r"```(\w*)\n(.*?)```", text, re.S)
    assert len({kind for kind, _ in fenced if kind}) >= 5  # python, typescript, go, bash, sql, yaml, json
    assert any(re.search(r"Traceback \(most recent call last\)|\n\tat |goroutine \d+", body) for _, body in fenced)
    assert re.search(r"\n\| .+ \|\n\|(---\|){3,}\n(\| .+ \|\n){3,}", text)  # a header, its rule, three rows or more
    assert re.search(r"\n1\. .+\n(   - .+\n)?2\. .+\n", text)  # a numbered plan
    assert statistics.mean(map(len, answers)) > 4_000
    prose = [line for line in text.splitlines() if line and not line.startswith(("```", "|", " ", "\t"))]
    has_cjk = [bool(CJK_RUN.search(line)) for line in prose]
    assert (sum(has_cjk) > 0.6 * len(prose)) if language == "zh" else not any(has_cjk)
