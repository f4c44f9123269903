"""The asynchronous LLM summary path, against a real local server speaking the chat completions API."""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.support.conversations import turns_for
from tests.support.llm_pipeline import NumberedSummaries, is_summary, llm_settings, produce_in_bursts
from tests.support.llm_server import LLMServer
from tests.support.pipeline import assert_context_matches_batch, produce, wait_for_versions
from tests.support.worker import running_worker
from turnstream.client import ContextClient
from turnstream.kafka.admin import ensure_topics
from turnstream.kafka.intake import STALL_SECONDS
from turnstream.settings import Settings


async def test_llm_summaries_are_merged_in_order_and_stay_within_budget(settings: Settings, llm_server) -> None:
    replies = NumberedSummaries()
    server = llm_server(reply=replies)
    settings = llm_settings(settings, server)
    turns = turns_for("llm", seed=3, count=150)
    await ensure_topics(settings)
    with running_worker(settings) as worker:
        async with ContextClient.from_settings(settings) as client:
            await produce_in_bursts(settings, client, worker, turns)
            doc = (await wait_for_versions(client, {"llm": len(turns)}, worker))["llm"]
            deadline = time.monotonic() + 30
            # quiet: the newest answer is in the context and no request is in flight (answered = asked)
            while time.monotonic() < deadline and not (
                f"LLM-SUMMARY-{replies.replies}" in doc.summary and summary_asks(server) == replies.replies
            ):
                await asyncio.sleep(0.5)
                doc = await client.get("llm")
            asked = server.count
            # idle past the intake's stall check: the summary requests' partitions are not fetched again
            await asyncio.sleep(STALL_SECONDS + 3)
            assert server.count == asked, f"{server.count - asked} requests were sent to the LLM again"
    assert replies.replies >= 2, "the session dropped spans, so the summarizer must have been asked"
    assert f"LLM-SUMMARY-{replies.replies}" in doc.summary  # the newest answer is the one in the context
    # every prompt after the first carries the summary the previous answer produced: merged in order
    assert replies.carried[1:] == list(range(1, replies.replies)), replies.carried
    # the dropped turns are in every prompt (which turns a span holds depends on when answers come back)
    summaries = [body for body in server.requests if is_summary(body)]
    assert all("Removed turns:\n[0] " in body["messages"][-1]["content"] for body in summaries)
    assert any("Thought" in body["messages"][-1]["content"] for body in summaries)
    # each summary merge had its key-info extraction beside it, over the same turns
    assert len(server.requests) == 2 * len(summaries)
    assert doc.tokens.after <= settings.budget_tokens
    assert doc.last_turn_id == turns[-1]["turn_id"]


def summary_asks(server: LLMServer) -> int:
    return sum(1 for body in server.requests if is_summary(body))


@pytest.mark.parametrize("mode", ["fail", "garbage", "slow"])
async def test_a_broken_llm_never_blocks_or_loses_turns(settings: Settings, llm_server, mode: str) -> None:
    server = llm_server(mode=mode, delay=3.0)
    settings = llm_settings(settings, server)
    sessions = {f"b{i}": turns_for(f"b{i}", seed=40 + i, count=80) for i in range(4)}
    await ensure_topics(settings)
    with running_worker(settings) as worker:
        for turns in sessions.values():
            await produce(settings, turns)
        async with ContextClient.from_settings(settings) as client:
            docs = await wait_for_versions(client, {sid: len(t) for sid, t in sessions.items()}, worker, timeout=120)
            deadline = time.monotonic() + 30
            while server.count < 2 and time.monotonic() < deadline:
                await asyncio.sleep(0.2)
            docs_after_asking = {sid: await client.get(sid) for sid in sessions}
    assert server.count >= 2, "spans were dropped, so the LLM was asked (and asked again)"
    assert docs_after_asking == docs, "a broken LLM's answer must never reach a context"
    for sid, turns in sessions.items():
        # no LLM answer ever applied: the context is exactly the offline compaction of the turns
        assert_context_matches_batch(docs[sid], turns, settings)
