"""A watch outlives its pub/sub connection: killed by the server (as Sentinel does to a demoted primary's clients),
the hub subscribes again and tells the waiter to look again, and later updates still reach it."""

from __future__ import annotations

from tests.integration.client.fixtures import make_doc
from turnstream.redis.updates import LOOK_AGAIN
from turnstream.redis.writer import ContextWriter


async def test_a_killed_subscription_is_replaced_and_the_waiter_woken(store: ContextWriter) -> None:
    async with store.reader.updates("acme:s1") as updates:
        await store.write(make_doc(1), ["t1"])
        assert await updates.next(2.0) == 1
        assert await store.redis.client_kill_filter(_type="pubsub") >= 1
        assert await updates.next(5.0) == LOOK_AGAIN  # something may have been published while it was down
        await store.write(make_doc(2), ["t2"])
        assert await updates.next(5.0) == 2
