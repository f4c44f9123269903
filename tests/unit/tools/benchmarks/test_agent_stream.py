"""The pure parts of the stream figure: its workers' budgets, and what a prompt must keep."""

from __future__ import annotations

from turnstream.settings import Settings
from turnstream.text.tokens import count_messages
from turnstream_tools.benchmarks.agent_stream import (
    StreamMeasure,
    model_figure,
    newest_user_text,
    prompt_breaks,
    prompt_sizes,
    proportioned,
)
from turnstream_tools.benchmarks.agent_values import Tally

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


def _measured(old_kept: int, invented: int = 0) -> dict[int, dict[str, StreamMeasure]]:
    measure = StreamMeasure()
    measure.points = measure.clean = 1
    measure.invented = invented
    measure.sides["build_prompt"] = Tally(needed=10, kept=old_kept + 5, old=5, old_kept=old_kept)
    measure.sides["anchors + tail"] = Tally(needed=10, kept=5, old=5, old_kept=0)
    return {4000: {"all": measure}}


def test_the_model_figure_is_met_only_holding_the_offline_figures_and_no_invented_reference_in_a_prompt() -> None:
    answered = {"summary": 3, "extraction": 3}
    held = model_figure(_measured(4), _measured(4), 3, answered)
    assert held.target is not None and held.target.met
    assert held.row("prompts holding an invented reference").b == 3
    sides = held.data["budgets"]["4000"]["all"]["sides"]
    assert list(sides) == ["build_prompt with the model", "build_prompt offline", "anchors + tail"]
    lower = model_figure(_measured(3), _measured(4), 3, answered)
    leaked = model_figure(_measured(5, invented=1), _measured(4), 3, answered)
    assert lower.target is not None and not lower.target.met
    assert leaked.target is not None and not leaked.target.met
