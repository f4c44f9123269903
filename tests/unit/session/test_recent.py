"""RecentIds answers as the bounded deque it stands for, whatever ids come, repeats included."""

from __future__ import annotations

from collections import deque

from hypothesis import given
from hypothesis import strategies as st

from turnstream.session.recent import RecentIds


@given(ids=st.lists(st.sampled_from("abcdefg"), max_size=60), window=st.integers(1, 8))
def test_holds_and_orders_exactly_the_newest_ids(ids: list[str], window: int) -> None:
    recent, model = RecentIds(ids[:3], maxlen=window), deque(ids[:3], maxlen=window)
    for turn_id in ids[3:]:
        recent.append(turn_id)
        model.append(turn_id)
        assert list(recent) == list(model) and len(recent) == len(model)
        assert all((each in recent) == (each in model) for each in "abcdefgh")
    assert recent.maxlen == window


def test_an_id_repeated_stays_until_its_last_copy_leaves() -> None:
    recent = RecentIds(["a", "b", "a"], maxlen=3)
    recent.append("c")  # the first "a" leaves; the second is still in the window
    assert "a" in recent and list(recent) == ["b", "a", "c"]
    recent.append("d")
    recent.append("e")
    assert "a" not in recent and "b" not in recent
