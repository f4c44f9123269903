"""End offsets for table recovery: every record the broker acknowledged is below them, batches included."""

from __future__ import annotations

import asyncio

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from tests.support.services import on_each_broker
from turnstream.connections import kafka_options
from turnstream.kafka.end_offsets import fetched_end_offsets
from turnstream.settings import Settings


async def create_topic(settings: Settings, name: str, partitions: int) -> None:
    admin = AIOKafkaAdminClient(**kafka_options(settings))
    await admin.start()
    try:
        await admin.create_topics([NewTopic(name, partitions, 1)])
    finally:
        await admin.close()


async def produce_batches(settings: Settings, topic: str, partition: int, batches: int, per_batch: int) -> int:
    """`batches` bursts of `per_batch` records sent without waiting in between (one record batch each);
    the offset of the last record, once all are acknowledged."""
    producer = AIOKafkaProducer(**kafka_options(settings), acks="all", linger_ms=5)
    await producer.start()
    try:
        last = -1
        for _ in range(batches):
            sent = [await producer.send(topic, b"row", partition=partition) for _ in range(per_batch)]
            last = max(metadata.offset for metadata in await asyncio.gather(*sent))
        return last
    finally:
        await producer.stop()


async def listed_end(settings: Settings, tp: TopicPartition) -> int:
    consumer = AIOKafkaConsumer(**kafka_options(settings), enable_auto_commit=False)
    await consumer.start()
    try:
        return (await consumer.end_offsets([tp]))[tp]
    finally:
        await consumer.stop()


@on_each_broker
async def test_every_acknowledged_record_is_below_the_end_offset(settings: Settings) -> None:
    topic = f"{settings.topic_prefix}.rows"
    await create_topic(settings, topic, 3)
    last = await produce_batches(settings, topic, partition=1, batches=4, per_batch=6)
    written, empty = TopicPartition(topic, 1), TopicPartition(topic, 2)
    listed = {written: await listed_end(settings, written), empty: 0}
    ends = await fetched_end_offsets(kafka_options(settings), listed)
    assert ends[written] == last + 1  # whatever ListOffsets said (the embedded broker says less)
    assert ends[empty] == 0  # nothing to confirm in an empty partition


@on_each_broker
async def test_a_listed_end_already_right_stays(settings: Settings) -> None:
    topic = f"{settings.topic_prefix}.one"
    await create_topic(settings, topic, 1)
    last = await produce_batches(settings, topic, partition=0, batches=3, per_batch=1)  # one record per batch
    tp = TopicPartition(topic, 0)
    assert await fetched_end_offsets(kafka_options(settings), {tp: last + 1}) == {tp: last + 1}
