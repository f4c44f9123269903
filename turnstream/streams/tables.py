"""Faust Tables: per-session state, backed by changelog topics so a replacement worker recovers it."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

import faust
from faust.types import EventT

from turnstream.faust_private.tables import table_key
from turnstream.schemas.ids import partition_of
from turnstream.settings import Settings
from turnstream.streams.admin import SESSIONS_TABLE


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


def sessions_table(app: faust.App, settings: Settings) -> SessionsTable:
    """session key -> SessionState bytes (bytes values travel raw); co-partitioned with the turns topic."""
    table = SessionsTable(
        app,
        name=SESSIONS_TABLE,
        key_type=str,
        value_type=bytes,
        partitions=settings.turn_partitions,
        default=None,
        beacon=app.tables.beacon,
    )
    app.tables.add(table)
    return table
