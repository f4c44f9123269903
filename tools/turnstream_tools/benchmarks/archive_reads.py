"""What the archive costs: build_prompt against a plain GET at 1,000 and 10,000 archived turns, the read
script's own time inside Redis against the GET's (SLOWLOG, every call logged), and the archive's Redis
memory per 1,000 turns against the turns' own JSON bytes. With embeddings on, the archive is embedded as the
embedding agent embeds it, and build_prompt is read both ways side by side: with the model (the semantic
share) and with words only; the embedding's CPU per turn and the semantic index's bytes per turn are reported."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, cast

import orjson
from redis.asyncio import Redis

from turnstream.client import ContextClient
from turnstream.compaction.compactor import compact
from turnstream.memory.archive import archive_entry
from turnstream.redis.archive import ArchiveStore
from turnstream.redis.writer import ContextWriter
from turnstream.schemas.context import ContextDoc
from turnstream.settings import Settings
from turnstream.stats import percentile
from turnstream.text.language import Language
from turnstream_tools.benchmarks.figures import Figure, Row, Target, abba, p50_p99
from turnstream_tools.samples.recall_set import recall_case

SIZES = (1_000, 10_000)
TARGET_RATIO = 5.0
"""Words only, at 10,000 archived turns: build_prompt p99 against a GET's."""
TARGET_SERVER_MS = 1.0
TARGET_MODEL_MS = 5.0
"""With the model, at 10,000 archived turns: build_prompt p99, the question's embedding included."""
APPEND_BATCH = 200


def _turns(count: int) -> list[dict[str, Any]]:
    """`count` turns of generated chats, each chat its own session of one owner."""
    turns: list[dict[str, Any]] = []
    seed = 0
    while len(turns) < count:
        turns += recall_case("en", seed=seed).turns
        seed += 1
    return [{**turn, "session_id": f"{turn['session_id']}-{n // 600}"} for n, turn in enumerate(turns[:count])]


async def fill_archive(archive: ArchiveStore, owner: str, turns: list[dict[str, Any]], language: Language) -> None:
    """`turns` archived as the worker archives them, APPEND_BATCH at a time."""
    entries = [
        archive_entry(t["session_id"], t["turn_id"], t["seq"], t["message"], t["ts"], language=language) for t in turns
    ]
    kept = [e for e in entries if e is not None]
    for start in range(0, len(kept), APPEND_BATCH):
        await archive.append(owner, kept[start : start + APPEND_BATCH])


async def embed_archive(archive: ArchiveStore, owner: str, settings: Settings) -> float:
    """Embed `owner`'s archive as the embedding agent does, EMBED_BATCH turns a call; CPU ms a turn."""
    from turnstream.embeddings.factory import load_embedders
    from turnstream.embeddings.turns import embed_entries

    embedders = load_embedders(settings)
    assert embedders is not None
    entries = await archive.entries(owner)
    cpu = 0.0
    for start in range(0, len(entries), settings.embedding_batch_size):
        batch = entries[start : start + settings.embedding_batch_size]
        began = time.process_time()
        embedded = embed_entries(embedders, batch, settings.embedding_expansion_terms)
        cpu += time.process_time() - began
        await archive.embed(owner, embedded)
    return cpu * 1000 / max(len(entries), 1)


async def _memory_bytes(redis: Redis, pattern: str) -> int:
    return sum([await redis.memory_usage(key) or 0 async for key in redis.scan_iter(pattern, count=1000)])


