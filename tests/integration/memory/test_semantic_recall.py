"""Semantic recall through the worker: turns embedded off the context's path by the in-process model, a question
that shares no word with its evidence answered from the archive, and the vectors erased with their owner and
rebuilt from the memory journal after Redis loses them."""

from __future__ import annotations

import asyncio
import os
import signal
from typing import Any

from redis.asyncio import Redis

from tests.support.pipeline import produce, until, wait_for_versions
from tests.support.worker import running_worker
from turnstream.client import ContextClient
from turnstream.kafka.admin import ensure_topics
from turnstream.operations.erasure import erase
from turnstream.schemas.ids import owner_key
from turnstream.settings import Settings
from turnstream_tools.benchmarks.pinning import process_tree

EVIDENCE = "I started kickboxing last year, and I did taekwondo as a kid."
QUESTION = "What martial arts has John done?"
FILLER = [
    "John, the weather was lovely for our picnic by the lake.",
    "John and I painted the kitchen a soft green.",
    "John's sister baked lemon cookies for the school fair.",
    "The train John takes was late again this morning.",
    "John finally finished reading that long novel about the sea.",
    "John adopted a small grey cat from the shelter.",
    "The new bakery near John's office sells excellent sourdough.",
    "John repaired the old bicycle in the garage.",
]
"""Other talk that names John more often than the evidence does: the words of the question rank it above."""


def conversation(session: str, user: str) -> list[dict[str, Any]]:
    """John's evidence early, then enough of other talk that it leaves the context long before the question."""
    other = [FILLER[n % len(FILLER)] + f" ({n})" for n in range(80)]
    said = ["Hi, I am John.", *other[:10], EVIDENCE, *other[10:]]  # the first is pinned, and so are its neighbours
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a friendly companion."}]
    for text in said:
        messages += [{"role": "user", "name": "John", "content": text}, {"role": "assistant", "content": "Nice!"}]
    return [
        {
            "turn_id": f"{session}-{n}",
            "session_id": session,
            "user_id": user,
            "seq": n,
            "ts": 1_700_000_000.0 + n,
            "message": message,
        }
        for n, message in enumerate(messages)
    ]


async def vectors_of(redis: Redis, settings: Settings, owner: str) -> int:
    return int(await redis.hlen(f"{settings.topic_prefix}:arcvec:{{{owner}}}"))


def recalled(prompt: Any) -> list[str]:
    return [turn["text"] for turn in prompt.archived]


def said(prompt: Any) -> str:
    return "\n".join(str(message.get("content")) for message in prompt.messages)


async def test_a_question_that_shares_no_word_with_its_evidence_finds_it_with_the_model(settings: Settings) -> None:
    settings = settings.model_copy(
        update={"embeddings": "local", "budget_tokens": 400, "prompt_budget_tokens": 1200, "recall_budget_tokens": 500}
    )
    turns = conversation("john-1", "john")
    owner = owner_key("john", None, "john-1")
    await ensure_topics(settings)
    with running_worker(settings) as worker:
        await produce(settings, turns)
        async with ContextClient.from_settings(settings) as client:
            docs = await wait_for_versions(client, {"john-1": len(turns)}, worker)
            assert EVIDENCE not in str(docs["john-1"].messages)  # compacted away: only recall can bring it back
            redis = client.store.redis
            await until(lambda: _at_least(vectors_of(redis, settings, owner), len(turns) - 1))
            # k=0: no typed memory (the session's summary memory may quote the turn), the archive alone
            prompt = await client.build_prompt("john-1", QUESTION, k=0, user_id="john", record=False)
            assert EVIDENCE in recalled(prompt) and "kickboxing" in said(prompt), recalled(prompt)
            assert prompt.timings["semantic_hits"] > 0 and prompt.timings["embed"] > 0
        lexical = settings.model_copy(update={"embeddings": "off"})
        async with ContextClient.from_settings(lexical) as words_only:
            prompt = await words_only.build_prompt("john-1", QUESTION, k=0, user_id="john", record=False)
            # the words alone do not recall it (the summary, grown into the room the prompt leaves, may quote it)
            assert EVIDENCE not in recalled(prompt)
            assert "semantic_hits" not in prompt.timings and "embed" not in prompt.timings


