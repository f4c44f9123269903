"""Session states kept live across batches, pure: a bounded map of each assigned session's state object, and the
state loader over it that lends a batch its states and takes them back once the batch is stored.

The Table row stays the durable copy, written once per session per batch: a live state is the very object whose
snapshot the last stored batch wrote, so restoring the row would give it back. A session is restored from its row
only when it is not live: first seen on this worker (assignment, recovery), evicted (idle, or over the bound),
dropped with its partition, or lent to a batch that failed.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from turnstream.session.rules import Loaded
from turnstream.session.session_batch import SessionBatch, StateLoader
from turnstream.session.state import SessionState


class Kept(NamedTuple):
    state: SessionState
    partition: int
    used: float
    """When its batch was stored (the caller's clock, never going back)."""


class LiveMap:
    """Session key -> live state, least recently used first; never over `max_states`, none unused for more than
    `idle_seconds` once `evict` ran (0: no idle limit). `max_states` 0 keeps nothing."""

    def __init__(self, max_states: int, idle_seconds: float) -> None:
        self.max_states = max_states
        self.idle_seconds = idle_seconds
        self.kept: OrderedDict[str, Kept] = OrderedDict()

    def __len__(self) -> int:
        return len(self.kept)

    def __contains__(self, key: str) -> bool:
        return key in self.kept

    def take(self, key: str) -> SessionState | None:
        """The live state of `key`, no longer live: whoever takes it may change it."""
        kept = self.kept.pop(key, None)
        return kept.state if kept is not None else None

    def put(self, key: str, state: SessionState, partition: int, now: float) -> None:
        """Keep `state` as the live state of `key` (on `partition`), then evict what is idle or over the bound."""
        if self.max_states == 0:
            return
        self.kept.pop(key, None)  # to the end: the most recently used
        self.kept[key] = Kept(state, partition, now)
        self.evict(now)

    def evict(self, now: float) -> None:
        """Drop the least recently used states over the bound, and those unused for longer than the idle time."""
        while len(self.kept) > self.max_states:
            self.kept.popitem(last=False)
        if self.idle_seconds:
            while self.kept and now - next(iter(self.kept.values())).used > self.idle_seconds:
                self.kept.popitem(last=False)

    def discard(self, key: str) -> None:
        self.kept.pop(key, None)

    def drop_partitions(self, partitions: Iterable[int]) -> None:
        """Drop the states of the sessions on `partitions`."""
        dropped = set(partitions)
        self._drop_where(lambda partition: partition in dropped)

    def keep_partitions(self, partitions: Iterable[int]) -> None:
        """Drop the states of the sessions on any partition but `partitions`."""
        held = set(partitions)
        self._drop_where(lambda partition: partition not in held)

    def _drop_where(self, goes: Callable[[int], bool]) -> None:
        for key in [key for key, kept in self.kept.items() if goes(kept.partition)]:
            del self.kept[key]

    def clear(self) -> None:
        self.kept.clear()


class LiveStates:
    """The session agent's state loader: a live state when there is one, else the `table` loader's (the row).

    A state is lent to one batch at a time (the agent runs with concurrency 1) and taken out of the map while
    lent, so a batch that fails leaves none of its half-applied states live; `stored` takes back the states whose
    rows the batch wrote, once the batch is stored and acknowledged. A state rebuilt within the batch (an item that
    failed half-way) is lent again from the row and is the one taken back. A rebalance drops the partitions that
    left, and turns away the states of a batch lent before it: another worker may have moved their rows since.
    """

    def __init__(
        self, table: StateLoader, partition_of: Callable[[str], int], max_states: int, idle_seconds: float
    ) -> None:
        self.table = table
        self.partition_of = partition_of
        self.live = LiveMap(max_states, idle_seconds)
        self.generation = 0
        """Bumped by every rebalance: a state lent in an earlier generation is not taken back."""
        self.lent: dict[str, int] = {}
        """Sessions lent to the batch under way, with the generation they were lent in."""

    def load(self, key: str) -> Loaded:
        self.lent[key] = self.generation
        state = self.live.take(key)
        return state if state is not None else self.table.load(key)

    def stored(self, batch: SessionBatch[Any], now: float) -> None:
        """`batch` is stored and acknowledged: the states whose rows it wrote live on; an erased session's does not."""
        for key in batch.forgotten:
            self.live.discard(key)
        for key, state in batch.states.items():
            if key in batch.last_source and self.lent.get(key) == self.generation:
                self.live.put(key, state, self.partition_of(key), now)
        self.lent.clear()

    def failed(self, batch: SessionBatch[Any]) -> None:
        """`batch` was not stored (or not acknowledged): none of its sessions stays live; a replay restores their rows."""
        for key in [*self.lent, *batch.states, *batch.forgotten]:
            self.live.discard(key)
        self.lent.clear()

    def forget(self, key: str) -> None:
        """The session's row is gone (expired): its state must not outlive it."""
        self.live.discard(key)

    def revoked(self, partitions: Iterable[int]) -> None:
        """`partitions` left this worker: their sessions are restored from the Table if they come back."""
        self.generation += 1
        self.live.drop_partitions(partitions)

    def assigned(self, partitions: Iterable[int]) -> None:
        """This worker holds `partitions` now: no state of another partition stays live."""
        self.generation += 1
        self.live.keep_partitions(partitions)

    def restart(self) -> None:
        """An agent started afresh restores every session from the Table."""
        self.generation += 1
        self.live.clear()
        self.lent.clear()
