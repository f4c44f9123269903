"""The worker's health endpoints on its web port: `/livez` (the process serves) and `/readyz` (it can work).

Ready means: partitions of the input topic are assigned to this worker, the Tables' recovery from their
changelogs has finished, and Redis answers a PING. A worker beyond the number of partitions holds none
and stays not ready, which is what a load balancer or Kubernetes should see.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import faust

from turnstream.kafka.faust_private.table_rows import recovered
from turnstream.redis.connect import ping, redis_client
from turnstream.settings import Settings

if TYPE_CHECKING:
    from redis.asyncio import Redis

PING_TIMEOUT_SECONDS = 1.0


async def readiness(app: faust.App, redis: Redis) -> dict[str, bool]:
    """Each readiness condition of `app`, checked now."""
    try:
        redis_ok = await ping(redis, PING_TIMEOUT_SECONDS)
    except Exception:  # noqa: BLE001 - any failure to answer is "not ready", never an error page
        redis_ok = False
    return {
        "partitions_assigned": bool(app.consumer.assignment()),
        "recovery_finished": recovered(app),
        "redis": redis_ok,
    }


def register_probes(app: faust.App, settings: Settings) -> None:
    """Add `/livez` and `/readyz` to the worker's web server (its table and debug views stay off)."""
    redis = redis_client(settings)

    @app.page("/livez")
    async def livez(web: Any, request: Any) -> Any:
        return web.json({"live": True})

    @app.page("/readyz")
    async def readyz(web: Any, request: Any) -> Any:
        checks = await readiness(app, redis)
        ready = all(checks.values())
        return web.json({"ready": ready, **checks}, status=200 if ready else 503)
