"""Whether a worker applies the turns the API records, so a 202 and /readyz can say that turns wait for one.

The API never applies a turn itself: without a worker a record is accepted (the broker keeps it) and answers 202
for as long as no worker runs. The watch reads, every WATCH_SECONDS, the worker group's committed offsets on the
turns topic against the topic's ends: turns wait while an end is past its commit, and a worker commits only what
it applied. Turns that wait while the commits stand still for STALL_SECONDS mean no worker applies anything (none
runs, it runs under another TURNSTREAM_TOPIC_PREFIX, or it is stuck).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import KafkaError

from turnstream.connections import kafka_options
from turnstream.kafka.admin import faust_app_id
from turnstream.settings import Settings

log = logging.getLogger(__name__)

WATCH_SECONDS = 2.0
"""Between two looks at the worker group's commits (two small requests to the broker)."""
STALL_SECONDS = 5.0
"""Turns waiting this long with no commit of the worker group: no worker applies them. A worker commits about
every second while it has work."""
POLL_TIMEOUT_SECONDS = 10.0


@dataclass
class Progress:
    """The worker group's progress as seen in successive looks (pure: the caller gives the time)."""

    committed: dict[int, int] = field(default_factory=dict)
    """Per partition of the turns topic, the offset the worker group committed (0 when none)."""
    waiting_since: float | None = None
    """Since when turns have waited with no commit of the group; None while none waits."""

    def observe(self, committed: Mapping[int, int], ends: Mapping[int, int], now: float) -> None:
        """One look: the group's commits and the topic's ends, per partition."""
        waiting = any(end > committed.get(partition, 0) for partition, end in ends.items())
        if not waiting:
            self.waiting_since = None
        elif self.waiting_since is None or dict(committed) != self.committed:
            self.waiting_since = now  # a commit: the worker applied something just now
        self.committed = dict(committed)

    def stalled_for(self, now: float) -> float | None:
        """Seconds turns have waited with no worker applying any, once that is STALL_SECONDS or more; else None."""
        if self.waiting_since is None or now - self.waiting_since < STALL_SECONDS:
            return None
        return now - self.waiting_since


@dataclass(frozen=True)
class WorkerState:
    applying: bool | None
    """False when turns wait and no worker has applied any for STALL_SECONDS; None until the broker has said."""
    detail: str | None
    """What a caller should know, for a person: set when `applying` is False."""


def worker_state(progress: Progress | None, now: float, topic: str, group: str, prefix: str) -> WorkerState:
    """What the API says of the worker, from the latest progress (None: not known)."""
    if progress is None:
        return WorkerState(None, None)
    stalled = progress.stalled_for(now)
    if stalled is None:
        return WorkerState(True, None)
    return WorkerState(
        False,
        f"no worker has applied a turn for {stalled:.0f} s: turns wait in {topic} for the consumer group {group} "
        f"(is `turnstream worker` running, with TURNSTREAM_TOPIC_PREFIX={prefix}?)",
    )


class WorkerWatch:
    """Looks at the worker group's commits in the background from start() until aclose()."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.group = faust_app_id(settings)
        self._progress = Progress()
        self._known = False
        self._listed = False
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    def state(self) -> WorkerState:
        settings = self.settings
        progress = self._progress if self._known else None
        return worker_state(progress, time.monotonic(), settings.turns_topic, self.group, settings.topic_prefix)

    async def _run(self) -> None:
        admin = AIOKafkaAdminClient(**kafka_options(self.settings))
        consumer = AIOKafkaConsumer(**kafka_options(self.settings), group_id=None, enable_auto_commit=False)
        started: list[AIOKafkaAdminClient | AIOKafkaConsumer] = []
        try:
            while True:
                try:
                    for client in (admin, consumer):
                        if client not in started:
                            await asyncio.wait_for(client.start(), POLL_TIMEOUT_SECONDS)
                            started.append(client)
                    await asyncio.wait_for(self._look(admin, consumer), POLL_TIMEOUT_SECONDS)
                except (KafkaError, OSError, TimeoutError) as error:
                    # the broker away, or the group's coordinator not elected yet: not known, asked again
                    log.debug("cannot see the worker group's progress: %r", error)
                    self._known = False
                await asyncio.sleep(WATCH_SECONDS)
        finally:
            for client in started:
                await (client.close() if isinstance(client, AIOKafkaAdminClient) else client.stop())

    async def _look(self, admin: AIOKafkaAdminClient, consumer: AIOKafkaConsumer) -> None:
        topic = self.settings.turns_topic
        if not self._listed:
            # asked by name, a missing topic is created by the broker with its own partition count (Metadata
            # allows auto-creation): a listing of all topics first, until the API's producer has created it
            if topic not in await admin.list_topics():
                self._known = False
                return
            self._listed = True
        (described,) = await admin.describe_topics([topic])
        partitions = [TopicPartition(topic, p["partition"]) for p in described["partitions"]]
        offsets = await admin.list_consumer_group_offsets(self.group, partitions=partitions)
        # Tansu lists an end short of its last batch's later records: still past a commit while anything waits
        ends = await consumer.end_offsets(partitions)
        self._progress.observe(
            {tp.partition: max(meta.offset, 0) for tp, meta in offsets.items()},
            {tp.partition: end for tp, end in ends.items()},
            time.monotonic(),
        )
        self._known = True

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
