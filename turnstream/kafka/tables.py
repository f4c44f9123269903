"""Faust Tables: per-session state, backed by changelog topics so a replacement worker recovers it."""

from __future__ import annotations

import faust

from turnstream.kafka.admin import SESSIONS_TABLE
from turnstream.kafka.faust_private.table_rows import SessionsTable
from turnstream.settings import KafkaSettings


def sessions_table(app: faust.App, settings: KafkaSettings) -> SessionsTable:
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
