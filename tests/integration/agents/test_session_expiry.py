"""A session idle past TURNSTREAM_SESSION_TTL_SECONDS leaves the Table (a tombstone in the changelog) and Redis;
a busy one stays, and a later turn of the idle one starts it afresh."""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.support.conversations import turns_for
from tests.support.pipeline import wait_for_versions
from tests.support.topics import changelog
from tests.support.worker import running_worker
from turnstream.client import ContextClient, TurnProducer
from turnstream.kafka.admin import ensure_topics
from turnstream.session.expiry import sweep_interval
from turnstream.settings import Settings

pytestmark = pytest.mark.integration

TTL_SECONDS = 4


async def test_idle_session_leaves_the_table_and_comes_back_fresh(settings: Settings) -> None:
    settings = settings.model_copy(update={"session_ttl_seconds": TTL_SECONDS, "turn_partitions": 4})
    idle, busy = turns_for("idle", seed=3, count=3), turns_for("busy", seed=4, count=12)
    await ensure_topics(settings)
    with running_worker(settings) as worker:
        async with TurnProducer(settings) as producer, ContextClient.from_settings(settings) as client:
            for turn in idle:
                await producer.send(turn)
            await producer.flush()
            await wait_for_versions(client, {"idle": len(idle)}, worker)
            went_idle = time.monotonic()
            for turn in busy:  # one turn every half second, past the idle session's TTL and its next sweep
                await producer.send(turn)
                await producer.flush()
                await asyncio.sleep(0.5)
            assert time.monotonic() - went_idle > TTL_SECONDS + sweep_interval(TTL_SECONDS)
            records = await changelog(settings)
            assert ("idle", None) in [(key, value) for key, _, value in records]
            assert ("busy", None) not in [(key, value) for key, _, value in records]  # written within its TTL all along
            # the tombstone went to the partition of the session's rows (and turns)
            assert len({partition for key, partition, _ in records if key == "idle"}) == 1
            assert await client.get("idle") is None  # Redis let it expire after the same idle time

            await producer.send(
                {
                    "turn_id": "idle-back",
                    "session_id": "idle",
                    "user_id": "user-3",
                    "seq": 100,
                    "message": {"role": "user", "content": "I am back: any trains to Porto tomorrow?"},
                }
            )
            await producer.flush()
            (doc,) = (await wait_for_versions(client, {"idle": 1}, worker)).values()
        log = worker.log()
    assert doc.version == 1 and doc.last_turn_id == "idle-back"  # a fresh state, not version 4 of the old one
    assert [m["content"] for m in doc.messages if m["role"] == "user"] == ["I am back: any trains to Porto tomorrow?"]
    assert "expired 1 idle sessions from the Table" in log
    assert "Traceback" not in log


async def test_a_restart_does_not_make_an_idle_session_young(settings: Settings) -> None:
    """The replacement worker counts idle time from the row's changelog record, not from its own recovery."""
    ttl = 30
    settings = settings.model_copy(update={"session_ttl_seconds": ttl, "turn_partitions": 4})
    turns = turns_for("old", seed=5, count=3)
    await ensure_topics(settings)
    async with TurnProducer(settings) as producer, ContextClient.from_settings(settings) as client:
        with running_worker(settings, "first") as worker:
            for turn in turns:
                await producer.send(turn)
            await producer.flush()
            await wait_for_versions(client, {"old": len(turns)}, worker)
        written = time.monotonic()
        with running_worker(settings, "second") as second:
            while "Worker ready" not in second.log():  # its recovery read the row back from the changelog
                assert second.poll() is None and time.monotonic() < written + 180, "the second worker never got ready"
                await asyncio.sleep(0.5)
            # idle time counted from the recovery instead would keep the row until ready + ttl
            deadline = max(written + ttl, time.monotonic()) + 10
            while ("old", None) not in [(key, value) for key, _, value in await changelog(settings)]:
                assert time.monotonic() < deadline, "the recovered row was not expired on time"
                await asyncio.sleep(1)
    assert time.monotonic() - written > ttl - 1  # and not before its TTL
