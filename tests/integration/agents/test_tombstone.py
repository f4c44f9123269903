"""A record with a null value (a tombstone) on the turns topic is skipped: no dead letter, nothing applied."""

from __future__ import annotations

import pytest

from tests.support.conversations import turns_for
from tests.support.pipeline import assert_context_matches_batch, read_dead_letters, wait_for_versions
from tests.support.worker import running_worker
from turnstream.client import ContextClient, TurnProducer
from turnstream.kafka.admin import ensure_topics
from turnstream.settings import Settings

pytestmark = pytest.mark.integration

FIRST_TOMBSTONE_LOG = "ignoring a record with a null value (tombstone)"


async def test_tombstones_on_the_turns_topic_are_skipped_without_a_dead_letter(settings: Settings) -> None:
    settings = settings.model_copy(update={"budget_tokens": 1200, "turn_partitions": 4})
    turns = turns_for("tomb", seed=11, count=30)
    await ensure_topics(settings)
    with running_worker(settings) as worker:
        async with TurnProducer(settings) as producer:
            for i, turn in enumerate(turns):
                await producer.send(turn)
                if i in (4, 17):
                    await producer.send_raw(b"tomb", None)  # same key: the same partition, between the turns
                    await producer.send_raw(b"other-session", None)
            await producer.flush()
        async with ContextClient.from_settings(settings) as client:
            docs = await wait_for_versions(client, {"tomb": len(turns)}, worker)
        dead = await read_dead_letters(settings, 1, timeout=5)
        log = worker.log()
    assert_context_matches_batch(docs["tomb"], turns, settings)
    assert dead == []
    assert log.count(FIRST_TOMBSTONE_LOG) == 1, log[-3000:]
    assert "Traceback" not in log
