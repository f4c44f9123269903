"""The summary/facts block takes at most a third of the budget; the recent tail gets the rest."""

from __future__ import annotations

import pytest

from tests.support.conversations import react_messages
from turnstream.compaction.compactor import compact
from turnstream.compaction.fitting import BLOCK_BUDGET_SHARE, cut_block
from turnstream.compaction.marker import block_text
from turnstream.compaction.strategies import Digest, Fact
from turnstream.compaction.strategies.keyinfo import merge_model_facts
from turnstream.compaction.strategies.offline import build_strategy
from turnstream.settings import Settings
from turnstream.text.tokens import REPLY_PRIMING_TOKENS, count_message, count_text
from turnstream_tools.samples.planted import generate

from .helpers import anchor_count, check_rules, units


@pytest.mark.parametrize(
    ("messages", "language"),
    [(generate(1, 600, "en").messages, "en"), (generate(2, 600, "zh").messages, "zh"), (react_messages(5, 1500), "en")],
)
def test_at_a_small_budget_the_block_is_a_third_and_the_tail_gets_the_rest(messages: list[dict], language: str) -> None:
    budget = 1200
    res = compact(messages, budget, strategy=build_strategy(Settings(summary_max_tokens=400, max_facts=40)))
    check_rules(messages, res, budget, language=language)
    n_anchor = anchor_count(messages)
    block = res.messages[n_anchor + 1]
    # (a conversation with tool data may give the block's whole summary up to its facts)
    assert block["role"] == "system" and block["content"].startswith(
        ("[Summary", "[已压缩", "[Key facts]", "[关键信息]")
    )
    assert count_message(block) <= budget * BLOCK_BUDGET_SHARE == 400
    assert count_message({"role": "system", "content": block_text(res.digest, language)}) > 400  # the cap did bind
    # The tail is the longest that fits beside anchors, marker and block: one more unit would not.
    first = len(messages) - (len(res.messages) - n_anchor - 2)
    previous = next(start for start, end in units(messages, n_anchor) if end == first)
    one_more = sum(count_message(m) for m in messages[previous:first])
    assert res.tokens.after <= budget < res.tokens.after + one_more
    tail = sum(count_message(m) for m in res.messages[n_anchor + 2 :])
    assert (
        tail
        >= budget - 400 - sum(count_message(m) for m in res.messages[: n_anchor + 1]) - REPLY_PRIMING_TOKENS - one_more
    )


def _digest(summary_lines: int, facts: list[tuple[str, str, str]]) -> Digest:
    summary = "\n".join(f"user: line {n} about the trip to Kyoto in May with a budget" for n in range(summary_lines))
    return Digest(
        summary=summary, facts=tuple(Fact(kind, text, key, seq) for seq, (kind, text, key) in enumerate(facts))
    )


def test_the_oldest_summary_text_goes_first_then_the_least_valuable_facts() -> None:
    facts = [
        ("fact", "search(q=Kyoto) -> 3 results", "data:search:kyoto"),
        ("constraint", "budget under 3000 EUR", "budget"),
        ("fact", "search(q=Osaka) -> 5 results", "data:search:osaka"),
        ("constraint", "Never book " + ", ".join(f"hotel {n}" for n in range(200)), "constraint:hotels"),
    ]
    digest = _digest(12, facts)
    full = cut_block(digest, "en", 10_000)
    assert full is not None
    narrower = cut_block(digest, "en", full[1] - 5)
    assert (
        narrower is not None and full[1] - 5 - 3 <= narrower[1] <= full[1] - 5
    )  # cut token by token, not line by line
    content = narrower[0]["content"]
    assert "line 0 " not in content and "line 11 " in content and "\n…" in content  # the oldest text went, visibly
    assert all(text in content for _, text, _ in facts)  # no fact had to go
    # with tool data among the facts the summary keeps no floor: past all of it, a fact goes
    past_the_summary = full[1] - count_text(digest.summary) - 12
    tight = cut_block(digest, "en", past_the_summary)
    assert tight is not None and tight[1] <= past_the_summary
    content = tight[0]["content"]
    assert "budget under 3000 EUR" in content and "q=Osaka" in content
    assert "q=Kyoto) -> 3 results" not in content  # the oldest of the two least valuable facts gave up first


def test_a_one_paragraph_summary_keeps_its_newest_part() -> None:
    digest = Digest(summary=" ".join(f"Step {n} compared hotels in Kyoto." for n in range(80)))
    block = cut_block(digest, "en", 100)
    assert block is not None and block[1] <= 100
    content = block[0]["content"]
    assert (
        content.startswith("[Summary of the compressed history]\n…") and "Step 79 compared hotels in Kyoto." in content
    )
    assert "Step 0 " not in content
    assert cut_block(digest, "en", 10) is None  # too little room for anything useful


def test_with_tool_data_the_whole_summary_goes_before_any_fact() -> None:
    facts = [
        ("fact", "search_hotels(city=Kyoto) -> KYO-10477, KYO-20931", "data:search_hotels:city=Kyoto"),
        ("constraint", "budget under 3000 EUR", "budget"),
    ]
    digest = _digest(12, facts)
    facts_only = cut_block(Digest(facts=digest.facts), "en", 10_000)
    assert facts_only is not None
    # room for the facts and a few tokens more: the ids an agent passes next stay, the story keeps only what is left
    block = cut_block(digest, "en", facts_only[1] + 4)
    assert block is not None
    content = block[0]["content"]
    assert all(text in content for _, text, _ in facts)
    assert "line 0 " not in content and "line 10 " not in content


def test_a_models_fact_under_a_slot_of_its_own_gives_up_its_room_before_any_offline_fact() -> None:
    offline = (
        Fact("event", "The user asked about trains.", "event:trains", 1),
        Fact("fact", "search_hotels(city=Kyoto) -> KYO-10477, KYO-20931", "data:search_hotels:city=Kyoto", 2),
    )
    found = [Fact("fact", "The user is planning a trip to Kyoto with a budget under 3000 EUR.", "trip", 9)]
    digest = Digest(facts=merge_model_facts(offline, found, max_facts=10))
    assert [fact.key for fact in digest.facts][-1] == "model:trip"
    full = cut_block(digest, "en", 10_000)
    assert full is not None and "planning a trip" in full[0]["content"]
    tight = cut_block(digest, "en", full[1] - 5)
    assert tight is not None
    content = tight[0]["content"]
    # the newest fact, and a named slot, yet a model's: the offline event older and worth more goes after it
    assert "planning a trip" not in content and "asked about trains" in content and "KYO-10477" in content
