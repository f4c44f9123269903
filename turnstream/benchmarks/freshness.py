"""Figure 2: freshness, produce → the context including that turn is readable, vs an agent that only SETs the turn.

The worker's side is measured as a gateway sees it: each turn sent, then `ContextClient.wait_for` on it,
one waiter per turn. The SET-only agent pipelines SET + PUBLISH, and the bench hears of each write on
that channel. Turns are paced at a fixed rate, so the figures are latencies, not queueing.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from redis.asyncio.client import PubSub

from turnstream.benchmarks.figures import Figure, Row, Target, abba, p50_p99, rounded
from turnstream.benchmarks.live import BenchTimeout, Live, Record, encode, round_turns
from turnstream.benchmarks.passthrough import updates_channel
from turnstream.benchmarks.stages import Scrape, fresh_turn_ms
from turnstream.client import ContextClient
from turnstream.settings import Settings

SETTLE_TIMEOUT_SECONDS = 60.0


@dataclass
class Listener:
    """Every message on the subscribed channels, with the moment it arrived."""

    pubsub: PubSub
    heard: list[tuple[float, bytes, bytes]] = field(default_factory=list)

    async def run(self) -> None:
        while True:
            message = await self.pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
            if message is not None:
                self.heard.append((time.perf_counter(), message["channel"], message["data"]))


async def _paced(live: Live, settings: Settings, records: list[Record], rate: float) -> tuple[list[float], list[Any]]:
    """Send one record every 1/rate seconds; (send times, delivery futures)."""
    sent_at: list[float] = []
    futures = []
    start = time.perf_counter()
    for index, record in enumerate(records):
        delay = start + index / rate - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        sent_at.append(time.perf_counter())
        futures += await live.send(settings, [record])
    return sent_at, futures


async def _listening(live: Live, channels: list[str], measure: Callable[[Listener], Any]) -> Any:
    pubsub = live.redis.pubsub()
    await pubsub.subscribe(*channels)
    listener = Listener(pubsub)
    task = asyncio.create_task(listener.run())
    try:
        return await measure(listener)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await pubsub.aclose()


async def pipeline_latencies(live: Live, turns: list[dict[str, Any]], rate: float) -> list[float]:
    """Milliseconds from each turn's send until `ContextClient.wait_for` returned a context including it:
    one waiter per turn, started right after the send, as a gateway that reads its own writes waits."""
    client = ContextClient(live.store)
    latencies: list[float] = []

    async def wait(turn: dict[str, Any], sent: float) -> None:
        result = await client.wait_for(turn["session_id"], turn["turn_id"], SETTLE_TIMEOUT_SECONDS,
                                       tenant=turn.get("tenant"), user_id=turn.get("user_id"))
        if not result.fresh:
            raise BenchTimeout(f"freshness (pipeline): turn {turn['turn_id']} not readable after {SETTLE_TIMEOUT_SECONDS:.0f}s")
        latencies.append((time.perf_counter() - sent) * 1000)

    waits = []
    start = time.perf_counter()
    for index, (turn, record) in enumerate(zip(turns, encode(turns))):
        delay = start + index / rate - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        sent = time.perf_counter()
        await live.send(live.pipeline, [record])
        waits.append(asyncio.create_task(wait(turn, sent)))
    await asyncio.gather(*waits)
    return latencies


async def passthrough_latencies(live: Live, turns: list[dict[str, Any]], rate: float) -> list[float]:
    """Milliseconds from each turn's send until the SET agent announced that turn's record."""

    async def measure(listener: Listener) -> list[float]:
        sent_at, futures = await _paced(live, live.set, encode(turns), rate)

        async def done() -> bool:  # distinct records: a redelivered one is announced again
            return len({data for _, _, data in listener.heard}) >= len(turns)

        await live.until(done, "freshness (pass-through)", SETTLE_TIMEOUT_SECONDS)
        heard_at: dict[bytes, float] = {}
        for at, _, data in listener.heard:
            heard_at.setdefault(data, at)  # its first announcement
        metadata = [await future for future in futures]
        return [(heard_at[f"{m.partition}:{m.offset}".encode()] - sent) * 1000 for m, sent in zip(metadata, sent_at)]

    return await _listening(live, [updates_channel(live.set)], measure)


P50_TARGET_MS, P99_TARGET_MS, RATIO_TARGET = 25.0, 100.0, 1.2


def freshness_met(p50: Row, p99: Row) -> bool:
    """p50 and p99 within their bounds, and each within RATIO_TARGET of the SET-only agent's."""
    within = all(row.b > 0 and row.a / row.b <= RATIO_TARGET for row in (p50, p99))
    return p50.a <= P50_TARGET_MS and p99.a <= P99_TARGET_MS and within


async def freshness(live: Live, rounds: int, sessions: int, turns: int, rate: float, progress: Callable[[str], None]) -> Figure:
    """p50 and p99 over every turn of every round, ABBA-interleaved rounds of fresh conversations."""
    samples: dict[str, list[float]] = {"pipeline": [], "set": []}
    stages = Scrape()
    for index, pipeline_first in abba(rounds):
        batch = round_turns(f"fresh{index}", sessions, turns, seed=100 + index)
        for side in ("pipeline", "set") if pipeline_first else ("set", "pipeline"):
            if side == "pipeline":
                before = await live.stages(live.pipeline)
                latencies = await pipeline_latencies(live, batch, rate)
                stages = stages + (await live.stages(live.pipeline) - before)
            else:
                latencies = await passthrough_latencies(live, batch, rate)
            samples[side] += latencies
            progress(f"freshness round {index + 1}/{rounds}: {side} p50 {p50_p99(latencies)[0]:.1f} ms")
    ours, theirs = p50_p99(samples["pipeline"]), p50_p99(samples["set"])
    rows = [Row.of("freshness p50", "ms", ours[0], theirs[0]), Row.of("freshness p99", "ms", ours[1], theirs[1])]
    target = Target(f"p50 ≤ {P50_TARGET_MS:.0f} ms, p99 ≤ {P99_TARGET_MS:.0f} ms, each ≤ {RATIO_TARGET}× SET-only",
                    freshness_met(*rows))
    return Figure("freshness", "2 Freshness: produce → readable", "pipeline", "SET-only agent", rows, target,
                  {"samples_ms": samples, "rate_turns_per_s": rate,
                   "worker_ms": {name: rounded(value) for name, value in fresh_turn_ms(stages).items()}})
