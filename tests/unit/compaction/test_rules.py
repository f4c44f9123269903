"""One table test per compaction rule (docs/architecture.md, "Compaction rules")."""

from __future__ import annotations

import pytest

from turnstream.compaction import MARKERS
from turnstream.compaction.compactor import compact
from turnstream.compaction.incremental import SessionCompactor
from turnstream.compaction.strategies.base import Digest, Fact
from turnstream.compaction.strategies.offline import build_strategy
from turnstream.settings import Settings
from turnstream.text.language import detect_language
from turnstream.text.tokens import count_messages

from .helpers import Recorder, call, check_rules, result, sys_, thought, user

WORDS = "the flight to tokyo leaves at nine and the hotel is near the station "


def turns(n: int, words: int = 20) -> list[dict]:
    """n alternating assistant/user turns of about `words` tokens each."""
    return [(thought if i % 2 == 0 else user)(f"{i} " + WORDS * (words // 15 + 1)) for i in range(n)]


def fits_exactly(messages: list[dict], tail_from: int, language: str = "en") -> int:
    """The budget at which anchors + marker + messages[tail_from:] fit exactly (no strategy)."""
    anchors = [m for m in messages[:2]]
    return count_messages([*anchors, {"role": "system", "content": MARKERS[language]}, *messages[tail_from:]])  # type: ignore[index]


def test_anchors_are_pinned_and_a_later_system_message_is_not() -> None:
    messages = [sys_("rule one"), sys_("rule two"), user("plan my trip"), *turns(6), sys_("late note"), *turns(6)]
    res = compact(messages, 200)
    assert res.messages[:3] == tuple(messages[:3]) and all(a is b for a, b in zip(res.messages, messages[:3]))
    assert res.dropped > 0 and not any(m is messages[9] for m in res.messages)
    check_rules(messages, res, 200)


def test_a_greeting_before_the_first_user_message_is_pinned_with_it() -> None:
    messages = [sys_(), thought("Hello! Where to?"), user("Japan"), *turns(20)]
    res = compact(messages, 250)
    assert all(a is b for a, b in zip(res.messages[:3], messages[:3]))
    assert res.marker_index == 3


@pytest.mark.parametrize("slack", [0, 1, 500])
def test_under_budget_nothing_changes(slack: int) -> None:
    messages = [sys_(), user("go"), *turns(8)]
    res = compact(messages, count_messages(messages) + slack, digest=Digest(summary="earlier", facts=()))
    assert all(a is b for a, b in zip(res.messages, messages, strict=True))
    assert (res.marker_index, res.dropped, res.tokens.after) == (None, 0, count_messages(messages))


def test_one_token_over_budget_drops_something() -> None:
    messages = [sys_(), user("go"), *turns(8)]
    assert compact(messages, count_messages(messages) - 1).dropped > 0


@pytest.mark.parametrize("kept", [1, 2, 5])
def test_over_budget_keeps_the_longest_tail_that_fits(kept: int) -> None:
    messages = [sys_(), user("go"), *turns(12)]
    budget = fits_exactly(messages, len(messages) - kept)
    for delta, expected in ((0, kept), (-1, kept - 1)):
        if expected == 0:
            continue
        res = compact(messages, budget + delta)
        assert len(res.messages) - 3 == expected
        assert res.tokens.after <= budget + delta


def test_a_cut_inside_a_call_group_includes_the_call_when_it_fits_else_skips_the_group() -> None:
    group = [call("a", "b"), result("a", WORDS), result("b", WORDS)]
    messages = [sys_(), user("go"), *turns(4), *group, thought("done " + WORDS)]
    with_group = fits_exactly(messages, 6)
    res = compact(messages, with_group)
    assert res.messages[3:] == tuple(messages[6:])
    res = compact(messages, with_group - 1)
    assert res.messages[3:] == (messages[-1],)  # past the whole group, parallel results included
    check_rules(messages, res, with_group - 1)


def test_a_call_still_waiting_for_results_is_kept_with_those_that_came() -> None:
    messages = [sys_(), user("go"), *turns(10), call("a", "b"), result("a", WORDS)]
    res = compact(messages, fits_exactly(messages, len(messages) - 2))
    assert res.messages[-2:] == tuple(messages[-2:])
    check_rules(messages, res, res.tokens.budget)


def test_the_thought_before_a_kept_call_is_kept_when_it_fits() -> None:
    step = [thought("I should search for hotels"), call("a"), result("a", WORDS)]
    messages = [sys_(), user("go"), *turns(6), *step]
    budget = fits_exactly(messages, len(messages) - 3)
    assert compact(messages, budget).messages[3] is step[0]
    assert compact(messages, budget - 1).messages[3] is step[1]


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("帮我规划一次去日本的旅行，预算两万元", "zh"),
        ("plan a trip to japan on a budget", "en"),
        ("请用Python写一个API", "zh"),
    ],
)
def test_the_marker_speaks_the_conversation_language(text: str, language: str) -> None:
    filler = [(thought if i % 2 == 0 else user)(text) for i in range(10)]
    messages = [sys_("You are a helpful assistant; answer in the user's language."), user(text), *filler]
    res = compact(messages, count_messages(messages) - 1)
    assert detect_language(messages) == language
    marker = res.messages[res.marker_index]  # type: ignore[index]
    assert marker == {"role": "system", "content": MARKERS[language]}  # type: ignore[index]
    assert sum(m.get("content") in MARKERS.values() for m in res.messages) == 1


def test_the_dropped_span_goes_to_the_strategy_with_its_position() -> None:
    recorder = Recorder()
    messages = [sys_(), user("go"), *turns(12)]
    res = compact(messages, 200, strategy=recorder)
    seen = [message for _, span in recorder.spans for message in span]
    assert all(a is b for a, b in zip(seen, messages[2 : 2 + res.dropped], strict=True))
    assert [first for first, _ in recorder.spans][0] == 2
    position = 2
    for first, span in recorder.spans:
        assert first == position
        position += len(span)


def test_output_order_is_anchors_marker_block_tail() -> None:
    digest = Digest(summary="User wants Japan in May.", facts=(Fact("constraint", "budget 20000 CNY", "budget"),))
    messages = [sys_(), user("go"), *turns(12)]
    res = compact(messages, 300, digest=digest)
    block = res.messages[3]
    assert res.marker_index == 2 and block["role"] == "system"
    assert "User wants Japan in May." in block["content"] and "budget 20000 CNY" in block["content"]
    assert all(a is b for a, b in zip(res.messages[4:], messages[-len(res.messages) + 4 :]))
    assert res.to_dict()["facts"] == [
        {"type": "constraint", "text": "budget 20000 CNY", "key": "budget", "source_seq": -1}
    ]
    check_rules(messages, res, 300)


def test_no_block_when_the_digest_is_empty() -> None:
    res = compact([sys_(), user("go"), *turns(12)], 300)
    assert res.messages[3]["role"] != "system"


def test_an_oversized_tool_result_is_trimmed_visibly_within_budget() -> None:
    messages = [sys_(), user("go"), *turns(4), call("a"), result("a", WORDS * 400)]
    res = compact(messages, 500)
    trimmed = res.messages[-1]
    assert "[… trimmed" in trimmed["content"] and trimmed["tool_call_id"] == "a"
    assert res.tokens.after <= 500
    check_rules(messages, res, 500)


def test_parallel_oversized_results_share_the_room() -> None:
    messages = [sys_(), user("go"), call("a", "b", "c"), *(result(i, WORDS * 300) for i in "abc")]
    res = compact(messages, 600)
    assert res.tokens.after <= 600
    assert all("[… trimmed" in m["content"] for m in res.messages[-3:])
    check_rules(messages, res, 600)


def test_trimming_chinese_leaves_no_broken_character() -> None:
    messages = [sys_(), user("搜索东京酒店"), call("a"), result("a", "东京站附近的酒店每晚八百元，含早餐。" * 300)]
    res = compact(messages, 300)
    assert "已截断" in res.messages[-1]["content"] and "\ufffd" not in res.messages[-1]["content"]


def test_anchors_and_newest_step_over_budget_are_returned_as_they_are() -> None:
    messages = [sys_(WORDS * 40), user("go"), *turns(4), thought("final " + WORDS)]
    res = compact(messages, 100)
    assert res.messages[:2] == tuple(messages[:2]) and res.messages[-1] is messages[-1]
    assert len(res.messages) == 4 and res.tokens.after > 100
    assert res.tokens.after == count_messages(list(res.messages))


def test_budget_messages_caps_the_count() -> None:
    messages = [sys_(), user("go"), *turns(12, words=5)]
    res = compact(messages, 10_000, budget_messages=6, strategy=Recorder())
    assert len(res.messages) == 6 and res.dropped == len(messages) - 2 - 2
    check_rules(messages, res, 10_000, 6, monotone_block=True)


def test_empty_conversation() -> None:
    assert compact([], 100).to_dict() == {
        "messages": [],
        "positions": [],
        "message_tokens": [],
        "language": "en",
        "marker_index": None,
        "dropped": 0,
        "summary": "",
        "facts": [],
        "tokens": {"before": 3, "after": 3, "budget": 100},
    }


def test_a_bad_budget_is_refused() -> None:
    with pytest.raises(ValueError):
        compact([user("x")], 0)


def test_an_oversized_list_of_parts_is_trimmed_to_its_text() -> None:
    parts = [
        {"type": "text", "text": "describe this photo " * 200},
        {"type": "image_url", "image_url": {"url": "data:," + "A" * 4000}},
    ]
    messages = [sys_(), user("go"), {"role": "user", "content": parts}]
    res = compact(messages, 200)
    content = res.messages[-1]["content"]
    assert content.startswith("describe this photo") and "[… trimmed" in content and "data:" not in content
    assert res.tokens.after <= 200


def test_times_date_the_summary_as_a_session_fed_turn_by_turn_dates_it() -> None:
    messages = [sys_(), user("go"), *turns(30)]
    times = [1_700_000_000.0 + 86_400 * i for i in range(len(messages))]
    strategy = build_strategy(Settings())
    session = SessionCompactor(300, strategy=strategy)
    for message, ts in zip(messages, times):
        session.append(message, ts=ts)
    dated = compact(messages, 300, strategy=strategy, times=times)
    assert dated.to_dict() == session.result().to_dict()
    assert "[2023-11-" in dated.summary  # the days the dropped turns were said
    assert dated.summary != compact(messages, 300, strategy=strategy).summary


def test_times_must_match_the_messages() -> None:
    with pytest.raises(ValueError, match="2 times for 3 messages"):
        compact([sys_(), user("go"), user("x")], 300, times=[1.0, 2.0])