async def archive_reads(settings: Settings, samples: int, progress: Callable[[str], None]) -> Figure:
    """The figure, on an owner per size under `settings`' prefix."""
    settings = settings.model_copy(update={"archive_max_entries": max(SIZES)})
    rows: list[Row] = []
    data: dict[str, Any] = {}
    met = True
    questions = [q for q, _ in recall_case("en").questions]
    semantic = settings.embeddings != "off"
    words = settings.model_copy(update={"embeddings": "off"})
    async with ContextClient.from_settings(settings) as client, ContextClient.from_settings(words) as words_only:
        redis = client.store.redis
        archive = ArchiveStore(redis, settings)
        for size in SIZES:
            owner, session = f"bench-archive-{size}", f"bench-archive-{size}-s"
            turns = _turns(size)
            await fill_archive(archive, owner, turns, "en")
            if semantic:
                cpu_ms = await embed_archive(archive, owner, settings)
                semantic_bytes = await _memory_bytes(redis, f"{settings.topic_prefix}:arc[vs]e[cm]:{{{owner}}}")
                rows.append(Row.of(f"embedding CPU per turn, {size // 1000}k archived", "ms", cpu_ms, 0.0))
                rows.append(
                    Row.of(
                        f"semantic index bytes per turn vs the turn's JSON, {size // 1000}k",
                        "B",
                        semantic_bytes / size,
                        sum(len(orjson.dumps(t)) for t in turns) / size,
                    )
                )
                data.setdefault("semantic", {})[str(size)] = {
                    "cpu_ms_per_turn": cpu_ms,
                    "turns_per_s_per_core": 1000 / cpu_ms if cpu_ms else None,
                    "semantic_bytes": semantic_bytes,
                }
                progress(
                    f"archive {size:,}: embedding {cpu_ms:.2f} ms CPU a turn ({1000 / cpu_ms:.0f} turns/s a core), "
                    f"semantic index {semantic_bytes / size:.0f} B a turn"
                )
            memory = await _memory_bytes(redis, f"{settings.topic_prefix}:arc*{{{owner}}}*")
            result = compact([t["message"] for t in turns[-400:]], settings.budget_tokens)
            doc = ContextDoc(
                session_id=session, version=1, last_turn_id="t", updated_at=time.time(), **result.to_dict()
            )
            await ContextWriter.on(redis, settings).write(doc, ["t"], owner=owner)
            raw_key = f"{settings.topic_prefix}:bench:raw:{owner}"
            await redis.set(raw_key, doc.to_json())
            timings = await _timed(
                client, words_only if semantic else None, redis, raw_key, session, owner, questions, samples
            )
            server = await _server_times(redis, client, raw_key, session, owner, questions, samples)
            (get50, get99), (bp50, bp99) = p50_p99(timings["GET"]), p50_p99(timings["build_prompt"])
            srv99, srv_get99 = percentile(server["EVALSHA"], 99), percentile(server["GET"], 99)
            words99 = bp99
            if semantic:
                bare = await _server_times(redis, words_only, raw_key, session, owner, questions, samples)
                w50, words99 = p50_p99(timings["words only"])
                embed = [  # empty when the model did not run (a gateway whose model did not load reads with terms only)
                    Row.of(
                        f"of which the question's embedding and nearest terms {name}, {size // 1000}k", "ms", ms, 0.0
                    )
                    for name, ms in zip(("p50", "p99"), p50_p99(timings["embed"]))
                    if timings["embed"]
                ]
                rows += [
                    Row.of(f"build_prompt with the model vs words only p50, {size // 1000}k", "ms", bp50, w50),
                    Row.of(f"build_prompt with the model vs words only p99, {size // 1000}k", "ms", bp99, words99),
                    *embed,
                    Row.of(
                        f"script with the pool vs words only in Redis p99, {size // 1000}k",
                        "ms",
                        srv99,
                        percentile(bare["EVALSHA"], 99),
                    ),
                ]
            raw_bytes = sum(len(orjson.dumps(turn)) for turn in turns)
            label = f"{size // 1000}k archived"
            rows += [
                Row.of(f"build_prompt p50, {label}", "ms", bp50, get50),
                Row.of(f"build_prompt p99, {label}", "ms", bp99, get99),
                Row.of(f"script vs GET in Redis p99, {label}", "ms", srv99, srv_get99),
                Row.of(
                    f"KiB per 1k turns vs turn JSON, {label}",
                    "KiB",
                    memory * 1000 / size / 1024,
                    raw_bytes * 1000 / size / 1024,
                ),
            ]
            data[str(size)] = {
                "script_server_ms_p50": percentile(server["EVALSHA"], 50),
                "script_server_ms_p99": srv99,
                "archive_bytes": memory,
                "turn_json_bytes": raw_bytes,
            }
            if size == max(SIZES):
                met = words99 / get99 <= TARGET_RATIO and srv99 <= TARGET_SERVER_MS
                met = met and (not semantic or bp99 <= TARGET_MODEL_MS)
            progress(
                f"archive {size:,}: build_prompt p99 {bp99:.2f} ms vs GET {get99:.2f} ms, "
                f"script {srv99 * 1000:.0f} µs p99 in Redis, {memory * 1000 / size / 1024:.0f} KiB per 1,000 turns"
            )
    text = f"at 10k: words only p99 ≤ {TARGET_RATIO:g}× GET, script ≤ {TARGET_SERVER_MS:g} ms"
    if semantic:
        text += f", with the model p99 ≤ {TARGET_MODEL_MS:g} ms"
    return Figure("archive", "8 Archive read cost", "build_prompt", "plain GET", rows, Target(text, met), data)


