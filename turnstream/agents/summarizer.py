"""The summarizer agent: merges dropped spans into a session's summary, and extracts their key facts, with an
LLM, off the hot path."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import astuple
from typing import Any, TypeVar, cast

import faust
import openai
from tenacity import AsyncRetrying, stop_after_attempt, wait_exponential

from turnstream.agents.fields import record_fields
from turnstream.agents.throttle import CallCap
from turnstream.compaction.strategies import Fact
from turnstream.kafka.topics import Topics
from turnstream.llm.calls import client_options, extract_facts, merge_profile, merge_summary
from turnstream.memory.profile import needs_condensing
from turnstream.metrics import llm_facts_discarded_total, llm_requests_total, observe_ms
from turnstream.redis.memory_store import MemoryStore
from turnstream.schemas.headers import carried
from turnstream.schemas.summaries import FactRow, SummaryRequest, SummaryResult
from turnstream.settings import Settings

log = logging.getLogger(__name__)

T = TypeVar("T")


class Summarizer:
    """Turns a SummaryRequest into a SummaryResult: bounded retries, a timeout, never an exception."""

    def __init__(
        self, settings: Settings, client: openai.AsyncOpenAI, memory: MemoryStore, cap: CallCap | None = None
    ) -> None:
        """`cap` is shared by the agent's concurrent instances (TURNSTREAM_LLM_MAX_CALLS counts for the worker)."""
        self.settings = settings
        self.client = client
        self.memory = memory
        self.cap = cap or CallCap(settings.llm_max_calls)

    async def answer(self, request: SummaryRequest, fields: dict[str, Any] | None = None) -> SummaryResult:
        """`fields` tie its log lines to the request's record (see record_fields).

        The summary merge and the key-info extraction go out together, so an answer takes no longer than one
        call with its retries (what the session core waits before it takes a request as lost). Past
        TURNSTREAM_LLM_MAX_CALLS none goes out: the offline summary and facts stand, as when the model fails."""
        if not self.cap.take():
            llm_requests_total.labels("capped").inc()
            return SummaryResult(request.session_key, request.request_id, None, "TURNSTREAM_LLM_MAX_CALLS reached")
        started = asyncio.get_running_loop().time()
        extraction = asyncio.ensure_future(self._facts(request, fields)) if self.settings.llm_key_info else None
        try:
            summary = await self._retried(lambda: self._merge(request))
        except BaseException as error:
            if extraction is not None:  # an answer without its summary does not apply: its facts are not waited for
                extraction.cancel()
            if not isinstance(error, Exception):
                raise
            # any failure leaves the offline summary (and facts) standing
            llm_requests_total.labels("failed").inc()
            log.warning("LLM summary for %s failed: %r", request.session_key, error, extra=fields)
            return SummaryResult(request.session_key, request.request_id, None, repr(error)[:500])
        facts = await extraction if extraction is not None else None
        llm_requests_total.labels("ok").inc()
        observe_ms("llm_summary", (asyncio.get_running_loop().time() - started) * 1000)
        try:
            await self.condense_profile(request.owner)
        except Exception as error:  # noqa: BLE001 - a profile is a nicety; the summary must still go back
            log.warning("profile merge for %s failed: %r", request.owner, error, extra=fields)
        return SummaryResult(request.session_key, request.request_id, summary, facts=facts)

    async def _facts(self, request: SummaryRequest, fields: dict[str, Any] | None) -> tuple[FactRow, ...] | None:
        """The key facts the LLM finds in the request's span, less those naming what the span does not hold;
        None when the extraction fails after its retries (the offline facts stand), counted and logged once."""
        settings = self.settings
        known = [Fact(*row) for row in cast(list[tuple[Any, str, str, int]], request.facts)]
        try:
            found = await self._retried(
                lambda: extract_facts(
                    self.client,
                    settings.llm_model,
                    known,
                    request.dropped,
                    request.first_seq,
                    settings.max_facts,
                    settings.llm_timeout_seconds,
                )
            )
        except Exception as error:  # noqa: BLE001 - malformed JSON, timeout, HTTP error: the offline facts stand
            llm_requests_total.labels("facts_failed").inc()
            log.warning("LLM key info for %s failed: %r", request.session_key, error, extra=fields)
            return None
        llm_requests_total.labels("facts_ok").inc()
        if found.discarded:
            llm_facts_discarded_total.inc(len(found.discarded))
            log.info(
                "LLM key info for %s: %d facts discarded, naming what their turns do not hold: %s",
                request.session_key,
                len(found.discarded),
                "; ".join(fact.text for fact in found.discarded)[:500],
                extra=fields,
            )
        return tuple(cast(FactRow, astuple(fact)) for fact in found.kept)

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

    def _merge(self, request: SummaryRequest) -> Awaitable[str]:
        settings = self.settings
        return merge_summary(
            self.client,
            settings.llm_model,
            request.summary,
            request.dropped,
            settings.summary_max_tokens,
            settings.llm_timeout_seconds,
        )

    async def _retried(self, call: Callable[[], Awaitable[T]]) -> T:
        """`call` awaited with the LLM's retries and backoff; the last failure is raised. Malformed output is
        retried too: a second sample is often well-formed."""
        async for attempt in AsyncRetrying(
            stop=stop_after_attempt(self.settings.llm_max_retries + 1),
            wait=wait_exponential(multiplier=0.2, max=5),
            reraise=True,
        ):
            with attempt:
                return await call()
        raise AssertionError("unreachable: tenacity reraises the last failure")


def register_summarizer_agent(app: faust.App, settings: Settings, topics: Topics) -> None:
    """Attach the summarizer: `llm_concurrency` requests at once, each answered on the summaries topic."""
    base_url = settings.openai_base_url
    if not base_url:
        raise ValueError("the summarizer needs an OpenAI-compatible endpoint: set OPENAI_BASE_URL")
    cap = CallCap(settings.llm_max_calls)  # one for the llm_concurrency instances below

    @app.agent(topics.compaction, name=f"{settings.topic_prefix}.summarizer", concurrency=settings.llm_concurrency)
    async def summarizer_agent(stream: faust.StreamT[bytes]) -> None:
        options = client_options(base_url, settings.openai_api_key.get_secret_value(), settings.llm_timeout_seconds)
        memory = MemoryStore.from_settings(settings)
        summarizer = Summarizer(settings, openai.AsyncOpenAI(**options), memory, cap)
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
