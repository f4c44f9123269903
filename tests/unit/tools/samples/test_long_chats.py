import ast
import json
import re
import statistics
from collections.abc import Callable

import pytest
import yaml

from turnstream.compaction import validate_messages
from turnstream.text.language import Language, detect_language, text_language
from turnstream.text.terms import CJK_RUN
from turnstream_tools.samples.long_chat_parts import TOPICS, Topic
from turnstream_tools.samples.long_chats import MAX_ANSWER_CHARS, MIN_ANSWER_CHARS, LongChat, long_chat, long_chats

FENCE = re.compile(r"```(\w*)\n(.*?)```", re.S)
CODE_LANGUAGES = {"python", "typescript", "go", "bash", "sql", "yaml", "json"}
TRACE = re.compile(
    r"Traceback \(most recent call last\):\n  File \"[^\"]+\", line \d+"  # Python
    r"|\n\tat [\w.$/]+\(\w+\.java:\d+\)"  # Java
    r"|goroutine \d+ \[running\]:\n.+\n\t/\S+\.go:\d+"  # Go
    r"|\n    at (async )?\w+ \(/\S+\.ts:\d+:\d+\)"  # Node
)
TABLE = re.compile(r"^\| .+ \|\n\|(---\|){3,6}\n(\| .+ \|\n){2,7}\| .+ \|$", re.M)  # a header, its rule, 3-8 rows
PLAN = re.compile(r"^1\. .+\n(   - .+\n)*2\. .+\n(   - .+\n)*3\. ", re.M)  # three numbered steps or more


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
    # prose is what is outside the code fences (code and traces stay code in either language)
    prose = [line for line in FENCE.sub("", text).splitlines() if line and not line.startswith(("|", " ", "\t"))]
    has_cjk = [bool(CJK_RUN.search(line)) for line in prose]
    assert (sum(has_cjk) > 0.6 * len(prose)) if language == "zh" else not any(has_cjk)


@pytest.fixture(scope="module")
def bench_set() -> list[LongChat]:
    """The set figure 11 reads: 4 English and 4 Chinese chats of 120 messages."""
    return long_chats()


def said(chat: LongChat, role: str) -> list[str]:
    return [turn["message"]["content"] for turn in chat.turns if turn["message"]["role"] == role]


def prose_lines(text: str) -> list[str]:
    """The lines of `text` outside code fences and tables."""
    return [line for line in FENCE.sub("", text).splitlines() if line.strip() and not line.startswith("|")]


def test_the_set_is_the_same_for_the_same_seed_and_another_for_another() -> None:
    assert long_chats(2, 30, seed=5) == long_chats(2, 30, seed=5)
    assert all(a.turns != b.turns for a, b in zip(long_chats(2, 30, seed=5), long_chats(2, 30, seed=6)))


@pytest.mark.parametrize("language", ["en", "zh"])
def test_answers_run_2_to_10k_characters_about_4_to_5k_on_average(bench_set: list[LongChat], language: str) -> None:
    assert (MIN_ANSWER_CHARS, MAX_ANSWER_CHARS) == (2_000, 10_000)
    lengths = [len(a) for chat in bench_set if chat.language == language for a in said(chat, "assistant")]
    assert len(lengths) == 240 and all(MIN_ANSWER_CHARS <= n <= MAX_ANSWER_CHARS for n in lengths)
    assert 4_000 <= statistics.mean(lengths) <= 5_500
    assert min(lengths) < 2_500 and max(lengths) > 9_000  # short ones and long ones, not one size


HOLDS: list[tuple[str, Callable[[str], object]]] = [
    ("code in three languages or more", lambda text: len(CODE_LANGUAGES & {k for k, _ in FENCE.findall(text)}) >= 3),
    ("a markdown table", TABLE.search),
    ("a stack trace", lambda text: any(TRACE.search("\n" + body) for _, body in FENCE.findall(text))),
    ("a numbered multi-step plan", PLAN.search),
    ("a checklist", lambda text: re.search(r"^- \[[ x]\] .+\n- \[[ x]\] ", text, re.M)),
    ("a heading", lambda text: re.search(r"^##+ \S", text, re.M)),
]


