"""The agent's intake: a partition's records are taken in offset order from where it was sought, none skipped;
a lost record is asked for again, whether a later record shows the gap or the partition just stalls."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from turnstream.kafka.intake import ASK_AGAIN_SECONDS, STALL_SECONDS, Intake, Taken

pytestmark = pytest.mark.unit

TP = "turns-0"


def started(offset: int = 10) -> Intake[str]:
    intake: Intake[str] = Intake()
    intake.start(TP, offset, now=0.0)
    return intake


def test_records_in_order_from_the_start_are_taken() -> None:
    intake = started(10)
    assert [intake.take(TP, offset, 0.0) for offset in (10, 11, 12)] == [Taken(True)] * 3


def test_a_partition_not_started_in_this_assignment_takes_nothing() -> None:
    intake = started(10)
    intake.clear()
    assert intake.take(TP, 10, 0.0) == Taken(False)
    assert Intake[str]().take(TP, 0, 0.0) == Taken(False)


def test_a_record_taken_already_is_not_taken_again() -> None:
    intake = started(10)
    intake.take(TP, 10, 0.0)
    assert intake.take(TP, 10, 0.0) == Taken(False)


def test_a_record_ahead_asks_for_the_missing_ones_once_per_interval() -> None:
    intake = started(10)
    assert intake.take(TP, 12, 0.0) == Taken(False, 10)
    assert intake.take(TP, 13, 0.1) == Taken(False)  # queued behind the same gap: no second seek
    assert intake.take(TP, 14, ASK_AGAIN_SECONDS + 0.1) == Taken(False, 10)  # the gap is still there: ask again
    assert intake.take(TP, 10, 2.0) == Taken(True)
    assert intake.take(TP, 11, 2.0) == Taken(True)


def test_a_gap_of_the_partition_itself_is_passed_only_where_the_fetch_found_it() -> None:
    intake = started(10)
    intake.real_gap(TP, 10, 13)
    assert intake.take(TP, 14, 0.0) == Taken(False, 10)  # not the gap the fetch found
    assert intake.take(TP, 13, 0.0) == Taken(True)
    assert intake.take(TP, 14, 0.0) == Taken(True)


def test_a_stalled_partition_is_fetched_again_from_what_the_agent_lacks() -> None:
    intake = started(10)
    intake.take(TP, 10, 1.0)
    assert intake.stalled({TP: 15}, 1.0 + STALL_SECONDS - 0.5) == {}  # records may still be on their way
    assert intake.stalled({TP: 15}, 1.0 + STALL_SECONDS) == {TP: 11}
    assert intake.stalled({TP: 15}, 1.0 + STALL_SECONDS + 0.5) == {}  # asked: it waits a full interval again
    assert intake.stalled({TP: 15}, 1.0 + 2 * STALL_SECONDS) == {TP: 11}


def test_an_agent_busy_with_other_partitions_does_not_stall() -> None:
    intake = started(10)
    intake.start("turns-1", 0, 0.0)
    for second in range(int(STALL_SECONDS * 3)):
        intake.take("turns-1", second, float(second))
        assert intake.stalled({TP: 15, "turns-1": second + 1}, float(second)) == {}


def test_a_partition_whose_fetch_is_not_ahead_never_stalls() -> None:
    intake = started(10)
    assert intake.stalled({TP: 10}, STALL_SECONDS * 10) == {}
    assert intake.stalled({}, STALL_SECONDS * 10) == {}


@given(st.lists(st.integers(min_value=0, max_value=40), max_size=200))
def test_whatever_arrives_the_agent_takes_a_gapless_run_from_the_start(arrivals: list[int]) -> None:
    """Records duplicated, reordered, dropped: what is taken is always start, start+1, ... with nothing skipped,
    and every record arriving once its predecessors were taken is taken."""
    intake = started(0)
    taken = []
    for now, offset in enumerate(arrivals):
        verdict = intake.take(TP, offset, float(now))
        if verdict.taken:
            taken.append(offset)
        else:
            assert verdict.fetch_from is None or verdict.fetch_from == len(taken)
    assert taken == list(range(len(taken)))
    assert intake.take(TP, len(taken), float(len(arrivals))) == Taken(True)
