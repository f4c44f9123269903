"""The memory journal topic on the broker: appending records outside the worker, and reading partitions back.

The records are in memory/journal.py; the worker appends through its own Faust producer
(agents/sinks.py), everything else (`turnstream forget`) through `append_records`.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient

from turnstream.connections import kafka_options
from turnstream.errors import TurnstreamError
from turnstream.kafka.idempotence import started
from turnstream.schemas.ids import partition_of
from turnstream.schemas.journal import JournalRecord
from turnstream.settings import KafkaSettings

READ_TIMEOUT_SECONDS = 60.0
"""A partition that gives no record for this long while behind its end is taken as unreadable."""


class JournalReadError(TurnstreamError, RuntimeError):
    """A journal partition could not be read to its end."""


async def append_records(settings: KafkaSettings, records: Iterable[tuple[str, bytes, bytes | None]]) -> int:
    """Produce (owner, key, value) records, each to its owner's partition, and wait for every ack; how many."""
    producer, _ = await started(
        lambda idempotent: AIOKafkaProducer(**kafka_options(settings), acks="all", enable_idempotence=idempotent),
        settings,
    )
    try:
        sent = [
            await producer.send(
                settings.memory_topic, value, key=key, partition=partition_of(owner, settings.turn_partitions)
            )
            for owner, key, value in records
        ]
        for future in sent:
            await future
        return len(sent)
    finally:
        await producer.stop()


class JournalReader:
    """Reads journal partitions from a position up to their end (records appended meanwhile included, until it
    catches up)."""

    def __init__(self, settings: KafkaSettings, kafka: dict[str, Any]) -> None:
        """`kafka`: the aiokafka connection options (connections.kafka_options, or the worker app's)."""
        self.topic = settings.memory_topic
        self._kafka = kafka
        self._consumer = AIOKafkaConsumer(
            **kafka, group_id=None, enable_auto_commit=False, fetch_max_wait_ms=50, auto_offset_reset="earliest"
        )

    async def __aenter__(self) -> JournalReader:
        await self._consumer.start()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self._consumer.stop()

    async def partitions(self) -> list[int]:
        """The topic's partitions as the broker lists them now (none while it does not exist)."""
        # A Metadata request for the topic itself: a consumer starts with the metadata of no topic on Apache Kafka
        # (Tansu answers its empty request with every topic), and its `topics()` fetches into a copy of its own.
        admin = AIOKafkaAdminClient(**self._kafka)
        await admin.start()
        try:
            described = await admin.describe_topics([self.topic])
        finally:
            await admin.close()
        return sorted(
            p["partition"]
            for topic in described
            if topic["topic"] == self.topic and not topic["error_code"]
            for p in topic["partitions"]
        )

    async def read(self, partition: int, start: int = 0) -> tuple[list[JournalRecord], int]:
        """Records of `partition` from offset `start` up to its end (a fetch's high watermark: right on every broker,
        where ListOffsets is not); with the offset to read from next."""
        tp = TopicPartition(self.topic, partition)
        self._consumer.assign([tp])
        self._consumer.seek(tp, start)
        records: list[JournalRecord] = []
        deadline = time.monotonic() + READ_TIMEOUT_SECONDS
        while True:
            batch = await self._consumer.getmany(tp, timeout_ms=200, max_records=5000)
            for message in batch.get(tp, []):
                records.append(
                    JournalRecord(message.key or b"", message.value, message.timestamp / 1000, message.offset)
                )
                deadline = time.monotonic() + READ_TIMEOUT_SECONDS
            position, end = await self._consumer.position(tp), self._consumer.highwater(tp)
            if end is not None and position >= end:
                return records, position
            if time.monotonic() > deadline:
                raise JournalReadError(
                    f"{self.topic}/{partition} gave nothing for {READ_TIMEOUT_SECONDS:.0f}s at "
                    f"offset {position} (end {end})"
                )
