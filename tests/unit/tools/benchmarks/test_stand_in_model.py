"""The stand-in model's answers: verbatim copies of the removed turns, one invented reference an extraction, and a
summary within its budget that gives up its oldest lines first."""

from __future__ import annotations

import orjson

from turnstream.compaction.strategies.grounding import split_grounded
from turnstream.compaction.strategies.prompts import extraction_prompt, parse_facts, summary_prompt
from turnstream.text.tokens import count_text
from turnstream_tools.benchmarks.stand_in_model import extraction_reply, summary_reply

DROPPED = [
    {"role": "user", "content": "Book flight CA929 for two. We fly on May 3."},
    {"role": "assistant", "content": "Searching now."},
    {
        "role": "tool",
        "tool_call_id": "c1",
        "content": orjson.dumps({"flights": [{"no": "CA929", "fare": 3100}]}).decode(),
    },
]


def test_an_extraction_copies_the_turns_and_invents_one_reference_first() -> None:
    prompt = extraction_prompt([], DROPPED, 10)[-1]["content"]
    facts = parse_facts(extraction_reply(prompt, "QZ000001"), 0, 10)
    assert [fact.text for fact in facts] == [
        "The booking reference is QZ000001.",
        "Book flight CA929 for two.",
        DROPPED[2]["content"],
    ]
    # the grounding check keeps the copies and discards the invention
    kept, discarded = split_grounded(facts, DROPPED)
    assert [fact.text for fact in discarded] == ["The booking reference is QZ000001."] and len(kept) == 2


def test_a_summary_keeps_the_previous_one_and_gives_up_its_oldest_lines_past_the_budget() -> None:
    previous = "\n".join(f"user: old line {n} about the trip" for n in range(40))
    messages = summary_prompt(previous, DROPPED, 60)
    summary = summary_reply(messages[-1]["content"], 60)
    assert count_text(summary) <= 60
    assert summary.endswith(
        "user: Book flight CA929 for two.\nassistant: Searching now.\ntool: " + DROPPED[2]["content"]
    )
    assert "old line 39" in summary and "old line 0 " not in summary
