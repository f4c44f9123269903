"""Topic administration: create every topic turnstream uses with the configured partitions."""

from __future__ import annotations

from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from turnstream.settings import Settings


async def ensure_topics(settings: Settings) -> list[str]:
    """Create the missing topics; returns their names.

    Auto-creation on first produce would pick the broker's partition count, and every topic a session
    agent reads must have as many partitions as its Table's changelog.
    """
    admin = AIOKafkaAdminClient(bootstrap_servers=settings.bootstrap_servers)
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        wanted = (settings.turns_topic, settings.dlq_topic, settings.compaction_topic, settings.summaries_topic)
        missing = [name for name in wanted if name not in existing]
        if missing:
            await admin.create_topics(
                [NewTopic(name, num_partitions=settings.turn_partitions, replication_factor=1) for name in missing]
            )
        return missing
    finally:
        await admin.close()
