import random
import re
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from turnstream.compaction.strategies import Digest
from turnstream.compaction.strategies.summary import RollingSummarizer, parse, render
from turnstream.text.tokens import count_text
from turnstream_tools.samples import generate


def step(call_id: str, name: str, args: str, result: str) -> list[dict]:
    return [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}],
        },
        {"role": "tool", "tool_call_id": call_id, "content": result},
    ]


def test_small_span_is_kept_whole_with_react_steps_digested() -> None:
    dropped = [
        {"role": "user", "content": "Find flights from Berlin to Lisbon in May."},
        *step(
            "c1", "search_flights", '{"from": "BER", "to": "LIS"}', '[{"price": 120}, {"price": 180}, {"price": 99}]'
        ),
        *step("c2", "book_flight", '{"id": 3}', '{"error": "seat sold out"}'),
    ]
    summary = RollingSummarizer(200).apply(Digest(), dropped, 0).summary
    lines = summary.splitlines()
    assert lines[0] == "user: Find flights from Berlin to Lisbon in May."
    assert lines[1].startswith("step: called search_flights(from=BER, to=LIS) -> 3 results: (price): 120; 180; 99")
    assert lines[2].startswith("step: called book_flight(id=3) -> failed") and "sold out" in lines[2]


def test_summary_is_written_in_the_conversation_language() -> None:
    dropped = [
        {"role": "user", "content": "帮我找一下去成都的机票。"},
        *step("c1", "search_flights", '{"to": "成都"}', "[1, 2]"),
    ]
    summary = RollingSummarizer(200).apply(Digest(), dropped, 0).summary
    assert summary.splitlines() == [
        "用户：帮我找一下去成都的机票。",
        "步骤：调用 search_flights(to=成都) -> 2 results: 1, 2",
    ]


def test_single_span_larger_than_the_cap_is_capped_keeping_salient_lines() -> None:
    chatter = [{"role": "user", "content": f"Nice, go on number {i}."} for i in range(60)]
    dropped = (
        chatter[:30]
        + [{"role": "user", "content": "I'm allergic to sesame, never book anything with sesame."}]
        + chatter[30:]
    )
    summary = RollingSummarizer(60).apply(Digest(), dropped, 0).summary
    assert count_text(summary) <= 60
    assert "sesame" in summary


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_folding_200_times_stays_under_the_cap(lang: str) -> None:
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
    assert count_text(digest.summary) <= 120 and digest.summary


DAY = 86_400.0
START = 1_683_540_000.0  # 8 May 2023


def said(day: int, name: str, text: str) -> tuple[dict, float]:
    return {"role": "user" if name == "Maya" else "assistant", "name": name, "content": text}, START + day * DAY


def fold_days(
    summarizer: RollingSummarizer, days: list[list[tuple[dict, float]]], digest: Digest | None = None
) -> Digest:
    digest = Digest() if digest is None else digest
    for span in days:
        digest = summarizer.apply(replace(digest, times=tuple(ts for _, ts in span)), [m for m, _ in span], 0)
        digest = replace(digest, times=())
    return digest


def test_a_dated_span_becomes_a_day_of_attributed_statements() -> None:
    span = [
        said(0, "Maya", "I signed up for a pottery class at the Clay Loft on Tuesdays."),
        said(0, "Sol", "Nice! I ran a charity race for mental health last Saturday."),
    ]
    summary = fold_days(RollingSummarizer(200), [span]).summary
    assert summary.splitlines()[0] == "[2023-05-08]"
    assert "Maya: I signed up for a pottery class" in summary and "Sol: I ran a charity race" in summary


def test_a_day_keeps_what_its_speaker_did_before_a_preference_a_feeling_or_a_photo() -> None:
    span = [
        said(0, "Maya", "I really love quiet mornings with a good cup of coffee and some jazz."),
        said(0, "Maya", "[shares a photo of a lake at sunset with two canoes on the shore]"),
        said(0, "Maya", "It has been a long and honestly pretty exhausting couple of weeks at work."),
        said(0, "Maya", "I finally joined the rowing club at the lake last weekend with my sister."),
    ]
    summary = fold_days(RollingSummarizer(30), [span]).summary
    assert summary.splitlines() == [
        "[2023-05-08]",
        "Maya: I finally joined the rowing club at the lake last weekend with my sister.",
    ]


def test_old_days_fold_into_months_and_every_period_keeps_its_best_line() -> None:
    places = [
        "Lisbon",
        "Porto",
        "Madrid",
        "Seville",
        "Granada",
        "Valencia",
        "Bilbao",
        "Toledo",
        "Cadiz",
        "Malaga",
        "Girona",
        "Ronda",
    ]
    things = [
        "tiles",
        "wine",
        "a hat",
        "olives",
        "a fan",
        "oranges",
        "cheese",
        "a map",
        "salt",
        "a guitar",
        "a scarf",
        "honey",
    ]
    days = [
        [
            said(7 * d, "Maya", f"I went to {place} with Ana and bought {thing} for {d + 2} euros."),
            said(7 * d, "Sol", "Cool, sounds fun."),
        ]
        for d, (place, thing) in enumerate(zip(places, things))
    ]
    summary = fold_days(RollingSummarizer(160), days).summary
    headers = [line for line in summary.splitlines() if line.startswith("[")]
    assert count_text(summary) <= 160
    assert any(len(h) == len("[2023-05]") for h in headers), headers  # a month
    starts = [(h[1:-1] + "-01-01")[:10] for h in headers]
    assert starts == sorted(starts), "periods stay in time order"
    assert "Ronda" in summary  # the newest day is there


def test_an_old_undated_summary_restores_and_folds_on() -> None:
    old = "user: My budget is 2000 euros.\nassistant: Noted."
    summary = fold_days(
        RollingSummarizer(200),
        [[said(0, "Maya", "We booked the hotel in Porto for three nights.")]],
        Digest(summary=old),
    ).summary
    assert summary.startswith("user: My budget is 2000 euros.")
    assert "[2023-05-08]" in summary and "booked the hotel in Porto" in summary


statements = st.lists(
    st.tuples(st.integers(0, 60), st.sampled_from(["Maya", "Sol"]), st.text(min_size=1, max_size=80)),
    min_size=1,
    max_size=30,
)


@settings(max_examples=60, deadline=None)
@given(statements, st.integers(24, 200))
def test_cap_order_and_restore_hold_for_any_spans(said_: list[tuple[int, str, str]], cap: int) -> None:
    summarizer = RollingSummarizer(cap)
    days = [[said(day, name, text)] for day, name, text in sorted(said_, key=lambda s: s[0])]
    summary = fold_days(summarizer, days).summary
    assert count_text(summary) <= cap
    starts = [
        (line[1:-1] + "-01-01")[:10] for line in summary.splitlines() if re.fullmatch(r"\[\d{4}(-\d{2}){0,2}\]", line)
    ]
    assert starts == sorted(starts)
    assert render(parse(summary)) == summary  # the text is the state: it restores to itself


def test_bad_messages_never_raise() -> None:
    digest = RollingSummarizer(50).apply(Digest(summary="old"), [None, 3, {"role": "tool"}, {"content": ["x"]}], 0)  # type: ignore[list-item]
    assert count_text(digest.summary) <= 50
