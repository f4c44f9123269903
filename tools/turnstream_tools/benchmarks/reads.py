"""Figure 3: a gateway's reads (ContextClient.get, build_prompt) vs a plain Redis GET of the same bytes."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from turnstream.client import ContextClient
from turnstream.redis.memory_store import MemoryStore
from turnstream.schemas.ids import owner_key, session_key
from turnstream_tools.benchmarks.figures import Figure, Row, Target, abba, p50_p99
from turnstream_tools.benchmarks.live import Live

TARGET = 1.5
QUESTION = "Before you book anything, remind me of my budget and what I asked for."


async def read_latency(live: Live, session_id: str, user_id: str, samples: int) -> Figure:
    """Each iteration times the three reads, in ABBA order, on one connection pool."""
    client = ContextClient(live.store.reader, MemoryStore(live.redis, live.pipeline))
    context_key = live.store.reader.keys(owner_key(user_id, None, session_id), session_key(session_id)).context
    raw_key = f"{live.pipeline.topic_prefix}:bench:raw:{session_id}"
    # the very bytes `get` reads, under a plain string key
    doc = await live.redis.hget(context_key, "doc")
    if doc is None:
        raise RuntimeError(f"no context in Redis for session {session_id!r}")
    await live.redis.set(raw_key, doc)
    reads: dict[str, Callable[[], Awaitable[object]]] = {
        "get": lambda: client.get(session_id, user_id=user_id),
        "GET": lambda: live.redis.get(raw_key),
        "build_prompt": lambda: client.build_prompt(session_id, QUESTION, user_id=user_id),
    }
    timings: dict[str, list[float]] = {name: [] for name in reads}
    for _ in range(20):  # connections opened and scripts loaded before the clock runs
        for read in reads.values():
            await read()
    for _, forward in abba(samples):
        for name in reads if forward else reversed(reads):
            started = time.perf_counter()
            await reads[name]()
            timings[name].append((time.perf_counter() - started) * 1000)
    plain, get, prompt = (p50_p99(timings[name]) for name in ("GET", "get", "build_prompt"))
    rows = [
        Row.of("get p50", "ms", get[0], plain[0]),
        Row.of("get p99", "ms", get[1], plain[1]),
        Row.of("build_prompt p50", "ms", prompt[0], plain[0]),
        Row.of("build_prompt p99", "ms", prompt[1], plain[1]),
    ]
    met = (rows[1].ratio or float("inf")) <= TARGET
    doc_bytes = await live.redis.strlen(raw_key)
    return Figure(
        "reads",
        "3 Read latency",
        "ContextClient",
        "plain GET",
        rows,
        Target(f"get p99 ratio ≤ {TARGET}", met),
        {"samples_ms": timings, "doc_bytes": doc_bytes},
    )
