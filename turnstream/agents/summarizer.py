"""The summarizer agent: merges dropped spans into a session's summary with an LLM, off the hot path."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import faust
import openai
from tenacity import AsyncRetrying, stop_after_attempt, wait_exponential

from turnstream.agents.fields import record_fields
from turnstream.llm.calls import client_options, merge_profile, merge_summary
from turnstream.memory.profile import needs_condensing
from turnstream.redis.memories import MemoryStore
from turnstream.schemas.headers import carried
from turnstream.schemas.summaries import SummaryRequest, SummaryResult
from turnstream.settings import Settings
from turnstream.streams.metrics import llm_requests_total, observe_ms
from turnstream.streams.topics import Topics

log = logging.getLogger(__name__)


class Summarizer:
    """Turns a SummaryRequest into a SummaryResult: bounded retries, a timeout, never an exception."""

    def __init__(self, settings: Settings, client: openai.AsyncOpenAI, memory: MemoryStore) -> None:
        self.settings = settings
        self.client = client
        self.memory = memory

    async def answer(self, request: SummaryRequest, fields: dict[str, Any] | None = None) -> SummaryResult:
        """`fields` tie its log lines to the request's record (see record_fields)."""
        started = asyncio.get_running_loop().time()
        try:
            summary = await self._merge(request)
        except Exception as error:  # noqa: BLE001 - any failure leaves the offline summary standing
            llm_requests_total.labels("failed").inc()
            log.warning("LLM summary for %s failed: %r", request.session_key, error, extra=fields)
            return SummaryResult(request.session_key, request.request_id, None, repr(error)[:500])
        llm_requests_total.labels("ok").inc()
        observe_ms("llm_summary", (asyncio.get_running_loop().time() - started) * 1000)
        try:
            await self.condense_profile(request.owner)
        except Exception as error:  # noqa: BLE001 - a profile is a nicety; the summary must still go back
            log.warning("profile merge for %s failed: %r", request.owner, error, extra=fields)
        return SummaryResult(request.session_key, request.request_id, summary)

    async def condense_profile(self, owner: str) -> None:
        """Merge the owner's appended profile notes into a short profile, if they outgrew the read cut.

        The cheap write-path merge only appends; this is its asynchronous counterpart. The profile is
        replaced only if nothing was appended meanwhile (compare-and-set on its version).
        """
        text, version = await self.memory.profile(owner)
        if not needs_condensing(text, self.settings.profile_read_chars):
            return
        try:
            merged = await merge_profile(
                self.client,
                self.settings.llm_model,
                text,
                self.settings.profile_read_chars,
                self.settings.llm_timeout_seconds,
            )
        except Exception:
            llm_requests_total.labels("profile_failed").inc()
            raise  # the appended profile stands
        replaced = await self.memory.replace_profile(owner, merged, version)
        llm_requests_total.labels("profile_ok" if replaced else "profile_superseded").inc()

    async def _merge(self, request: SummaryRequest) -> str:
        settings = self.settings
        async for attempt in AsyncRetrying(
            stop=stop_after_attempt(settings.llm_max_retries + 1),
            wait=wait_exponential(multiplier=0.2, max=5),
            reraise=True,
        ):
            with attempt:
                return await merge_summary(
                    self.client,
                    settings.llm_model,
                    request.summary,
                    request.dropped,
                    settings.summary_max_tokens,
                    settings.llm_timeout_seconds,
                )
        raise AssertionError("unreachable: tenacity reraises the last failure")


def register_summarizer_agent(app: faust.App, settings: Settings, topics: Topics) -> None:
    """Attach the summarizer: `llm_concurrency` requests at once, each answered on the summaries topic."""
    base_url = settings.openai_base_url
    if not base_url:
        raise ValueError("the summarizer needs an OpenAI-compatible endpoint: set OPENAI_BASE_URL")

    @app.agent(topics.compaction, name=f"{settings.topic_prefix}.summarizer", concurrency=settings.llm_concurrency)
    async def summarizer_agent(stream: faust.StreamT[bytes]) -> None:
        options = client_options(base_url, settings.openai_api_key.get_secret_value(), settings.llm_timeout_seconds)
        memory = MemoryStore.from_settings(settings)
        summarizer = Summarizer(settings, openai.AsyncOpenAI(**options), memory)
        try:
            async for event in stream.events():
                try:
                    request = SummaryRequest.from_bytes(event.value)
                except (ValueError, KeyError, TypeError) as error:
                    log.error("unreadable summary request dropped: %r", error, extra=record_fields(event.message))
                    continue
                result = await summarizer.answer(request, record_fields(event.message, request.session_key))
                # the answer goes back under the trace of the turn that asked for it
                await topics.summaries.send(
                    key=request.session_key.encode(), value=result.to_bytes(), headers=carried(event.message.headers)
                )
        finally:
            await memory.aclose()
