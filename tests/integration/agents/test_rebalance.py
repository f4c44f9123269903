"""Partitions move while turns stream in: scale 1 -> 3 -> 1 workers twice, and a SIGTERM mid-rebalance.

Every produced turn must be applied exactly once and in order: each session's context in Redis equals
the offline replay of the turns produced for it, and every turn id is recorded as applied.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
import uuid
from contextlib import ExitStack
from typing import Any

import pytest

from tests.support.conversations import turns_for
from tests.support.pipeline import assert_context_matches_batch, wait_for_shares
from tests.support.services import on_each_broker
from tests.support.worker import RunningWorker, running_worker
from turnstream.client import ContextClient, TurnProducer
from turnstream.kafka.admin import ensure_topics
from turnstream.schemas.context import ContextDoc
from turnstream.settings import Settings

SESSIONS = 30
TURNS_PER_SESSION = 400
"""More than the run produces at RATE: the producer stops when the scaling is over, not when it runs out."""
RATE = 120
"""Turns per second, spread over every session."""
REVOKING = "Revoking previously assigned partitions"
"""aiokafka's info line when a rebalance takes a worker's partitions away."""
STOP_GAP = 1.3
"""Seconds between the SIGTERMs of the two workers a scale-down stops."""


@pytest.fixture
def rebalance_settings(settings: Settings) -> Settings:
    """Six partitions (two per worker at three), a short session timeout, every turn id kept for the checks.

    A prefix of its own per run: the test's name, cut to fit, is the same for every parametrization.
    """
    return settings.model_copy(
        update={
            "topic_prefix": f"t-rebalance-{uuid.uuid4().hex[:8]}",
            "budget_tokens": 1200,
            "turn_partitions": 6,
            "broker_session_timeout": 6.0,
            "dedup_window": TURNS_PER_SESSION,
        }
    )


class Producer:
    """Produces round-robin over the sessions at RATE until stopped; remembers what it sent."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.sessions = {
            f"r{i:02d}": turns_for(f"r{i:02d}", seed=300 + i, count=TURNS_PER_SESSION) for i in range(SESSIONS)
        }
        self.sent = {sid: 0 for sid in self.sessions}
        self.stop = asyncio.Event()

    async def run(self) -> None:
        async with TurnProducer(self.settings) as producer:
            started = time.monotonic()
            count = 0
            for seq in range(TURNS_PER_SESSION):
                for sid, turns in self.sessions.items():
                    if self.stop.is_set():
                        await producer.flush()
                        return
                    await producer.send(turns[seq])
                    self.sent[sid] += 1
                    count += 1
                await producer.flush()
                # pace: the turns sent so far should have taken count / RATE seconds
                await asyncio.sleep(max(0.0, count / RATE - (time.monotonic() - started)))
            await producer.flush()

    def produced(self) -> dict[str, list[dict[str, Any]]]:
        return {sid: turns[: self.sent[sid]] for sid, turns in self.sessions.items()}