@pytest.mark.parametrize("number", range(4))
@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize(("what", "holds"), HOLDS, ids=[what for what, _ in HOLDS])
def test_each_chat_holds_what_project_chats_hold(
    bench_set: list[LongChat], language: str, number: int, what: str, holds: Callable[[str], object]
) -> None:
    chat = [chat for chat in bench_set if chat.language == language][number]
    assert holds("\n\n".join(said(chat, "assistant"))), f"{chat.session_id} has no {what}"


def test_the_code_is_code_python_json_and_yaml_parse(bench_set: list[LongChat]) -> None:
    parse = {"python": ast.parse, "json": json.loads, "yaml": yaml.safe_load}
    blocks = [(k, body) for chat in bench_set for a in said(chat, "assistant") for k, body in FENCE.findall(a)]
    assert len({k for k, _ in blocks} & CODE_LANGUAGES) == 7
    for kind, body in blocks:
        if kind in parse:
            parse[kind](body)  # raises on anything that is not the language it says it is
    python = "\n".join(body for kind, body in blocks if kind == "python")
    assert re.search(r"^import \w+", python, re.M) and re.search(r"^def \w+\(", python, re.M)
    for topic in TOPICS:  # code is about its topic: its function and its error, not one fixed template
        assert topic.verb in python or topic.error in python


def test_answers_vary_in_structure_and_are_not_lorem(bench_set: list[LongChat]) -> None:
    answers = [a for chat in bench_set for a in said(chat, "assistant")]
    outlines = [tuple(line for line in a.splitlines() if line.startswith("#")) for a in answers]
    assert len(set(outlines)) > 0.9 * len(outlines)
    assert any("|---|" not in a for a in answers) and any(not PLAN.search(a) for a in answers)
    for language in ("en", "zh"):  # prose between the code, not a code dump
        theirs = [a for chat in bench_set if chat.language == language for a in said(chat, "assistant")]
        assert statistics.mean(sum(len(m[0]) for m in FENCE.finditer(a)) / len(a) for a in theirs) < 0.6
    assert not any(re.search(r"lorem|ipsum", a, re.I) for a in answers)
    for a in answers:  # no sentence twice in one answer
        sentences = [s for s in re.split(r"(?<=[.。])\s*", FENCE.sub("", a)) if len(s) > 20 and "|" not in s]
        assert len(sentences) == len(set(sentences)), a


def test_chinese_prose_is_chinese_and_english_has_none(bench_set: list[LongChat]) -> None:
    for chat in bench_set:
        text = "\n".join(said(chat, "assistant"))
        lines = prose_lines(text)
        with_cjk = sum(bool(CJK_RUN.search(line)) for line in lines)
        if chat.language == "zh":
            assert with_cjk > 0.95 * len(lines)
            assert re.search(r"^\| 配置项 \|", text, re.M) or re.search(r"^\| 方案 \|", text, re.M)
            assert "昨天" in text and "上周" in text
        else:
            assert not CJK_RUN.search(text)
            assert "yesterday" in text and "last week" in text


def topic_of(question: str, language: Language) -> Topic:
    (topic,) = [topic for topic in TOPICS if topic.name(language) in question]
    return topic


def test_questions_are_in_the_chats_language_and_about_what_it_discussed(bench_set: list[LongChat]) -> None:
    for chat in bench_set:
        assert len(chat.questions) == 8
        asked, answered = said(chat, "user"), said(chat, "assistant")
        for question in chat.questions:
            assert text_language(question) == chat.language, question
            topic = topic_of(question, chat.language)
            # an earlier ask was about it, and its answer holds the topic's own identifiers
            names = (topic.slug, topic.slug.replace("_", "-"), topic.verb, topic.error, topic.entity)
            assert any(
                topic.name(chat.language) in a and any(name in b for name in names) for a, b in zip(asked, answered)
            ), question


def test_user_messages_are_short_some_with_an_error_or_a_snippet_pasted(bench_set: list[LongChat]) -> None:
    for chat in bench_set:
        asked = said(chat, "user")
        assert all(len(message) < 120 for message in asked)
        assert any(re.search(r"`[A-Z]\w+: .+`", message) for message in asked)  # an error line
        assert any("```yaml\n" in message for message in asked) or any("`" in message for message in asked)
