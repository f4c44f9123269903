"""Topic administration: create every topic a worker uses, and check the layout of the ones that exist."""

from __future__ import annotations

from turnstream.kafka.topic_creation import TopicLayoutError, TopicSpec, TopicsReady, create_topics, turns_topic
from turnstream.settings import KafkaSettings

WORKER_APP = "worker"
"""Name of the worker's Faust app under the topic prefix; the Faust app id is `<prefix>-worker`."""
EMBEDDER_APP = "embedder"
"""Name of the embedders' consumer group under the topic prefix (`<prefix>-embedder`): they read the memory journal
with a consumer of their own, not Faust's (agents/embedder.py)."""
SESSIONS_TABLE = "sessions"
"""Name of the sessions Table; Faust names its changelog `<app id>-sessions-changelog`."""


def faust_app_id(settings: KafkaSettings, name: str = WORKER_APP) -> str:
    return f"{settings.topic_prefix}-{name}"


def embedder_group(settings: KafkaSettings) -> str:
    """The embedders' consumer group on the memory journal."""
    return faust_app_id(settings, EMBEDDER_APP)


def worker_topics(settings: KafkaSettings) -> list[TopicSpec]:
    """Every topic a worker reads or writes, Faust's own included, so none is created with Faust's defaults."""
    n = settings.turn_partitions
    app_id = faust_app_id(settings)
    return [
        turns_topic(settings),
        TopicSpec(settings.summaries_topic, n, {}, copartitioned=True),
        TopicSpec(settings.dlq_topic, n, {"retention.ms": str(settings.dlq_retention_ms)}, copartitioned=False),
        TopicSpec(settings.compaction_topic, n, {}, copartitioned=False),
        TopicSpec(settings.memory_topic, n, {"cleanup.policy": "compact"}, copartitioned=True),
        TopicSpec(f"{app_id}-{SESSIONS_TABLE}-changelog", n, {"cleanup.policy": "compact"}, copartitioned=True),
        TopicSpec(f"{app_id}-__assignor-__leader", 1, {}, copartitioned=False),
    ]


def partition_mismatch(settings: KafkaSettings, spec: TopicSpec, partitions: int) -> str | None:
    """The one-line complaint when an existing topic has the wrong partition count, else None."""
    if not spec.copartitioned or partitions == settings.turn_partitions:
        return None
    return (
        f"topic {spec.name} has {partitions} partitions but TURNSTREAM_TURN_PARTITIONS={settings.turn_partitions}: "
        f"set TURNSTREAM_TURN_PARTITIONS={partitions}, or use a new TURNSTREAM_TOPIC_PREFIX"
    )


async def ensure_topics(settings: KafkaSettings) -> TopicsReady:
    """Create the missing topics and check the partition counts of the existing ones.

    Auto-creation on first produce would pick the broker's partition count, and every topic a session
    agent reads must have as many partitions as its Table's changelog. Raises TopicLayoutError.
    """
    specs = worker_topics(settings)
    ready = await create_topics(settings, specs)
    for spec in specs:
        found = ready.partitions.get(spec.name)
        complaint = None if found is None else partition_mismatch(settings, spec, found)
        if complaint:
            raise TopicLayoutError(complaint)
    return ready
