"""Whoever starts first: turns produced before any worker ran reach the worker, on topics with the configured
partitions (the stack creates them, and so does every producer), and the worker says when it consumes."""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from tests.support.services import killed_on_failure, on_each_broker, on_tansu
from tests.support.topics import describe
from tests.support.worker import RunningWorker, running_worker
from turnstream.client import ContextClient, TurnProducer
from turnstream.client import producer as producer_module
from turnstream.kafka import idempotence
from turnstream.kafka.admin import faust_app_id, worker_topics
from turnstream.lifecycle.startup import ready_line
from turnstream.settings import Settings
from turnstream.stack.processes import settings_env

PARTITIONS = 3
"""Neither broker's own count for a topic it creates on first produce (Tansu and the stack's Apache Kafka make 4)."""


def turn(turn_id: str, session_id: str, content: str) -> dict[str, object]:
    return {
        "turn_id": turn_id,
        "session_id": session_id,
        "tenant": "acme",
        "message": {"role": "user", "content": content},
    }


TURNS = [
    turn("t1", "s1", "My budget is 3500 EUR."),
    turn("t1", "s2", "I fly from Tampere."),
    turn("t2", "s1", "Window seats, please."),
]


async def wait_for_ready_line(worker: RunningWorker, line: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while line not in worker.log().splitlines():
        assert worker.poll() is None, f"worker exited with status {worker.poll()}"
        assert time.monotonic() < deadline, f"no {line!r} within {timeout:.0f}s"
        await asyncio.sleep(0.2)


async def assert_worker_applies(settings: Settings) -> None:
    """A worker started now consumes the turns produced before it, on PARTITIONS partitions, and says so."""
    with running_worker(settings) as worker:
        await wait_for_ready_line(
            worker, ready_line(faust_app_id(settings), settings.turns_topic, range(settings.turn_partitions))
        )
        client = ContextClient.from_settings(settings)
        try:
            for session_id, turn_id in (("s1", "t2"), ("s2", "t1")):
                result = await client.wait_for(session_id, turn_id, 120, tenant="acme")
                assert result.fresh, f"{session_id}/{turn_id} never reached the context"
        finally:
            await client.aclose()
        assert "partitions but TURNSTREAM_TURN_PARTITIONS" not in worker.log()


@on_each_broker
async def test_turns_produced_before_any_worker_reach_it_with_the_configured_partitions(
    settings: Settings, tmp_path: Path
) -> None:
    settings = settings.model_copy(update={"turn_partitions": PARTITIONS})
    path = tmp_path / "turns.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(t) for t in TURNS) + b"\n")

    produced = subprocess.run(
        [sys.executable, "-m", "turnstream", "produce", str(path)],
        env={**os.environ, **settings_env(settings)},
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert produced.returncode == 0, produced.stderr
    assert produced.stderr.count("producer ids") <= 1
    topics = await describe(settings, [settings.turns_topic])
    assert len(topics[settings.turns_topic]["partitions"]) == PARTITIONS  # the producer's, not the broker's count
    await assert_worker_applies(settings)


@on_tansu
async def test_stack_then_produce_then_worker(broker: str, tmp_path: Path) -> None:
    prefix = f"order-{os.getpid()}"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("TURNSTREAM_")},
        "TURNSTREAM_TOPIC_PREFIX": prefix,
        "TURNSTREAM_TURN_PARTITIONS": str(PARTITIONS),
    }
    stack = subprocess.Popen(
        [sys.executable, "-m", "turnstream", "stack"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    with killed_on_failure(stack):
        kafka_url, redis_url, ready = (stack.stdout.readline().strip() for _ in range(3))
        assert ready == "READY"
        settings = Settings(
            kafka_url=kafka_url.removeprefix("KAFKA_URL="),
            redis_url=redis_url.removeprefix("REDIS_URL="),
            topic_prefix=prefix,
            turn_partitions=PARTITIONS,
        )
        # before anything produced: every topic of the worker is there, with its partitions
        specs = worker_topics(settings)
        topics = await describe(settings, [spec.name for spec in specs])
        assert {spec.name: len(topics[spec.name]["partitions"]) for spec in specs} == {
            spec.name: spec.partitions for spec in specs
        }
        async with TurnProducer(settings) as producer:
            for t in TURNS:
                await producer.send(t)
            await producer.flush()
        await assert_worker_applies(settings)
        stack.terminate()
        assert stack.wait(30) == 0
        errors = stack.stderr.read()
        assert "TURNSTREAM_CONSUMER_FETCH_WAIT_MS" not in errors  # the worker takes Tansu's wait itself
        assert f"created the topics of TURNSTREAM_TOPIC_PREFIX={prefix}, {PARTITIONS} partitions each" in errors


@on_each_broker
async def test_a_producer_creates_the_turns_topic_and_warns_of_idempotence_once(
    settings: Settings, broker: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(idempotence, "_warned", set())  # as in a new process
    settings = settings.model_copy(update={"turn_partitions": PARTITIONS})
    with caplog.at_level(logging.DEBUG, logger=idempotence.__name__):
        for _ in range(3):
            async with TurnProducer(settings) as producer:
                await (await producer.send(TURNS[0]))
    topics = await describe(settings, [settings.turns_topic])
    assert len(topics[settings.turns_topic]["partitions"]) == PARTITIONS
    levels = [r.levelno for r in caplog.records if "producer ids" in r.getMessage()]
    # Tansu issues no producer ids: one warning a process, however many producers start; Apache Kafka does
    assert levels == ([logging.WARNING, logging.DEBUG, logging.DEBUG] if broker == "tansu" else [])


@pytest.mark.parametrize("broker", ["kafka"])
async def test_a_producer_that_cannot_create_the_topic_says_so_and_still_produces(
    settings: Settings, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(producer_module, "_said", set())
    unfit = settings.model_copy(update={"replication_factor": 7})  # one broker: Apache Kafka refuses the topic
    with caplog.at_level(logging.WARNING, logger=producer_module.__name__):
        async with TurnProducer(unfit) as producer:
            metadata = await (await producer.send(TURNS[0]))
    assert metadata.offset == 0
    said = [
        r.getMessage() for r in caplog.records if f"cannot make sure {settings.turns_topic} exists" in r.getMessage()
    ]
    assert len(said) == 1 and "InvalidReplicationFactor" in said[0]
