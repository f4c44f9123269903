"""`turnstream shadow` on a real broker and Redis: a shadow beside the live worker leaves the live keys as a run
without it leaves them, computes what the core computes with its own settings, resumes after kill -9 to the keys
of an uninterrupted shadow, holds its rate, starts where it is told, and `shadow drop` removes exactly it."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
import pytest
import redis
from aiokafka import TopicPartition
from aiokafka.admin import AIOKafkaAdminClient

from tests.support.conversations import turns_for
from tests.support.llm_pipeline import NumberedSummaries, is_summary, llm_settings
from tests.support.pipeline import assert_context_matches_batch, interleave, produce
from tests.support.services import on_each_broker
from tests.support.worker import RunningWorker, running_worker, wait_until_drained
from turnstream.client import ContextClient, TurnProducer
from turnstream.connections import kafka_options
from turnstream.kafka.admin import ensure_topics, faust_app_id
from turnstream.operations.shadow import ShadowError, StartAt, commit_start, lag, shadow_settings
from turnstream.settings import Settings
from turnstream.stack.processes import settings_env, stop_process
from turnstream.stack.services import die_with_parent
from turnstream_tools.benchmarks.redis_dump import dump

pytestmark = pytest.mark.integration


@pytest.fixture
def live(settings: Settings) -> Settings:
    """A small budget so contexts are compacted; two partitions; a short session timeout so a killed shadow's
    partitions come back soon."""
    return settings.model_copy(update={"budget_tokens": 1200, "turn_partitions": 2, "broker_session_timeout": 6.0})


def shadow_command(live: Settings, *args: str) -> list[str]:
    return [sys.executable, "-m", "turnstream", "shadow", *args]


def run_cli(live: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **settings_env(live)}
    return subprocess.run(shadow_command(live, *args), capture_output=True, text=True, env=env, timeout=120)


@contextmanager
def running_shadow(live: Settings, name: str, *args: str) -> Iterator[RunningWorker]:
    """`turnstream shadow run NAME ARGS` with the live worker's settings, stopped by its process id at the end."""
    log = tempfile.NamedTemporaryFile(prefix=f"turnstream-shadow-{name}-", suffix=".log", delete=False)
    env = {**os.environ, **settings_env(live)}
    process = subprocess.Popen(
        [*shadow_command(live, "run", name, "--loglevel", "info"), *args],
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env=env,
        preexec_fn=die_with_parent,
    )
    shadow = RunningWorker(process, Path(log.name))
    try:
        yield shadow
    except BaseException:
        print(f"--- shadow {name} log ---\n{shadow.log()[-6000:]}")
        raise
    finally:
        stop_process(process)
        log.close()
        shadow.log_path.unlink(missing_ok=True)


def prefix_dump(settings: Settings, prefix: str) -> list[str]:
    """Every key under `prefix`, normalized and without the prefix (tools/…/redis_dump.py)."""
    client = redis.Redis.from_url(str(settings.redis_url))
    try:
        return dump(client, prefix)
    finally:
        client.close()


def raw_dump(settings: Settings) -> dict[bytes, bytes]:
    """Every key of the database, as DUMP serializes it: what a database never shadowed must equal byte for byte."""
    client = redis.Redis.from_url(str(settings.redis_url))
    try:
        return {key: client.dump(key) for key in client.scan_iter(count=1000)}  # type: ignore[misc]
    finally:
        client.close()


async def topics_and_commits(settings: Settings, group: str) -> tuple[set[str], list[int]]:
    """The broker's topics, and `group`'s committed offsets on the turns topic (-1 where it has none)."""
    admin = AIOKafkaAdminClient(**kafka_options(settings))
    await admin.start()
    try:
        partitions = [TopicPartition(settings.turns_topic, p) for p in range(settings.turn_partitions)]
        offsets = await admin.list_consumer_group_offsets(group, partitions=partitions)
        return set(await admin.list_topics()), [meta.offset for meta in offsets.values()]
    finally:
        await admin.close()


def conversations(count: int, turns: int, seed: int) -> dict[str, list[dict[str, Any]]]:
    return {f"c{i:02d}": turns_for(f"c{i:02d}", seed=seed + i, count=turns) for i in range(count)}


