"""What a prompt costs on long messages: build_prompt against a plain GET of the same context's bytes, on
generated long user↔assistant chats (samples/long_chats.py), English and Chinese, ABBA.

Each chat is one session of its own owner: its turns archived by the worker's own archive write
(`ArchiveStore.append` of the core's `archive_entry`), its context compacted to the worker's budget,
and its questions asked with `ContextClient.build_prompt` (looking only).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from redis.asyncio import Redis

from turnstream.client import ContextClient
from turnstream.compaction.compactor import compact
from turnstream.prompt.assemble import Prompt
from turnstream.redis.archive import ArchiveStore
from turnstream.redis.writer import ContextWriter
from turnstream.schemas.context import ContextDoc
from turnstream.settings import Settings
from turnstream.stats import percentile
from turnstream_tools.benchmarks.archive_reads import fill_archive
from turnstream_tools.benchmarks.figures import Figure, Row, Target, abba, p50_p99
from turnstream_tools.samples.long_chats import LongChat, long_chats

TARGET_RATIO = 3.0
CHATS_PER_LANGUAGE = 4
MESSAGES_PER_CHAT = 120


async def write_chat(client: ContextClient, settings: Settings, chat: LongChat) -> str:
    """`chat` archived and its context stored, as the worker leaves them; returns the key of a plain copy of
    the context's bytes."""
    redis = client.store.redis
    owner = owner_of(chat)
    await fill_archive(ArchiveStore(redis, settings), owner, chat.turns, chat.language)
    result = compact([t["message"] for t in chat.turns], settings.budget_tokens)
    doc = ContextDoc(
        session_id=chat.session_id,
        version=1,
        last_turn_id=chat.turns[-1]["turn_id"],
        updated_at=time.time(),
        **result.to_dict(),
    )
    await ContextWriter.on(redis, settings).write(doc, [chat.turns[-1]["turn_id"]], owner=owner)
    raw_key = f"{settings.topic_prefix}:bench:raw:{owner}"
    await redis.set(raw_key, doc.to_json())
    return raw_key


def owner_of(chat: LongChat) -> str:
    return chat.user_id + "-" + chat.session_id


async def long_reads(
    settings: Settings,
    samples: int,
    progress: Callable[[str], None],
    chats: int = CHATS_PER_LANGUAGE,
    messages: int = MESSAGES_PER_CHAT,
) -> Figure:
    """The figure: `samples` reads of each side over every chat's questions, in turn."""
    sets = long_chats(chats, messages)
    async with ContextClient.from_settings(settings) as client:
        redis = client.store.redis
        raw_keys = [await write_chat(client, settings, chat) for chat in sets]
        timings = await _timed(client, redis, sets, raw_keys, samples)
    (get50, get99), (bp50, bp99) = p50_p99(timings["GET"]), p50_p99(timings["build_prompt"])
    answer_chars = [
        len(t["message"]["content"]) for chat in sets for t in chat.turns if t["message"]["role"] == "assistant"
    ]
    label = f"{chats}+{chats} chats × {messages} messages"
    # where a call's time goes (Prompt.timings): the read script's round trip with its reply decoded, and the
    # prompt's assembly after it
    trip50, assemble50 = percentile(timings["redis"], 50), percentile(timings["assemble"], 50)
    rows = [
        Row.of(f"build_prompt p50, long messages ({label})", "ms", bp50, get50),
        Row.of(f"build_prompt p99, long messages ({label})", "ms", bp99, get99),
        Row.of("of which the read script's round trip and decode, p50", "ms", trip50, get50),
    ]
    progress(
        f"long messages: build_prompt p50 {bp50:.2f} / p99 {bp99:.2f} ms vs GET {get50:.2f} / {get99:.2f} ms; "
        f"round trip {trip50:.2f}, assembly {assemble50:.2f} ms p50"
    )
    met = bp99 / get99 <= TARGET_RATIO
    data = {
        "chats_per_language": chats,
        "messages_per_chat": messages,
        "answer_chars_mean": sum(answer_chars) / len(answer_chars),
        "assemble_ms_p50": assemble50,
        "samples_ms": timings,
    }
    return Figure(
        "long_reads",
        "11 Reads on long messages",
        "build_prompt",
        "plain GET",
        rows,
        Target(f"p99 ≤ {TARGET_RATIO:g}× GET", met),
        data,
    )


async def _timed(
    client: ContextClient, redis: Redis, sets: list[LongChat], raw_keys: list[str], samples: int
) -> dict[str, list[float]]:
    """build_prompt (looking only) and a GET of the context's bytes, ABBA, one connection pool; with each
    build_prompt's own split (`redis`, `assemble`)."""
    asks = [(chat, key, question) for chat, key in zip(sets, raw_keys) for question in chat.questions]

    def reads(chat: LongChat, key: str, question: str) -> dict[str, Callable[[], Awaitable[object]]]:
        return {
            "GET": lambda: redis.get(key),
            "build_prompt": lambda: client.build_prompt(
                chat.session_id, question, user_id=owner_of(chat), record=False
            ),
        }

    for ask in asks:  # scripts loaded, connections open
        for read in reads(*ask).values():
            await read()
    timings: dict[str, list[float]] = {"GET": [], "build_prompt": [], "redis": [], "assemble": []}
    for index, forward in abba(samples):
        calls = reads(*asks[index % len(asks)])
        for name in calls if forward else reversed(calls):
            started = time.perf_counter()
            got = await calls[name]()
            timings[name].append((time.perf_counter() - started) * 1000)
            if isinstance(got, Prompt):
                timings["redis"].append(got.timings["redis"])
                timings["assemble"].append(got.timings["assemble"])
    return timings
