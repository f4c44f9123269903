"""Faust Tables: per-session state, backed by changelog topics so a replacement worker recovers it."""

from __future__ import annotations

import time
from typing import Any, Iterable

import faust
from faust.types import EventT

from turnstream.settings import Settings
from turnstream.streams.admin import SESSIONS_TABLE


class SessionsTable(faust.Table):
    """A Table that knows when each of its local rows was last written, for the expiry sweep.

    A row written here is stamped with the clock; a row recovered from the changelog with its record's
    timestamp (when it was written, by whichever worker), so a restart does not make old sessions young.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.touched: dict[str, float] = {}
        """session key -> epoch seconds of its row's latest write."""

    def on_key_set(self, key: str, value: Any) -> None:
        super().on_key_set(key, value)
        self.touched[key] = time.time()

    def on_key_del(self, key: str) -> None:
        super().on_key_del(key)
        self.touched.pop(key, None)

    def apply_changelog_batch(self, batch: Iterable[EventT]) -> None:
        events = list(batch)
        for event in events:
            key = self._to_key(event.key)
            if event.message.value is None:
                self.touched.pop(key, None)
            else:
                self.touched[key] = event.message.timestamp
        super().apply_changelog_batch(events)

    def expire(self, key: str, partition: int) -> None:
        """Drop the row of `key` here and tombstone it on its changelog `partition` (no stream event to take it from)."""
        self.data.pop(key, None)
        self.touched.pop(key, None)
        self.send_changelog(partition, key, None, value_serializer="raw")


def sessions_table(app: faust.App, settings: Settings) -> SessionsTable:
    """session key -> SessionState bytes (bytes values travel raw); co-partitioned with the turns topic."""
    table = SessionsTable(app, name=SESSIONS_TABLE, key_type=str, value_type=bytes, partitions=settings.turn_partitions,
                          default=None, beacon=app.tables.beacon)
    app.tables.add(table)
    return table
