"""A running shadow's mark in Redis (`P:shadow:running`): what `turnstream shadow drop` asks before it deletes.

Asked of Redis rather than the broker: the embedded Tansu keeps a stopped consumer among its group's members.
"""

from __future__ import annotations

import os
import socket

from redis.asyncio import Redis

from turnstream.redis.connect import redis_client
from turnstream.redis.keys import KeyLayout
from turnstream.settings import RedisSettings

RUNNING_MARK_SECONDS = 5
"""How often a running shadow renews its mark; the mark lasts three times as long, so a killed shadow's is gone
within 15 s."""


async def renew_running_mark(redis: Redis, prefix: str, seconds: float = RUNNING_MARK_SECONDS * 3) -> None:
    """Say that this process runs the shadow under `prefix`; it expires after `seconds` unless renewed."""
    await redis.set(
        KeyLayout(prefix).shadow_running(), f"pid {os.getpid()} on {socket.gethostname()}", ex=max(1, round(seconds))
    )


async def mark_starting(settings: RedisSettings, prefix: str, seconds: float) -> None:
    """The mark of a shadow about to start its worker, for as long as the worker may take to start: the worker's own
    timer renews it from then on."""
    redis = redis_client(settings)
    try:
        await renew_running_mark(redis, prefix, seconds)
    finally:
        await redis.aclose()


async def clear_running_mark(redis: Redis, prefix: str) -> None:
    """Take the mark away on a graceful stop, so the shadow can be dropped at once."""
    await redis.delete(KeyLayout(prefix).shadow_running())


async def running_mark(settings: RedisSettings, prefix: str) -> str | None:
    """The process and host of the shadow running under `prefix`, as its mark says; None when none runs."""
    redis = redis_client(settings)
    try:
        mark = await redis.get(KeyLayout(prefix).shadow_running())
    finally:
        await redis.aclose()
    return (mark.decode() if isinstance(mark, bytes) else mark) or None