async def test_a_shadow_beside_the_live_worker_leaves_it_untouched_and_drop_removes_exactly_it(live: Settings) -> None:
    reference = live.model_copy(update={"topic_prefix": f"{live.topic_prefix}-ref"})  # the same, never shadowed
    name = f"{live.topic_prefix}-sh"
    shadow = shadow_settings(live, name, {"budget_tokens": "700"})
    sessions = conversations(6, 40, seed=500)
    ordered = interleave(list(sessions.values()))
    misrouted = sessions["m00"] = turns_for("m00", seed=600, count=2)
    for settings in (live, reference):
        await ensure_topics(settings)
    decoy = f"{name}x:ctx:{{decoy}}:s"  # a key of another prefix that begins like the shadow's
    client = redis.Redis.from_url(str(live.redis_url))
    client.set(decoy, b"not the shadow's")
    with (
        running_worker(live, "live") as live_worker,
        running_worker(reference, "reference") as reference_worker,
        running_shadow(live, name, "--set", "budget_tokens=700") as shadow_worker,
    ):
        for settings in (live, reference):
            await produce(settings, ordered)
            async with TurnProducer(settings) as producer:  # keyed otherwise: the live worker forwards them
                for turn in misrouted:
                    await producer.send_raw(b"not-its-session-key", orjson.dumps(turn))
        await wait_until_drained(live, live_worker)
        await wait_until_drained(reference, reference_worker)
        await wait_until_drained(shadow, shadow_worker)
        status = run_cli(live, "status", name)
        assert status.returncode == 0, status.stderr
        assert "lag: 0" in status.stdout and f"turns applied: {len(ordered) + 2}" in status.stdout, status.stdout
        # each misrouted turn and the one copy the live worker forwarded: none from the shadow
        assert sum(row.end for row in await lag(shadow)) == len(ordered) + 2 * len(misrouted)
        shadow_worker.process.send_signal(signal.SIGTERM)
        assert shadow_worker.process.wait(timeout=30) == 0  # a graceful stop

    live_keys = prefix_dump(live, live.topic_prefix)
    assert live_keys and live_keys == prefix_dump(reference, reference.topic_prefix)
    differ = 0
    async with ContextClient.from_settings(shadow) as shadow_client, ContextClient.from_settings(live) as live_client:
        for sid, turns in sessions.items():
            doc = await shadow_client.get(sid)
            assert doc is not None, sid
            assert_context_matches_batch(doc, turns, shadow)  # the pure core, with the shadow's budget
            live_doc = await live_client.get(sid)
            assert live_doc is not None and (live_doc.tokens.budget, doc.tokens.budget) == (1200, 700)
            differ += live_doc.messages != doc.messages
    assert differ >= len(sessions) - 1  # its own budget took effect: every long session is cut otherwise

    before = raw_dump(live)
    assert any(key.startswith(f"{name}:".encode()) for key in before)
    dropped = run_cli(live, "drop", name)
    assert dropped.returncode == 0, dropped.stderr
    never_shadowed = {key: value for key, value in before.items() if not key.startswith(f"{name}:".encode())}
    assert raw_dump(live) == never_shadowed
    assert client.get(decoy) == b"not the shadow's"
    client.delete(decoy)
    client.close()
    topics, offsets = await topics_and_commits(live, faust_app_id(shadow))
    assert not [t for t in topics if t.startswith((f"{name}.", f"{name}-worker-"))], topics
    assert offsets == [-1] * live.turn_partitions  # the group and its commits are gone
    assert live.turns_topic in topics and live.memory_topic in topics
    refused = run_cli(live, "drop", live.topic_prefix)
    assert refused.returncode == 1 and refused.stderr.count("\n") == 1, refused.stderr


async def committed_total(shadow: Settings) -> int:
    return sum(row.committed or 0 for row in await lag(shadow))


async def test_a_killed_shadow_resumes_to_the_keys_of_an_uninterrupted_one_at_its_rate(live: Settings) -> None:
    sessions = conversations(8, 40, seed=700)
    ordered = interleave(list(sessions.values()))
    await ensure_topics(live)
    await produce(live, ordered)
    whole_name, killed_name, rate = f"{live.topic_prefix}-a", f"{live.topic_prefix}-b", 40.0
    whole, killed = shadow_settings(live, whole_name), shadow_settings(live, killed_name)

    with running_shadow(live, whole_name) as uninterrupted:
        with running_shadow(live, killed_name, "--rate", str(rate)) as victim:
            deadline = time.monotonic() + 60
            while (first := await committed_total(killed)) == 0:
                assert victim.poll() is None and time.monotonic() < deadline, "the shadow never committed"
                await asyncio.sleep(0.2)
            started = time.monotonic()
            await asyncio.sleep(4.0)
            taken = await committed_total(killed) - first
            measured = taken / (time.monotonic() - started)
            print(f"rate {rate:.0f}/s asked, {measured:.1f}/s measured over {time.monotonic() - started:.1f} s")
            # commits come about every second: a second's worth of slack either way, besides the bucket's burst
            assert 0 < taken <= rate * (time.monotonic() - started + 2) + rate
            assert taken < len(ordered), "the shadow finished before it was killed"
            os.kill(victim.pid, signal.SIGKILL)
            victim.wait()
        with running_shadow(live, killed_name) as resumed:
            assert "resuming at the shadow group's committed offsets" in await _start_line(resumed)
            await wait_until_drained(killed, resumed)
        await wait_until_drained(whole, uninterrupted)
        progress = [line for line in uninterrupted.log().splitlines() if line.startswith(f"shadow {whole_name}: ")]
        print(progress[-1:])
        assert progress and f"consumed {len(ordered)}/{len(ordered)}, lag 0" in progress[-1]
    assert prefix_dump(live, killed_name) == prefix_dump(live, whole_name)
    assert prefix_dump(live, whole_name)


