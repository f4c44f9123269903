"""Gateways in other languages, live: a Java producer (kafka-clients, its default partitioner) and a Node one
(kafkajs 2, `Partitioners.DefaultPartitioner`) feed a running worker on Apache Kafka. Every record lands on
the partition turnstream computes for its session key, the worker forwards none of them
(`turnstream_rekeyed_turns_total` reads 0), and every session's context holds all its turns.

The worker checks a record's key, not its partition: a turn keyed right but placed by another hash is
applied where it lands and counted nowhere. Reading the records back and comparing each partition with
`partition_of` is what fails here when a client's partitioner differs (kafkajs' LegacyPartitioner, Java's
RoundRobinPartitioner); the counter fails when the key is wrong (e.g. `tenant:session_id` unescaped).

The producers live in tests/support/producers. They need `java` (17+, for its source launcher) and
`node`/`npm`; a missing one fails the test, it does not skip it.
"""

from __future__ import annotations

import asyncio
import functools
import json
import subprocess
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
from aiokafka import AIOKafkaConsumer, ConsumerRecord, TopicPartition

from tests.support.conversations import turns_for
from tests.support.metrics import Samples, scrape_until
from tests.support.pipeline import assert_context_matches_batch, interleave, wait_for_versions
from tests.support.programs import tool
from tests.support.worker import RunningWorker, running_worker
from turnstream.client import ContextClient
from turnstream.kafka.admin import ensure_topics
from turnstream.schemas.headers import REASON_HEADER
from turnstream.schemas.ids import partition_of, session_key
from turnstream.settings import Settings
from turnstream.stack.apache_kafka import LOG_CONFIG, kafka_lib
from turnstream.stack.services import free_port

PARTITIONS = 8
SESSIONS = 20
TURNS = 5
TENANT = "acme"
WAIT = 60.0
PRODUCERS = Path(__file__).parents[2] / "support" / "producers"
NODE_DIR = PRODUCERS / "node"
REKEY_REASONS = {"null_key", "wrong_key", "reordered"}
NON_ASCII = " · Zürich → 東京, naïve café 🚆"


@dataclass
class Live:
    settings: Settings
    worker: RunningWorker


@pytest.fixture(scope="module")
async def live(apache_kafka_url: str, redis_url: str) -> AsyncIterator[Live]:
    """One worker on Apache Kafka for the module, its metrics served; each test uses sessions of its own."""
    settings = Settings(
        kafka_url=apache_kafka_url,
        redis_url=redis_url,
        topic_prefix=f"t-other-producers-{uuid.uuid4().hex[:8]}",
        turn_partitions=PARTITIONS,
        metrics_port=free_port(),
    )
    await ensure_topics(settings)
    with running_worker(settings) as worker:
        deadline = time.monotonic() + WAIT  # producers start once the worker holds every partition (each has a leader)
        while worker.assigned(settings.turns_topic) != set(range(PARTITIONS)):
            assert worker.poll() is None and time.monotonic() < deadline, (
                f"worker not assigned all partitions: {worker.log()[-3000:]}"
            )
            await asyncio.sleep(0.2)
        yield Live(settings, worker)


@functools.cache
def node_producer() -> list[str]:
    """`node produce.js`, after `npm ci` when node_modules does not hold the locked kafkajs."""
    node = tool("node", "the Node producer needs Node 18 or newer")
    locked = json.loads((NODE_DIR / "package-lock.json").read_text())["packages"]["node_modules/kafkajs"]["version"]
    installed = NODE_DIR / "node_modules" / "kafkajs" / "package.json"
    if not installed.exists() or json.loads(installed.read_text())["version"] != locked:
        npm = tool("npm", f"installing kafkajs {locked} for the Node producer needs npm")
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"], cwd=NODE_DIR, capture_output=True, text=True, timeout=180
        )
        assert done.returncode == 0, (
            f"npm ci in {NODE_DIR} failed ({done.returncode}):\n{done.stdout[-1500:]}\n{done.stderr[-3000:]}"
        )
    assert json.loads(installed.read_text())["version"] == locked
    return [node, str(NODE_DIR / "produce.js")]


def gateway_sessions(lang: str) -> dict[tuple[str | None, str], list[dict[str, Any]]]:
    """(tenant, session_id) -> turns: half with a tenant, half with a `:` in the id (escaped in the key as %3A),
    non-ASCII user ids and texts (the values are UTF-8 JSON)."""
    sessions = {}
    for i in range(SESSIONS):
        tenant = TENANT if i % 2 else None
        sid = f"{lang}:chat:{i}" if i % 4 < 2 else f"{lang}-{i}"
        turns = turns_for(sid, seed=i, count=TURNS, tenant=tenant)
        for turn in turns:
            turn["user_id"] = f"usér-{lang}-{i}-łódź"
            if isinstance(turn["message"].get("content"), str):
                turn["message"]["content"] += NON_ASCII
            turn["meta"] = {"gateway": lang, "note": "überall 😀"}
        sessions[(tenant, sid)] = turns
    return sessions


