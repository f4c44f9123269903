"""The asyncio executor: reads (redis/reads.py) in one round trip, a composed read (`run`: the prompt read of
prompt/read.py) plan by plan, and the Lua scripts registered on a client (EVALSHA, loaded on first use) and queued
in pipelines on a single Redis and a Redis Cluster alike; `run_pipeline` sends such a pipeline in one round
trip."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator, Sequence
from typing import Any, TypeVar

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.asyncio.cluster import ClusterPipeline, RedisCluster
from redis.commands.core import AsyncScript
from redis.exceptions import NoScriptError

from turnstream.redis.reads import Command, Read, ScriptCommand, as_command, scripts_of
from turnstream.redis.scripts import Call, ScriptSpec

T = TypeVar("T")
R = TypeVar("R")


def load_script(redis: Redis, spec: ScriptSpec) -> AsyncScript:
    """The script of `spec`, registered on `redis`."""
    return redis.register_script(spec.text())


async def queue_script(script: AsyncScript, pipe: Pipeline | ClusterPipeline, call: Call) -> None:
    """Add one call of `script` to `pipe`, not sent yet; its reply comes with the pipeline's.

    A cluster pipeline refuses EVALSHA (it cannot load a missing script half-way), so there the call goes
    as EVAL with the script's text: redis-py sends it to the node of the keys' slot, the server caches it.
    """
    if isinstance(pipe, ClusterPipeline):
        # redis-py types a script's text as bytes or str; load_script registers str
        pipe.eval(script.script, len(call.keys), *call.keys, *call.args)  # type: ignore[arg-type]
    else:
        await script(keys=call.keys, args=call.args, client=pipe)


async def run_pipeline(redis: Redis | RedisCluster, queue: Callable[[Any], Awaitable[None]]) -> list[Any]:
    """Fill a pipeline with `queue` and send it in one round trip, script calls included; the replies.

    redis-py asks SCRIPT EXISTS before every pipeline that calls a registered script, a round trip more
    each time. Here the calls go as bare EVALSHA, and only when Redis answers NOSCRIPT (it restarted, or
    its script cache was flushed) are the pipeline's scripts loaded and the pipeline sent once more: the
    callers queue idempotent writes only, so what ran the first time may run again.
    """
    for attempt in range(2):
        async with redis.pipeline(transaction=False) as pipe:
            await queue(pipe)
            held: set[AsyncScript] = getattr(pipe, "scripts", set())  # a cluster pipeline holds none
            scripts = set(held)
            held.clear()
            try:
                return list(await pipe.execute())
            except NoScriptError:
                if attempt:
                    raise
        for script in scripts:
            await redis.script_load(script.script)
    raise AssertionError("unreachable: the second attempt returns or raises")


async def execute(redis: Redis | RedisCluster, read: Read[T]) -> T:
    """Send `read` in one round trip (pipelined when it has several commands) and decode the replies; a script
    Redis does not hold (it restarted, or its cache was flushed) is loaded and the read sent once more."""
    for attempt in range(2):
        try:
            return read.decode(await _send(redis, read.commands))
        except NoScriptError:
            if attempt:
                raise
            for spec in scripts_of(read.commands):
                await redis.script_load(spec.text())
    raise AssertionError("unreachable: the second attempt returns or raises")


async def run(redis: Redis | RedisCluster, steps: Generator[Read[Any], Any, R]) -> R:
    """What a composed read returns: each plan it yields sent by `execute` (one round trip each; the prompt read
    yields one), its decoded replies sent back."""
    try:
        read = next(steps)
        while True:
            read = steps.send(await execute(redis, read))
    except StopIteration as done:
        result: R = done.value
        return result


async def _send(redis: Redis | RedisCluster, commands: Sequence[Command | ScriptCommand]) -> list[Any]:
    if len(commands) == 1:
        return [await redis.execute_command(*as_command(commands[0], cluster=False))]
    async with redis.pipeline(transaction=False) as pipe:
        cluster = isinstance(pipe, ClusterPipeline)
        for command in commands:
            pipe.execute_command(*as_command(command, cluster))
        return list(await pipe.execute())
