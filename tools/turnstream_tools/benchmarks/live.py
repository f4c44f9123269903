"""The live setup the service figures share: the worker and the pass-through agents on one broker and one Redis."""

from __future__ import annotations

import asyncio
import os
import time
import urllib.request
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import orjson
from aiokafka.structs import RecordMetadata
from redis.asyncio import Redis

from turnstream.client import TurnProducer
from turnstream.errors import TurnstreamError
from turnstream.kafka.admin import ensure_topics
from turnstream.redis.writer import ContextWriter
from turnstream.schemas.ids import session_key, session_owner
from turnstream.settings import Settings
from turnstream.stack.services import free_port
from turnstream_tools.benchmarks.children import Children
from turnstream_tools.benchmarks.passthrough import MODES, count_key, value_key
from turnstream_tools.benchmarks.pinning import UNPINNED, CoreSplit, affinities, apply, process_tree
from turnstream_tools.benchmarks.stages import Scrape
from turnstream_tools.samples.conversations import generate_conversations, turns_of

POLL_SECONDS = 0.005
READY_TIMEOUT_SECONDS = 120.0
DRAIN_TIMEOUT_SECONDS = 300.0
WARM_UP_TURNS = 60
SINGLE_EVENT = 1
"""The comparison worker's batch: one event at a time, where every turn pays its own round trips."""
"""The batch size of the second worker the drain figure measures (bench only: the default stays 1)."""

Record = tuple[bytes, bytes]
"""(key, value) of one turn, encoded before any clock starts."""


class BenchTimeout(TurnstreamError, RuntimeError):
    """Something the bench waited for did not happen in time."""


def round_turns(name: str, sessions: int, turns: int, seed: int) -> list[dict[str, Any]]:
    """`sessions` fresh conversations of `turns` turns, round-robin as many gateways would produce them."""
    per_session = [
        turns_of(sample, f"{name}-{i}") for i, sample in enumerate(generate_conversations(sessions, turns, seed))
    ]
    return [session[i] for i in range(turns) for session in per_session]


def encode(turns: list[dict[str, Any]]) -> list[Record]:
    return [(session_key(t["session_id"], t.get("tenant")).encode(), orjson.dumps(t)) for t in turns]


def last_versions(turns: list[dict[str, Any]]) -> dict[str, int]:
    """Per session key, the version its context reaches once every turn is applied (one version per turn)."""
    counts: dict[str, int] = {}
    for turn in turns:
        key = session_key(turn["session_id"], turn.get("tenant"))
        counts[key] = counts.get(key, 0) + 1
    return counts


@dataclass(frozen=True)
class Consumers:
    """What the bench feeds: the worker, a second worker taking one event a batch (SINGLE_EVENT), and the two
    pass-through agents; each on a topic prefix of its own, each worker with a metrics port of its own."""

    pipeline: Settings
    single: Settings
    count: Settings
    set: Settings

    @classmethod
    def of(cls, settings: Settings) -> Consumers:
        prefix = settings.topic_prefix
        single = settings.model_copy(
            update={"topic_prefix": f"{prefix}-single", "batch_max_events": SINGLE_EVENT, "metrics_port": free_port()}
        )
        count, set_ = (settings.model_copy(update={"topic_prefix": f"{prefix}-{mode}"}) for mode in MODES)
        return cls(settings.model_copy(update={"metrics_port": free_port()}), single, count, set_)

    def all(self) -> tuple[Settings, ...]:
        return self.pipeline, self.single, self.count, self.set


async def create_topics(consumers: Consumers) -> None:
    """Every consumer's topics, made as the worker makes its own, before anyone produces to them."""
    for each in consumers.all():
        await ensure_topics(each)


CHILD_NAMES = ("worker", "worker-single", "passthrough-count", "passthrough-set")
"""The children spawn starts, in the order of Consumers.all."""


def spawn(consumers: Consumers, children: Children) -> None:
    """Start both workers and the pass-through agents as child processes (they take seconds to join their groups)."""
    children.worker(consumers.pipeline, CHILD_NAMES[0])
    children.worker(consumers.single, CHILD_NAMES[1])
    children.passthrough(consumers.count, "count")
    children.passthrough(consumers.set, "set")


