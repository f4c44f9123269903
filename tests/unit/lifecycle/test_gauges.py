"""The pure parts of the worker's health gauges: lag of a partition, sessions held of a Table's rows."""

from __future__ import annotations

import pytest

from turnstream.lifecycle.gauges import count_held, partition_lag
from turnstream.schemas.control import forget_marker

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


def test_count_held_counts_rows_of_the_given_keys_that_are_sessions() -> None:
    rows = {"a": b"state", "b": b"state", "gone-marker": forget_marker(1.0), "other": b"state"}
    assert count_held(rows, ["a", "b", "gone-marker", "not-there"]) == 2
    assert count_held(rows, []) == 0
