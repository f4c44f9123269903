"""Kafka topics read back by tests: a topic's description, the turns topic's records, the sessions Table's changelog."""

from __future__ import annotations

import orjson
from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.structs import ConsumerRecord

from turnstream.connections import kafka_options
from turnstream.kafka.admin import SESSIONS_TABLE, faust_app_id
from turnstream.settings import Settings


async def describe(settings: Settings, names: list[str]) -> dict[str, dict]:
    admin = AIOKafkaAdminClient(**kafka_options(settings))
    await admin.start()
    try:
        return {topic["topic"]: topic for topic in await admin.describe_topics(names)}
    finally:
        await admin.close()


async def consume(settings: Settings, count: int) -> list[ConsumerRecord]:
    # no group: a JoinGroup costs ~5 s on the embedded broker
    consumer = AIOKafkaConsumer(bootstrap_servers=settings.bootstrap_servers, auto_offset_reset="earliest")
    await consumer.start()
    records = []
    try:
        consumer.assign([TopicPartition(settings.turns_topic, p) for p in range(settings.turn_partitions)])
        while len(records) < count:
            batch = await consumer.getmany(timeout_ms=10_000)
            assert batch, f"only {len(records)} of {count} records came back"
            records.extend(record for part in batch.values() for record in part)
    finally:
        await consumer.stop()
    return records


async def changelog(settings: Settings) -> list[tuple[str, int, bytes | None]]:
    """(key, partition, value) of every record on the sessions Table's changelog so far."""
    topic = f"{faust_app_id(settings)}-{SESSIONS_TABLE}-changelog"
    consumer = AIOKafkaConsumer(auto_offset_reset="earliest", enable_auto_commit=False, **kafka_options(settings))
    await consumer.start()
    try:
        partitions = [TopicPartition(topic, p) for p in range(settings.turn_partitions)]
        consumer.assign(partitions)
        ends = await consumer.end_offsets(partitions)
        records: list[tuple[str, int, bytes | None]] = []
        while any([await consumer.position(tp) < end for tp, end in ends.items()]):
            for batch in (await consumer.getmany(timeout_ms=500)).values():
                records += [(orjson.loads(r.key), r.partition, r.value) for r in batch]  # Faust writes str keys as JSON
        return records
    finally:
        await consumer.stop()