async def run_producer(command: list[str], settings: Settings, turns: list[dict[str, Any]]) -> str:
    """Run a producer with the turns as JSON lines on stdin; it must say it sent them all. Returns its stderr."""
    lines = b"".join(orjson.dumps(turn) + b"\n" for turn in turns)
    bootstrap = ",".join(settings.bootstrap_servers)
    process = await asyncio.create_subprocess_exec(
        *command,
        bootstrap,
        settings.turns_topic,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(lines), timeout=WAIT)
    except TimeoutError:
        process.kill()  # by its own pid
        await process.wait()
        pytest.fail(f"{command[0]} producer did not finish within {WAIT:.0f}s")
    stdout, stderr = out.decode(errors="replace"), err.decode(errors="replace")
    assert process.returncode == 0, f"producer exited {process.returncode}:\n{stdout[-2000:]}\n{stderr[-4000:]}"
    assert stdout.strip().splitlines()[-1:] == [f"sent {len(turns)}"], f"{stdout[-2000:]}\n{stderr[-4000:]}"
    return stderr


async def records_of(settings: Settings, keys: set[bytes]) -> list[ConsumerRecord[bytes, bytes]]:
    """Every record of the turns topic keyed by one of `keys`, read from the start up to its end offsets."""
    consumer = AIOKafkaConsumer(bootstrap_servers=settings.bootstrap_servers, enable_auto_commit=False)
    await consumer.start()
    try:
        tps = [TopicPartition(settings.turns_topic, p) for p in range(PARTITIONS)]  # ensure_topics checked the count
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        ends = await consumer.end_offsets(tps)
        found: list[ConsumerRecord[bytes, bytes]] = []
        deadline = time.monotonic() + WAIT
        while [tp for tp in tps if await consumer.position(tp) < ends[tp]]:
            assert time.monotonic() < deadline, f"turns topic not read to {ends} within {WAIT:.0f}s"
            batch = await consumer.getmany(*tps, timeout_ms=500)
            found += [
                r
                for records in batch.values()
                for r in records
                if r.offset < ends[TopicPartition(r.topic, r.partition)] and r.key in keys
            ]
        return found
    finally:
        await consumer.stop()


def rekeyed(samples: Samples) -> dict[str, float]:
    return {labels["reason"]: v for labels, v in samples.get("turnstream_rekeyed_turns_total", [])}


async def assert_landed_and_applied(live: Live, sessions: dict[tuple[str | None, str], list[dict[str, Any]]]) -> None:
    settings, worker = live.settings, live.worker
    keys = {session_key(sid, tenant).encode(): (tenant, sid) for tenant, sid in sessions}
    assert any(b"%3A" in key for key in keys) and any(key.startswith(f"{TENANT}:".encode()) for key in keys)

    async with ContextClient.from_settings(settings) as client:
        expected = {tenant: {sid: TURNS for t, sid in sessions if t == tenant} for tenant in {t for t, _ in sessions}}
        found = await asyncio.gather(
            *(wait_for_versions(client, want, worker, timeout=WAIT, tenant=tenant) for tenant, want in expected.items())
        )
    docs = {(tenant, sid): doc for tenant, got in zip(expected, found) for sid, doc in got.items()}
    for name, turns in sessions.items():
        assert_context_matches_batch(docs[name], turns, settings)  # each turn once, in order, texts intact
        assert docs[name].messages[1]["content"].endswith(NON_ASCII), name

    records = await records_of(settings, set(keys))
    forwarded = [r for r in records if any(name == REASON_HEADER for name, _ in r.headers)]
    produced = [r for r in records if not any(name == REASON_HEADER for name, _ in r.headers)]
    assert not forwarded, (
        f"the worker forwarded {len(forwarded)} turns: {[(r.partition, r.key) for r in forwarded[:5]]}"
    )
    assert len(produced) == SESSIONS * TURNS
    per_key = {key: sorted(orjson.loads(r.value)["seq"] for r in produced if r.key == key) for key in keys}
    assert per_key == {key: list(range(TURNS)) for key in keys}  # keyed by the session key, each turn once
    misplaced = [
        (r.key, r.partition, partition_of(r.key.decode(), PARTITIONS))
        for r in produced
        if r.partition != partition_of(r.key.decode(), PARTITIONS)
    ]
    assert not misplaced, f"records not on their session key's murmur2 partition (key, got, expected): {misplaced[:5]}"
    assert len({r.partition for r in produced}) >= PARTITIONS // 2  # spread enough that another hash would show

    assert settings.metrics_port is not None
    samples = await scrape_until(settings.metrics_port, worker, lambda s: bool(rekeyed(s)), timeout=15)
    assert rekeyed(samples) == dict.fromkeys(REKEY_REASONS, 0.0), rekeyed(samples)  # a sample reading 0, not absent


async def test_java_producer_with_the_default_partitioner_lands_every_turn_on_its_sessions_partition(
    live: Live,
) -> None:
    java = tool("java", "the Java producer needs Java 17 or newer (apt-get install openjdk-17-jre-headless)")
    lib = kafka_lib()
    assert list(lib.glob("kafka-clients-*.jar")), f"no kafka-clients jar in {lib}"
    sessions = gateway_sessions("java")
    command = [
        java,
        f"-Dlog4j2.configurationFile={LOG_CONFIG}",
        "-cp",
        f"{lib}/*",
        str(PRODUCERS / "TurnProducer.java"),
    ]
    await run_producer(command, live.settings, interleave(list(sessions.values())))
    await assert_landed_and_applied(live, sessions)


async def test_kafkajs_producer_with_its_default_partitioner_lands_every_turn_on_its_sessions_partition(
    live: Live,
) -> None:
    command = node_producer()  # in the test, not a fixture: a missing tool fails it
    sessions = gateway_sessions("node")
    stderr = await run_producer(command, live.settings, interleave(list(sessions.values())))
    assert "switched default partitioner" not in stderr  # naming the partitioner silences kafkajs' warning
    await assert_landed_and_applied(live, sessions)
