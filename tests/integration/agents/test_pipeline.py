"""Turns in through a real broker, compacted context out in a real Redis, through worker processes."""

from __future__ import annotations

import asyncio
import os
import signal
import time

import orjson
import pytest

from tests.support.conversations import turns_for
from tests.support.pipeline import (
    assert_archive_holds_each_turn_once,
    assert_context_matches_batch,
    interleave,
    produce,
    read_dead_letters,
    wait_for_shares,
    wait_for_versions,
)
from tests.support.services import on_each_broker
from tests.support.worker import running_worker, wait_until_drained
from turnstream.client import ContextClient, TurnProducer
from turnstream.kafka.admin import ensure_topics
from turnstream.schemas.headers import REASON_HEADER, SOURCE_HEADER
from turnstream.schemas.ids import owner_key, partition_of, session_key
from turnstream.settings import Settings


@pytest.fixture
def pipeline_settings(settings: Settings) -> Settings:
    """A small budget so every session is compacted many times; a short session timeout for failover."""
    return settings.model_copy(update={"budget_tokens": 1200, "turn_partitions": 4, "broker_session_timeout": 6.0})


async def test_fifty_sessions_of_two_hundred_turns_end_up_compacted_in_redis(pipeline_settings: Settings) -> None:
    settings = pipeline_settings
    sessions = {f"s{i:02d}": turns_for(f"s{i:02d}", seed=i, count=200) for i in range(50)}
    await ensure_topics(settings)
    with running_worker(settings) as worker:
        await produce(settings, interleave(list(sessions.values())))
        async with ContextClient.from_settings(settings) as client:
            docs = await wait_for_versions(client, {sid: len(turns) for sid, turns in sessions.items()}, worker)
    for sid, turns in sessions.items():
        assert docs[sid].marker_index is not None, sid
        assert_context_matches_batch(docs[sid], turns, settings)
        assert set(docs[sid].timings) >= {"broker_wait", "ingest", "compaction"}


async def test_a_lone_turn_does_not_wait_out_the_batch_window(pipeline_settings: Settings) -> None:
    """A batch is handed over as soon as nothing more waits in the input, not when its window ends."""
    settings = pipeline_settings.model_copy(update={"batch_max_ms": 10_000.0})
    turns = turns_for("lone", seed=7, count=4)
    await ensure_topics(settings)
    with running_worker(settings) as worker:
        async with ContextClient.from_settings(settings) as client, TurnProducer(settings) as producer:
            await producer.send(turns[0])
            await wait_for_versions(client, {"lone": 1}, worker)  # the worker is up and holds the partition
            for turn in turns[1:]:
                sent = time.monotonic()
                await producer.send(turn)
                result = await client.wait_for("lone", turn["turn_id"], timeout=30, user_id=turn["user_id"])
                assert result.fresh, turn["turn_id"]
                # a window of 10 s waited out would take 5 s on average; a turn seen alone takes milliseconds
                assert time.monotonic() - sent < 2.0, turn["turn_id"]


async def test_redelivered_turns_are_applied_once(pipeline_settings: Settings) -> None:
    settings = pipeline_settings
    sessions = {f"d{i}": turns_for(f"d{i}", seed=100 + i, count=60) for i in range(5)}
    twice = [turn for turn in interleave(list(sessions.values())) for _ in range(2)]
    await ensure_topics(settings)
    with running_worker(settings) as worker:
        await produce(settings, twice)
        await produce(settings, sessions["d0"])  # a whole session replayed late
        async with ContextClient.from_settings(settings) as client:
            await wait_for_versions(client, {sid: len(turns) for sid, turns in sessions.items()}, worker)
            await wait_until_drained(settings, worker)  # every duplicate, the late replay's last one too, is handled
            docs = {sid: await client.get(sid) for sid in sessions}
    for sid, turns in sessions.items():
        assert_context_matches_batch(docs[sid], turns, settings)
    await assert_archive_holds_each_turn_once(settings, sessions)


async def test_bad_input_goes_to_the_dead_letter_topic_and_good_turns_still_apply(pipeline_settings: Settings) -> None:
    settings = pipeline_settings.model_copy(update={"max_content_bytes": 4096})
    good = turns_for("good", seed=7, count=30)
    # no seq: a turn numbered at or below the session's last one would be a replay, skipped, not refused
    orphan_result = {
        **{k: v for k, v in good[5].items() if k != "seq"},
        "turn_id": "orphan",
        "message": {"role": "tool", "tool_call_id": "nope", "content": "x"},
    }
    bad: list[tuple[str, bytes]] = [
        ("not json", b"{this is not json"),
        ("wrong types", orjson.dumps({**good[0], "turn_id": "types", "seq": "seven"})),
        ("oversize", orjson.dumps({**good[0], "turn_id": "big", "message": {"role": "user", "content": "x" * 5000}})),
        ("unsafe session", orjson.dumps({**good[0], "turn_id": "unsafe", "session_id": "../../etc/passwd"})),
        ("invalid utf-8", b'{"turn_id": "\xff\xfe", "session_id": "good"}'),
        ("orphan tool result", orjson.dumps(orphan_result)),
    ]
    await ensure_topics(settings)
    with running_worker(settings) as worker:
        async with TurnProducer(settings) as producer:
            for i, turn in enumerate(good):
                await producer.send(turn)
                if i % 5 == 4 and bad:
                    _, raw = bad.pop(0)
                    await producer.send_raw(b"good", raw)
            await producer.flush()
        async with ContextClient.from_settings(settings) as client:
            docs = await wait_for_versions(client, {"good": len(good)}, worker)
        dead = await read_dead_letters(settings, 6)
    assert_context_matches_batch(docs["good"], good, settings)
    reasons = sorted(dict(r.headers)[REASON_HEADER].decode() for r in dead)
    assert len(dead) == 6, reasons
    assert all(dict(r.headers)[SOURCE_HEADER].decode().startswith(settings.turns_topic + "/") for r in dead)
    assert any(r.value == b"{this is not json" for r in dead)  # the original bytes, untouched
    assert len(set(reasons)) >= 5, reasons


