"""Topic administration: create every topic a worker uses, and check the layout of the ones that exist."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import KafkaError, TopicAlreadyExistsError, for_code

from turnstream.connections import kafka_options
from turnstream.errors import TurnstreamError
from turnstream.settings import BROKER_DEFAULT_REPLICATION, Settings

WORKER_APP = "worker"
"""Name of the worker's Faust app under the topic prefix; the Faust app id is `<prefix>-worker`."""
DESCRIBE_TIMEOUT_SECONDS = 10.0
"""How long ensure_topics waits for topics to be described without an error (leaders elected)."""
SESSIONS_TABLE = "sessions"
"""Name of the sessions Table; Faust names its changelog `<app id>-sessions-changelog`."""


class TopicLayoutError(TurnstreamError, RuntimeError):
    """The topics cannot be created, or existing ones do not fit the settings; the message is one line."""


@dataclass(frozen=True)
class TopicSpec:
    name: str
    partitions: int
    config: dict[str, str]
    copartitioned: bool
    """Must have exactly turn_partitions partitions: read by the session agent, backing its Table, or written by owner
    partition (the memory journal)."""


@dataclass(frozen=True)
class TopicsReady:
    created: list[str]
    """Topics this call created."""
    replication_factor: int
    """Replicas per partition of the turns topic, as the broker reports them (the broker's default under -1)."""


def faust_app_id(settings: Settings, name: str = WORKER_APP) -> str:
    return f"{settings.topic_prefix}-{name}"


def worker_topics(settings: Settings) -> list[TopicSpec]:
    """Every topic a worker reads or writes, Faust's own included, so none is created with Faust's defaults."""
    n = settings.turn_partitions
    app_id = faust_app_id(settings)
    return [
        TopicSpec(settings.turns_topic, n, {}, copartitioned=True),
        TopicSpec(settings.summaries_topic, n, {}, copartitioned=True),
        TopicSpec(settings.dlq_topic, n, {"retention.ms": str(settings.dlq_retention_ms)}, copartitioned=False),
        TopicSpec(settings.compaction_topic, n, {}, copartitioned=False),
        TopicSpec(settings.memory_topic, n, {"cleanup.policy": "compact"}, copartitioned=True),
        TopicSpec(f"{app_id}-{SESSIONS_TABLE}-changelog", n, {"cleanup.policy": "compact"}, copartitioned=True),
        TopicSpec(f"{app_id}-__assignor-__leader", 1, {}, copartitioned=False),
    ]


def new_topic(spec: TopicSpec, replication_factor: int) -> NewTopic:
    """The create request of one topic; -1 asks the broker for its default.replication.factor."""
    if replication_factor == BROKER_DEFAULT_REPLICATION:
        # aiokafka's NewTopic accepts -1 only together with an (empty) replica assignment, which is what
        # the protocol sends for "broker's choice" (KIP-464)
        return NewTopic(
            spec.name, spec.partitions, BROKER_DEFAULT_REPLICATION, replica_assignments={}, topic_configs=spec.config
        )
    return NewTopic(spec.name, spec.partitions, replication_factor, topic_configs=spec.config)


def partition_mismatch(settings: Settings, spec: TopicSpec, partitions: int) -> str | None:
    """The one-line complaint when an existing topic has the wrong partition count, else None."""
    if not spec.copartitioned or partitions == settings.turn_partitions:
        return None
    return (
        f"topic {spec.name} has {partitions} partitions but TURNSTREAM_TURN_PARTITIONS={settings.turn_partitions}: "
        f"set TURNSTREAM_TURN_PARTITIONS={partitions}, or use a new TURNSTREAM_TOPIC_PREFIX"
    )


async def _described(admin: AIOKafkaAdminClient, names: list[str]) -> dict[str, dict[str, Any]]:
    """Each topic as DescribeTopics gives it, asked again while any is not ready: Apache Kafka answers
    LEADER_NOT_AVAILABLE (or UNKNOWN_TOPIC) for a topic created a moment ago, which would hide its
    partition count from the check, and a topic another worker just created is not even listed."""
    deadline = time.monotonic() + DESCRIBE_TIMEOUT_SECONDS
    while True:
        described = {topic["topic"]: topic for topic in await admin.describe_topics(names)}
        if (
            all(name in described and not described[name]["error_code"] for name in names)
            or time.monotonic() > deadline
        ):
            return described
        await asyncio.sleep(0.2)


async def ensure_topics(settings: Settings) -> TopicsReady:
    """Create the missing topics and check the partition counts of the existing ones.

    Auto-creation on first produce would pick the broker's partition count, and every topic a session
    agent reads must have as many partitions as its Table's changelog. Raises TopicLayoutError.
    """
    admin = AIOKafkaAdminClient(**kafka_options(settings))
    await admin.start()
    try:
        specs = worker_topics(settings)
        existing = set(await admin.list_topics())
        missing = [spec for spec in specs if spec.name not in existing]
        if missing:
            response = await admin.create_topics([new_topic(spec, settings.replication_factor) for spec in missing])
            for name, code, *reason in response.topic_errors:
                if code and code != TopicAlreadyExistsError.errno:  # another worker may have been first
                    error = for_code(code)
                    detail = (reason[0] if reason else None) or error.description
                    raise TopicLayoutError(f"cannot create topic {name}: {error.__name__}: {detail}")
        described = await _described(admin, [spec.name for spec in specs])
        for spec in specs:
            found = described.get(spec.name)
            if found is None or found["error_code"]:
                continue  # still not described: Faust declares it again
            complaint = partition_mismatch(settings, spec, len(found["partitions"]))
            if complaint:
                raise TopicLayoutError(complaint)
        turns = described.get(settings.turns_topic)
        replicas = len(turns["partitions"][0]["replicas"]) if turns and turns["partitions"] else 0
        return TopicsReady([spec.name for spec in missing], replicas or max(settings.replication_factor, 1))
    except KafkaError as error:
        raise TopicLayoutError(f"topic administration failed: {type(error).__name__}: {error}") from None
    finally:
        await admin.close()
