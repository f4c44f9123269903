"""A three-broker Apache Kafka cluster (every topic replicated three times, two replicas in sync required) under a
steady load from an outside producer, with two workers that embed every archived turn (TURNSTREAM_EMBEDDINGS=local
when `make models` fetched the models) and serve every scenario, one after another on one cluster:

- the broker that leads the most partitions of the turns topic (of those that lead as many, one that is not the
  active controller) killed with SIGKILL and started again once the cluster has failed over without it;
- a rolling restart of all three brokers (each stopped with SIGTERM and started again, the next once every
  partition has its replicas back in sync);
- the active controller (the KRaft metadata quorum's leader, read from the nodes' quorum-state files) killed with
  SIGKILL and started again once the cluster has failed over without it.

A killed broker stays down until the controller has fenced it, another node is the active controller and every
session's context has moved since the kill (at most MAX_DOWN_SECONDS), so every context is fresh again without it.

After each: no turn is lost or applied twice, every context equals batch compaction of its session's turns, the
archive holds each turn once, the memory journal holds every archived turn and memory once and every archived turn
has its vector; after a kill, every context is fresh again within FRESH_BOUND_SECONDS (CONTROLLER_FRESH_BOUND_SECONDS for the
controller's).
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import KafkaError
from redis.asyncio import Redis

from tests.conftest import topic_prefix
from tests.support.conversations import turns_for
from tests.support.memory import journal_records
from tests.support.pipeline import (
    assert_archive_holds_each_turn_once,
    assert_context_matches_batch,
    interleave,
    produce_paced,
    until,
    wait_for_shares,
    wait_for_versions,
)
from tests.support.worker import RunningWorker, running_worker
from turnstream.client import ContextClient
from turnstream.connections import kafka_options
from turnstream.kafka.admin import ensure_topics
from turnstream.memory.journal import replay
from turnstream.redis.keys import KeyLayout
from turnstream.redis.memory_store import MemoryStore
from turnstream.schemas.archive import ArchiveEntry
from turnstream.schemas.ids import owner_key
from turnstream.schemas.journal import JournalRecord, parse_key
from turnstream.settings import Settings
from turnstream.stack.services import ChildService, EmbeddedStack
from turnstream_tools.benchmarks.suite import with_local_models

pytestmark = pytest.mark.kafka

Sessions = dict[str, list[dict[str, Any]]]

MAX_DOWN_SECONDS = 20.0
"""The longest a killed broker stays down when the cluster does not fail over without it (the freshness checks then
fail)."""
FRESH_BOUND_SECONDS = 15.0
"""How long after a broker's kill every session's context may wait to move again: the controller fences the dead
broker after broker.session.timeout.ms (9 s), leaders move, producers and consumers follow."""
CONTROLLER_FRESH_BOUND_SECONDS = 20.0
"""The same after the active controller's kill: the quorum elects another first (a second or two), and the fence's
9 s start then."""
AFTER_FAULT_SECONDS = 3.0
"""The load goes on this long once a fault is over (a broker started again), so it spans the whole fault."""
EMBEDDED_TIMEOUT = 120.0
"""How long the embedding agents (off the context's path, below the workers' priority) may take to catch up once
every context is done."""


@pytest.fixture(scope="module")
def cluster() -> Iterator[EmbeddedStack]:
    with EmbeddedStack(broker="kafka", kafka_brokers=3, redis=False, start_timeout=120) as stack:
        yield stack


@pytest.fixture(scope="module")
def cluster_settings(cluster: EmbeddedStack, redis_url: str) -> Settings:
    """The cluster, the test Redis, one topic prefix for the module's scenarios, a budget that compacts often, and
    the local embedding models when the checkout has them."""
    settings = Settings(
        kafka_url=cluster.kafka_url,
        redis_url=redis_url,
        topic_prefix=topic_prefix(__name__),
        budget_tokens=1200,
        turn_partitions=6,
    )
    return with_local_models(settings)


@pytest.fixture(scope="module")
async def workers(cluster_settings: Settings) -> AsyncIterator[list[RunningWorker]]:
    """Two workers that live through every scenario: each scenario's sessions are its own, and a worker that a
    fault took down fails the scenario that did it."""
    await ensure_topics(cluster_settings)
    with running_worker(cluster_settings, "first") as first, running_worker(cluster_settings, "second") as second:
        await wait_for_shares([first, second], cluster_settings)
        yield [first, second]


def reading(settings: Settings) -> Settings:
    """The test's own reads: contexts only, so no model is loaded in the test process."""
    return settings.model_copy(update={"embeddings": "off"})


