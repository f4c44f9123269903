"""What the handlers call: the gateway SDK on the API's settings, its readiness, and the erasure that the API and
the MCP server both run (erase_found).

The API holds one GatewayClient (one producer, one Redis pool) for every request, as a gateway process does.
It never writes a context: turns go to the broker, the worker applies them, the API reads what it wrote.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter

from aiokafka.errors import KafkaError

from turnstream.client import GatewayClient
from turnstream.client.errors import ProducerStartError
from turnstream.operations.erasure import erase
from turnstream.redis.connect import ping
from turnstream.serve.errors import BrokerNotReady, NotFound
from turnstream.serve.scope import nothing_to_erase
from turnstream.serve.worker_watch import WorkerWatch
from turnstream.settings import Settings

log = logging.getLogger(__name__)

PING_TIMEOUT_SECONDS = 1.0
RECONNECT_MAX_SECONDS = 5.0


async def erase_found(
    settings: Settings, *, user: str | None, session: str | None, tenant: str | None, dry_run: bool
) -> tuple[str, Counter[str]]:
    """streams.erasure.erase, as `turnstream forget` runs it, once a dry run found something of the user or session;
    NotFound when it found nothing, and then no worker is asked anything (the API's and the MCP server's erasure)."""
    what, counts = await erase(settings, user=user, session=session, tenant=tenant, dry_run=True)
    if nothing_to_erase(counts):
        raise NotFound(user or session)
    if dry_run:
        return what, counts
    return await erase(settings, user=user, session=session, tenant=tenant, dry_run=False)


class Backend:
    """The SDK's clients for the API; the producer connects in the background, so the API answers (503 for a
    record, its probes "not ready") while the broker is away, and records once it is back."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.gateway = GatewayClient(settings)
        self.worker = WorkerWatch(settings)
        """Whether a worker applies what the API records: a 202 and /readyz say so when none does."""
        self._connected = asyncio.Event()
        self._connecting: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._connecting = asyncio.create_task(self._connect())
        self.worker.start()

    async def _connect(self) -> None:
        delay = 0.2
        while True:
            try:
                await self.gateway.start()
            except (KafkaError, ProducerStartError, OSError) as error:
                log.warning("broker not reachable (%s); retrying in %.1f s", type(error).__name__, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, RECONNECT_MAX_SECONDS)
            else:
                self._connected.set()
                return

    @property
    def broker_connected(self) -> bool:
        return self._connected.is_set()

    def require_broker(self) -> None:
        """BrokerNotReady while the producer has not connected: nothing is sent, so nothing is half-written."""
        if not self._connected.is_set():
            raise BrokerNotReady("the producer is not connected to the broker")

    async def redis_answers(self) -> bool:
        try:
            return await ping(self.gateway.context.store.redis, PING_TIMEOUT_SECONDS)
        except Exception:  # noqa: BLE001 - any failure to answer is "not ready", never an error reply
            return False

    async def aclose(self) -> None:
        if self._connecting is not None and not self._connecting.done():
            self._connecting.cancel()
            await asyncio.gather(self._connecting, return_exceptions=True)
        await self.worker.aclose()
        await self.gateway.aclose()
