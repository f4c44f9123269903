"""The recall tool's pure parts: its schema, the checks of a model's arguments, and the tool result a search's
answer renders to, within the budget the model asked. No services: a search's answer is made as the search makes
it, by finish_prompt over what the read script would return."""

from __future__ import annotations

from typing import Any

import jsonschema
import orjson
import pytest
from agents.strict_schema import ensure_strict_json_schema
from hypothesis import given, settings
from hypothesis import strategies as st

from turnstream.integrations.recall import (
    DEFAULT_BUDGET_TOKENS,
    DEFAULT_MEMORIES,
    MAX_BUDGET_TOKENS,
    MAX_QUERY_CHARS,
    MIN_BUDGET_TOKENS,
    NAME,
    NOTHING_FOUND,
    BadArguments,
    RecallArgs,
    chat_tool,
    error_text,
    parameters,
    parse_arguments,
    render,
)
from turnstream.prompt.assemble import Prompt, finish_prompt, search_settings
from turnstream.prompt.query import prompt_query
from turnstream.prompt.read import Recalled, RecallResult
from turnstream.schemas.archive import ArchiveEntry
from turnstream.settings import Settings
from turnstream.text.tokens import count_text

MAY_8_2023 = 1683554160.0
DAY = 86400.0


def test_the_chat_tool_is_a_strict_function_whose_only_required_words_are_the_query() -> None:
    tool = chat_tool()
    assert tool["type"] == "function" and tool["function"]["name"] == NAME and tool["function"]["strict"] is True
    schema = tool["function"]["parameters"]
    assert set(schema["properties"]) == {"query", "budget_tokens", "max_memories"}  # no owner among them
    assert ensure_strict_json_schema(parameters()) == schema  # what the Agents SDK sends in strict mode, unchanged
    jsonschema.Draft202012Validator.check_schema(schema)
    description = tool["function"]["description"]
    assert "earlier conversations" in description and "no longer" in description  # when to call it
    assert "names" in schema["properties"]["query"]["description"]  # what to write


def test_parameters_is_a_fresh_dict_each_time() -> None:
    first = parameters()
    first["properties"].clear()
    assert parameters()["properties"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"query": "Biscuit greyhound"}', RecallArgs("Biscuit greyhound", DEFAULT_BUDGET_TOKENS, DEFAULT_MEMORIES)),
        (
            '{"query": " Lisbon ", "budget_tokens": null, "max_memories": null}',
            RecallArgs("Lisbon", DEFAULT_BUDGET_TOKENS, DEFAULT_MEMORIES),
        ),
        (b'{"query": "x", "budget_tokens": 100, "max_memories": 0}', RecallArgs("x", MIN_BUDGET_TOKENS, 0)),
        ({"query": "x", "budget_tokens": 4000, "max_memories": 10}, RecallArgs("x", MAX_BUDGET_TOKENS, 10)),
        ('{"query": "x", "budget_tokens": 500.0}', RecallArgs("x", 500, DEFAULT_MEMORIES)),
    ],
)
def test_good_arguments_are_taken_with_their_defaults(raw: Any, expected: RecallArgs) -> None:
    assert parse_arguments(raw) == expected


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("", "non-empty string"),  # a call without arguments
        ("{}", "non-empty string"),
        ('{"query": "   "}', "non-empty string"),
        ('{"query": 7}', "non-empty string"),
        ("not json", "one JSON object"),
        ('["Biscuit"]', "one JSON object"),
        ('"Biscuit"', "one JSON object"),
        ('{"query": "x", "user_id": "maya"}', "unknown argument user_id"),  # the owner is never the model's choice
        ('{"query": "x", "budget_tokens": 99}', "budget_tokens must be a whole number from 100 to 4000"),
        ('{"query": "x", "budget_tokens": 4001}', "budget_tokens must be a whole number from 100 to 4000"),
        ('{"query": "x", "budget_tokens": "500"}', "budget_tokens must be"),
        ('{"query": "x", "budget_tokens": 500.5}', "budget_tokens must be"),
        ('{"query": "x", "budget_tokens": true}', "budget_tokens must be"),
        ('{"query": "x", "max_memories": -1}', "max_memories must be a whole number from 0 to 10"),
        ('{"query": "x", "max_memories": 11}', "max_memories must be"),
        (orjson.dumps({"query": "w " * MAX_QUERY_CHARS}), f"over {MAX_QUERY_CHARS} characters"),
    ],
)
def test_bad_arguments_say_what_is_wrong_in_one_short_line(raw: Any, reason: str) -> None:
    with pytest.raises(BadArguments, match=reason) as error:
        parse_arguments(raw)
    text = error_text(error.value)
    assert text.startswith("Error: ") and "\n" not in text and len(text) < 160


