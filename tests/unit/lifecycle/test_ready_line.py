"""The worker's ready line: its group, its topic and its partitions in Faust's compact notation."""

from __future__ import annotations

import orjson
from hypothesis import given
from hypothesis import strategies as st

from tests.support.worker import _partitions
from turnstream.lifecycle.startup import partition_ranges, ready_line


def test_runs_are_joined_and_gaps_kept() -> None:
    assert partition_ranges([5, 0, 2, 1]) == "0-2,5"
    assert partition_ranges([3]) == "3"
    assert partition_ranges([0, 1, 3, 4, 6]) == "0-1,3-4,6"
    assert partition_ranges([]) == "none"


@given(st.sets(st.integers(min_value=0, max_value=300)))
def test_the_notation_reads_back_as_the_same_partitions(partitions: set[int]) -> None:
    text = partition_ranges(partitions)
    assert (_partitions(text) if partitions else set()) == partitions
    assert text.count(",") < len(partitions) or not partitions  # one item a run, never one a number in a run


def test_the_line_starts_as_the_stacks_and_names_group_topic_and_partitions() -> None:
    line = ready_line("turnstream-worker", "turnstream.turns", range(8))
    assert line == "READY group=turnstream-worker topic=turnstream.turns partitions=0-7"


def test_under_json_logs_the_line_is_one_json_object_with_the_same_text() -> None:
    line = ready_line("turnstream-worker", "turnstream.turns", [0, 1, 3], "json")
    assert orjson.loads(line) == {
        "message": "READY group=turnstream-worker topic=turnstream.turns partitions=0-1,3",
        "group": "turnstream-worker",
        "topic": "turnstream.turns",
        "partitions": "0-1,3",
    }
