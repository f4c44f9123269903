"""The one prompt read, without I/O: it yields one plan, made by the caller's planner from what it asks, and returns
the prompt assembled from the result it is sent; a prompt and a search differ only in what they ask and their
budgets."""

from __future__ import annotations

import pytest

from turnstream.prompt.assemble import Prompt, search_settings
from turnstream.prompt.read import PromptRead, RecallAsk, Recalled, RecallResult, build_prompt, search
from turnstream.schemas.archive import ArchiveEntry
from turnstream.settings import Settings

pytestmark = pytest.mark.unit

QUESTION = "Which hotel fits my budget in Lisbon?"
RESULT = RecallResult(
    None,
    "Prefers quiet hotels.",
    [Recalled("m1", "fact", "My budget is 3500 euros.", 2.0, 0)],
    [(ArchiveEntry("e1", "acme:s0", 3, "user", "Maya", 1683554160.0, "The Lisbon hotel was lovely."), 5.0)],
)


def run(read: PromptRead[RecallAsk], result: RecallResult) -> tuple[list[RecallAsk], Prompt]:
    """Drive a read as an executor does, the planner's plan being the ask itself: what it asked, what it returned."""
    asked = [next(read)]
    with pytest.raises(StopIteration) as done:
        asked.append(read.send(result))
    return asked, done.value.value


def test_a_prompt_asks_once_with_its_query_and_records_as_told() -> None:
    asked, prompt = run(build_prompt(lambda ask: ask, QUESTION, 2, Settings(), record=False), RESULT)
    assert len(asked) == 1
    (ask,) = asked
    assert (ask.k, ask.record) == (2, False) and "lisbon" in ask.keywords
    assert "lisbon" in ask.archive.terms
    assert prompt.recalled == [{"id": "m1", "type": "fact", "text": "My budget is 3500 euros."}]
    assert [t["id"] for t in prompt.archived] == ["e1"] and prompt.messages[-1]["content"] == QUESTION
    assert set(prompt.timings) == {"redis", "assemble", "total"}


def test_small_talk_still_reads_the_context_but_asks_for_nothing() -> None:
    asked, prompt = run(build_prompt(lambda ask: ask, "hi!", None, Settings()), RecallResult(None, "", [], []))
    assert (asked[0].keywords, list(asked[0].archive.terms)) == ((), []) and prompt.skipped_recall


def test_a_search_records_nothing_and_takes_the_search_budget() -> None:
    settings = Settings()
    asked, found = run(search(lambda ask: ask, QUESTION, None, settings, budget_tokens=400), RESULT)
    assert asked[0].record is False and asked[0].k == settings.recall_k
    budgeted = search_settings(settings, QUESTION, 400)
    assert budgeted.recall_budget_tokens == 400
    assert found.recalled and found.messages[-1]["content"] == QUESTION
