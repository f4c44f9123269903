"""Table rows written and read as Faust's own stream code does.

Relies on (faust-streaming):
- `faust.streams._current_event`: the context variable that names the event a Table write is attributed to;
  the row goes to that event's partition of the changelog. A batch's rows are written after its events were
  taken, so each row's event is set here for its write (`attributed_to`);
- `Table._to_key`: how a Table turns a changelog record's key into its own key type (`table_key`);
- `TableManager.recovery`: the app's Table recovery, not declared on Faust's TableManagerT (`recovered`);
- `Table.on_key_set`, `Table.on_key_del` and `Table.apply_changelog_batch`: the hooks a row's write, its deletion
  and a changelog batch in recovery pass through; `Table.data`, the local store's mapping, and
  `Table.send_changelog(partition, key, value, value_serializer=)`, a changelog write outside a stream's event
  (`SessionsTable`, the sessions Table that knows when and where each row was written).
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar, cast

import faust
from faust.streams import _current_event
from faust.tables.manager import TableManager
from faust.types import AppT, EventT, TableT

from turnstream.schemas.ids import partition_of

K = TypeVar("K")


@contextmanager
def attributed_to(event: EventT[Any]) -> Iterator[None]:
    """Table writes in the block go to the changelog partition of `event`, as if made while it was processed."""
    token = _current_event.set(weakref.ref(event))
    try:
        yield
    finally:
        _current_event.reset(token)


def recovered(app: AppT) -> bool:
    """Whether the app's Tables have recovered from their changelogs since the latest rebalance."""
    return cast(TableManager, app.tables).recovery.completed.is_set()


def table_key(table: TableT[K, Any], key: object) -> K:
    """A changelog record's key as `table` keys its rows."""
    found: K = table._to_key(key)  # type: ignore[attr-defined]  # private: Table's, not declared on TableT
    return found


class SessionsTable(faust.Table[str, bytes]):
    """A Table that knows when each of its local rows was last written, and on which partition, for the timers
    that sweep it (expiry, re-sync, gauges) without hashing every key on every run.

    A row written here is stamped with the clock; a row recovered from the changelog with its record's
    timestamp (when it was written, by whichever worker), so a restart does not make old sessions young.
    """

    def __init__(self, *args: Any, partitions: int, **kwargs: Any) -> None:  # faust.Table's, the partitions required
        super().__init__(*args, partitions=partitions, **kwargs)
        self.partition_count = partitions
        """Partitions of the table's changelog (and of the turns topic)."""
        self.touched: dict[str, float] = {}
        """session key -> epoch seconds of its row's latest write."""
        self.partition: dict[str, int] = {}
        """session key -> its partition (of the turns topic and of the changelog alike)."""

    def on_key_set(self, key: str, value: bytes) -> None:
        super().on_key_set(key, value)
        self.touched[key] = time.time()
        if key not in self.partition:
            self.partition[key] = partition_of(key, self.partition_count)

    def on_key_del(self, key: str) -> None:
        super().on_key_del(key)
        self.untrack(key)

    def apply_changelog_batch(self, batch: Iterable[EventT[bytes]]) -> None:
        events = list(batch)
        for event in events:
            key = table_key(self, event.key)
            if event.message.value is None:
                self.untrack(key)
            else:
                self.touched[key] = event.message.timestamp
                self.partition[key] = event.message.partition
        super().apply_changelog_batch(events)

    def held_keys(self, held: set[int]) -> list[str]:
        """The keys of the rows on the partitions in `held`."""
        return [key for key, partition in self.partition.items() if partition in held]

    def expire(self, key: str, partition: int) -> None:
        """Drop the row of `key` here and tombstone it on its changelog `partition` (no stream event to take it from)."""
        self.data.pop(key, None)
        self.untrack(key)
        self.send_changelog(partition, key, None, value_serializer="raw")

    def untrack(self, key: str) -> None:
        """Forget what is known of `key` (its row is gone)."""
        self.touched.pop(key, None)
        self.partition.pop(key, None)