async def _start_line(worker: RunningWorker, timeout: float = 30) -> str:
    """The line `shadow run` prints before its worker starts: where it starts."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if lines := [line for line in worker.log().splitlines() if line.startswith("shadow ")]:
            return lines[0]
        await asyncio.sleep(0.1)
    return ""


@on_each_broker
async def test_a_new_shadow_starts_at_the_offset_or_time_asked_and_a_started_one_resumes(
    live: Settings, broker: str
) -> None:
    await ensure_topics(live)
    await produce(live, interleave(list(conversations(4, 10, seed=900).values())))
    by_offset = shadow_settings(live, f"{live.topic_prefix}-o")
    assert (await commit_start(by_offset, StartAt(offset=3))).startswith("starting at offsets 0:3, 1:3")
    assert await commit_start(by_offset, StartAt(offset=0)) == "resuming at the shadow group's committed offsets"
    assert [row.committed for row in await lag(by_offset)] == [3, 3]

    by_time = shadow_settings(live, f"{live.topic_prefix}-t")
    later = StartAt(time_ms=int(time.time() * 1000) + 3_600_000)  # after every turn
    if broker == "tansu":  # it answers a lookup by time with offset 0, whatever the time
        with pytest.raises(ShadowError, match="does not look offsets up by time"):
            await commit_start(by_time, later)
    else:
        await commit_start(by_time, later)
        assert all(row.committed == row.end and row.lag == 0 for row in await lag(by_time))
    past = shadow_settings(live, f"{live.topic_prefix}-p")
    await commit_start(past, StartAt(offset=10**9))  # clipped to the end
    assert [row.committed for row in await lag(past)] == [row.end for row in await lag(past)]


async def test_a_shadow_calls_no_llm_unless_asked_and_then_no_more_than_its_cap(
    live: Settings, llm_server: Any
) -> None:
    server = llm_server(reply=NumberedSummaries())
    live = llm_settings(live, server)  # the live worker's endpoint, in the environment the shadows start with
    sessions = conversations(2, 60, seed=950)
    await ensure_topics(live)
    await produce(live, interleave(list(sessions.values())))
    offline_name, capped_name = f"{live.topic_prefix}-off", f"{live.topic_prefix}-cap"
    with (
        running_shadow(live, offline_name) as offline,
        running_shadow(live, capped_name, "--llm", "--llm-max-calls", "2") as capped,
    ):
        await wait_until_drained(shadow_settings(live, offline_name), offline)
        await wait_until_drained(shadow_settings(live, capped_name, llm=True), capped)
        deadline = time.monotonic() + 30
        while sum(map(is_summary, server.requests)) < 2 and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        await asyncio.sleep(2.0)  # any request past the cap would have gone by now
        running = run_cli(live, "drop", offline_name)
        assert running.returncode == 1 and "stop `turnstream shadow run` first" in running.stderr, running.stderr
    assert sum(map(is_summary, server.requests)) == 2, [r["messages"][0]["content"][:40] for r in server.requests]
    capped_summaries, offline_summaries = (
        await summaries(live, capped_name, sessions),
        await summaries(live, offline_name, sessions),
    )
    assert any("LLM-SUMMARY-" in summary for summary in capped_summaries)  # answered through its own topic
    assert offline_summaries and not any("LLM-SUMMARY-" in summary for summary in offline_summaries)


async def summaries(live: Settings, name: str, sessions: dict[str, Any]) -> list[str]:
    async with ContextClient.from_settings(shadow_settings(live, name)) as client:
        docs = [await client.get(sid) for sid in sessions]
    return [doc.summary for doc in docs if doc is not None]
