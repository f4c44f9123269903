"""Figure 2: freshness, produce → the context including that turn is readable, vs an agent that only SETs the turn.

Both sides announce each write on a Redis channel in the write's own round trip (the worker's Lua script
publishes the new version; the pass-through agent pipelines SET + PUBLISH), so the bench hears of a write
the moment it is readable, without polling. Turns are paced well below either side's drain rate, so the
figures are latencies, not queueing.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from redis.asyncio.client import PubSub

from turnstream.benchmarks.figures import Figure, Row, abba, p50_p99
from turnstream.benchmarks.live import Live, Record, encode, round_turns
from turnstream.benchmarks.passthrough import updates_channel
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
    """Milliseconds from each turn's send until a context version that includes it was published."""
    keys = [key for key, _ in encode(turns)]
    channel_of = {key: live.store.layout.updates_channel(key.decode()).encode() for key in set(keys)}
    # fresh sessions, one version per turn: the n-th turn of a session is in versions >= n
    position: list[int] = []
    seen: dict[bytes, int] = {}
    for key in keys:
        seen[key] = seen.get(key, 0) + 1
        position.append(seen[key])

    async def measure(listener: Listener) -> list[float]:
        sent_at, _ = await _paced(live, live.pipeline, encode(turns), rate)
        await live.until(_heard_versions(listener, {channel_of[k]: n for k, n in seen.items()}), "freshness (pipeline)", SETTLE_TIMEOUT_SECONDS)
        first_at: dict[tuple[bytes, int], float] = {}
        for heard_at, channel, version in listener.heard:
            for n in range(1, int(version) + 1):
                first_at.setdefault((channel, n), heard_at)
        return [(first_at[(channel_of[key], n)] - sent) * 1000 for key, n, sent in zip(keys, position, sent_at)]

    return await _listening(live, sorted(c.decode() for c in channel_of.values()), measure)


def _heard_versions(listener: Listener, expected: dict[bytes, int]) -> Callable[[], Awaitable[bool]]:
    """A check: has every channel announced its expected version?"""

    async def done() -> bool:
        latest: dict[bytes, int] = {}
        for _, channel, version in listener.heard:
            latest[channel] = max(latest.get(channel, 0), int(version))
        return all(latest.get(channel, 0) >= n for channel, n in expected.items())

    return done


async def passthrough_latencies(live: Live, turns: list[dict[str, Any]], rate: float) -> list[float]:
    """Milliseconds from each turn's send until the SET agent announced that turn's record."""

    async def measure(listener: Listener) -> list[float]:
        sent_at, futures = await _paced(live, live.set, encode(turns), rate)

        async def done() -> bool:
            return len(listener.heard) >= len(turns)

        await live.until(done, "freshness (pass-through)", SETTLE_TIMEOUT_SECONDS)
        heard_at = {data: at for at, _, data in listener.heard}
        metadata = [await future for future in futures]
        return [(heard_at[f"{m.partition}:{m.offset}".encode()] - sent) * 1000 for m, sent in zip(metadata, sent_at)]

    return await _listening(live, [updates_channel(live.set)], measure)


async def freshness(live: Live, rounds: int, sessions: int, turns: int, rate: float, progress: Callable[[str], None]) -> Figure:
    """p50 and p99 over every turn of every round, ABBA-interleaved rounds of fresh conversations."""
    samples: dict[str, list[float]] = {"pipeline": [], "set": []}
    for index, pipeline_first in abba(rounds):
        batch = round_turns(f"fresh{index}", sessions, turns, seed=100 + index)
        for side in ("pipeline", "set") if pipeline_first else ("set", "pipeline"):
            measure = pipeline_latencies if side == "pipeline" else passthrough_latencies
            latencies = await measure(live, batch, rate)
            samples[side] += latencies
            progress(f"freshness round {index + 1}/{rounds}: {side} p50 {p50_p99(latencies)[0]:.1f} ms")
    ours, theirs = p50_p99(samples["pipeline"]), p50_p99(samples["set"])
    rows = [Row.of("freshness p50", "ms", ours[0], theirs[0]), Row.of("freshness p99", "ms", ours[1], theirs[1])]
    return Figure("freshness", "2 Freshness: produce → readable", "pipeline", "SET-only agent", rows, None,
                  {"samples_ms": samples, "rate_turns_per_s": rate})