async def _at_least(count: Any, wanted: int) -> bool:
    return await count >= wanted


async def test_vectors_come_back_from_the_journal_after_redis_loses_them_and_go_with_their_owner(
    settings: Settings,
) -> None:
    settings = settings.model_copy(update={"embeddings": "local", "resync_interval_seconds": 1})
    turns = conversation("john-2", "jo")[:12]
    owner = owner_key("jo", None, "john-2")
    await ensure_topics(settings)
    with running_worker(settings) as worker:
        await produce(settings, turns)
        async with ContextClient.from_settings(settings) as client:
            await wait_for_versions(client, {"john-2": len(turns)}, worker)
            redis = client.store.redis
            await until(lambda: _at_least(vectors_of(redis, settings, owner), len(turns) - 1))
            stored = await redis.hgetall(f"{settings.topic_prefix}:arcvec:{{{owner}}}")
            await redis.flushall()  # Redis loses everything: the worker's re-sync replays the journal
            await until(lambda: _at_least(vectors_of(redis, settings, owner), len(stored)), timeout=90)
            assert (
                await redis.hgetall(f"{settings.topic_prefix}:arcvec:{{{owner}}}") == stored
            )  # the same, not re-embedded
            await erase(settings, user="jo")
            assert await vectors_of(redis, settings, owner) == 0
            assert not await redis.exists(f"{settings.topic_prefix}:arcsem:{{{owner}}}")


async def test_a_changed_model_re_embeds_the_archive_and_no_vector_of_the_old_one_is_read(settings: Settings) -> None:
    from turnstream.embeddings.factory import model_folder

    chinese = str(model_folder(None, "zh"))
    before = settings.model_copy(update={"embeddings": "local", "embedding_model_dir": chinese})  # one model for both
    turns = conversation("john-3", "jon")[:20]
    owner = owner_key("jon", None, "john-3")
    vectors_key = f"{settings.topic_prefix}:arcvec:{{{owner}}}"
    await ensure_topics(before)
    with running_worker(before) as worker:
        await produce(before, turns)
        async with ContextClient.from_settings(before) as client:
            await wait_for_versions(client, {"john-3": len(turns)}, worker)
            redis = client.store.redis
            archived = int(await redis.hlen(f"{settings.topic_prefix}:arcent:{{{owner}}}"))
            await until(lambda: _at_least(vectors_of(redis, settings, owner), archived))
            old_tags = {value.split(b"\t", 1)[0] for value in (await redis.hgetall(vectors_key)).values()}
    after = settings.model_copy(update={"embeddings": "local", "resync_interval_seconds": 1})  # MiniLM for English
    with running_worker(after):
        async with ContextClient.from_settings(after) as client:
            redis = client.store.redis

            async def re_embedded() -> bool:
                tags = {value.split(b"\t", 1)[0] for value in (await redis.hgetall(vectors_key)).values()}
                return len(tags) == 1 and tags.isdisjoint(old_tags)

            await until(re_embedded, timeout=90)
            assert await vectors_of(redis, settings, owner) == archived
            prompt = await client.build_prompt(
                "john-3", "Which bakery did John mention?", k=0, user_id="jon", record=False
            )
            assert prompt.timings["semantic_hits"] > 0  # ranked by the new model's vectors


async def test_a_worker_killed_with_minus_9_leaves_no_model_process_behind(settings: Settings) -> None:
    settings = settings.model_copy(update={"embeddings": "local"})
    await ensure_topics(settings)
    with running_worker(settings) as worker:

        async def loaded() -> bool:  # the models are loaded in the embedding process before the worker connects
            return bool(worker.assigned(settings.turns_topic))

        await until(loaded)
        children = process_tree(worker.pid)[1:]
        assert children  # the embedding process (and multiprocessing's resource tracker)
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait()

        async def gone() -> bool:
            return not any(_alive(pid) for pid in children)

        await until(gone, timeout=10)


