"""The memory journal on a broker that really compacts: Apache Kafka's log cleaner drops every older version of
a rewritten memory and, once delete.retention.ms has passed, the tombstones `turnstream forget` wrote and the
records they cover; a worker re-syncing an emptied Redis from what is left rebuilds every memory, profile line
and archived turn as it was, and nothing of the erased user."""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from dataclasses import dataclass

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

from tests.support.forgetting import TENANT, conversation, forget
from tests.support.pipeline import wait_for_versions
from tests.support.resync import INTERVAL, REPLAY_TIMEOUT, drop_every_key, long_chat, owner_data, replayed
from tests.support.worker import running_worker
from turnstream.client import ContextClient, TurnProducer
from turnstream.connections import kafka_options
from turnstream.kafka.admin import ensure_topics
from turnstream.memory.journal import replay
from turnstream.redis.archive import ArchiveStore
from turnstream.schemas.journal import JournalRecord, journal_key, parse_key
from turnstream.settings import Settings

pytestmark = pytest.mark.integration

COMPACTING = {
    "cleanup.policy": "compact",
    "min.cleanable.dirty.ratio": "0.01",
    "min.compaction.lag.ms": "0",
    "delete.retention.ms": "1000",
}
"""The journal's configuration for this test. AlterConfigs replaces a topic's whole set of overrides, so the
cleanup policy is in it again."""
WRITING = {**COMPACTING, "segment.ms": str(3600 * 1000)}
"""While the worker writes: one segment per partition, the active one, which the cleaner never touches, so the
journal can be read whole before anything is compacted. (A small max.compaction.lag.ms would roll it too.)"""
ROLLING = {**COMPACTING, "segment.ms": "1000", "max.compaction.lag.ms": "1000"}
"""Then: the next record appended a second later rolls the segment, and what is behind it can be cleaned. A log
whose dirty part is a few small records is cleaned anyway once they are max.compaction.lag.ms old: the second
pass, the one that drops tombstones past delete.retention.ms, needs it (the dirty ratio alone would not pick it)."""
ROLL_OWNER = "acme:~segment-roll"
"""Owner of the tombstones appended to roll the segments: keys nothing was ever written under."""
COMPACTION_TIMEOUT = 90.0


@dataclass(frozen=True)
class Logged:
    """One record of the journal where it sits in the log."""

    partition: int
    offset: int
    key: bytes
    value: bytes | None
    timestamp: float

    def journal(self) -> JournalRecord:
        return JournalRecord(self.key, self.value, self.timestamp)


async def alter_journal(settings: Settings, config: dict[str, str]) -> None:
    admin = AIOKafkaAdminClient(**kafka_options(settings))
    await admin.start()
    try:
        responses = await admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, settings.memory_topic, config)])
        errors = [resource for response in responses for resource in response.resources if resource[0]]
        assert not errors, errors
    finally:
        await admin.close()


async def read_journal(settings: Settings) -> tuple[list[Logged], dict[int, int]]:
    """Every record the journal holds, partition by partition in log order, and each partition's end offset (how
    many records were ever appended to it)."""
    consumer = AIOKafkaConsumer(
        **kafka_options(settings),
        group_id=None,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        fetch_max_wait_ms=50,
    )
    await consumer.start()
    try:
        partitions = [
            TopicPartition(settings.memory_topic, p) for p in range(settings.turn_partitions)
        ]  # co-partitioned
        consumer.assign(partitions)
        await consumer.seek_to_beginning(*partitions)
        ends = await consumer.end_offsets(partitions)
        records: list[Logged] = []
        deadline = time.monotonic() + 30
        while any([await consumer.position(tp) < ends[tp] for tp in partitions]):
            assert time.monotonic() < deadline, "the journal could not be read to its end"
            for tp, messages in (await consumer.getmany(*partitions, timeout_ms=200, max_records=5000)).items():
                records += [Logged(tp.partition, m.offset, m.key or b"", m.value, m.timestamp / 1000) for m in messages]
        records.sort(key=lambda r: (r.partition, r.offset))
        return records, {tp.partition: end for tp, end in ends.items()}
    finally:
        await consumer.stop()


def offsets_by_key(records: list[Logged]) -> dict[bytes, list[int]]:
    found: defaultdict[bytes, list[int]] = defaultdict(list)
    for record in records:
        found[record.key].append(record.offset)
    return dict(found)


def of_owner(records: list[Logged], owner: str, kinds: str = "ma") -> list[Logged]:
    return [r for r in records if parse_key(r.key)[1] == owner and parse_key(r.key)[0] in kinds]


def replayed_owners(records: list[Logged]) -> dict[str, tuple[list[str], list[str]]]:
    """What a re-sync would write back from `records`: per owner, memories and archive entries as JSON."""
    left: dict[str, tuple[list[str], list[str]]] = {}
    for partition in sorted({r.partition for r in records}):
        owners = replay([r.journal() for r in records if r.partition == partition], time.time(), 3600).owners
        left |= {
            owner: ([m.model_dump_json() for m in kept.memories], [e.to_json().decode() for e in kept.entries])
            for owner, kept in owners.items()
        }
    return left


def restated(session_id: str, user_id: str, seed: int, digits: str) -> list[dict]:
    """conversation(…, seed) again with `digits` before every number: the same memory slots, corrected."""
    turns = conversation(session_id, user_id, seed)
    for turn in turns:
        if turn["message"]["role"] == "user":
            turn["message"]["content"] = turn["message"]["content"].replace(" is ", f" is {digits}")
    return turns


