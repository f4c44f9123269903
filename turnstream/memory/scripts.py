"""The Lua scripts of the memory layer, registered on a client (EVALSHA, loaded on first use)."""

from __future__ import annotations

from functools import lru_cache
from importlib.resources import files

from redis.asyncio import Redis
from redis.commands.core import AsyncScript

_LUA = files("turnstream.memory").joinpath("lua")


@lru_cache(maxsize=None)
def script_text(name: str) -> str:
    return _LUA.joinpath(name).read_text()


def load_script(redis: Redis, name: str) -> AsyncScript:
    """`name` from memory/lua, registered on `redis`."""
    return redis.register_script(script_text(name))
