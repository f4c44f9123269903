"""What a replay appends of an owner's archive: the entries whose positions do not hold them."""

from __future__ import annotations

import pytest

from turnstream.memory.archive import archive_entry
from turnstream.redis.archive import absent
from turnstream.schemas.archive import ArchiveEntry

pytestmark = pytest.mark.unit


def entry(session: str, turn_id: str, position: int) -> ArchiveEntry:
    made = archive_entry(session, turn_id, position, {"role": "user", "content": f"My locker is {position}1."}, 0.0)
    assert made is not None
    return made


def test_an_entry_is_absent_when_its_position_is_empty_or_holds_another_turn() -> None:
    kept, lost, reused = entry("s1", "t0", 0), entry("s1", "t1", 1), entry("s1", "t2", 2)
    other = entry("s1", "old-t2", 2)  # the session key was used before: its position holds an older turn
    assert absent([kept, lost, reused], [kept.to_json(), None, other.to_json()]) == [lost, reused]