json_values = st.none() | st.booleans() | st.integers(-10, 5000) | st.floats(-10, 5000) | st.text(max_size=5)
arguments = st.fixed_dictionaries(
    {"query": st.text(st.characters(categories=("L", "N")), min_size=1, max_size=20) | json_values},
    optional={"budget_tokens": json_values, "max_memories": json_values, "user_id": st.text(max_size=3)},
)


@given(arguments)
def test_the_checks_refuse_whatever_the_schema_refuses(given_arguments: dict[str, Any]) -> None:
    """The model is told the schema; what it cannot send under the schema is refused here too, so a model that
    ignores the schema (no strict mode) is answered the same way."""
    schema_accepts = jsonschema.Draft202012Validator(parameters()).is_valid(
        {"budget_tokens": None, "max_memories": None, **given_arguments}
    )
    try:
        parse_arguments(orjson.dumps(given_arguments))
    except BadArguments:
        accepted = False
    else:
        accepted = True
    assert accepted == schema_accepts


def entry(n: int, text: str, speaker: str = "Caroline", session: str = "s1", ts: float = MAY_8_2023) -> ArchiveEntry:
    return ArchiveEntry(f"e-{session}-{n}", session, n, "user", speaker, ts, text)


def searched(
    query: str,
    budget: int,
    archived: list[tuple[ArchiveEntry, float]],
    recalled: list[Recalled] = (),
    profile: str = "",
) -> Prompt:
    """What MemoryStore.search returns for `query` when the read script returns these turns and memories."""
    search = search_settings(Settings(), query, budget)
    read = RecallResult(None, profile, list(recalled), archived)
    return finish_prompt(prompt_query(query, None, search), read, search)


def test_a_result_shows_memories_then_turns_each_under_its_day_with_its_speaker_oldest_first() -> None:
    archived = [
        (entry(5, "We hiked in Sintra.", ts=MAY_8_2023 + DAY), 4.0),  # hits best first, as the script returns
        (entry(1, "I adopted a greyhound named Biscuit."), 9.0),
        (entry(2, "That is lovely!", "Melanie"), 0.0),
    ]
    memories = [Recalled("m1", "preference", "Caroline likes long walks", 1.0, 0)]
    text = render(searched("Biscuit greyhound Sintra", 1000, archived, memories))
    assert text.splitlines() == [
        "[Memory about the user: use it where it helps, do not recite it]",
        "Relevant memories:",
        "- (preference) Caroline likes long walks",
        "From earlier conversations:",
        "[8 May 2023]",
        "Caroline: I adopted a greyhound named Biscuit.",
        "Melanie: That is lovely!",
        "[9 May 2023]",
        "Caroline: We hiked in Sintra.",
    ]


def test_a_chinese_query_gets_its_headings_and_days_in_chinese() -> None:
    text = render(searched("比斯奇 灰狗", 500, [(entry(1, "我领养了一只叫比斯奇的灰狗。", "卡罗琳"), 3.0)]))
    assert "以往对话摘录：" in text and "[2023年5月8日]" in text and "卡罗琳: 我领养了一只叫比斯奇的灰狗。" in text


@pytest.mark.parametrize("profile", ["", "Caroline has a dog."])
def test_nothing_matched_is_one_line_that_says_so(profile: str) -> None:
    assert render(searched("quantum chromodynamics", 1000, [], profile=profile)) == NOTHING_FOUND


words = st.sampled_from(
    [
        "Biscuit",
        "greyhound",
        "Sintra",
        "hiked",
        "lovely",
        "train",
        "Lisbon",
        "budget",
        "3500",
        "EUR",
        "hotel",
        "sister",
        "birthday",
        "pottery",
        "class",
        "yesterday",
    ]
)
turn_texts = st.lists(words, min_size=1, max_size=60).map(" ".join)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(turn_texts, min_size=1, max_size=40),
    st.integers(MIN_BUDGET_TOKENS, 1500),
    st.lists(st.sampled_from(["fact", "preference", "event"]), max_size=4),
    st.integers(0, 6),
)
def test_a_result_never_takes_more_tokens_than_the_budget_asked(
    texts: list[str],
    budget: int,
    memory_types: list[str],
    spread: int,
) -> None:
    archived = [
        (entry(n, text, ts=MAY_8_2023 + DAY * (n % (spread + 1))), 0.0 if n % 3 else 10.0 - n / 10)
        for n, text in enumerate(texts)
    ]
    memories = [
        Recalled(f"m{n}", kind, " ".join(texts[n % len(texts)].split()[:20]), 1.0, 0)
        for n, kind in enumerate(memory_types)
    ]
    found = searched("Biscuit hotel Lisbon budget", budget, archived, memories, profile="Lives in Lisbon.")
    assert count_text(render(found)) <= budget
