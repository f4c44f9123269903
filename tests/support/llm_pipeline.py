"""The LLM summary path in pipeline tests: settings for the local LLM server, numbered replies, bursts of turns."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from tests.support.llm_server import LLMServer
from tests.support.pipeline import produce, wait_for_versions
from turnstream.client import ContextClient
from turnstream.settings import Settings


def llm_settings(settings: Settings, server: LLMServer) -> Settings:
    return settings.model_copy(
        update={
            "budget_tokens": 1200,
            "turn_partitions": 2,
            "openai_base_url": server.base_url,
            "llm_model": "local-test",
            "llm_timeout_seconds": 1.0,
            "llm_max_retries": 1,
        }
    )


def is_summary(body: dict[str, Any]) -> bool:
    """A summary merge's prompt, not the key-info extraction sent beside it."""
    return str(body["messages"][0]["content"]).startswith("You maintain the rolling summary")


class NumberedSummaries:
    """Replies `LLM-SUMMARY-<n>` and remembers which earlier reply each prompt carried; extractions find nothing."""

    def __init__(self) -> None:
        self.replies = 0
        self.carried: list[int | None] = []

    def __call__(self, body: dict[str, Any]) -> str:
        if not is_summary(body):
            return '{"facts": []}'
        prompt = " ".join(str(m.get("content")) for m in body["messages"])
        found = re.findall(r"LLM-SUMMARY-(\d+)", prompt)
        self.carried.append(int(found[-1]) if found else None)
        self.replies += 1
        return f"LLM-SUMMARY-{self.replies}: the traveller compared options."


async def produce_in_bursts(
    settings: Settings, client: ContextClient, worker: Any, turns: list[Any], session: str = "llm"
) -> None:
    """`turns` produced 30 at a time, each burst applied before the next, so the LLM's answers come back between
    them (a summary request is sent as a span folds, not all at the end)."""
    for start in range(0, len(turns), 30):
        await produce(settings, turns[start : start + 30])
        await wait_for_versions(client, {session: start + 1}, worker)
        await asyncio.sleep(1.5)
