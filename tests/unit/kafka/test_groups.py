"""A group's lag on one partition, the one rule the worker's gauge, the shadow's status and the soak share."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from turnstream.kafka.groups import records_behind

offsets = st.integers(min_value=0, max_value=10**12)


@given(offsets, offsets)
def test_a_group_is_behind_by_the_records_from_its_commit_to_the_end_and_never_below_none(end: int, at: int) -> None:
    assert records_behind(end, at) == (end - at if at <= end else 0)
    assert records_behind(end, None) == end  # nothing committed counts from the partition's first offset
