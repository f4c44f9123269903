"""The Lua scripts: registered on a client (EVALSHA, loaded on first use), and queued in pipelines on a single
Redis and a Redis Cluster alike."""

from __future__ import annotations

from functools import lru_cache
from importlib.resources import files
from typing import Sequence

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.asyncio.cluster import ClusterPipeline
from redis.commands.core import AsyncScript

_LUA = files("turnstream.memory").joinpath("lua")


@lru_cache(maxsize=None)
def script_text(name: str) -> str:
    return _LUA.joinpath(name).read_text()


def load_script(redis: Redis, name: str) -> AsyncScript:
    """`name` from memory/lua, registered on `redis`."""
    return redis.register_script(script_text(name))


async def queue_script(script: AsyncScript, pipe: Pipeline | ClusterPipeline, keys: Sequence[str], args: Sequence[object]) -> None:
    """Add one call of `script` to `pipe`, not sent yet; its reply comes with the pipeline's.

    A cluster pipeline refuses EVALSHA (it cannot load a missing script half-way), so there the call goes
    as EVAL with the script's text: redis-py sends it to the node of the keys' slot, the server caches it.
    """
    if isinstance(pipe, ClusterPipeline):
        pipe.eval(script.script, len(keys), *keys, *args)  # type: ignore[arg-type]
    else:
        await script(keys=keys, args=args, client=pipe)
