"""RecentOwners: an owner's value is kept while it is recent enough and among the most recently touched."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from turnstream.redis.recent_owners import RecentOwners


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_an_owner_keeps_its_value_while_touched_and_is_forgotten_once_idle_past_the_limit() -> None:
    clock = Clock()
    owners: RecentOwners[set[str]] = RecentOwners(cap=10, idle_seconds=60, clock=clock)
    owners.touch("ana", set).add("kx4q2p")
    clock.now = 59
    assert owners.touch("ana", set) == {"kx4q2p"}  # touched again within the minute: the same value
    clock.now = 100
    owners.touch("bo", set)
    assert "ana" in owners  # 41 s idle
    clock.now = 119
    owners.touch("bo", set)
    assert "ana" not in owners and len(owners) == 1  # 60 s idle: its sessions have expired, so has it
    assert owners.touch("ana", set) == set()  # back, it starts again from nothing


def test_past_the_cap_the_owner_touched_longest_ago_goes_first() -> None:
    owners: RecentOwners[int] = RecentOwners(cap=2, idle_seconds=3600, clock=Clock())
    owners.touch("a", int)
    owners.touch("b", int)
    owners.touch("a", int)
    owners.touch("c", int)
    assert "b" not in owners and "a" in owners and "c" in owners


@given(st.lists(st.tuples(st.sampled_from("abcdefgh"), st.floats(0.5, 30)), max_size=60), st.integers(1, 5))
def test_never_more_than_the_cap_and_none_idle_past_the_limit(touches: list[tuple[str, float]], cap: int) -> None:
    clock = Clock()
    owners: RecentOwners[list[float]] = RecentOwners(cap=cap, idle_seconds=20, clock=clock)
    last: dict[str, float] = {}
    for owner, step in touches:
        clock.now += step
        owners.touch(owner, list).append(clock.now)
        last[owner] = clock.now
        assert len(owners) <= cap and owner in owners
        newest = sorted(last, key=last.__getitem__)[-cap:]
        assert all((name in owners) == (name in newest and clock.now - last[name] < 20) for name in last)