FAILOVER_BOUND_SECONDS = {"kafka": 15.0, "tansu": 60.0}
"""How long a killed worker's sessions may stay unanswered. Apache Kafka, at the worker's defaults (session timeout
10 s, a heartbeat every 3 s; docs/operations.md): the session timeout, the survivor's next heartbeat and a join.
The embedded broker: its session timeout plus a JoinGroup of about 5 s per member."""


@on_each_broker
async def test_a_killed_worker_is_replaced_without_losing_or_repeating_turns(
    pipeline_settings: Settings, broker: str
) -> None:
    settings = pipeline_settings
    if broker == "kafka":  # Apache Kafka at the worker's defaults (docs/operations.md), measured here
        settings = settings.model_copy(
            update={
                name: Settings.model_fields[name].default
                for name in ("broker_session_timeout", "broker_heartbeat_interval")
            }
        )
    sessions = {f"f{i:02d}": turns_for(f"f{i:02d}", seed=200 + i, count=120) for i in range(16)}
    ordered = interleave(list(sessions.values()))
    half = len(ordered) // 2
    await ensure_topics(settings)
    seen_versions: dict[str, list[tuple[float, int]]] = {sid: [] for sid in sessions}

    async def sample_versions(client: ContextClient, stop: asyncio.Event) -> None:
        while not stop.is_set():
            for sid in sessions:
                doc = await client.get(sid)
                if doc is not None:
                    seen_versions[sid].append((time.monotonic(), doc.version))
            await asyncio.sleep(0.05)

    with running_worker(settings, "survivor") as survivor, running_worker(settings, "victim") as victim:
        shares = await wait_for_shares([survivor, victim], settings)
        assert all(shares) and not shares[0] & shares[1], shares  # one group: the partitions are split between them
        async with ContextClient.from_settings(settings) as client:
            stop = asyncio.Event()
            sampler = asyncio.create_task(sample_versions(client, stop))
            await produce(settings, ordered[:half])
            await asyncio.sleep(1.0)  # mid-stream: part of the first half is still in flight
            os.kill(victim.pid, signal.SIGKILL)
            killed = time.monotonic()
            victim.wait()
            await produce(settings, ordered[half:])
            docs = await wait_for_versions(client, {sid: len(turns) for sid, turns in sessions.items()}, survivor)
            stop.set()
            await sampler
    for sid, doc in docs.items():  # the sampler may stop before its round reaches a session's last version
        seen_versions[sid].append((time.monotonic(), doc.version))
    for sid, turns in sessions.items():
        assert_context_matches_batch(docs[sid], turns, settings)
        versions = [version for _, version in seen_versions[sid]]
        assert versions == sorted(versions), f"{sid} went backwards"
    await assert_archive_holds_each_turn_once(settings, sessions)
    orphaned = [
        sid
        for sid, turns in sessions.items()
        if partition_of(session_key(sid, turns[0].get("tenant")), settings.turn_partitions) in shares[1]
    ]
    unanswered = max(_unanswered_after(seen_versions[sid], killed) for sid in orphaned)
    print(f"failover on {broker}: the killed worker's {len(orphaned)} sessions went unanswered for {unanswered:.1f}s")
    assert unanswered <= FAILOVER_BOUND_SECONDS[broker], f"failover took {unanswered:.1f}s on {broker}"


def _unanswered_after(samples: list[tuple[float, int]], killed: float) -> float:
    """Seconds from the kill until the session's context moved again (its first new version after the kill)."""
    at_kill = max((version for at, version in samples if at <= killed), default=0)
    return next(at - killed for at, version in samples if at > killed and version > at_kill)


async def test_a_batch_that_fails_is_applied_again_by_the_next_worker(pipeline_settings: Settings) -> None:
    """A batch whose effects could not be stored is never acknowledged, and no later turn of its partition is
    applied on top of the gap: the worker stops, and the next one applies the batch's turns again."""
    settings = pipeline_settings
    turns = turns_for("poison", seed=11, count=4)
    owner = owner_key(turns[0]["user_id"], turns[0]["tenant"], "poison")
    await ensure_topics(settings)
    async with ContextClient.from_settings(settings) as client, TurnProducer(settings) as producer:
        context_key = client.store.keys(owner, session_key("poison")).context
        with running_worker(settings) as worker:
            for turn in turns[:2]:
                await producer.send(turn)
            await wait_for_versions(client, {"poison": 2}, worker)
            # the context's hash replaced by a string: the write script fails with WRONGTYPE, which no retry mends
            await client.store.redis.delete(context_key)
            await client.store.redis.set(context_key, "not a hash")
            await producer.send(turns[2])
            await producer.flush()
            deadline = time.monotonic() + 60
            while worker.poll() is None and time.monotonic() < deadline:
                await asyncio.sleep(0.2)
            assert worker.poll() not in (None, 0), "the worker went on after a batch it could not store"
        await client.store.redis.delete(context_key)
        await producer.send(turns[3])
        await producer.flush()
        with running_worker(settings, "successor") as successor:
            docs = await wait_for_versions(client, {"poison": 4}, successor)
    assert_context_matches_batch(docs["poison"], turns, settings)
