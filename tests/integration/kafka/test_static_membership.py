"""Static group membership on Apache Kafka: a worker restarted under the same TURNSTREAM_GROUP_INSTANCE_ID gets
its partitions back without moving anyone else's."""

from __future__ import annotations

import pytest

from tests.support.conversations import turns_for
from tests.support.pipeline import produce, wait_for_shares, wait_for_versions
from tests.support.worker import running_worker
from turnstream.client import ContextClient
from turnstream.kafka.admin import ensure_topics
from turnstream.settings import Settings
from turnstream.stack.services import free_port


async def test_a_restarted_static_member_takes_its_partitions_back_without_a_rebalance(
    settings: Settings, broker: str
) -> None:
    if broker != "kafka":
        pytest.skip("TURNSTREAM_TEST_BROKER=tansu: static membership is Apache Kafka's (KIP-345)")
    settings = settings.model_copy(update={"turn_partitions": 4, "broker_session_timeout": 30.0})
    first_turns = {f"s{i}": turns_for(f"s{i}", seed=i, count=6) for i in range(8)}
    later_turns = {sid: turns_for(sid, seed=i, count=12)[6:] for i, sid in enumerate(first_turns)}
    await ensure_topics(settings)
    # a fixed web port each: Faust hands a returning static member the assignment, web URL included, it had
    stays = settings.model_copy(update={"group_instance_id": "worker-a", "web_port": free_port()})
    restarts = settings.model_copy(update={"group_instance_id": "worker-b", "web_port": free_port()})
    with running_worker(stays, "stays") as steady:
        with running_worker(restarts, "restarts") as before:
            shares = await wait_for_shares([steady, before], settings)
            assignments_before = steady.log().count("Setting newly assigned partitions")
            async with ContextClient.from_settings(settings) as client:
                await produce(settings, [t for turns in first_turns.values() for t in turns])
                await wait_for_versions(client, {sid: 6 for sid in first_turns}, steady)
        # stopped by SIGTERM: a static member leaves no LeaveGroup, its partitions wait for it
        with running_worker(restarts, "restarted") as after:
            async with ContextClient.from_settings(settings) as client:
                await produce(settings, [t for turns in later_turns.values() for t in turns])
                await wait_for_versions(client, {sid: 12 for sid in first_turns}, after)
            assert after.assigned(settings.turns_topic) == shares[1]
            assert steady.log().count("Setting newly assigned partitions") == assignments_before, (
                "the worker that stayed was rebalanced when the static member came back"
            )
