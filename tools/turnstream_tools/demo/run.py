"""The demo's live part: produce the planned turns, watch them become contexts, then measure and read."""

from __future__ import annotations

import asyncio
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from turnstream.client import ContextClient, TurnProducer
from turnstream.errors import TurnstreamError
from turnstream.kafka.admin import ensure_topics
from turnstream.redis.connect import ping, redis_client
from turnstream.schemas.context import ContextDoc
from turnstream.settings import Settings
from turnstream.stats import histogram_quantile, percentile
from turnstream.text.tokens import count_messages
from turnstream_tools.demo.plan import DemoSession
from turnstream_tools.samples.planted import message_lines, retention

CONNECT_TIMEOUT_SECONDS = 15.0
POLL_SECONDS = 0.3
READ_SAMPLES = 200
WARM_UP_SESSION = "demo-warm-up"
PROMPT_QUESTIONS = {
    "zh": "周末和朋友聚餐点菜，帮我避开会过敏的和不喜欢吃的东西。",
    "en": "Before you book anything, remind me of my budget and what I asked for.",
}

Progress = Callable[[int, int, int], None]
"""(turns produced, turns applied, turns planned) -> None."""


class DemoError(TurnstreamError, RuntimeError):
    """Something the person running the demo must fix; one line."""


@dataclass(frozen=True)
class LiveResult:
    docs: dict[str, ContextDoc]
    elapsed_seconds: float
    turns: int


async def check_services(settings: Settings) -> None:
    """Fail fast, in one line, when the broker or Redis cannot be reached."""
    try:
        await asyncio.wait_for(ensure_topics(settings), CONNECT_TIMEOUT_SECONDS)
    except Exception as error:  # noqa: BLE001 - any failure here means "not reachable"
        raise DemoError(settings.redact(f"cannot reach the broker at {settings.kafka_url}: {error!r}")) from None
    client = redis_client(settings, socket_connect_timeout=CONNECT_TIMEOUT_SECONDS)
    try:
        await ping(client)
    except Exception as error:  # noqa: BLE001
        raise DemoError(settings.redact(f"cannot reach Redis at {settings.redis_url}: {error!r}")) from None
    finally:
        await client.aclose()


def interleaved_turns(plan: list[DemoSession]) -> list[dict[str, Any]]:
    """Round-robin over sessions, as many gateways would produce them; each session stays in order."""
    per_session = [session.turns for session in plan]
    longest = max(len(turns) for turns in per_session)
    return [turns[i] for i in range(longest) for turns in per_session if i < len(turns)]


async def replay(
    settings: Settings, plan: list[DemoSession], worker_alive: Callable[[], bool], progress: Progress, timeout: float
) -> LiveResult:
    """Produce every turn at full speed and wait until every session's context includes its last turn."""
    turns = interleaved_turns(plan)
    expected = {session.session_id: len(session.sample.messages) for session in plan}
    async with ContextClient.from_settings(settings) as client:
        async with TurnProducer(settings) as producer:
            await warm_up(producer, client, timeout)
            started = time.perf_counter()
            for produced, turn in enumerate(turns, 1):
                await producer.send(turn)
                if produced % 200 == 0:
                    progress(produced, 0, len(turns))
            await producer.flush()
        deadline = time.monotonic() + timeout
        while True:
            docs = {sid: await client.get(sid) for sid in expected}
            applied = sum(min(doc.version, expected[sid]) for sid, doc in docs.items() if doc is not None)
            progress(len(turns), applied, len(turns))
            if applied == len(turns):
                # every session applied its turns: each has a context
                stored = {sid: doc for sid, doc in docs.items() if doc is not None}
                return LiveResult(stored, time.perf_counter() - started, len(turns))
            if not worker_alive():
                raise DemoError(
                    "the worker stopped before every turn was applied (run `turnstream worker --loglevel info` to see why)"
                )
            if time.monotonic() > deadline:
                raise DemoError(f"only {applied} of {len(turns)} turns applied after {timeout:.0f}s")
            await asyncio.sleep(POLL_SECONDS)


