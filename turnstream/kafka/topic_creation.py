"""Topic creation on the broker, beneath both the worker's administration (kafka/admin.py, every topic it uses)
and the gateway SDK (client/producer.py, the turns topic before its first send): whoever starts first creates the
turns topic with TURNSTREAM_TURN_PARTITIONS, never the broker's auto-creation with its own partition count."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import KafkaError, TopicAlreadyExistsError, for_code

from turnstream.connections import kafka_options
from turnstream.errors import TurnstreamError
from turnstream.settings import BROKER_DEFAULT_REPLICATION, KafkaSettings

DESCRIBE_TIMEOUT_SECONDS = 10.0
"""How long create_topics waits for topics to be described without an error (leaders elected)."""


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
    partitions: dict[str, int]
    """Partitions of each topic asked for, as the broker describes it (a topic it did not describe in time is left out)."""


def turns_topic(settings: KafkaSettings) -> TopicSpec:
    """The input topic: keyed by session, so a session's turns stay in one partition of turn_partitions."""
    return TopicSpec(settings.turns_topic, settings.turn_partitions, {}, copartitioned=True)


def new_topic(spec: TopicSpec, replication_factor: int) -> NewTopic:
    """The create request of one topic; -1 asks the broker for its default.replication.factor."""
    if replication_factor == BROKER_DEFAULT_REPLICATION:
        # aiokafka's NewTopic accepts -1 only together with an (empty) replica assignment, which is what
        # the protocol sends for "broker's choice" (KIP-464)
        return NewTopic(
            spec.name, spec.partitions, BROKER_DEFAULT_REPLICATION, replica_assignments={}, topic_configs=spec.config
        )
    return NewTopic(spec.name, spec.partitions, replication_factor, topic_configs=spec.config)


async def _described(admin: AIOKafkaAdminClient, names: list[str]) -> dict[str, dict[str, Any]]:
    """Each topic as DescribeTopics gives it, asked again while any is not ready: Apache Kafka answers
    LEADER_NOT_AVAILABLE (or UNKNOWN_TOPIC) for a topic created a moment ago, which would hide its
    partition count from the check, and a topic another client just created is not even listed."""
    deadline = time.monotonic() + DESCRIBE_TIMEOUT_SECONDS
    while True:
        described = {topic["topic"]: topic for topic in await admin.describe_topics(names)}
        if (
            all(name in described and not described[name]["error_code"] for name in names)
            or time.monotonic() > deadline
        ):
            return described
        await asyncio.sleep(0.2)


async def create_topics(settings: KafkaSettings, specs: list[TopicSpec]) -> TopicsReady:
    """Create those of `specs` that are missing and describe them all; an existing topic is left as it is (the
    caller checks its layout). Raises TopicLayoutError."""
    admin = AIOKafkaAdminClient(**kafka_options(settings))
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        missing = [spec for spec in specs if spec.name not in existing]
        if missing:
            response = await admin.create_topics([new_topic(spec, settings.replication_factor) for spec in missing])
            for name, code, *reason in response.topic_errors:
                if code and code != TopicAlreadyExistsError.errno:  # another client may have been first
                    error = for_code(code)
                    detail = (reason[0] if reason else None) or error.description
                    raise TopicLayoutError(f"cannot create topic {name}: {error.__name__}: {detail}")
        described = await _described(admin, [spec.name for spec in specs])
        partitions = {
            name: len(topic["partitions"]) for name, topic in described.items() if not topic["error_code"]
        }  # one still not described: Faust declares it again, or the producer's metadata waits for it
        turns = described.get(settings.turns_topic)
        replicas = len(turns["partitions"][0]["replicas"]) if turns and turns["partitions"] else 0
        return TopicsReady([spec.name for spec in missing], replicas or max(settings.replication_factor, 1), partitions)
    except KafkaError as error:
        raise TopicLayoutError(f"topic administration failed: {type(error).__name__}: {error}") from None
    finally:
        await admin.close()


async def ensure_turns_topic(settings: KafkaSettings) -> TopicsReady:
    """Create the turns topic with turn_partitions unless it exists (then its layout is the worker's to check: a
    gateway's settings need not name the partition count). Raises TopicLayoutError."""
    return await create_topics(settings, [turns_topic(settings)])
