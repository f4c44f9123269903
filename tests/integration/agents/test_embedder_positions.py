"""Where the embedders go on in the memory journal: their own group's commits, else those the worker's Faust group
made when the embedder was its agent (an upgraded worker), else the partition's start."""

from __future__ import annotations

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.structs import OffsetAndMetadata

from turnstream.agents.embedder import embedding_positions
from turnstream.connections import kafka_options
from turnstream.kafka.admin import embedder_group, ensure_topics, faust_app_id
from turnstream.kafka.journal_topic import append_records
from turnstream.schemas.archive import ArchiveEntry
from turnstream.schemas.journal import archive_record
from turnstream.settings import Settings


async def commit(settings: Settings, group: str, offsets: dict[int, int]) -> None:
    consumer = AIOKafkaConsumer(**kafka_options(settings), group_id=group, enable_auto_commit=False)
    await consumer.start()
    try:
        tps = {TopicPartition(settings.memory_topic, partition): offset for partition, offset in offsets.items()}
        consumer.assign(list(tps))
        await consumer.commit({tp: OffsetAndMetadata(offset, "") for tp, offset in tps.items()})
    finally:
        await consumer.stop()


async def test_the_embedders_go_on_from_their_commits_else_from_the_old_agents(settings: Settings) -> None:
    settings = settings.model_copy(update={"turn_partitions": 3})
    await ensure_topics(settings)
    entries = [ArchiveEntry(f"e{n}", "s1", n, "user", None, 1000.0 + n, f"turn {n}") for n in range(6)]
    await append_records(settings, [("alice", *archive_record("alice", entry)) for entry in entries])
    partitions = [0, 1, 2]
    options = kafka_options(settings)
    assert await embedding_positions(settings, options, partitions) == {}  # a new prefix: every partition's start

    await commit(settings, faust_app_id(settings), {0: 4, 1: 0, 2: 6})  # the old embedding agent's commits
    assert await embedding_positions(settings, options, partitions) == {0: 4, 1: 0, 2: 6}

    await commit(settings, embedder_group(settings), {0: 5})  # the embedders' own commits win where they have one
    assert await embedding_positions(settings, options, partitions) == {0: 5, 1: 0, 2: 6}