@pytest.mark.parametrize("broker", ["kafka"])  # the point is a broker whose log cleaner runs
async def test_resync_from_a_compacted_journal_rebuilds_everything_but_the_erased_user(settings: Settings) -> None:
    settings = settings.model_copy(
        update={"turn_partitions": 3, "resync_interval_seconds": INTERVAL, "budget_tokens": 1500}
    )
    owners = ("acme:maya", ":acme:c-x")
    await ensure_topics(settings)
    await alter_journal(settings, WRITING)
    with running_worker(settings, "writer") as worker:
        async with TurnProducer(settings) as producer, ContextClient.from_settings(settings) as client:
            archive = ArchiveStore(client.store.redis, settings)
            # one stage after the other: the same slots rewritten, and no two sessions of one owner in flight at
            # once (their archive appends and journal records could interleave in different orders)
            for stage in (
                conversation("c-a", "maya", 0) + conversation("c-x", None, 20) + conversation("c-c", "olga", 30),
                long_chat("c-long", "maya") + restated("c-d", "olga", 30, "10"),
                restated("c-b", "maya", 0, "10"),
                restated("c-e", "maya", 0, "20"),
            ):
                for turn in stage:
                    await producer.send(turn)
                await producer.flush()
                await wait_for_versions(
                    client, {turn["session_id"]: turn["seq"] + 1 for turn in stage}, worker, tenant=TENANT
                )
            await replayed(client, REPLAY_TIMEOUT)  # the first check after start: this Redis never had the journal
            before = {owner: await owner_data(client, archive, owner) for owner in owners}
            first_written = {m.id: m.created_at for owner in owners for m in await client.memory.list(owner)}
            assert len(before["acme:maya"]["archive"]) > 60 and before[":acme:c-x"]["memories"], before
            assert any(" is 20" in text for text in before["acme:maya"]["profile"]), before["acme:maya"]["profile"]

            erased = forget(settings, "--user", "olga", "--tenant", TENANT)
            assert erased.returncode == 0, erased.stderr
        assert "Traceback" not in worker.log()

    written, ends = await read_journal(settings)
    assert len(written) == sum(ends.values()), "records went before the segments rolled: nothing to compare with"
    versions = offsets_by_key(written)
    live = {r.key: r.value is not None for r in written}  # by each key's latest record: a value, or a tombstone
    rewritten = [key for key, offsets in versions.items() if len(offsets) > 1 and live[key]]
    assert len([key for key in rewritten if parse_key(key)[0] == "m" and len(versions[key]) == 3]) == 3, rewritten
    assert of_owner(written, "acme:olga") and not any(live[r.key] for r in of_owner(written, "acme:olga")), (
        "forget left a key live"
    )
    assert [parse_key(r.key) for r in of_owner(written, "acme:olga", "x")] == [("x", "acme:olga", "")]
    # what a fully compacted journal holds: the latest record of each key that has a value, at its offset
    compacted = {key: [offsets[-1]] for key, offsets in versions.items() if live[key]}

    # roll every partition's segment until the cleaner has dropped what it can
    await alter_journal(settings, ROLLING)
    rolls = AIOKafkaProducer(**kafka_options(settings), acks="all")
    await rolls.start()
    started = time.monotonic()
    try:
        while True:
            await asyncio.sleep(1.2)  # past segment.ms: the next record starts a new segment
            for partition in ends:
                await rolls.send_and_wait(
                    settings.memory_topic, None, key=journal_key("m", ROLL_OWNER, "roll"), partition=partition
                )
            left, left_ends = await read_journal(settings)
            data = [r for r in left if parse_key(r.key)[1] != ROLL_OWNER]
            kept = offsets_by_key(data)
            if kept == compacted or time.monotonic() - started > COMPACTION_TIMEOUT:
                break
    finally:
        await rolls.stop()
    compacted_in = time.monotonic() - started
    removed = sum(left_ends.values()) - len(left)
    print(
        f"compaction removed {len(written) - len(data)} of the {len(written)} journal records in {compacted_in:.1f} s "
        f"({removed} of {sum(left_ends.values())} offsets, segment-roll tombstones included)"
    )

    assert len(data) < len(written) and len(left) < sum(left_ends.values()), (len(data), len(written))
    assert not of_owner(data, "acme:olga"), (
        f"the erased user's records or tombstones are still in the journal: {of_owner(data, 'acme:olga')}"
    )
    still = {parse_key(key): offsets for key, offsets in kept.items() if offsets != compacted.get(key)}
    assert not still, f"older versions or tombstones left, or a latest record gone (key: offsets left): {still}"
    assert set(compacted) <= set(kept), "a live key lost its latest record"
    assert replayed_owners(data) == replayed_owners(written)  # compaction changed nothing a replay writes back

    # Redis loses everything; a fresh worker rebuilds it from the compacted journal
    assert await drop_every_key(settings) > 0
    with running_worker(settings, "resyncer") as worker:
        async with ContextClient.from_settings(settings) as client:
            archive = ArchiveStore(client.store.redis, settings)
            took = await replayed(client, REPLAY_TIMEOUT)
            after = {owner: await owner_data(client, archive, owner) for owner in (*owners, "acme:olga")}
            first_written_after = {m.id: m.created_at for owner in owners for m in await client.memory.list(owner)}
        log = worker.log()
    for owner in owners:
        assert after[owner] == before[owner], f"{owner} not as it was, {took:.1f} s after the loss"
    assert first_written_after == first_written  # a corrected memory is dated by its first write, as before
    assert after["acme:olga"] == {"memories": [], "profile": [], "archive": []}
    assert "replayed the memory journal" in log and "Traceback" not in log and "unreadable" not in log
