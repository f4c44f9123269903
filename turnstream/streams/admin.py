"""Topic administration: create the input and dead-letter topics with the configured partitions."""

from __future__ import annotations

from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from turnstream.settings import Settings


async def ensure_topics(settings: Settings) -> list[str]:
    """Create the turns and DLQ topics where missing (auto-creation would pick the broker's partition count)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=settings.bootstrap_servers)
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        missing = [name for name in (settings.turns_topic, settings.dlq_topic) if name not in existing]
        if missing:
            await admin.create_topics(
                [NewTopic(name, num_partitions=settings.turn_partitions, replication_factor=1) for name in missing]
            )
        return missing
    finally:
        await admin.close()
