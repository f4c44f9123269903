"""Topic creation on the real broker: the broker's default replication factor, and partition-count checks."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

from tests.support.topics import describe
from turnstream.connections import kafka_options
from turnstream.kafka.admin import TopicLayoutError, ensure_topics, worker_topics
from turnstream.settings import Settings
from turnstream.stack.processes import settings_env


async def test_default_replication_factor_is_the_brokers(settings: Settings) -> None:
    assert settings.replication_factor == -1  # the default: ask the broker
    ready = await ensure_topics(settings)
    names = [spec.name for spec in worker_topics(settings)]
    assert sorted(ready.created) == sorted(names)  # Faust's changelog and leader topics included
    topics = await describe(settings, names)
    for spec in worker_topics(settings):
        partitions = topics[spec.name]["partitions"]
        assert len(partitions) == spec.partitions
        assert {len(p["replicas"]) for p in partitions} == {ready.replication_factor}
    assert ready.replication_factor >= 1
    again = await ensure_topics(settings)
    assert again.created == [] and again.replication_factor == ready.replication_factor


async def test_explicit_replication_factor(settings: Settings) -> None:
    ready = await ensure_topics(settings.model_copy(update={"replication_factor": 1}))
    assert ready.replication_factor == 1


async def test_more_replicas_than_brokers_is_one_line(settings: Settings) -> None:
    try:
        await ensure_topics(settings.model_copy(update={"replication_factor": 7}))
    except TopicLayoutError as error:
        assert str(error).startswith("cannot create topic ") and "\n" not in str(error)
    else:
        pytest.skip("this broker accepts more replicas than it has brokers (Tansu does)")


async def test_partition_mismatch_is_a_one_line_error(settings: Settings) -> None:
    await ensure_topics(settings)
    with pytest.raises(TopicLayoutError) as error:
        await ensure_topics(settings.model_copy(update={"turn_partitions": settings.turn_partitions + 4}))
    assert str(error.value) == (
        f"topic {settings.turns_topic} has {settings.turn_partitions} partitions but TURNSTREAM_TURN_PARTITIONS="
        f"{settings.turn_partitions + 4}: set TURNSTREAM_TURN_PARTITIONS={settings.turn_partitions}, "
        "or use a new TURNSTREAM_TOPIC_PREFIX"
    )


async def test_worker_refuses_to_start_on_a_partition_mismatch(settings: Settings) -> None:
    await ensure_topics(settings)
    wrong = settings.model_copy(update={"turn_partitions": 3, "startup_timeout_seconds": 20.0})
    result = subprocess.run(
        [sys.executable, "-m", "turnstream", "worker"],
        env={**os.environ, **settings_env(wrong)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith(f"turnstream: topic {settings.turns_topic} has {settings.turn_partitions} partitions but ")


async def test_dead_letter_topic_is_created_with_its_retention(settings: Settings) -> None:
    settings = settings.model_copy(update={"dlq_retention_ms": 3_600_000})
    await ensure_topics(settings)
    admin = AIOKafkaAdminClient(**kafka_options(settings))
    await admin.start()
    try:
        (response,) = await admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, settings.dlq_topic)])
    finally:
        await admin.close()
    (resource,) = response.resources
    configs = {entry[0]: entry[1] for entry in resource[4]}
    assert configs.get("retention.ms") == "3600000"
