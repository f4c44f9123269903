"""Figure 2: freshness, produce → the context including that turn is readable, vs an agent that only SETs the turn.

The worker's side is measured as a gateway sees it, through the public SDK: each turn sent with
`TurnProducer.send`, then `ContextClient.wait_for` on it, one waiter per turn. The SET-only agent pipelines
SET + PUBLISH, and the bench hears of each write on that channel. Turns are paced at a fixed rate, so the
figures are latencies, not queueing. Both sides run pinned (the measured agent on a core of its own), then
unpinned; each side's CPU a turn is read from /proc.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from redis.asyncio.client import PubSub

from turnstream.client import ContextClient
from turnstream.settings import Settings
from turnstream_tools.benchmarks.figures import Figure, Row, Target, abba, p50_p99, rounded
from turnstream_tools.benchmarks.live import BenchTimeout, Live, Record, encode, round_turns
from turnstream_tools.benchmarks.passthrough import updates_channel
from turnstream_tools.benchmarks.pinning import CoreSplit, CpuSpent, cpu_ticks, placements
from turnstream_tools.benchmarks.stages import Scrape, fresh_turn_ms

T = TypeVar("T")
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


async def _listening(live: Live, channels: list[str], measure: Callable[[Listener], Awaitable[T]]) -> T:
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
    """Milliseconds from each turn's `TurnProducer.send` until `ContextClient.wait_for` returned a context
    including it: one waiter per turn, started right after the send, as a gateway that reads its own writes
    waits. The producer sends a dict's JSON as given: the same bytes the SET-only agent gets."""
    client = ContextClient(live.store.reader)
    latencies: list[float] = []

    async def wait(turn: dict[str, Any], sent: float) -> None:
        result = await client.wait_for(
            turn["session_id"],
            turn["turn_id"],
            SETTLE_TIMEOUT_SECONDS,
            tenant=turn.get("tenant"),
            user_id=turn.get("user_id"),
        )
        if not result.fresh:
            raise BenchTimeout(
                f"freshness (pipeline): turn {turn['turn_id']} not readable after {SETTLE_TIMEOUT_SECONDS:.0f}s"
            )
        latencies.append((time.perf_counter() - sent) * 1000)

    waits = []
    start = time.perf_counter()
    for index, turn in enumerate(turns):
        delay = start + index / rate - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        sent = time.perf_counter()
        await live.producer.send(turn)
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


P50_TARGET_MS, P99_TARGET_MS = 25.0, 100.0
"""The bounds in force. The ratio to the SET-only agent is reported without a target: it retired
(tools/turnstream_tools/benchmarks/README.md, figure 2)."""


def freshness_met(p50: Row, p99: Row) -> bool:
    """p50 and p99 within their bounds."""
    return p50.a <= P50_TARGET_MS and p99.a <= P99_TARGET_MS


SIDES = ("pipeline", "set")


async def freshness(
    live: Live,
    rounds: int,
    sessions: int,
    turns: int,
    rate: float,
    progress: Callable[[str], None],
    split: CoreSplit | None = None,
) -> Figure:
    """p50 and p99 over every turn of every round, and each side's CPU a turn, under each placement (pinned to
    `split`'s cores, then unpinned); ABBA-interleaved rounds of fresh conversations."""
    order = placements(split)
    samples: dict[str, dict[str, list[float]]] = {placement: {side: [] for side in SIDES} for placement in order}
    stages = {placement: Scrape() for placement in order}
    cpu = {placement: CpuSpent() for placement in order}
    for index, first in abba(rounds):
        for step, placement in enumerate(order if first else order[::-1], start=index * len(order)):
            batch = round_turns(f"fresh{order.index(placement)}-{index}", sessions, turns, seed=100 + index)
            for side in SIDES if step % 2 == 0 else SIDES[::-1]:
                pid = live.place(split, placement, live.pipeline if side == "pipeline" else live.set)
                ticks = cpu_ticks(pid)
                if side == "pipeline":
                    before = await live.stages(live.pipeline)
                    latencies = await pipeline_latencies(live, batch, rate)
                    stages[placement] += await live.stages(live.pipeline) - before
                else:
                    latencies = await passthrough_latencies(live, batch, rate)
                cpu[placement].add(side, cpu_ticks(pid) - ticks, len(batch))
                samples[placement][side] += latencies
                progress(
                    f"freshness round {index + 1}/{rounds}, {placement}: {side} p50 {p50_p99(latencies)[0]:.1f} ms"
                )
    rows = []
    for placement in order:
        ours, theirs = p50_p99(samples[placement]["pipeline"]), p50_p99(samples[placement]["set"])
        rows += [
            Row.of(f"freshness p50, {placement}", "ms", ours[0], theirs[0]),
            Row.of(f"freshness p99, {placement}", "ms", ours[1], theirs[1]),
        ]
    rows += [
        Row.of(
            f"CPU a turn, {placement}", "µs", cpu[placement].us_per_turn("pipeline"), cpu[placement].us_per_turn("set")
        )
        for placement in order
    ]
    target = Target(
        f"p50 ≤ {P50_TARGET_MS:.0f} ms, p99 ≤ {P99_TARGET_MS:.0f} ms, {order[0]}; ratios reported",
        freshness_met(rows[0], rows[1]),
    )
    measured = {
        placement: {
            "samples_ms": samples[placement],
            "worker_ms": {name: rounded(value) for name, value in fresh_turn_ms(stages[placement]).items()},
            "cpu_us_per_turn": {side: rounded(cpu[placement].us_per_turn(side)) for side in SIDES},
        }
        for placement in order
    }
    return Figure(
        "freshness",
        "2 Freshness: produce → readable",
        "SDK send → wait_for",
        "SET-only agent",
        rows,
        target,
        {"placements": measured, "rate_turns_per_s": rate, "cores": split and split.to_dict()},
    )
