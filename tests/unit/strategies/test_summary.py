import random

import pytest

from turnstream.compaction.strategies import Digest, RollingSummarizer
from turnstream.compaction.tokens import count_text
from turnstream.samples import generate



def step(call_id: str, name: str, args: str, result: str) -> list[dict]:
    return [
        {"role": "assistant", "content": None, "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}]},
        {"role": "tool", "tool_call_id": call_id, "content": result},
    ]


def test_small_span_is_kept_whole_with_react_steps_digested() -> None:
    dropped = [
        {"role": "user", "content": "Find flights from Berlin to Lisbon in May."},
        *step("c1", "search_flights", '{"from": "BER", "to": "LIS"}', '[{"price": 120}, {"price": 180}, {"price": 99}]'),
        *step("c2", "book_flight", '{"id": 3}', '{"error": "seat sold out"}'),
    ]
    summary = RollingSummarizer(200).apply(Digest(), dropped, 0).summary
    lines = summary.splitlines()
    assert lines[0] == "user: Find flights from Berlin to Lisbon in May."
    assert lines[1].startswith("step: called search_flights(from=BER, to=LIS) -> 3 results")
    assert lines[2].startswith("step: called book_flight(id=3) -> failed") and "sold out" in lines[2]


def test_summary_is_written_in_the_conversation_language() -> None:
    dropped = [{"role": "user", "content": "帮我找一下去成都的机票。"}, *step("c1", "search_flights", '{"to": "成都"}', "[1, 2]")]
    summary = RollingSummarizer(200).apply(Digest(), dropped, 0).summary
    assert summary.splitlines() == ["用户：帮我找一下去成都的机票。", "步骤：调用 search_flights(to=成都) -> 2 results: [1, 2]"]


def test_single_span_larger_than_the_cap_is_capped_keeping_salient_lines() -> None:
    chatter = [{"role": "user", "content": f"Nice, go on number {i}."} for i in range(60)]
    dropped = chatter[:30] + [{"role": "user", "content": "I'm allergic to sesame, never book anything with sesame."}] + chatter[30:]
    summary = RollingSummarizer(60).apply(Digest(), dropped, 0).summary
    assert count_text(summary) <= 60
    assert "sesame" in summary


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_folding_200_times_stays_under_the_cap_and_keeps_the_newest_span(lang: str) -> None:
    conversation = generate(seed=7, turns=1200, lang=lang).messages[2:]
    summarizer = RollingSummarizer(120)
    digest = Digest()
    rng = random.Random(3)
    start = 0
    for _ in range(200):
        size = rng.randint(1, 8)
        span = conversation[start : start + size] or conversation[-size:]
        digest = summarizer.apply(digest, span, start)
        start += size
        assert count_text(digest.summary) <= 120
    final = {"role": "user", "content": "Last thing: the ferry leaves at 7:15 from pier 4."}
    digest = summarizer.apply(digest, [final], start)
    assert count_text(digest.summary) <= 120
    assert digest.summary.splitlines()[-1].endswith(final["content"])


def test_older_lines_are_condensed_before_the_newest_span() -> None:
    summarizer = RollingSummarizer(80)
    digest = Digest()
    for i in range(12):
        digest = summarizer.apply(digest, [{"role": "user", "content": f"Plan item {i}: visit museum number {i} in the morning."}], i)
    lines = digest.summary.splitlines()
    assert lines[-1] == "user: Plan item 11: visit museum number 11 in the morning."
    assert "Plan item 0:" not in digest.summary


def test_bad_messages_never_raise() -> None:
    digest = RollingSummarizer(50).apply(Digest(summary="old"), [None, 3, {"role": "tool"}, {"content": ["x"]}], 0)  # type: ignore[list-item]
    assert count_text(digest.summary) <= 50
