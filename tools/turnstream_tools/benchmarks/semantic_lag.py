"""The semantic index's lag: turns produced at a steady rate through the worker, each timed from its send to the
moment its vector is in Redis (the context path, the journal, the embedding agent's batch, its write), against
the context's own freshness for the same turns."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from turnstream.redis.keys import KeyLayout
from turnstream.schemas.ids import owner_key, session_key
from turnstream_tools.benchmarks.figures import Figure, Row, Target, p50_p99
from turnstream_tools.benchmarks.live import Live, encode
from turnstream_tools.samples.recall_set import recall_case

RATE = 100
"""Turns a second, as the issue's target is set."""
SECONDS = 15
SESSIONS = 20
"""Sessions the turns go round: one user's, so one owner's archive, on several partitions' worth of keys."""
POLL_SECONDS = 0.02
TARGET_P99_SECONDS = 2.0


async def semantic_lag(live: Live, progress: Callable[[str], None]) -> Figure:
    """The figure: p50 and p99 of send-to-vector and of send-to-context, at RATE turns a second for SECONDS."""
    user = "bench-lag"
    texts = [t["message"]["content"] for t in recall_case("en").turns if t["message"]["role"] == "user"]
    turns: list[dict[str, Any]] = [
        {
            "turn_id": f"lag-{n}",
            "session_id": f"bench-lag-{n % SESSIONS}",
            "user_id": user,
            "seq": n // SESSIONS,
            "ts": time.time(),
            "message": {"role": "user", "name": "Maya", "content": texts[n % len(texts)]},
        }
        for n in range(RATE * SECONDS)
    ]
    keys = KeyLayout(live.pipeline.topic_prefix)
    owner = owner_key(user, None, "")
    sent: dict[str, float] = {}
    seen_vector: dict[str, float] = {}
    seen_context: dict[str, float] = {}
    fields = {t["turn_id"]: f"{session_key(t['session_id'])}#{t['seq']}" for t in turns}

    async def produce() -> None:
        began = time.monotonic()
        for n, turn in enumerate(turns):
            await asyncio.sleep(max(0.0, began + n / RATE - time.monotonic()))
            sent[turn["turn_id"]] = time.monotonic()
            await live.send(live.pipeline, encode([turn]))

    async def watch() -> None:
        deadline = time.monotonic() + SECONDS + 60
        while len(seen_vector) < len(turns) and time.monotonic() < deadline:
            waiting = [turn_id for turn_id in sent if turn_id not in seen_vector]
            if waiting:
                shorts = await live.redis.hmget(keys.owner(owner).positions, [fields[t] for t in waiting])
                held = [(t, s) for t, s in zip(waiting, shorts) if s is not None]
                now = time.monotonic()
                for turn_id, _ in held:
                    seen_context.setdefault(turn_id, now)  # archived with the context's batch write
                if held:
                    there = await live.redis.hmget(keys.owner(owner).vectors, [s for _, s in held])
                    for (turn_id, _), vector in zip(held, there):
                        if vector is not None:
                            seen_vector[turn_id] = time.monotonic()
            await asyncio.sleep(POLL_SECONDS)

    await asyncio.gather(produce(), watch())
    vector_lags = [seen_vector[t] - sent[t] for t in seen_vector]
    context_lags = [seen_context[t] - sent[t] for t in seen_context]
    (v50, v99), (c50, c99) = p50_p99(vector_lags), p50_p99(context_lags)
    progress(
        f"semantic lag at {RATE} turns/s: vector p50 {v50 * 1000:.0f} / p99 {v99 * 1000:.0f} ms "
        f"(archived p50 {c50 * 1000:.0f} / p99 {c99 * 1000:.0f} ms), {len(seen_vector)}/{len(turns)} embedded"
    )
    rows = [
        Row.of("send to vector vs send to archive p50", "ms", v50 * 1000, c50 * 1000),
        Row.of("send to vector vs send to archive p99", "ms", v99 * 1000, c99 * 1000),
        Row.of("turns embedded of those sent", "turns", len(seen_vector), len(turns)),
    ]
    met = len(seen_vector) == len(turns) and v99 <= TARGET_P99_SECONDS
    return Figure(
        "semantic_lag",
        f"Semantic index lag at {RATE} turns/s",
        "vector in Redis",
        "turn archived",
        rows,
        Target(f"p99 ≤ {TARGET_P99_SECONDS:g} s, every turn embedded", met),
        {
            "vector_ms": {"p50": v50 * 1000, "p99": v99 * 1000},
            "archived_ms": {"p50": c50 * 1000, "p99": c99 * 1000},
            "embedded": len(seen_vector),
            "sent": len(turns),
        },
    )
