"""What Redis being away looks like to callers outside this package, so none of them imports redis-py."""

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

REDIS_UNAVAILABLE: tuple[type[Exception], ...] = (RedisConnectionError, RedisTimeoutError)
"""The errors of a Redis that does not answer (down, restarting, unreachable): worth waiting for, not a bug."""
