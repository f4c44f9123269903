"""Facts planted early in long conversations survive compaction to a small budget."""

import pytest

from turnstream.compaction.compactor import compact
from turnstream.compaction.strategies.offline import build_strategy
from turnstream.settings import Settings
from turnstream_tools.samples import generate, message_lines, retention
from turnstream_tools.samples.planted import digest_text, naive_tail, stream_compaction

BUDGET = 1500
SETTINGS = Settings(summary_max_tokens=300, max_facts=20)
"""Sized for a 1,500-token context: the digest block must leave room for the recent tail."""
CONVERSATIONS = [
    generate(seed, turns=300, lang=lang) for seed, lang in [(11, "en"), (12, "zh"), (13, "en"), (14, "zh")]
]


@pytest.mark.parametrize("conversation", CONVERSATIONS, ids=lambda c: f"{c.lang}-{len(c.messages)}")
def test_successive_dropped_chunks_keep_planted_facts(conversation) -> None:
    digest, tail = stream_compaction(conversation.messages, build_strategy(SETTINGS), BUDGET)
    assert len(tail) < len(conversation.messages) // 2  # most of the conversation really was dropped
    assert retention(conversation.facts, digest_text(digest)) >= 0.9
    corrected = [fact for fact in conversation.facts if fact.stale]
    # the correction keeps its own words ("…5250 euros now, not 4700"): an old value is only ever said beside the new
    assert corrected and not any(
        old in kept.text and new not in kept.text
        for fact in corrected
        for old in fact.stale
        for new in fact.probes
        for kept in digest.facts
    )


@pytest.mark.parametrize("conversation", CONVERSATIONS, ids=lambda c: f"{c.lang}-{len(c.messages)}")
def test_compacted_messages_keep_planted_facts_where_the_newest_tail_loses_them(conversation) -> None:
    result = compact(conversation.messages, BUDGET, strategy=build_strategy(SETTINGS))
    assert result.tokens.after <= BUDGET and result.dropped > len(conversation.messages) // 2
    assert retention(conversation.facts, message_lines(result.messages)) >= 0.9
    assert retention(conversation.facts, message_lines(naive_tail(conversation.messages, BUDGET))) < 0.1
