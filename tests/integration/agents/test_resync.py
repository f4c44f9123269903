"""Redis loses everything (FLUSHALL, a restart without data): each context comes back from the Table, no turn needed."""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.support.conversations import turns_for
from tests.support.pipeline import assert_context_matches_batch, produce, wait_for_versions
from tests.support.resync import drop_every_key
from tests.support.worker import running_worker
from turnstream.client import ContextClient
from turnstream.kafka.admin import ensure_topics
from turnstream.schemas.context import ContextDoc
from turnstream.settings import Settings

pytestmark = pytest.mark.integration

INTERVAL = 1
SESSIONS = {f"rs{i}": turns_for(f"rs{i}", seed=40 + i, count=25 + 5 * i) for i in range(6)}


async def read_all(client: ContextClient, timeout: float) -> dict[str, ContextDoc | None]:
    """The contexts once every session has one again, or whatever there is after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        docs = {sid: await client.get(sid) for sid in SESSIONS}
        if all(docs.values()) or time.monotonic() > deadline:
            return docs
        await asyncio.sleep(0.2)


async def test_contexts_come_back_from_the_table_after_redis_loses_them(settings: Settings) -> None:
    settings = settings.model_copy(
        update={"budget_tokens": 1200, "turn_partitions": 3, "resync_interval_seconds": INTERVAL}
    )
    await ensure_topics(settings)
    with running_worker(settings) as worker:
        await produce(settings, [turn for turns in SESSIONS.values() for turn in turns])
        async with ContextClient.from_settings(settings) as client:
            before = await wait_for_versions(client, {sid: len(turns) for sid, turns in SESSIONS.items()}, worker)
            assert await drop_every_key(settings) > 0
            assert all(doc is None for doc in (await read_all(client, timeout=0)).values())
            lost_at = time.monotonic()
            after = await read_all(client, timeout=10 * INTERVAL + 10)
            took = time.monotonic() - lost_at
            last = {sid: await client.wait_for(sid, turns[-1]["turn_id"], timeout=0) for sid, turns in SESSIONS.items()}
        log = worker.log()
    missing = [sid for sid, doc in after.items() if doc is None]
    assert not missing, f"not re-synced after {took:.1f} s: {missing}\n{log[-3000:]}"
    for sid, turns in SESSIONS.items():
        assert after[sid].version == before[sid].version
        assert after[sid].messages == before[sid].messages
        assert_context_matches_batch(after[sid], turns, settings)
        assert last[sid].fresh  # the recent turn ids came back too: a gateway's wait_for answers at once
    assert "re-synced" in log and "Traceback" not in log
