"""RecentOwners: what a store remembers of the owners it wrote lately, bounded by their number and their idleness."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

V = TypeVar("V")


class RecentOwners(Generic[V]):
    """Per owner, a value kept while the owner is among the `cap` most recently touched and was touched within
    `idle_seconds`; the others are forgotten whenever an owner is touched, the longest untouched first."""

    def __init__(self, cap: int, idle_seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._cap = cap
        self._idle = idle_seconds
        self._clock = clock
        self._touched: OrderedDict[str, tuple[float, V]] = OrderedDict()
        """owner -> (when last touched, value), the longest untouched first."""

    def touch(self, owner: str, new: Callable[[], V]) -> V:
        """`owner`'s value (`new()` when it has none), the owner now the most recently touched."""
        now = self._clock()
        held = self._touched.pop(owner, None)
        value = new() if held is None else held[1]
        self._touched[owner] = (now, value)
        while len(self._touched) > self._cap or next(iter(self._touched.values()))[0] <= now - self._idle:
            self._touched.popitem(last=False)
        return value

    def __len__(self) -> int:
        return len(self._touched)

    def __contains__(self, owner: object) -> bool:
        return owner in self._touched
