"""The context re-sync's decisions: which partitions a changed primary makes it compare whole, and which sessions
are behind their Table rows."""

from __future__ import annotations

import pytest

from turnstream.agents.memory_resync import replay_due
from turnstream.agents.resync import behind, by_lineage
from turnstream.redis.replication import Lineage

pytestmark = pytest.mark.unit

OLD, NEW = "8ed41e72365ecb37219a9fc08994c7630b675607", "f858395b945faa75dfd7ee0b5a2128db91751e59"


def test_partitions_are_grouped_by_what_their_mark_says() -> None:
    marks: dict[int, str | None] = {2: OLD, 0: NEW, 1: None, 3: OLD}
    assert by_lineage(marks, NEW) == {Lineage.CHANGED: [2, 3], Lineage.SAME: [0], Lineage.UNMARKED: [1]}
    assert by_lineage(marks, None) == {Lineage.FIRST_SIGHT: [0, 2, 3], Lineage.UNMARKED: [1]}


def test_a_session_is_behind_when_redis_holds_an_older_version_or_no_pointer() -> None:
    rows = [5, 5, 5, 5, 3]
    stored = [(5, True), (4, True), (0, False), (5, False), (7, True)]
    # equal: a no-op; older: lost writes; none; a pointer lost after its context; newer than the row: the Table
    # row of a batch already written to Redis is not written yet
    assert behind(rows, stored) == [False, True, True, True, False]


def test_the_journal_is_replayed_after_a_total_loss_or_a_changed_primary_only() -> None:
    assert [state for state in Lineage if replay_due(state)] == [Lineage.UNMARKED, Lineage.CHANGED]
