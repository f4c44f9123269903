"""A session's last applied turn ids: ordered and bounded, and asked of every turn whether it holds one."""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterable, Iterator


class RecentIds:
    """The newest `maxlen` ids in applying order, with their counts beside them: a membership test is a hash
    lookup, not a scan of the window (256 ids by default) for every turn."""

    __slots__ = ("_order", "_counts")

    def __init__(self, ids: Iterable[str] = (), *, maxlen: int) -> None:
        self._order: deque[str] = deque(ids, maxlen=maxlen)
        self._counts = Counter(self._order)

    @property
    def maxlen(self) -> int:
        return self._order.maxlen or 0

    def append(self, turn_id: str) -> None:
        """Add the newest id; the oldest leaves a full window."""
        if len(self._order) == self._order.maxlen:
            oldest = self._order[0]
            self._counts[oldest] -= 1
            if not self._counts[oldest]:
                del self._counts[oldest]
        self._order.append(turn_id)
        self._counts[turn_id] += 1

    def __contains__(self, turn_id: object) -> bool:
        return turn_id in self._counts

    def __iter__(self) -> Iterator[str]:
        return iter(self._order)

    def __len__(self) -> int:
        return len(self._order)