async def warm_up(producer: TurnProducer, client: ContextClient, timeout: float) -> None:
    """One turn through the whole path first, so the figures measure the pipeline, not the worker's start."""
    turn = {"turn_id": "warm-up", "session_id": WARM_UP_SESSION, "message": {"role": "user", "content": "ping"}}
    await producer.send(turn)
    await producer.flush()
    if not (await client.wait_for(WARM_UP_SESSION, "warm-up", timeout)).fresh:
        raise DemoError(f"the worker applied no turn within {timeout:.0f}s of starting")


def session_rows(plan: list[DemoSession], docs: dict[str, ContextDoc]) -> list[dict[str, Any]]:
    """Per session: naive history vs compacted context, and which planted facts the context still carries."""
    rows = []
    for session in plan:
        doc = docs[session.session_id]
        naive = count_messages(session.sample.messages)
        facts = session.sample.planted_facts
        rows.append(
            {
                "session_id": session.session_id,
                "title": session.sample.title,
                "language": session.sample.language,
                "turns": len(session.sample.messages),
                "naive_tokens": naive,
                "compacted_tokens": doc.tokens.after,
                "ratio": round(naive / doc.tokens.after, 2),
                "dropped": doc.dropped,
                "version": doc.version,
                "planted_facts": len(facts),
                "planted_kept": round(retention(facts, message_lines(doc.messages)) * len(facts)) if facts else 0,
                "facts": [{"type": f.type, "text": f.text} for f in doc.facts],
            }
        )
    return rows


async def read_latencies(settings: Settings, session: DemoSession) -> dict[str, list[float]]:
    """Milliseconds of the gateway's two reads, each taken READ_SAMPLES times, interleaved."""
    samples: dict[str, list[float]] = {"read_get": [], "read_build_prompt": []}
    question = PROMPT_QUESTIONS.get(session.sample.language, PROMPT_QUESTIONS["en"])
    async with ContextClient.from_settings(settings) as client:
        for _ in range(READ_SAMPLES):
            started = time.perf_counter()
            await client.get(session.session_id)
            samples["read_get"].append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            await client.build_prompt(session.session_id, question, user_id=session.sample.user_id)
            samples["read_build_prompt"].append((time.perf_counter() - started) * 1000)
    return samples


async def final_prompt(settings: Settings, session: DemoSession) -> dict[str, Any]:
    """The prompt a gateway would send next for `session`, as the model would receive it."""
    question = PROMPT_QUESTIONS.get(session.sample.language, PROMPT_QUESTIONS["en"])
    async with ContextClient.from_settings(settings) as client:
        prompt = await client.build_prompt(session.session_id, question, user_id=session.sample.user_id)
    return {"session_id": session.session_id, "user_text": question, **prompt.to_dict()}


def stage_latencies(metrics_url: str) -> dict[str, dict[str, float]]:
    """p50/p99 per pipeline stage from the worker's Prometheus histograms, in milliseconds."""
    with urllib.request.urlopen(metrics_url, timeout=5) as response:
        text = response.read().decode()
    buckets: dict[str, list[tuple[float, float]]] = {}
    for family in text_string_to_metric_families(text):
        if family.name != "turnstream_stage_seconds":
            continue
        for sample in family.samples:
            if sample.name.endswith("_bucket"):
                buckets.setdefault(sample.labels["stage"], []).append((float(sample.labels["le"]), sample.value))
    return {
        stage: {"p50": histogram_quantile(sorted(b), 0.5) * 1000, "p99": histogram_quantile(sorted(b), 0.99) * 1000}
        for stage, b in buckets.items()
    }


def summarize(samples: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    return {name: {"p50": percentile(values, 50), "p99": percentile(values, 99)} for name, values in samples.items()}
