"""A session agent's Redis write waits out what a Redis that is away looks like, a Redis Cluster's failover
included, and gives up on nothing else."""

from __future__ import annotations

import pytest
from redis.exceptions import ClusterDownError, ConnectionError, MasterDownError, ResponseError, TryAgainError

from turnstream.agents.sinks import until_redis_answers

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    "away",
    [
        ConnectionError("Error 111 connecting"),
        ClusterDownError("CLUSTERDOWN The cluster is down"),  # a primary failed, its replica not yet promoted
        MasterDownError("MASTERDOWN Link with MASTER is down"),
        TryAgainError("TRYAGAIN Multiple keys request during rehashing of slot"),
    ],
)
async def test_a_write_is_tried_again_while_redis_is_away(away: Exception) -> None:
    failures = [away]

    async def write() -> str:
        if failures:
            raise failures.pop()
        return "stored"

    assert await until_redis_answers(write) == "stored"


async def test_a_write_redis_refuses_is_not_tried_again() -> None:
    calls = 0

    async def write() -> None:
        nonlocal calls
        calls += 1
        raise ResponseError("ERR wrong number of arguments")

    with pytest.raises(ResponseError):
        await until_redis_answers(write)
    assert calls == 1
