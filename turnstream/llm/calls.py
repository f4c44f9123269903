"""The LLM calls the stream summarizer makes (asyncio), and the openai client's options.

Each call builds its prompt and parses its reply with compaction/strategies/prompts.py; it raises on any
failure, and the caller decides how to fall back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import openai

from turnstream.compaction.strategies.base import Fact
from turnstream.compaction.strategies.grounding import Grounded
from turnstream.compaction.strategies.prompts import (
    completion_request,
    extraction_prompt,
    parse_grounded_facts,
    parse_summary,
    profile_prompt,
    reply_text,
    summary_prompt,
)
from turnstream.text.chat import Message


def client_options(base_url: str, api_key: str, timeout: float) -> dict[str, Any]:
    """Constructor arguments shared by `openai.OpenAI` and `openai.AsyncOpenAI`; retries are ours (tenacity)."""
    return {"base_url": base_url, "api_key": api_key, "timeout": timeout, "max_retries": 0}


async def merge_summary(
    client: openai.AsyncOpenAI,
    model: str,
    old_summary: str,
    dropped: Sequence[Message],
    max_tokens: int,
    timeout: float,
) -> str:
    """One LLM summary merge; raises on any failure so the caller decides how to fall back."""
    response = await client.chat.completions.create(
        **completion_request(model, summary_prompt(old_summary, dropped, max_tokens), max_tokens, timeout)
    )
    return parse_summary(reply_text(response), max_tokens)


async def merge_profile(client: openai.AsyncOpenAI, model: str, profile: str, max_chars: int, timeout: float) -> str:
    """One LLM profile merge, cut to `max_chars`; raises on any failure (the appended profile then stands)."""
    # about two characters a token is safe for English and Chinese alike
    response = await client.chat.completions.create(
        **completion_request(model, profile_prompt(profile, max_chars), max_chars // 2, timeout)
    )
    merged = reply_text(response)[:max_chars].strip()
    if not merged:
        raise ValueError("LLM profile is empty")
    return merged


async def extract_facts(
    client: openai.AsyncOpenAI,
    model: str,
    facts: Sequence[Fact],
    dropped: Sequence[Message],
    first_seq: int,
    max_facts: int,
    timeout: float,
) -> Grounded:
    """One LLM extraction over `dropped`, knowing `facts`: the new or changed facts, split by whether their
    identifiers occur in `dropped` (the caller merges the kept ones); raises on any failure."""
    messages = extraction_prompt(facts, dropped, max_facts, first_seq)
    response = await client.chat.completions.create(**completion_request(model, messages, 1024, timeout))
    return parse_grounded_facts(reply_text(response), dropped, first_seq, max_facts)
