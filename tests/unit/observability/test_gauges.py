"""The pure parts of the worker's health gauges: lag of a partition, sessions held of a Table's rows."""

from __future__ import annotations

import pytest

from turnstream.agents.expiry import partition_of
from turnstream.schemas.control import forget_marker
from turnstream.streams.gauges import count_held, partition_lag

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("highwater", "committed", "lag"),
    [
        (None, 5, None),  # no fetch answered yet: unknown, not zero
        (None, None, None),
        (10, 4, 6),
        (10, 10, 0),  # drained
        (7, None, 7),  # nothing committed by the group: counted from offset 0
        (0, None, 0),
        (3, 5, 0),  # a commit ahead of a stale high watermark is never negative lag
    ],
)
def test_partition_lag(highwater: int | None, committed: int | None, lag: int | None) -> None:
    assert partition_lag(highwater, committed) == lag


def test_count_held_counts_sessions_of_held_partitions_only() -> None:
    partitions = 4
    keys = [f"session-{i}" for i in range(40)]
    rows = {key: b"state" for key in keys}
    held = {0, 2}
    expected = sum(1 for key in keys if partition_of(key, partitions) in held)
    assert 0 < expected < len(keys)
    known: dict[str, int] = {}
    assert count_held(rows, held, partitions, known) == expected
    assert count_held(rows, set(range(partitions)), partitions, known) == len(keys)
    assert count_held(rows, set(), partitions, known) == 0


def test_count_held_skips_forget_markers() -> None:
    rows = {"kept": b"state", "erased": forget_marker(1_700_000_000.0)}
    assert count_held(rows, {0}, 1, {}) == 1


def test_count_held_drops_cached_keys_gone_from_the_table() -> None:
    known: dict[str, int] = {}
    count_held({f"k{i}": b"s" for i in range(10)}, {0}, 1, known)
    assert len(known) == 10
    assert count_held({"k0": b"s", "new": b"s"}, {0}, 1, known) == 2
    assert set(known) == {"k0", "new"}


async def test_each_retried_redis_write_is_counted_once() -> None:
    import redis.exceptions
    from prometheus_client import REGISTRY

    from turnstream.agents.session import _until_redis_answers

    def retries() -> float:
        return REGISTRY.get_sample_value("turnstream_redis_write_retries_total") or 0.0

    failures = [redis.exceptions.ConnectionError("gone"), redis.exceptions.TimeoutError("slow")]

    async def write() -> str:
        if failures:
            raise failures.pop(0)
        return "stored"

    before = retries()
    assert await _until_redis_answers(write) == "stored"
    assert retries() - before == 2
    assert await _until_redis_answers(write) == "stored"  # a write taken at once is no retry
    assert retries() - before == 2
