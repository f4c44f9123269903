"""The pure parts of the stream figure: its workers' budgets, and what a prompt must keep."""

from __future__ import annotations

from turnstream.settings import Settings
from turnstream.text.tokens import count_messages
from turnstream_tools.benchmarks.agent_stream import newest_user_text, prompt_breaks, prompt_sizes, proportioned

HISTORY = [
    {"role": "system", "content": "policy"},
    {"role": "user", "content": "first"},
    {"role": "assistant", "content": "ok"},
    {"role": "user", "content": "book it"},
    {"role": "assistant", "content": "checking"},
]


def test_a_prompt_budget_keeps_the_defaults_proportions_on_a_prefix_of_its_own() -> None:
    settings = Settings(topic_prefix="t")
    assert prompt_sizes(settings) == (4000, 6000)
    small = proportioned(settings, 4000)
    assert (small.budget_tokens, small.prompt_budget_tokens, small.recall_budget_tokens) == (2666, 4000, 2000)
    default = proportioned(settings, settings.prompt_budget_tokens)
    assert (default.budget_tokens, default.recall_budget_tokens) == (settings.budget_tokens, 3000)
    assert small.topic_prefix != default.topic_prefix != settings.topic_prefix


def test_the_question_is_the_newest_user_message() -> None:
    assert newest_user_text(HISTORY) == "book it"


def test_a_prompt_breaks_its_rules_by_losing_an_anchor_splitting_a_call_or_overrunning() -> None:
    prompt = [*HISTORY[:2], {"role": "user", "content": "book it"}]
    assert prompt_breaks(HISTORY, prompt, count_messages(prompt)) == []
    assert prompt_breaks(HISTORY, prompt[1:], 10_000) == ["anchors"]
    orphan = [*prompt, {"role": "tool", "tool_call_id": "c1", "content": "{}"}]
    assert prompt_breaks(HISTORY, orphan, 10_000) == ["tool pairs"]
    assert prompt_breaks(HISTORY, prompt, count_messages(prompt) - 1) == ["budget"]