def _alive(pid: int) -> bool:
    """Not a zombie: a child whose parent died is reaped by init, so only a running orphan still has a state."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def filler_chats(name: str, sessions: int, per_session: int) -> tuple[list[dict[str, Any]], list[str]]:
    """`sessions` chats of other talk, `per_session` turns each, interleaved; and their owners."""
    turns = [
        {
            "turn_id": f"{name}-{s}-{n}",
            "session_id": f"{name}-{s}",
            "user_id": f"u{s}",
            "seq": n,
            "ts": 1_700_000_000.0 + n,
            "message": {"role": "user" if n % 2 else "assistant", "content": f"{FILLER[n % len(FILLER)]} ({s}/{n})"},
        }
        for n in range(per_session)
        for s in range(sessions)
    ]
    return turns, [owner_key(f"u{s}", None, f"{name}-{s}") for s in range(sessions)]


async def every_archived_turn_embedded(redis: Redis, settings: Settings, owners: list[str]) -> bool:
    """Whether each owner has archived turns, and a vector for every one of them."""
    for owner in owners:
        archived = await redis.hlen(f"{settings.topic_prefix}:arcent:{{{owner}}}")
        if not archived or await vectors_of(redis, settings, owner) < archived:
            return False
    return True


async def test_a_slow_embedder_holds_back_no_context_and_catches_up(settings: Settings) -> None:
    settings = settings.model_copy(update={"embeddings": "local", "turn_partitions": 4})
    sessions, per_session = 20, 60
    turns, owners = filler_chats("slow", sessions, per_session)
    await ensure_topics(settings)
    with running_worker(settings) as worker:
        await until(lambda: _true(bool(worker.assigned(settings.turns_topic))))
        model_processes = process_tree(worker.pid)[1:]
        assert model_processes
        slowed = asyncio.create_task(_run_a_tenth_of_the_time(model_processes))
        try:
            await produce(settings, turns)
            async with ContextClient.from_settings(settings) as client:
                await wait_for_versions(client, {f"slow-{s}": per_session for s in range(sessions)}, worker, 120)
                redis = client.store.redis
                embedded = sum([await vectors_of(redis, settings, owner) for owner in owners])
                assert embedded < len(turns) / 2  # every context is there, and the embedder is far behind
        finally:
            slowed.cancel()
            for pid in model_processes:
                os.kill(pid, signal.SIGCONT)
        async with ContextClient.from_settings(settings) as client:
            await until(lambda: every_archived_turn_embedded(client.store.redis, settings, owners), timeout=240)
        worker.process.send_signal(signal.SIGTERM)  # a stop waits for the batch in hand, and nothing crashes
        assert worker.process.wait(30) == 0 and "Crashed" not in worker.log(), worker.log()[-3000:]


async def test_an_embedding_process_killed_is_started_again_and_every_archived_turn_gets_its_vector(
    settings: Settings,
) -> None:
    settings = settings.model_copy(update={"embeddings": "local", "turn_partitions": 2})
    sessions, per_session = 6, 40
    turns, owners = filler_chats("oom", sessions, per_session)
    await ensure_topics(settings)
    with running_worker(settings) as worker:
        await until(lambda: _true(bool(worker.assigned(settings.turns_topic))))
        [model] = [pid for pid in process_tree(worker.pid)[1:] if _spawned(pid)]
        half = len(turns) // 2
        await produce(settings, turns[:half])
        os.kill(model, signal.SIGKILL)  # as the OOM killer would: the biggest process of the worker's
        await produce(settings, turns[half:])
        async with ContextClient.from_settings(settings) as client:
            await until(lambda: every_archived_turn_embedded(client.store.redis, settings, owners), timeout=120)
        assert "starting another" in worker.log(), worker.log()[-3000:]
        [again] = [pid for pid in process_tree(worker.pid)[1:] if _spawned(pid)]
        assert again != model
        worker.process.send_signal(signal.SIGTERM)
        assert worker.process.wait(30) == 0 and "Crashed" not in worker.log(), worker.log()[-3000:]


def _spawned(pid: int) -> bool:
    """Whether `pid` is a multiprocessing child that runs work (the embedding process), not its resource tracker."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            said = cmdline.read()
    except FileNotFoundError:
        return False
    return b"spawn_main" in said and b"resource_tracker" not in said


async def _run_a_tenth_of_the_time(pids: list[int]) -> None:
    """Stop and continue the processes: a model ten times slower than this machine's."""
    while True:
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        await asyncio.sleep(0.45)
        for pid in pids:
            os.kill(pid, signal.SIGCONT)
        await asyncio.sleep(0.05)


async def _true(value: bool) -> bool:
    return value