def sessions_of(letter: str, seed: int, count: int, turns: int) -> Sessions:
    """`count` sessions of `turns` each: more than the load sends, which stops on time, not for want of turns."""
    return {f"{letter}{i:02d}": turns_for(f"{letter}{i:02d}", seed=seed + i, count=turns) for i in range(count)}


async def partitions(settings: Settings) -> list[dict[str, Any]]:
    """The turns topic's partitions as the cluster describes them: leader, replicas, in-sync replicas."""
    admin = AIOKafkaAdminClient(**kafka_options(settings))
    await admin.start()
    try:
        (topic,) = await admin.describe_topics([settings.turns_topic])
        return list(topic["partitions"])
    finally:
        await admin.close()


async def leaders(settings: Settings) -> dict[int, int]:
    """Partition of the turns topic -> the node id of its leader."""
    return {part["partition"]: part["leader"] for part in await partitions(settings)}


def busiest_leader(led: dict[int, int], controller: int | None) -> int:
    """The node that leads the most partitions; of those that lead as many, one that is not the active controller,
    so that this scenario and the controller's differ whenever the leaders allow it."""
    counts = Counter(led.values())
    return max(sorted(counts), key=lambda node: (counts[node], node != controller))


async def all_in_sync(settings: Settings, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while any(len(part["isr"]) < len(part["replicas"]) for part in await partitions(settings)):
        assert time.monotonic() < deadline, "the restarted broker never caught up"
        await asyncio.sleep(0.5)


def node_service(cluster: EmbeddedStack, node_id: int) -> ChildService:
    """The broker process of KRaft node `node_id` (nodes are numbered from 1, in the stack's order)."""
    return cluster.kafka_services[node_id - 1]


async def active_controller(cluster: EmbeddedStack, timeout: float = 30) -> int:
    """The active controller once the nodes' election files name one (an election takes a few seconds)."""
    deadline = time.monotonic() + timeout
    while (controller := cluster.active_controller()) is None:
        assert time.monotonic() < deadline, "no node knows the active controller"
        await asyncio.sleep(0.2)
    return controller


def sent_of(sessions: Sessions, ordered: list[dict[str, Any]], sent: int) -> Sessions:
    """Each session's turns among the first `sent` of `ordered`: what the load produced of it."""
    produced: Sessions = {sid: [] for sid in sessions}
    for turn in ordered[:sent]:
        produced[turn["session_id"]].append(turn)
    return produced


@dataclass(frozen=True)
class Kill:
    """A broker a scenario killed and started again."""

    node: int
    at: float
    """When, on the monotonic clock."""
    down: float
    """Seconds until it was started again."""
    leading: int
    """Partitions of the turns topic it led, of `partitions`."""
    partitions: int
    controller_before: int
    controller_while_down: int


Samples = dict[str, list[tuple[float, int]]]
"""Each session's context versions as the test read them while the load ran: (when, on the monotonic clock, version)."""
Fault = Callable[[Samples], Awaitable[Kill | None]]
"""What a scenario does to the cluster while the load runs, seeing the contexts as they move; the broker it killed, if
it killed one."""


async def kill_and_restart(
    cluster: EmbeddedStack, settings: Settings, samples: Samples, choose: Callable[[dict[int, int], int], int]
) -> Kill:
    """Once every session's context has moved, SIGKILL the node `choose` picks from the leaders and the active controller,
    and start it again with its log once the cluster has failed over without it."""
    await every_context_moving(samples)
    led, controller = await leaders(settings), await active_controller(cluster)
    node = choose(led, controller)
    victim = node_service(cluster, node)
    os.kill(victim.process.pid, signal.SIGKILL)
    killed = time.monotonic()
    victim.process.wait()
    try:
        await failed_over(cluster, settings, samples, node, killed)
        down = time.monotonic() - killed
        while_down = await active_controller(cluster)
    finally:  # whatever failed, the next scenario gets three brokers
        await asyncio.to_thread(cluster.restart, victim)
    leading = sum(1 for leader in led.values() if leader == node)
    return Kill(node, killed, down, leading, len(led), controller, while_down)


async def every_context_moving(samples: Samples, timeout: float = 30) -> None:
    """Until every session's context has been read at a version: the workers apply what the load sends, on every
    partition it reaches, before a scenario's fault starts."""
    deadline = time.monotonic() + timeout
    while not all(versions and versions[-1][1] > 0 for versions in samples.values()):
        assert time.monotonic() < deadline, "the workers applied no turn of some sessions before the fault"
        await asyncio.sleep(0.1)


async def failed_over(cluster: EmbeddedStack, settings: Settings, samples: Samples, node: int, killed: float) -> None:
    """Until the controller has fenced the killed `node` (the cluster's metadata no longer lists it), another node is
    the active controller and every session's context has moved since the kill; at most MAX_DOWN_SECONDS. A fixed
    down time longer than every bound would only wait: the broker comes back once nothing waits on it."""
    while time.monotonic() < killed + MAX_DOWN_SECONDS:
        if (
            await fenced(settings, node)
            and cluster.active_controller() not in (None, node)
            and all(moved_since(versions, killed) for versions in samples.values())
        ):
            return
        await asyncio.sleep(0.5)


async def fenced(settings: Settings, node: int) -> bool:
    """Whether the cluster's metadata no longer lists the killed `node`: the controller has fenced it. False when the
    node the admin client asked was the dead one (it picks one at random): the next poll asks another."""
    admin = AIOKafkaAdminClient(**kafka_options(settings))
    await admin.start()
    try:
        brokers = (await admin.describe_cluster())["brokers"]
    except KafkaError as error:
        if not error.retriable:
            raise
        return False
    finally:
        await admin.close()
    return node not in {broker["node_id"] for broker in brokers}


@dataclass(frozen=True)
class Outcome:
    """What a scenario measured, once every check passed."""

    kill: Kill | None
    fresh_after: float
    """Seconds from the kill until every context had moved again (0 without a kill)."""
    repeats: Repeats
    turns: int
    """Turns the load produced."""

    def report(self, scenario: str) -> str:
        told = (
            f"{scenario}: {self.turns} turns, 0 lost, 0 doubled; journal records written again: {self.repeats.same} "
            f"the same, {self.repeats.vectors} vectors embedded again"
        )
        if self.kill is None:
            return told
        kill = self.kill
        return (
            f"{told}; broker {kill.node} killed (leading {kill.leading} of {kill.partitions} partitions; the active controller "
            f"{kill.controller_before} before the kill, {kill.controller_while_down} while it was down) and down "
            f"{kill.down:.1f}s: every context moved again within {self.fresh_after:.1f}s"
        )


async def under_load(settings: Settings, workers: list[RunningWorker], sessions: Sessions, fault: Fault) -> Outcome:
    """Produce the sessions' turns at a steady pace while `fault` runs and AFTER_FAULT_SECONDS more, wait until every
    turn produced is applied, and check the outcome: each context equal to batch compaction of its session's turns,
    the archive holding each turn once, the journal and the vectors complete."""
    with worker_logs_on_failure(workers):
        return await _under_load(settings, workers, sessions, fault)


@contextmanager
def worker_logs_on_failure(workers: list[RunningWorker]) -> Iterator[None]:
    """What running_worker prints when a test fails inside it, for the workers that outlive each scenario."""
    try:
        yield
    except BaseException:
        for n, worker in enumerate(workers, start=1):
            print(f"--- worker {n} log ---\n{worker.log()[-6000:]}")
        raise


async def _under_load(settings: Settings, workers: list[RunningWorker], sessions: Sessions, fault: Fault) -> Outcome:
    ordered = interleave(list(sessions.values()))
    seen: Samples = {sid: [] for sid in sessions}
    stop_sampling, stop_load = asyncio.Event(), asyncio.Event()
    async with ContextClient.from_settings(reading(settings)) as client:
        sampler = asyncio.create_task(sample_versions(client, seen, stop_sampling))
        load = asyncio.create_task(produce_paced(settings, ordered, stop_load))
        try:
            kill = await fault(seen)
            await asyncio.sleep(AFTER_FAULT_SECONDS)
            stop_load.set()
            sent = await load
            assert sent < len(ordered), "every turn was sent before the fault was over: give the sessions more"
            produced = sent_of(sessions, ordered, sent)
            docs = await wait_for_versions(client, {sid: len(turns) for sid, turns in produced.items()}, workers[0])
        finally:
            stop_sampling.set()
            load.cancel()
            await sampler
    assert all(worker.poll() is None for worker in workers), "a worker died in the fault"
    for sid, turns in produced.items():
        assert_context_matches_batch(docs[sid], turns, settings)
    await assert_archive_holds_each_turn_once(settings, produced)
    repeated = await assert_journal_and_vectors_complete(settings, produced)
    fresh_after = max(stalled_after(seen[sid], kill.at) for sid in sessions) if kill else 0.0
    return Outcome(kill, fresh_after, repeated, sent)


async def sample_versions(client: ContextClient, seen: Samples, stop: asyncio.Event) -> None:
    while not stop.is_set():
        for sid in seen:
            doc = await client.get(sid)
            seen[sid].append((time.monotonic(), doc.version if doc else 0))
        await asyncio.sleep(0.1)


def version_at(samples: list[tuple[float, int]], killed: float) -> int:
    """The session's context version as last read before the kill (0 before its first turn)."""
    return max((version for at, version in samples if at <= killed), default=0)


def moved_since(samples: list[tuple[float, int]], killed: float) -> bool:
    """Whether the session's context was read at a higher version after the kill than at it."""
    at_kill = version_at(samples, killed)
    return any(at > killed and version > at_kill for at, version in samples)


def stalled_after(samples: list[tuple[float, int]], killed: float) -> float:
    """Seconds from the kill until the session's context moved again; 0 when it had no turn left to apply."""
    at_kill = version_at(samples, killed)
    final = samples[-1][1] if samples else 0
    if final <= at_kill:
        return 0.0
    return next(at - killed for at, version in samples if at > killed and version > at_kill)


@dataclass(frozen=True)
class Repeats:
    """Journal records written more than once through a fault."""

    same: int
    """Records that repeat an earlier one, key and value: a retry of the worker's producer (compaction folds them)."""
    vectors: int
    """Entries whose vector record was written again with other values: an archived turn the embedding agent was
    given twice (redelivered after a rebalance, or journaled twice), embedded again in another batch, whose
    expansion terms differ (decision 0034: they depend on what the owner said before)."""


async def assert_journal_and_vectors_complete(settings: Settings, sessions: Sessions) -> Repeats:
    """The memory journal holds each memory and archived turn of the sessions' owners once, as Redis holds them, so
    a Redis that loses them gets them back; with embeddings on, every archived turn has its vector beside it in
    Redis and in the journal, of the same model."""
    owners = sorted({owner_key(turns[0]["user_id"], turns[0].get("tenant"), sid) for sid, turns in sessions.items()})
    embedded = settings.embeddings != "off"
    redis = Redis.from_url(str(settings.redis_url))
    try:
        if embedded:
            await until(lambda: all_embedded(redis, settings, owners), timeout=EMBEDDED_TIMEOUT)
        stored = {owner: await stored_archive(redis, settings, owner) for owner in owners}
        memory = MemoryStore(redis, settings)
        memories = {owner: {m.id: m.stored_json() for m in await memory.list(owner)} for owner in owners}
    finally:
        await redis.aclose()
    records = await journal_records(settings)
    journaled = replay(records, time.time(), settings.owner_ttl_seconds).owners
    for owner in owners:
        kept = journaled[owner]
        assert {m.id: m.stored_json() for m in kept.memories} == memories[owner], owner
        assert {e.id: e for e in kept.entries} == {entry.id: entry for entry, _ in stored[owner].values()}, owner
        if embedded:
            assert {v.id: v.tag for v in kept.embedded} == {
                entry_id: tag for entry_id, (_, tag) in stored[owner].items()
            }, owner
    return repeats(records, set(owners))


async def stored_archive(redis: Redis, settings: Settings, owner: str) -> dict[str, tuple[ArchiveEntry, str | None]]:
    """The owner's archive in Redis: entry id -> the entry and the model tag of its vector (None without one)."""
    keys = KeyLayout(settings.topic_prefix).owner(owner)
    entries, vectors = await redis.hgetall(keys.archive), await redis.hgetall(keys.vectors)
    return {
        (entry := ArchiveEntry.from_json(raw)).id: (entry, _tag(vectors.get(short))) for short, raw in entries.items()
    }


def _tag(vector: bytes | None) -> str | None:
    """The model tag a stored vector starts with (`<model tag><TAB><terms><TAB><int8 vector>`)."""
    return vector.split(b"\t", 1)[0].decode() if vector is not None else None


def repeats(records: list[JournalRecord], owners: set[str]) -> Repeats:
    """What the journal holds more than once of `owners`; fails on an archived turn written with two values (a
    memory's slot may be: a correction rewrites it)."""
    values: dict[bytes, set[bytes | None]] = defaultdict(set)
    same = 0
    for record in records:
        if parse_key(record.key)[1] in owners:
            same += record.value in values[record.key]
            values[record.key].add(record.value)
    rewritten = Counter(parse_key(key)[0] for key, seen in values.items() if len(seen) > 1)
    assert not rewritten["a"], f"archived turns journaled twice with different values: {rewritten}"
    return Repeats(same, rewritten["v"])


async def all_embedded(redis: Redis, settings: Settings, owners: list[str]) -> bool:
    """Whether every archived entry of `owners` has its vector beside it."""
    layout = KeyLayout(settings.topic_prefix)
    for owner in owners:
        keys = layout.owner(owner)
        if set(await redis.hkeys(keys.archive)) - set(await redis.hkeys(keys.vectors)):
            return False
    return True


def test_a_context_moved_since_a_kill_only_when_read_at_a_higher_version_after_it() -> None:
    assert moved_since([(1.0, 3), (2.0, 4), (3.0, 5)], killed=2.5)
    assert not moved_since([(1.0, 3), (2.0, 4), (3.0, 4)], killed=2.5)  # read after, at the same version
    assert not moved_since([(1.0, 3), (2.0, 4)], killed=2.5)  # not read after
    assert moved_since([(3.0, 1)], killed=2.5)  # nothing applied before the kill


def test_the_busiest_leader_is_not_the_controller_where_leaders_tie() -> None:
    assert busiest_leader({0: 1, 1: 2, 2: 3, 3: 1, 4: 2, 5: 3}, controller=1) == 2
    assert busiest_leader({0: 1, 1: 2, 2: 3, 3: 1, 4: 2, 5: 3}, controller=3) == 1
    assert busiest_leader({0: 1, 1: 1, 2: 1, 3: 2, 4: 2, 5: 3}, controller=1) == 1  # it leads the most
    assert busiest_leader({0: 2, 1: 2, 2: 3}, controller=None) == 2


async def test_a_broker_killed_under_load_loses_no_turn_and_applies_none_twice(
    cluster: EmbeddedStack, cluster_settings: Settings, workers: list[RunningWorker]
) -> None:
    sessions = sessions_of("c", seed=300, count=12, turns=300)

    async def kill_the_busiest_leader(samples: Samples) -> Kill:
        return await kill_and_restart(cluster, cluster_settings, samples, busiest_leader)

    outcome = await under_load(cluster_settings, workers, sessions, kill_the_busiest_leader)
    print("\n" + outcome.report("the busiest partition leader killed"))
    assert outcome.fresh_after <= FRESH_BOUND_SECONDS, f"a context waited {outcome.fresh_after:.1f}s after the kill"


async def test_a_rolling_restart_of_every_broker_under_load_loses_no_turn_and_applies_none_twice(
    cluster: EmbeddedStack, cluster_settings: Settings, workers: list[RunningWorker]
) -> None:
    sessions = sessions_of("r", seed=400, count=10, turns=500)

    async def restart_each_broker(samples: Samples) -> None:
        await every_context_moving(samples)
        for node_id in (1, 2, 3):
            service = node_service(cluster, node_id)
            await asyncio.to_thread(service.stop, cluster.stop_grace, True)  # SIGTERM: a controlled shutdown
            await asyncio.to_thread(cluster.restart, service)
            await all_in_sync(cluster_settings)

    outcome = await under_load(cluster_settings, workers, sessions, restart_each_broker)
    print("\n" + outcome.report("a rolling restart"))


async def test_the_active_controller_killed_under_load_loses_no_turn_and_applies_none_twice(
    cluster: EmbeddedStack, cluster_settings: Settings, workers: list[RunningWorker]
) -> None:
    sessions = sessions_of("k", seed=500, count=12, turns=300)

    async def kill_the_controller(samples: Samples) -> Kill:
        return await kill_and_restart(cluster, cluster_settings, samples, lambda led, controller: controller)

    outcome = await under_load(cluster_settings, workers, sessions, kill_the_controller)
    print("\n" + outcome.report("the active controller killed"))
    assert outcome.kill is not None and outcome.kill.controller_while_down != outcome.kill.node, "no new controller"
    assert outcome.fresh_after <= CONTROLLER_FRESH_BOUND_SECONDS, (
        f"a context waited {outcome.fresh_after:.1f}s after the kill"
    )
