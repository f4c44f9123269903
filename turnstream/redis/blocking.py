"""The blocking executor: the same reads as redis/aio.py (redis/reads.py, and the composed prompt read of
prompt/read.py), on redis-py's blocking client, for threaded gateways; a redis.Redis is thread-safe (a pool of connections), so one serves every thread."""

from __future__ import annotations

import time
from collections.abc import Generator, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from redis import Redis, RedisCluster
from redis.client import PubSub
from redis.cluster import ClusterPipeline
from redis.exceptions import NoScriptError
from redis.exceptions import TimeoutError as RedisTimeoutError

from turnstream.redis.reads import Command, Read, ScriptCommand, as_command, scripts_of

T = TypeVar("T")
R = TypeVar("R")
SUBSCRIBE_TIMEOUT = 5.0
"""How long a subscription may wait for the server's confirmation."""


def execute(redis: Redis | RedisCluster, read: Read[T]) -> T:
    """Send `read` in one round trip and decode the replies; a script Redis does not hold is loaded and the read
    sent once more (redis/aio.py's `execute`, without the awaits)."""
    for attempt in range(2):
        try:
            return read.decode(_send(redis, read.commands))
        except NoScriptError:
            if attempt:
                raise
            for spec in scripts_of(read.commands):
                redis.script_load(spec.text())
    raise AssertionError("unreachable: the second attempt returns or raises")


def run(redis: Redis | RedisCluster, steps: Generator[Read[Any], Any, R]) -> R:
    """What a composed read returns, each plan it yields sent by `execute` (redis/aio.py's `run`, without the
    awaits)."""
    try:
        read = next(steps)
        while True:
            read = steps.send(execute(redis, read))
    except StopIteration as done:
        result: R = done.value
        return result


def _send(redis: Redis | RedisCluster, commands: Sequence[Command | ScriptCommand]) -> list[Any]:
    if len(commands) == 1:
        return [redis.execute_command(*as_command(commands[0], cluster=False))]  # type: ignore[no-untyped-call]  # unannotated in redis-py
    with redis.pipeline(transaction=False) as pipe:
        cluster = isinstance(pipe, ClusterPipeline)
        for command in commands:
            pipe.execute_command(*as_command(command, cluster))
        return list(pipe.execute())


@contextmanager
def subscribed(redis: Redis | RedisCluster, channel: str) -> Iterator[PubSub]:
    """A pub/sub connection of its own subscribed to `channel`, confirmed by the server (so no later publish goes
    unseen), closed on exit whatever happens: a wait leaves no subscription behind."""
    pubsub = redis.pubsub()
    try:
        pubsub.subscribe(channel)
        deadline = time.monotonic() + SUBSCRIBE_TIMEOUT
        while (remaining := deadline - time.monotonic()) > 0:
            message = pubsub.get_message(timeout=remaining)
            if message is not None and message["type"] == "subscribe":
                break
        else:
            raise RedisTimeoutError(f"Redis did not confirm the subscription to {channel}")
        yield pubsub
    finally:
        pubsub.close()


def published(pubsub: PubSub, timeout: float) -> bool:
    """Whether something was published on the subscription within `timeout` seconds."""
    message = pubsub.get_message(timeout=timeout)
    return message is not None and message["type"] == "message"
