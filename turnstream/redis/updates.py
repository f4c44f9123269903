"""One subscription for every wait of a client: channels are subscribed while someone waits on them.

A gateway that waits for each of its turns would otherwise hold a connection per wait; here every
wait of one client shares one pub/sub connection and one reader task, and reads the context with the
pool's connections only when told something changed. A lost pub/sub connection (Redis restarted, a
Sentinel failover) is replaced, and every waiter is woken to read again once its channel is back.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import defaultdict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from redis.asyncio import Redis
from redis.asyncio.client import PubSub
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

SUBSCRIBE_TIMEOUT = 5.0
RESUBSCRIBE_PAUSE_SECONDS = 0.5
"""Between attempts to subscribe again while Redis does not answer."""
LOOK_AGAIN = 0
"""What a watch is told after a lost connection: no version, something may have been published meanwhile."""


class Watch:
    """One waiter's view of a channel: the latest version published on it since the waiter last looked."""

    def __init__(self) -> None:
        self._event = asyncio.Event()
        self._version: int | None = None

    def notify(self, version: int) -> None:
        self._version = version
        self._event.set()

    async def next(self, timeout: float) -> int | None:
        """The version of the next update published within `timeout` seconds (since the last call), else None."""
        try:
            await asyncio.wait_for(self._event.wait(), timeout)
        except TimeoutError:
            return None
        self._event.clear()
        return self._version


class UpdateHub:
    """Multiplexes waits on many channels over one pub/sub connection."""

    def __init__(self, redis: Redis) -> None:
        self._redis = redis
        self._pubsub: PubSub | None = None
        self._reader: asyncio.Task[None] | None = None
        self._watches: defaultdict[bytes, set[Watch]] = defaultdict(set)
        self._confirmed: dict[bytes, asyncio.Event] = {}
        self._resubscribed: set[bytes] = set()
        self._lock = asyncio.Lock()

    @property
    def channels(self) -> int:
        """Channels subscribed now (for tests and metrics)."""
        return len(self._watches)

    @asynccontextmanager
    async def watch(self, channel: str) -> AsyncIterator[Watch]:
        """Watch `channel`; on entry the subscription is live on the server, so no later write goes unseen."""
        name = channel.encode()
        watch = Watch()
        async with self._lock:
            first = not self._watches[name]
            self._watches[name].add(watch)
            if first:
                confirmed = self._confirmed[name] = asyncio.Event()
                await self._subscribe(name)
        try:
            if first:
                await self._confirm(name, confirmed)
            else:
                await self._confirm(name, self._confirmed.get(name))
            yield watch
        finally:
            async with self._lock:
                self._watches[name].discard(watch)
                if not self._watches[name]:
                    del self._watches[name]
                    self._confirmed.pop(name, None)
                    if self._pubsub is not None:
                        with contextlib.suppress(
                            RedisConnectionError
                        ):  # a new connection subscribes only to what is watched
                            await self._pubsub.unsubscribe(name)

    async def _subscribe(self, name: bytes) -> None:
        if self._pubsub is None:
            self._pubsub = self._redis.pubsub()
        await self._pubsub.subscribe(name)
        if self._reader is None or self._reader.done():
            self._reader = asyncio.create_task(self._read())

    @staticmethod
    async def _confirm(name: bytes, confirmed: asyncio.Event | None) -> None:
        if confirmed is None:
            return
        try:
            await asyncio.wait_for(confirmed.wait(), SUBSCRIBE_TIMEOUT)
        except TimeoutError:
            raise RedisTimeoutError(f"Redis did not confirm the subscription to {name.decode()}") from None

    async def _read(self) -> None:
        """Dispatch every message to the watches of its channel, until no channel is left."""
        while self._watches:
            assert self._pubsub is not None
            try:
                message = await self._pubsub.get_message(timeout=1.0)
            except RedisConnectionError:
                await self._resubscribe()
                continue
            if message is None:
                continue
            channel = message["channel"]
            if message["type"] == "subscribe":
                if channel in self._confirmed:
                    self._confirmed[channel].set()
                if channel in self._resubscribed:
                    # live again: whatever was published while the connection was down is found by a read now
                    self._resubscribed.discard(channel)
                    for watch in self._watches.get(channel, ()):
                        watch.notify(LOOK_AGAIN)
            elif message["type"] == "message":
                for watch in self._watches.get(channel, ()):
                    watch.notify(int(message["data"]))

    async def _resubscribe(self) -> None:
        """A new pub/sub connection (the client finds the current server) subscribed to every watched channel."""
        while self._watches:
            async with self._lock:
                old, self._pubsub = self._pubsub, self._redis.pubsub()
                if old is not None:
                    with contextlib.suppress(RedisError):
                        await old.aclose()
                channels = list(self._watches)
                try:
                    await self._pubsub.subscribe(*channels)
                except RedisConnectionError:
                    pass
                else:
                    self._resubscribed.update(channels)
                    return
            await asyncio.sleep(RESUBSCRIBE_PAUSE_SECONDS)

    async def aclose(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        if self._pubsub is not None:
            await self._pubsub.aclose()