@dataclass
class Live:
    """The consumers the bench feeds identical bytes: the worker (and one batching), a counting agent, a Redis-SET agent."""

    pipeline: Settings
    single: Settings
    count: Settings
    set: Settings
    children: Children
    producer: TurnProducer
    redis: Redis
    store: ContextWriter

    @classmethod
    async def connect(cls, consumers: Consumers, children: Children) -> Live:
        """Producer and Redis client for the consumers `spawn(consumers, children)` started."""
        # one plain acks=all producer for every side, whatever the broker offers
        producer = TurnProducer(consumers.pipeline.model_copy(update={"idempotent_producer": "off"}))
        await producer.start()
        store = ContextWriter.from_settings(consumers.pipeline)
        return cls(
            consumers.pipeline, consumers.single, consumers.count, consumers.set, children, producer, store.redis, store
        )

    async def aclose(self) -> None:
        await self.producer.stop()
        await self.store.aclose()

    def place(self, split: CoreSplit | None, placement: str, measured: Settings) -> int:
        """Run the process of `measured` (one of the consumers) on its cores under `placement`, and every other
        process of the bench (broker, Redis, the other consumers, this one) on theirs; the measured pid."""
        consumers = (self.pipeline, self.single, self.count, self.set)
        name = next(name for consumer, name in zip(consumers, CHILD_NAMES) if consumer is measured)
        pids = self.children.running()
        pid = pids.pop(name)
        # a worker's embedding process is the worker's: it runs where the worker runs and its CPU counts as the worker's
        neighbours = [*(p for other in pids.values() for p in process_tree(other)), *self.children.services.values()]
        apply(affinities(split, placement, process_tree(pid), [*neighbours, os.getpid()]))
        return pid

    def unpin(self, split: CoreSplit | None) -> None:
        """Every process of the bench back on every core of `split`."""
        self.place(split, UNPINNED, self.pipeline)

    async def stages(self, worker: Settings) -> Scrape:
        """The stage histograms `worker` serves on its metrics port, now."""
        url = f"http://{worker.web_bind}:{worker.metrics_port}/metrics"

        def fetch() -> str:
            with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - a loopback URL the bench made
                body: bytes = response.read()
                return body.decode()

        return Scrape.parse(await asyncio.to_thread(fetch))

    async def send(self, settings: Settings, records: list[Record]) -> list[asyncio.Future[RecordMetadata]]:
        """Queue `records` on `settings`' turns topic; the futures resolve once the broker has them."""
        producer = self.producer.producer
        return [await producer.send(settings.turns_topic, value=value, key=key) for key, value in records]

    async def until(
        self, done: Callable[[], Awaitable[bool]], what: str, timeout: float = DRAIN_TIMEOUT_SECONDS
    ) -> None:
        """Poll `done` every POLL_SECONDS; fail when a child dies or `timeout` passes."""
        deadline = time.monotonic() + timeout
        while not await done():
            self.children.check()
            if time.monotonic() > deadline:
                raise BenchTimeout(f"{what}: not done after {timeout:.0f}s")
            await asyncio.sleep(POLL_SECONDS)

    async def versions(self, keys: list[str], worker: Settings | None = None) -> dict[str, int | None]:
        """Each session key's context version as `worker` (the default one) writes it; None where it has none."""
        store = self.store if worker is None else ContextWriter.on(self.redis, worker)
        async with self.redis.pipeline(transaction=False) as pipe:
            for key, owner in zip(keys, await self._owners(store, keys)):
                pipe.hget(store.layout.session(owner, key).context, "version")
            versions = await pipe.execute()
        return {key: None if version is None else int(version) for key, version in zip(keys, versions)}

    async def _owners(self, store: ContextWriter, keys: list[str]) -> list[str]:
        async with self.redis.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.get(store.layout.owner_pointer(key))
            pointers = await pipe.execute()
        return [session_owner(key) if owner is None else owner.decode() for key, owner in zip(keys, pointers)]

    def turn_applied(self, key: str, turn_id: str, worker: Settings) -> Callable[[], Awaitable[bool]]:
        """A check: has `worker` applied the turn `turn_id` of session `key`? Where the LLM path is on, a version
        also counts the model's answers, so a version says less than this."""
        store = ContextWriter.on(self.redis, worker)

        async def done() -> bool:
            (owner,) = await self._owners(store, [key])
            return await self.redis.zscore(store.layout.session(owner, key).applied, turn_id) is not None

        return done

    def versions_reached(
        self, expected: dict[str, int], worker: Settings | None = None
    ) -> Callable[[], Awaitable[bool]]:
        """A check: has every session's context, as `worker` (the default one) writes them, reached its expected
        version? Asks only about those still behind."""
        behind = dict(expected)

        async def done() -> bool:
            for key, version in (await self.versions(list(behind), worker)).items():
                if version is not None and version >= behind[key]:
                    del behind[key]
            return not behind

        return done

    def counted(self, total: int) -> Callable[[], Awaitable[bool]]:
        """A check: has the counting agent seen `total` events since it started?"""

        async def done() -> bool:
            return int(await self.redis.get(count_key(self.count)) or 0) >= total

        return done

    async def count_now(self) -> int:
        return int(await self.redis.get(count_key(self.count)) or 0)

    async def warm_up(self) -> None:
        """One conversation through each consumer: proves they joined their groups and warms every cache."""
        turns = round_turns("warm-up", 1, WARM_UP_TURNS, seed=99)
        records = encode(turns)
        for settings in (self.pipeline, self.single, self.count, self.set):
            await self.send(settings, records)
        await self.producer.flush()
        await self.until(self.versions_reached(last_versions(turns)), "warm-up of the worker", READY_TIMEOUT_SECONDS)
        await self.until(
            self.versions_reached(last_versions(turns), self.single),
            "warm-up of the one-event-a-batch worker",
            READY_TIMEOUT_SECONDS,
        )
        await self.until(self.counted(len(turns)), "warm-up of the counting agent", READY_TIMEOUT_SECONDS)

        async def set_landed() -> bool:
            key, value = records[-1]
            return await self.redis.get(value_key(self.set, key)) == value

        await self.until(set_landed, "warm-up of the Redis-SET agent", READY_TIMEOUT_SECONDS)
