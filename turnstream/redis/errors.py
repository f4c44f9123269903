"""What Redis being away looks like to callers outside this package, so none of them imports redis-py."""

from redis.exceptions import ClusterDownError, RedisClusterUnreachableError, SlotNotCoveredError, TryAgainError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

REDIS_UNAVAILABLE: tuple[type[Exception], ...] = (
    RedisConnectionError,
    RedisTimeoutError,
    ClusterDownError,
    TryAgainError,
    SlotNotCoveredError,
    RedisClusterUnreachableError,
)
"""The errors of a Redis that does not answer (down, restarting, unreachable): worth waiting for, not a bug. On a
Redis Cluster also a slot whose primary failed before its replica took over (CLUSTERDOWN, MASTERDOWN), a slot moving
(TRYAGAIN) or uncovered, and no node of the client's answering."""