async def _timed(
    client: ContextClient,
    words_only: ContextClient | None,
    redis: Redis,
    raw_key: str,
    session: str,
    owner: str,
    questions: list[str],
    samples: int,
) -> dict[str, list[float]]:
    """build_prompt (looking only) and a GET of the context's bytes, ABBA, one connection pool; with `words_only`,
    build_prompt without the semantic share too, in the same rounds. "embed": the question's embedding and nearest
    terms, from build_prompt's own timings (empty without the model)."""
    user = owner  # the owner is a user id here (no tenant)
    reads: dict[str, Callable[[str], Awaitable[Any]]] = {
        "GET": lambda q: redis.get(raw_key),
        "build_prompt": lambda q: client.build_prompt(session, q, user_id=user, record=False),
    }
    if words_only is not None:
        reads["words only"] = lambda q: words_only.build_prompt(session, q, user_id=user, record=False)
    for question in questions:  # scripts loaded, connections open
        for read in reads.values():
            await read(question)
    timings: dict[str, list[float]] = {name: [] for name in [*reads, "embed"]}
    for index, forward in abba(samples):
        question = questions[index % len(questions)]
        for name in list(reads) if forward else list(reversed(reads)):
            started = time.perf_counter()
            result = await reads[name](question)
            timings[name].append((time.perf_counter() - started) * 1000)
            if name == "build_prompt" and "embed" in result.timings:
                timings["embed"].append(result.timings["embed"])
    return timings


async def _server_times(
    redis: Redis, client: ContextClient, raw_key: str, session: str, owner: str, questions: list[str], samples: int
) -> dict[str, list[float]]:
    """Milliseconds Redis spent inside each read script and each GET, from a SLOWLOG that logs every call."""
    old = cast(dict[str, str], await redis.config_get("slowlog-*"))  # redis-py types names and values as optional
    await redis.config_set("slowlog-log-slower-than", 0)
    await redis.config_set("slowlog-max-len", 2 * samples + 100)
    await redis.slowlog_reset()
    try:
        for index in range(samples):
            await client.build_prompt(session, questions[index % len(questions)], user_id=owner, record=False)
            await redis.get(raw_key)
        log = await redis.slowlog_get(2 * samples + 100)
    finally:
        for name, value in old.items():
            await redis.config_set(name, value)
    times: dict[str, list[float]] = {"EVALSHA": [], "GET": []}
    for entry in log:
        name = entry["command"].split(b" ", 1)[0].decode().upper()
        if name in times:
            times[name].append(entry["duration"] / 1000)
    return times
