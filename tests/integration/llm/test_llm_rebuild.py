"""`context get --at-version` with an LLM making summaries: the summaries topic's answers, merged in by record time."""

from __future__ import annotations

import asyncio

from tests.support.conversations import turns_for
from tests.support.llm_pipeline import NumberedSummaries, llm_settings, produce_in_bursts
from tests.support.pipeline import wait_for_versions
from tests.support.worker import running_worker
from turnstream.client import ContextClient
from turnstream.kafka.admin import ensure_topics
from turnstream.operations.rebuild import rebuild_context, verdict
from turnstream.session.replay import Target
from turnstream.settings import Settings


async def test_a_context_with_llm_summaries_is_rebuilt_equal(settings: Settings, llm_server) -> None:
    replies = NumberedSummaries()
    settings = llm_settings(settings, llm_server(reply=replies))
    turns = turns_for("llm", seed=3, count=90)
    await ensure_topics(settings)
    with running_worker(settings) as worker:
        async with ContextClient.from_settings(settings) as client:
            await produce_in_bursts(settings, client, worker, turns)
            await wait_for_versions(client, {"llm": len(turns)}, worker)
            await asyncio.sleep(3)  # the last answers folded in
            doc = await client.get("llm")
    assert doc is not None and "LLM-SUMMARY" in doc.summary and doc.version > len(turns)  # summaries made versions
    result = await rebuild_context(settings, "llm", None, None, Target(version=doc.version))
    line, code = verdict(result, settings.budget_tokens, settings.turns_topic)
    assert (line, code) == (f"equal to the stored version {doc.version}", 0)
