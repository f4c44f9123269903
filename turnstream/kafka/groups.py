"""Consumer groups on the broker, asked with an admin client: their committed offsets."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

from aiokafka import TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import KafkaError

T = TypeVar("T")

COORDINATOR_WAIT_SECONDS = 15.0
"""How long a group request is asked again while the broker has no coordinator for it yet."""


def records_behind(end: int, committed: int | None) -> int:
    """A group's lag on one partition: the records from its committed offset (the next record it will process; None,
    nothing committed, counts from 0) to the partition's end. Never below 0: a commit past a listed end (Tansu lists
    ends short of a batch) is nothing behind."""
    return max(end - (committed or 0), 0)


async def until_coordinated(call: Callable[[], Awaitable[T]]) -> T:
    """`call` asked again while the broker answers with a retriable error: a broker's first group request finds
    no coordinator until it has created its offsets topic."""
    deadline = time.monotonic() + COORDINATOR_WAIT_SECONDS
    while True:
        try:
            return await call()
        except KafkaError as error:
            if not error.retriable or time.monotonic() > deadline:
                raise
        await asyncio.sleep(0.2)


async def group_commits(
    admin: AIOKafkaAdminClient, group: str, topic: str, partitions: Iterable[int]
) -> dict[int, int]:
    """The offsets consumer group `group` has committed on these partitions of `topic` (a partition it has none on
    is left out), asked with a started admin client."""
    wanted = [TopicPartition(topic, partition) for partition in partitions]
    offsets = await until_coordinated(lambda: admin.list_consumer_group_offsets(group, partitions=wanted))
    return {tp.partition: meta.offset for tp, meta in offsets.items() if meta.offset >= 0}