async def sigterm_and_wait(workers: list[RunningWorker], gap: float, timeout: float = 40) -> None:
    """SIGTERM each worker `gap` seconds after the previous one; they must exit cleanly."""
    for i, worker in enumerate(workers):
        if i:
            await asyncio.sleep(gap)
        os.kill(worker.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while any(worker.poll() is None for worker in workers):
        assert time.monotonic() < deadline, "a worker did not stop within its grace time after SIGTERM"
        await asyncio.sleep(0.1)


async def wait_until_settled(
    client: ContextClient, expected: dict[str, int], survivor: RunningWorker, timeout: float = 120, quiet: float = 20
) -> dict[str, ContextDoc | None]:
    """The contexts once every session reached its expected version, or once nothing moved for `quiet` seconds."""
    deadline = time.monotonic() + timeout
    last: dict[str, int] = {}
    moved = time.monotonic()
    while True:
        assert survivor.poll() is None, f"the surviving worker exited with status {survivor.poll()}"
        docs = {sid: await client.get(sid) for sid in expected}
        versions = {sid: doc.version if doc else 0 for sid, doc in docs.items()}
        if all(versions[sid] >= want for sid, want in expected.items()):
            return docs
        if versions != last:
            last, moved = versions, time.monotonic()
        if time.monotonic() - moved > quiet or time.monotonic() > deadline:
            return docs
        await asyncio.sleep(0.5)


async def scale_out_and_in(settings: Settings, workers: ExitStack, survivor: RunningWorker, cycle: int) -> None:
    """1 -> 3 workers; once the partitions are split, SIGTERM the two new ones STOP_GAP seconds apart."""
    extra = [workers.enter_context(running_worker(settings, f"c{cycle}-w{n}")) for n in (1, 2)]
    await wait_for_shares([survivor, *extra], settings)
    await sigterm_and_wait(extra, STOP_GAP)
    await wait_for_shares([survivor], settings)


async def sigterm_mid_rebalance(settings: Settings, workers: ExitStack, survivor: RunningWorker) -> None:
    """A worker joins; while the group is rebalancing (the survivor has given up its partitions), SIGTERM it."""
    revocations = survivor.log().count(REVOKING)
    joiner = workers.enter_context(running_worker(settings, "joiner"))
    deadline = time.monotonic() + 60
    while survivor.log().count(REVOKING) == revocations:
        assert time.monotonic() < deadline, "the joining worker never started a rebalance"
        await asyncio.sleep(0.05)
    await sigterm_and_wait([joiner], 0)
    await wait_for_shares([survivor], settings)


def assert_every_turn_applied_once_in_order(
    docs: dict[str, ContextDoc | None], produced: dict[str, list[dict[str, Any]]], settings: Settings
) -> None:
    wrong = {
        sid: (doc.version if doc else None, len(turns))
        for sid, turns in produced.items()
        if (doc := docs[sid]) is None or doc.version != len(turns)
    }
    assert not wrong, f"{len(wrong)} sessions are not at the version of the turns produced (version, turns): {wrong}"
    for sid, turns in produced.items():
        assert_context_matches_batch(docs[sid], turns, settings)


async def assert_each_turn_id_applied(client: ContextClient, produced: dict[str, list[dict[str, Any]]]) -> None:
    async def never_applied(sid: str, turns: list[dict[str, Any]]) -> list[str]:
        return [turn["turn_id"] for turn in turns if not (await client.wait_for(sid, turn["turn_id"], timeout=0)).fresh]

    # the sessions side by side: thousands of turns, each a round trip to Redis, would otherwise take turns
    missing = [
        turn_id
        for ids in await asyncio.gather(*(never_applied(sid, turns) for sid, turns in produced.items()))
        for turn_id in ids
    ]
    assert not missing, f"{len(missing)} turns never applied: {missing[:20]}"


@pytest.mark.timeout(600)
@pytest.mark.rebalance
@on_each_broker
async def test_turns_survive_partitions_moving_while_workers_scale_and_stop(rebalance_settings: Settings) -> None:
    settings = rebalance_settings
    await ensure_topics(settings)
    producer = Producer(settings)
    with ExitStack() as workers:
        survivor = workers.enter_context(running_worker(settings, "survivor"))
        await wait_for_shares([survivor], settings)
        producing = asyncio.create_task(producer.run())
        try:
            for cycle in (1, 2):
                await scale_out_and_in(settings, workers, survivor, cycle)
            await sigterm_mid_rebalance(settings, workers, survivor)
        finally:
            producer.stop.set()
            await producing
        produced = producer.produced()
        async with ContextClient.from_settings(settings) as client:
            docs = await wait_until_settled(client, {sid: len(turns) for sid, turns in produced.items()}, survivor)
            assert_every_turn_applied_once_in_order(docs, produced, settings)
            await assert_each_turn_id_applied(client, produced)
