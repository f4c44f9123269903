"""One session's records as the log holds them: what `turnstream context get --at-version` replays.

The partition of the session's key (murmur2, as TurnProducer, the Java client and Faust place a record), read by a
consumer with no group and no commits from its earliest offset to the end it had when the read began, keeping the
records keyed by the session. That is every record its worker applies: a turn keyed otherwise is forwarded by the
worker under the session key, and the forwarded copy is read here. Records past the topic's retention are gone; the
earliest offset read says where the partition's log now starts.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.structs import ConsumerRecord

from turnstream.connections import kafka_options
from turnstream.errors import TurnstreamError
from turnstream.kafka.end_offsets import fetched_end_offsets
from turnstream.schemas.ids import partition_of
from turnstream.session.replay import LogRecord
from turnstream.settings import KafkaSettings

STALL_SECONDS = 30.0
"""A read that gets no record for this long while records remain before the end gives up."""


class LogUnreadable(TurnstreamError, RuntimeError):
    """The session's log cannot be read: a topic is missing, or the broker stopped answering."""


@dataclass(frozen=True)
class SessionLog:
    """A session's records from its partition of each topic read, merged in time order."""

    records: list[LogRecord]
    partition: int
    starts: dict[str, int]
    """Per topic, the partition's earliest offset: above 0, older records are past the topic's retention."""


async def read_session_log(settings: KafkaSettings, key: str, topics: Sequence[str]) -> SessionLog:
    """Session `key`'s records of `topics` (the turns topic first), each topic's in log order; several topics are
    merged by record time, as the worker's consumer takes them."""
    options = kafka_options(settings)
    partition = await _partition(options, key, topics)
    consumer = AIOKafkaConsumer(**options, group_id=None, enable_auto_commit=False, auto_offset_reset="earliest")
    await consumer.start()
    try:
        parts = [TopicPartition(topic, partition) for topic in topics]
        consumer.assign(parts)
        starts = await consumer.beginning_offsets(parts)
        ends = await fetched_end_offsets(options, await consumer.end_offsets(parts))
        read = await _read(consumer, starts, ends, {key.encode()})
    finally:
        await consumer.stop()
    merged = list(heapq.merge(*(read[tp] for tp in parts), key=lambda record: record.timestamp))
    return SessionLog(merged, partition, {tp.topic: starts[tp] for tp in parts})


async def read_sessions_records(settings: KafkaSettings, keys: Sequence[str], topic: str) -> dict[str, list[LogRecord]]:
    """The records of `topic` keyed by each of `keys`, in log order, read in one pass over the partitions that hold
    them (`turnstream diff` reads many sessions' turns: one read per session would read a partition per session)."""
    if not keys:
        return {}
    options = kafka_options(settings)
    partitions = await _partition_count(options, [topic])
    wanted = {TopicPartition(topic, partition_of(key, partitions)) for key in keys}
    consumer = AIOKafkaConsumer(**options, group_id=None, enable_auto_commit=False, auto_offset_reset="earliest")
    await consumer.start()
    try:
        consumer.assign(sorted(wanted))
        starts = await consumer.beginning_offsets(sorted(wanted))
        ends = await fetched_end_offsets(options, await consumer.end_offsets(sorted(wanted)))
        read = await _read(consumer, starts, ends, {key.encode() for key in keys})
    finally:
        await consumer.stop()
    found: dict[str, list[LogRecord]] = {key: [] for key in keys}
    for records in read.values():
        for record in records:
            found[(record.key or b"").decode()].append(record)
    return found


async def _partition(options: dict[str, Any], key: str, topics: Sequence[str]) -> int:
    """The partition of `key`, by the turns topic's partition count (the others are co-partitioned with it)."""
    return partition_of(key, await _partition_count(options, topics))


async def _partition_count(options: dict[str, Any], topics: Sequence[str]) -> int:
    """The first of `topics`' partition count; LogUnreadable when any of them is missing."""
    admin = AIOKafkaAdminClient(**options)
    await admin.start()
    try:
        described = {topic["topic"]: topic for topic in await admin.describe_topics(list(topics))}
    finally:
        await admin.close()
    missing = [name for name in topics if name not in described or described[name]["error_code"]]
    if missing:
        raise LogUnreadable(f"no topic {', '.join(missing)} on the broker (check TURNSTREAM_TOPIC_PREFIX)")
    return len(described[topics[0]]["partitions"])


async def _read(
    consumer: AIOKafkaConsumer, starts: dict[TopicPartition, int], ends: dict[TopicPartition, int], keys: set[bytes]
) -> dict[TopicPartition, list[LogRecord]]:
    """Every record keyed by one of `keys` from each partition's start to its end."""
    read: dict[TopicPartition, list[LogRecord]] = {tp: [] for tp in starts}
    for tp, start in starts.items():
        consumer.seek(tp, start)
    pending = {tp for tp in starts if ends[tp] > starts[tp]}
    heard = time.monotonic()
    while pending:
        batches = await consumer.getmany(*pending, timeout_ms=500)
        for tp, records in batches.items():
            read[tp] += [_record(r) for r in records if r.key in keys and r.offset < ends[tp]]
            heard = time.monotonic() if records else heard
        pending = {tp for tp in pending if await consumer.position(tp) < ends[tp]}
        if pending and time.monotonic() - heard > STALL_SECONDS:
            raise LogUnreadable(f"no record of {sorted(map(str, pending))} for {STALL_SECONDS:.0f}s before their end")
    return read


def _record(consumed: ConsumerRecord) -> LogRecord:
    """A consumed record as the replay reads it (its timestamp in seconds)."""
    return LogRecord(consumed.topic, consumed.key, consumed.value, list(consumed.headers), consumed.timestamp / 1000)
