"""LLM strategies over any OpenAI-compatible endpoint (sync, the `compact --llm` CLI): timeout, bounded
retries and the offline strategy as fallback."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TypeVar

import openai
from tenacity import Retrying, stop_after_attempt, wait_exponential

from turnstream.compaction.compactor import KEEP_DIGEST
from turnstream.compaction.strategies.archive import Archiver
from turnstream.compaction.strategies.base import Digest, Strategy
from turnstream.compaction.strategies.composite import CompositeStrategy
from turnstream.compaction.strategies.keyinfo import KeyInfoExtractor, merge_model_facts
from turnstream.compaction.strategies.prompts import (
    completion_request,
    extraction_prompt,
    parse_grounded_facts,
    parse_summary,
    reply_text,
    summary_prompt,
)
from turnstream.compaction.strategies.summary import RollingSummarizer
from turnstream.llm.calls import client_options
from turnstream.settings import Settings
from turnstream.text.chat import Message

log = logging.getLogger(__name__)

T = TypeVar("T")


class _LLMStrategy:
    """A sync LLM call with timeout and bounded retries; any failure falls back to the offline strategy."""

    name = "llm"

    def __init__(self, client: openai.OpenAI, model: str, timeout: float, max_retries: int, fallback: Strategy) -> None:
        self.client = client
        self.model = model
        self.timeout = timeout
        self.max_retries = max_retries
        self.fallback = fallback

    def _complete(self, messages: list[dict[str, str]], max_tokens: int, parse: Callable[[str], T]) -> T:
        # Malformed output is retried too: a second sample is often well-formed.
        retrying = Retrying(
            stop=stop_after_attempt(self.max_retries + 1), wait=wait_exponential(multiplier=0.05, max=1), reraise=True
        )
        for attempt in retrying:
            with attempt:
                response = self.client.chat.completions.create(
                    **completion_request(self.model, messages, max_tokens, self.timeout)
                )
                return parse(reply_text(response))
        raise AssertionError("unreachable: tenacity reraises the last error")

    def apply(self, digest: Digest, dropped: Sequence[Message], first_seq: int) -> Digest:
        try:
            return self._apply(digest, dropped, first_seq)
        except Exception as error:  # timeout, HTTP error, bad output: the offline result is always available
            log.warning("%s failed (%s: %s); using the offline strategy", self.name, type(error).__name__, error)
            return self.fallback.apply(digest, dropped, first_seq)

    def _apply(self, digest: Digest, dropped: Sequence[Message], first_seq: int) -> Digest:
        raise NotImplementedError


class LLMSummarizer(_LLMStrategy):
    """Rolling summary merged by an LLM; falls back to `RollingSummarizer`."""

    name = "llm-summary"

    def __init__(
        self, client: openai.OpenAI, model: str, max_tokens: int = 400, timeout: float = 20.0, max_retries: int = 2
    ) -> None:
        super().__init__(client, model, timeout, max_retries, RollingSummarizer(max_tokens))
        self.max_tokens = max_tokens

    def _apply(self, digest: Digest, dropped: Sequence[Message], first_seq: int) -> Digest:
        messages = summary_prompt(digest.summary, dropped, self.max_tokens, first_seq)
        summary = self._complete(messages, self.max_tokens, lambda text: parse_summary(text, self.max_tokens))
        return replace(digest, summary=summary)


class LLMKeyInfoExtractor(_LLMStrategy):
    """Facts extracted by an LLM over the offline ones, as the stream's summarizer extracts them: the offline
    facts first, then the model's merged over them by key (`merge_model_facts`), less those naming an identifier
    or number the dropped turns do not hold (strategies/grounding.py); when the model fails, the offline facts
    stand."""

    name = "llm-keyinfo"

    def __init__(
        self, client: openai.OpenAI, model: str, max_facts: int = 40, timeout: float = 20.0, max_retries: int = 2
    ) -> None:
        super().__init__(client, model, timeout, max_retries, KEEP_DIGEST)
        self.offline = KeyInfoExtractor(max_facts)
        self.max_facts = max_facts

    def apply(self, digest: Digest, dropped: Sequence[Message], first_seq: int) -> Digest:
        return super().apply(self.offline.apply(digest, dropped, first_seq), dropped, first_seq)

    def _apply(self, digest: Digest, dropped: Sequence[Message], first_seq: int) -> Digest:
        messages = extraction_prompt(digest.facts, dropped, self.max_facts, first_seq)
        found = self._complete(
            messages, 1024, lambda text: parse_grounded_facts(text, dropped, first_seq, self.max_facts)
        )
        if found.discarded:
            log.warning("%s discarded %d facts naming what the turns do not hold", self.name, len(found.discarded))
        return replace(digest, facts=merge_model_facts(digest.facts, found.kept, self.max_facts))


def build_llm_strategy(settings: Settings) -> CompositeStrategy:
    """Archive, then LLM key-info extraction, then LLM rolling summary: compaction's build_strategy with an LLM."""
    if not settings.openai_base_url:
        raise ValueError(
            "LLM strategies need an OpenAI-compatible endpoint: set OPENAI_BASE_URL (or TURNSTREAM_OPENAI_BASE_URL)"
        )
    client = openai.OpenAI(
        **client_options(
            settings.openai_base_url, settings.openai_api_key.get_secret_value(), settings.llm_timeout_seconds
        )
    )
    timeout, max_retries = settings.llm_timeout_seconds, settings.llm_max_retries
    return CompositeStrategy(
        Archiver(),
        LLMKeyInfoExtractor(
            client, settings.llm_model, max_facts=settings.max_facts, timeout=timeout, max_retries=max_retries
        ),
        LLMSummarizer(
            client, settings.llm_model, max_tokens=settings.summary_max_tokens, timeout=timeout, max_retries=max_retries
        ),
    )
