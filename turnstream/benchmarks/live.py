"""The live setup the service figures share: the worker and the pass-through agents on one broker and one Redis."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

import orjson
from aiokafka.structs import RecordMetadata
from redis.asyncio import Redis

from turnstream.benchmarks.children import Children
from turnstream.benchmarks.passthrough import MODES, count_key, value_key
from turnstream.client import TurnProducer
from turnstream.client.store import ContextStore
from turnstream.samples.conversations import generate_conversations, turns_of
from turnstream.schemas.keys import session_key, session_owner
from turnstream.settings import Settings
from turnstream.streams.admin import ensure_topics

POLL_SECONDS = 0.005
READY_TIMEOUT_SECONDS = 120.0
DRAIN_TIMEOUT_SECONDS = 300.0
WARM_UP_TURNS = 60

Record = tuple[bytes, bytes]
"""(key, value) of one turn, encoded before any clock starts."""


class BenchTimeout(RuntimeError):
    """Something the bench waited for did not happen in time."""


def round_turns(name: str, sessions: int, turns: int, seed: int) -> list[dict[str, Any]]:
    """`sessions` fresh conversations of `turns` turns, round-robin as many gateways would produce them."""
    per_session = [turns_of(sample, f"{name}-{i}") for i, sample in enumerate(generate_conversations(sessions, turns, seed))]
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


def consumer_settings(settings: Settings) -> tuple[Settings, Settings, Settings]:
    """The worker's settings and the two pass-through agents', each agent on a prefix of its own."""
    prefix = settings.topic_prefix
    count, set_ = (settings.model_copy(update={"topic_prefix": f"{prefix}-{mode}"}) for mode in MODES)
    return settings, count, set_


async def create_topics(settings: Settings) -> None:
    """Every consumer's topics, made as the worker makes its own, before anyone produces to them."""
    for each in consumer_settings(settings):
        await ensure_topics(each)


def spawn(settings: Settings, children: Children) -> None:
    """Start the worker and the pass-through agents as child processes (they take seconds to join their groups)."""
    pipeline, count, set_ = consumer_settings(settings)
    children.worker(pipeline)
    children.passthrough(count, "count")
    children.passthrough(set_, "set")


@dataclass
class Live:
    """The three consumers the bench feeds identical bytes: the worker, a counting agent, a Redis-SET agent."""

    pipeline: Settings
    count: Settings
    set: Settings
    children: Children
    producer: TurnProducer
    redis: Redis
    store: ContextStore

    @classmethod
    async def connect(cls, settings: Settings, children: Children) -> Live:
        """Producer and Redis client for the consumers `spawn(settings, children)` started."""
        pipeline, count, set_ = consumer_settings(settings)
        # one plain acks=all producer for every side, whatever the broker offers
        producer = TurnProducer(pipeline.model_copy(update={"idempotent_producer": "off"}))
        await producer.start()
        store = ContextStore.from_settings(pipeline)
        return cls(pipeline, count, set_, children, producer, store.redis, store)

    async def aclose(self) -> None:
        await self.producer.stop()
        await self.store.aclose()

    async def send(self, settings: Settings, records: list[Record]) -> list[asyncio.Future[RecordMetadata]]:
        """Queue `records` on `settings`' turns topic; the futures resolve once the broker has them."""
        producer = self.producer.producer
        return [await producer.send(settings.turns_topic, value=value, key=key) for key, value in records]

    async def until(self, done: Callable[[], Awaitable[bool]], what: str, timeout: float = DRAIN_TIMEOUT_SECONDS) -> None:
        """Poll `done` every POLL_SECONDS; fail when a child dies or `timeout` passes."""
        deadline = time.monotonic() + timeout
        while not await done():
            self.children.check()
            if time.monotonic() > deadline:
                raise BenchTimeout(f"{what}: not done after {timeout:.0f}s")
            await asyncio.sleep(POLL_SECONDS)

    def versions_reached(self, expected: dict[str, int]) -> Callable[[], Awaitable[bool]]:
        """A check: has every session's context reached its expected version? Asks only about those still behind."""
        behind = dict(expected)

        async def done() -> bool:
            keys = list(behind)
            async with self.redis.pipeline(transaction=False) as pipe:
                for key in keys:
                    pipe.get(self.store.layout.owner_pointer(key))
                owners = [session_owner(key) if owner is None else owner.decode() for key, owner in zip(keys, await pipe.execute())]
                for key, owner in zip(keys, owners):
                    pipe.hget(self.store.keys(owner, key).context, "version")
                versions = await pipe.execute()
            for key, version in zip(keys, versions):
                if version is not None and int(version) >= behind[key]:
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
        for settings in (self.pipeline, self.count, self.set):
            await self.send(settings, records)
        await self.producer.flush()
        await self.until(self.versions_reached(last_versions(turns)), "warm-up of the worker", READY_TIMEOUT_SECONDS)
        await self.until(self.counted(len(turns)), "warm-up of the counting agent", READY_TIMEOUT_SECONDS)

        async def set_landed() -> bool:
            key, value = records[-1]
            return await self.redis.get(value_key(self.set, key)) == value

        await self.until(set_landed, "warm-up of the Redis-SET agent", READY_TIMEOUT_SECONDS)
